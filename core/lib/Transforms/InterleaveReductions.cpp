//===- InterleaveReductions.cpp - Independent partial reductions ----------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// pb-interleave-reductions (S3, after pb-vectorize): a reduction loop that
// carries one accumulator runs at the latency of its combining operation,
// not at its throughput: a softmax row's vector max (compare, select) or
// sum (add) waited 4-6 cycles per vector while the core could start two
// vector operations per cycle. Two rewrites:
//
//  1. An innermost affine.for whose iter_args are all reductions
//     (upstream's affine::getSupportedReductions: add, mul, min, max, and,
//     or, xor) and that carries fewer independent chains than the chip's
//     vector unit keeps in flight (its latency times the vector operations
//     it starts per cycle, from the target's .td) is unrolled by the
//     missing factor with one partial accumulator per copy; the partials
//     are combined after the loop in a tree.
//  2. Every vector.reduction of a 1-D vector of 2^n lanes becomes a tree of
//     n shuffles and vector operations (halves combined), instead of the
//     n - 1 dependent scalar steps LLVM expands an ordered reduction into.
//
// Both reassociate: exact for min, max and the integer kinds; for
// floating-point sums and products the order of the additions changes as
// it already did when the loop was vectorized. The pass is left out of
// `pipeline=reference`.
//
//===----------------------------------------------------------------------===//

#include "pb/Target/TargetDesc.h"
#include "pb/Transforms/Passes.h"

#include "mlir/Dialect/Affine/Analysis/AffineAnalysis.h"
#include "mlir/Dialect/Affine/Analysis/LoopAnalysis.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::pb {
#define GEN_PASS_DEF_PBINTERLEAVEREDUCTIONSPASS
#include "pb/Transforms/Passes.h.inc"
} // namespace mlir::pb

using namespace mlir;
using namespace mlir::pb;

int64_t mlir::pb::getChainsInFlight(const ChipDesc &chip) {
  int64_t lanes = chip.vectorWidthBits / 32;
  const MatrixUnitDesc *unit = nullptr;
  for (const MatrixUnitDesc *candidate : chip.matrixUnits)
    if (candidate->scope == MatrixScope::ThreadScope &&
        candidate->lowering == MatrixLowering::VectorOuterProduct &&
        candidate->cType == ElementType::F32 && candidate->n == lanes &&
        llvm::all_of(candidate->requiredFeatures,
                     [&](StringRef f) { return chip.hasFeature(f); }))
      unit = candidate;
  if (!unit || unit->latencyCycles < 1 || chip.clockMHz <= 0)
    return 1;
  int64_t peak = chip.costModel
                     ? chip.costModel->getPeakGFLOPs(ElementType::F32, "vector")
                     : 0;
  double perCycle =
      static_cast<double>(peak) * 1000.0 / (2.0 * lanes * chip.clockMHz);
  int64_t issue = std::max<int64_t>(1, std::lround(perCycle));
  return unit->latencyCycles * issue;
}

/// Combines `values` pairwise, as a balanced tree.
static Value combineTree(OpBuilder &b, Location loc, arith::AtomicRMWKind kind,
                         SmallVector<Value> values) {
  while (values.size() > 1) {
    SmallVector<Value> next;
    for (size_t i = 0; i + 1 < values.size(); i += 2)
      next.push_back(
          arith::getReductionOp(kind, b, loc, values[i], values[i + 1]));
    if (values.size() % 2)
      next.push_back(values.back());
    values = std::move(next);
  }
  return values.front();
}

/// The identity of `kind` as a constant of `type`, a scalar or a vector
/// (upstream's getIdentityValueAttr takes scalars only).
static Value getIdentity(OpBuilder &b, Location loc, arith::AtomicRMWKind kind,
                         Type type) {
  TypedAttr attr =
      arith::getIdentityValueAttr(kind, getElementTypeOrSelf(type), b, loc);
  if (auto shaped = dyn_cast<ShapedType>(type))
    attr = DenseElementsAttr::get(shaped, attr);
  return arith::ConstantOp::create(b, loc, attr);
}

/// Unrolls `loop` by `factor` with one partial accumulator per copy for
/// each of its reductions. The trip count is a multiple of `factor`.
static void interleaveLoop(affine::AffineForOp loop, int64_t factor,
                           ArrayRef<affine::LoopReduction> reductions) {
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  int64_t step = loop.getStepAsInt();
  unsigned numArgs = loop.getNumRegionIterArgs();
  SmallVector<arith::AtomicRMWKind> kinds(numArgs);
  for (const affine::LoopReduction &reduction : reductions)
    kinds[reduction.iterArgPosition] = reduction.kind;

  // Inits: copy 0 starts from the loop's init, the others from the
  // reduction's identity. Layout: copy-major, [copy][arg].
  SmallVector<Value> identities;
  for (unsigned arg = 0; arg < numArgs; ++arg)
    identities.push_back(
        getIdentity(b, loc, kinds[arg], loop.getInits()[arg].getType()));
  SmallVector<Value> inits;
  for (int64_t copy = 0; copy < factor; ++copy)
    for (unsigned arg = 0; arg < numArgs; ++arg)
      inits.push_back(copy == 0 ? loop.getInits()[arg] : identities[arg]);
  auto newLoop = affine::AffineForOp::create(
      b, loc, loop.getLowerBoundOperands(), loop.getLowerBoundMap(),
      loop.getUpperBoundOperands(), loop.getUpperBoundMap(), step * factor,
      inits);
  newLoop->setAttrs(loop->getDiscardableAttrDictionary());

  Block *body = newLoop.getBody();
  b.setInsertionPointToStart(body);
  Value iv = newLoop.getInductionVar();
  SmallVector<Value> yields;
  auto yield = cast<affine::AffineYieldOp>(loop.getBody()->getTerminator());
  for (int64_t copy = 0; copy < factor; ++copy) {
    IRMapping mapping;
    Value copyIV = iv;
    if (copy > 0) {
      AffineExpr d0 = b.getAffineDimExpr(0);
      copyIV = affine::AffineApplyOp::create(
          b, loc, AffineMap::get(1, 0, d0 + copy * step), ValueRange{iv});
    }
    mapping.map(loop.getInductionVar(), copyIV);
    for (unsigned arg = 0; arg < numArgs; ++arg)
      mapping.map(loop.getRegionIterArgs()[arg],
                  newLoop.getRegionIterArgs()[copy * numArgs + arg]);
    for (Operation &op : loop.getBody()->without_terminator())
      b.clone(op, mapping);
    for (Value operand : yield.getOperands())
      yields.push_back(mapping.lookupOrDefault(operand));
  }
  // The loop was built without a terminator (it has inits).
  b.setInsertionPointToEnd(body);
  affine::AffineYieldOp::create(b, loc, yields);

  b.setInsertionPointAfter(newLoop);
  for (unsigned arg = 0; arg < numArgs; ++arg) {
    SmallVector<Value> partials;
    for (int64_t copy = 0; copy < factor; ++copy)
      partials.push_back(newLoop.getResult(copy * numArgs + arg));
    loop.getResult(arg).replaceAllUsesWith(
        combineTree(b, loc, kinds[arg], partials));
  }
  loop.erase();
}

/// Rewrites a vector.reduction of 2^n lanes as n halvings.
static void lowerToTree(vector::ReductionOp reduction) {
  VectorType type = reduction.getSourceVectorType();
  OpBuilder b(reduction);
  Location loc = reduction.getLoc();
  Value vector = reduction.getVector();
  for (int64_t lanes = type.getNumElements(); lanes > 1; lanes /= 2) {
    SmallVector<int64_t> low, high;
    for (int64_t i = 0; i < lanes / 2; ++i) {
      low.push_back(i);
      high.push_back(lanes / 2 + i);
    }
    Value lo = vector::ShuffleOp::create(b, loc, vector, vector, low);
    Value hi = vector::ShuffleOp::create(b, loc, vector, vector, high);
    vector = vector::makeArithReduction(b, loc, reduction.getKind(), lo, hi,
                                        reduction.getFastmathAttr());
  }
  Value scalar =
      vector::ExtractOp::create(b, loc, vector, ArrayRef<int64_t>{0});
  if (Value acc = reduction.getAcc())
    scalar = vector::makeArithReduction(b, loc, reduction.getKind(), scalar,
                                        acc, reduction.getFastmathAttr());
  reduction.replaceAllUsesWith(scalar);
  reduction.erase();
}

namespace {
class PBInterleaveReductionsPass
    : public pb::impl::PBInterleaveReductionsPassBase<
          PBInterleaveReductionsPass> {
public:
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    const ChipDesc *chip = getTargetChip(func);
    if (!chip) {
      func.emitError("pb-interleave-reductions needs a target: run with "
                     "--target");
      return signalPassFailure();
    }
    int64_t chains = getChainsInFlight(*chip);

    SmallVector<std::tuple<affine::AffineForOp, int64_t,
                           SmallVector<affine::LoopReduction>>>
        loops;
    func.walk([&](affine::AffineForOp loop) {
      unsigned numArgs = loop.getNumRegionIterArgs();
      if (numArgs == 0 || static_cast<int64_t>(numArgs) >= chains)
        return;
      // Innermost loops only: a body without regions.
      for (Operation &op : loop.getBody()->without_terminator())
        if (op.getNumRegions() != 0)
          return;
      SmallVector<affine::LoopReduction> reductions;
      affine::getSupportedReductions(loop, reductions);
      if (reductions.size() != numArgs)
        return;
      std::optional<uint64_t> trip = affine::getConstantTripCount(loop);
      if (!trip)
        return;
      // The largest power of two up to the missing chains that divides the
      // trip count.
      int64_t factor = static_cast<int64_t>(
          llvm::PowerOf2Ceil(llvm::divideCeil(chains, numArgs)));
      while (factor > 1 && *trip % factor != 0)
        factor /= 2;
      if (factor > 1)
        loops.push_back({loop, factor, std::move(reductions)});
    });
    for (auto &[loop, factor, reductions] : loops)
      interleaveLoop(loop, factor, reductions);

    // Chips whose tasks run threads (GPU blocks) keep vector.reduction: S4
    // folds each thread's lanes with it before combining the threads.
    SmallVector<vector::ReductionOp> trees;
    bool threadsInTasks = chip->getComputeLevel(ComputeLevelKind::Lane);
    func.walk([&](vector::ReductionOp reduction) {
      if (threadsInTasks)
        return;
      VectorType type = reduction.getSourceVectorType();
      if (type.getRank() == 1 && !type.isScalable() &&
          !isa<vector::MaskOp>(reduction->getParentOp()) &&
          type.getNumElements() > 1 &&
          llvm::isPowerOf2_64(type.getNumElements()))
        trees.push_back(reduction);
    });
    for (vector::ReductionOp reduction : trees)
      lowerToTree(reduction);

    if (!loops.empty() || !trees.empty())
      explain(func,
              llvm::formatv("interleave-reductions: {0} reduction "
                            "loops carry partial accumulators for {1} "
                            "chains in flight (FMA latency x vector "
                            "issue of {2}); {3} vector reductions as "
                            "trees",
                            loops.size(), chains, chip->name, trees.size()));
  }
};
} // namespace
