//===- Vectorize.cpp - Vectorize to the target's vector width
//--------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "pb/Target/TargetDesc.h"
#include "pb/Transforms/Passes.h"

#include "mlir/Analysis/FlatLinearValueConstraints.h"
#include "mlir/Dialect/Affine/Analysis/AffineAnalysis.h"
#include "mlir/Dialect/Affine/Analysis/LoopAnalysis.h"
#include "mlir/Dialect/Affine/IR/AffineValueMap.h"
#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/Support/FormatVariadic.h"

#include <map>

namespace mlir::pb {
#define GEN_PASS_DEF_PBVECTORIZEPASS
#include "pb/Transforms/Passes.h.inc"
} // namespace mlir::pb

using namespace mlir;
using namespace mlir::pb;

/// The narrowest element width, in bits, that `loop` loads or stores: it
/// sets the loop's vector length. 0 when the loop accesses none, or a
/// buffer of booleans: LLVM packs a vector of i1 into bits, so a vector
/// load from a buffer of one byte per i1 would read the wrong bytes (a
/// causal mask gave wrong attention in gpt2); such loops stay scalar.
static unsigned getNarrowestElementBits(affine::AffineForOp loop) {
  unsigned bits = 0;
  bool boolean = false;
  loop.walk([&](Operation *op) {
    MemRefType type;
    if (auto load = dyn_cast<affine::AffineLoadOp>(op))
      type = load.getMemRefType();
    else if (auto store = dyn_cast<affine::AffineStoreOp>(op))
      type = store.getMemRefType();
    if (!type || !type.getElementType().isIntOrFloat())
      return;
    unsigned width = type.getElementType().getIntOrFloatBitWidth();
    boolean |= width == 1;
    if (bits == 0 || width < bits)
      bits = width;
  });
  return boolean ? 0 : bits;
}

/// Whether an affine load or store in `loop` accesses a memref with a
/// non-identity layout (a view), which the upstream vectorizer rejects.
static bool hasStridedAccess(affine::AffineForOp loop) {
  return loop.getBody()
      ->walk([](Operation *op) {
        Value memref;
        if (auto load = dyn_cast<affine::AffineLoadOp>(op))
          memref = load.getMemRef();
        else if (auto store = dyn_cast<affine::AffineStoreOp>(op))
          memref = store.getMemRef();
        auto type =
            memref ? dyn_cast<MemRefType>(memref.getType()) : MemRefType();
        return type && !type.getLayout().isIdentity() ? WalkResult::interrupt()
                                                      : WalkResult::advance();
      })
      .wasInterrupted();
}

/// Whether `op`, an affine load or store, steps one element along its
/// innermost dimension per iteration of the loop with induction variable
/// `iv` and along no other, or does not vary with it at all.
static bool isUnitStrideAccess(Operation *op, Value iv) {
  affine::MemRefAccess access(op);
  affine::AffineValueMap map;
  access.getAccessMap(&map);
  ArrayRef<Value> operands = map.getOperands();
  const Value *it = llvm::find(operands, iv);
  if (it == operands.end())
    return true;
  unsigned pos = it - operands.begin();
  AffineMap affineMap = map.getAffineMap();
  unsigned last = affineMap.getNumResults() - 1;
  for (unsigned r = 0; r < last; ++r)
    if (map.isFunctionOf(r, iv))
      return false;
  if (!map.isFunctionOf(last, iv))
    return true;
  SmallVector<int64_t> flat;
  return succeeded(getFlattenedAffineExpr(affineMap.getResult(last),
                                          affineMap.getNumDims(),
                                          affineMap.getNumSymbols(), &flat)) &&
         flat.size() == operands.size() + 1 && flat[pos] == 1;
}

/// Whether every affine load and store in `loop` is a unit-stride access:
/// upstream's vectorizer checks only which dimension the loop indexes, so
/// x[3 - i] (a flip) or x[2 * i] (a strided slice) became contiguous vectors
/// and read the wrong elements.
static bool hasUnitStrideAccesses(affine::AffineForOp loop) {
  Value iv = loop.getInductionVar();
  return !loop.getBody()
              ->walk([&](Operation *op) {
                if (isa<affine::AffineReadOpInterface,
                        affine::AffineWriteOpInterface>(op) &&
                    !isUnitStrideAccess(op, iv))
                  return WalkResult::interrupt();
                return WalkResult::advance();
              })
              .wasInterrupted();
}

/// Splits `loop` at `split` (a bound map over `operands`): `loop` ends there
/// and a remainder loop, a clone of it, starts there and continues its
/// reductions. Returns the remainder.
static affine::AffineForOp splitLoop(affine::AffineForOp loop, AffineMap split,
                                     ValueRange operands) {
  OpBuilder b(loop);
  b.setInsertionPointAfter(loop);
  auto remainder = cast<affine::AffineForOp>(b.clone(*loop));
  SmallVector<Value> splitOperands(operands);
  loop.setUpperBound(splitOperands, split);
  remainder.setLowerBound(splitOperands, split);
  for (auto [result, next] :
       llvm::zip(loop.getResults(), remainder.getResults()))
    result.replaceAllUsesWith(next);
  remainder.getInitsMutable().assign(loop.getResults());
  return remainder;
}

/// Splits `loop` (unit step, one lower bound, `trip` iterations, not a
/// multiple of `lanes`) into a loop over the largest multiple of `lanes`
/// and a remainder loop after it, which continues its reductions: a row of
/// 197 attention scores becomes 192 vectorized and 5 scalar iterations.
static affine::AffineForOp peelRemainder(affine::AffineForOp loop,
                                         uint64_t trip, int64_t lanes) {
  AffineMap lb = loop.getLowerBoundMap();
  int64_t mainTrip = static_cast<int64_t>(trip) / lanes * lanes;
  return splitLoop(loop,
                   AffineMap::get(lb.getNumDims(), lb.getNumSymbols(),
                                  lb.getResult(0) + mainTrip),
                   loop.getLowerBoundOperands());
}

/// Splits `loop` (unit step, a constant lower bound, one upper bound known
/// only at run time) likewise: the first loop runs to the largest multiple
/// of `lanes` iterations, computed at run time, the remainder after it
/// (softmax's rows over a run-time number of keys).
static affine::AffineForOp peelRunTimeRemainder(affine::AffineForOp loop,
                                                int64_t lanes) {
  int64_t lb = loop.getConstantLowerBound();
  AffineMap ub = loop.getUpperBoundMap();
  AffineExpr trips = ub.getResult(0) - lb;
  return splitLoop(loop,
                   AffineMap::get(ub.getNumDims(), ub.getNumSymbols(),
                                  trips.floorDiv(lanes) * lanes + lb),
                   loop.getUpperBoundOperands());
}

/// Stands in for `arith.index_cast %iv` while the upstream vectorizer runs:
/// it does not vectorize an operation that reads a loop's induction variable
/// as a value, so a causal mask built from the row and column indices (col -
/// row <= 0) kept its loop scalar. Each such cast in an innermost loop with
/// constant bounds becomes a load from `buffer[iv]` of a stand-in buffer
/// (never written, never lowered) that the vectorizer treats as any other
/// contiguous load; restoreIndexCasts replaces every load of it with the
/// index values it stands for before the pass ends, and erases it. Returns
/// the stand-in buffers.
static SmallVector<memref::AllocaOp> replaceIndexCasts(func::FuncOp func) {
  SmallVector<std::pair<arith::IndexCastOp, affine::AffineForOp>> casts;
  func.walk([&](arith::IndexCastOp cast) {
    auto iv = dyn_cast<BlockArgument>(cast.getIn());
    auto loop = iv ? dyn_cast<affine::AffineForOp>(iv.getOwner()->getParentOp())
                   : affine::AffineForOp();
    if (loop && loop.getInductionVar() == iv &&
        isa<IntegerType>(cast.getType()) &&
        loop.getBody()->getOps<affine::AffineForOp>().empty() &&
        loop.hasConstantBounds() && loop.getConstantLowerBound() >= 0 &&
        loop.getConstantUpperBound() > loop.getConstantLowerBound() &&
        cast->getParentOp() == loop.getOperation())
      casts.push_back({cast, loop});
  });
  SmallVector<memref::AllocaOp> buffers;
  // (A declaration has no body: nothing to do, and no block to build in.)
  if (casts.empty())
    return buffers;
  OpBuilder b = OpBuilder::atBlockBegin(&func.getBody().front());
  for (auto [cast, loop] : casts) {
    auto type = MemRefType::get({loop.getConstantUpperBound()}, cast.getType());
    auto buffer = memref::AllocaOp::create(b, cast.getLoc(), type);
    buffers.push_back(buffer);
    OpBuilder at(cast);
    Value load = affine::AffineLoadOp::create(at, cast.getLoc(), buffer,
                                              ValueRange{cast.getIn()});
    cast.getResult().replaceAllUsesWith(load);
    cast.erase();
  }
  return buffers;
}

/// Replaces every access to the stand-in buffers of replaceIndexCasts with
/// the index values they stand for: a scalar load of `buffer[map(ivs)]` with
/// index_cast(map(ivs)), a vector read from `buffer[i]` with
/// broadcast(index_cast(i)) + [0, 1, ..., lanes - 1]. Returns how many
/// vector reads there were.
static FailureOr<unsigned>
restoreIndexCasts(ArrayRef<memref::AllocaOp> buffers) {
  unsigned vectors = 0;
  for (memref::AllocaOp buffer : buffers) {
    Type type = buffer.getType().getElementType();
    for (Operation *user : llvm::make_early_inc_range(buffer->getUsers())) {
      OpBuilder b(user);
      Location loc = user->getLoc();
      Value value;
      if (auto load = dyn_cast<affine::AffineLoadOp>(user)) {
        AffineMap map = load.getAffineMap();
        Value index = map.isIdentity() ? load.getMapOperands().front()
                                       : affine::AffineApplyOp::create(
                                             b, loc, map, load.getMapOperands())
                                             .getResult();
        value = arith::IndexCastOp::create(b, loc, type, index);
      } else if (auto read = dyn_cast<vector::TransferReadOp>(user)) {
        VectorType vectorType = read.getVectorType();
        if (vectorType.getRank() != 1 ||
            !read.getPermutationMap().isMinorIdentity())
          return user->emitError(
              "pb-vectorize: unexpected vector read of a loop index");
        SmallVector<APInt> steps;
        for (int64_t lane = 0, e = vectorType.getNumElements(); lane < e;
             ++lane)
          steps.push_back(APInt(type.getIntOrFloatBitWidth(), lane));
        Value first =
            arith::IndexCastOp::create(b, loc, type, read.getIndices().front());
        Value splat = vector::BroadcastOp::create(b, loc, vectorType, first);
        Value offsets = arith::ConstantOp::create(
            b, loc, DenseElementsAttr::get(vectorType, steps));
        value = arith::AddIOp::create(b, loc, splat, offsets);
        ++vectors;
      } else {
        return user->emitError(
            "pb-vectorize: unexpected access to a loop index");
      }
      user->getResult(0).replaceAllUsesWith(value);
      user->erase();
    }
    buffer->erase();
  }
  return vectors;
}

namespace {
class PBVectorizePass : public pb::impl::PBVectorizePassBase<PBVectorizePass> {
public:
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    const ChipDesc *chip = getTargetChip(func);
    if (!chip) {
      func.emitError("pb-vectorize needs a target: run with --target");
      return signalPassFailure();
    }
    // Each innermost loop's vector length is the chip's vector width over
    // the narrowest element it accesses.
    auto getLanes = [&](affine::AffineForOp loop) -> int64_t {
      unsigned bits = getNarrowestElementBits(loop);
      if (bits == 0 || chip->vectorWidthBits < bits)
        return 0;
      int64_t lanes = chip->vectorWidthBits / bits;
      return lanes < 2 ? 0 : lanes;
    };
    auto isInnermost = [](affine::AffineForOp loop) {
      return loop.getBody()->getOps<affine::AffineForOp>().empty();
    };
    SmallVector<memref::AllocaOp> indexBuffers = replaceIndexCasts(func);

    // Innermost loops whose trip count is not a multiple of the lanes but
    // holds at least one vector of them lose their remainder to a scalar
    // loop after them.
    unsigned peeled = 0;
    SmallVector<std::pair<affine::AffineForOp, int64_t>> toPeel;
    func.walk([&](affine::AffineForOp loop) {
      int64_t lanes = isInnermost(loop) ? getLanes(loop) : 0;
      if (!lanes)
        return;
      std::optional<uint64_t> trip = affine::getConstantTripCount(loop);
      SmallVector<affine::LoopReduction> loopReductions;
      // A trip count known only at run time: a constant lower bound and one
      // upper bound.
      bool runTime = !trip && loop.hasConstantLowerBound() &&
                     loop.getUpperBoundMap().getNumResults() == 1;
      if (((trip && *trip > static_cast<uint64_t>(lanes) &&
            *trip % lanes != 0) ||
           runTime) &&
          loop.getStepAsInt() == 1 &&
          loop.getLowerBoundMap().getNumResults() == 1 &&
          !hasStridedAccess(loop) &&
          affine::isLoopParallel(loop, &loopReductions))
        toPeel.push_back({loop, lanes});
    });
    llvm::DenseSet<Operation *> remainders;
    // Loops split off a run-time trip count: a multiple of their lanes.
    llvm::DenseMap<Operation *, int64_t> runTimeMultiples;
    for (auto [loop, lanes] : toPeel) {
      if (std::optional<uint64_t> trip = affine::getConstantTripCount(loop)) {
        remainders.insert(peelRemainder(loop, *trip, lanes));
      } else {
        remainders.insert(peelRunTimeRemainder(loop, lanes));
        runTimeMultiples[loop.getOperation()] = lanes;
      }
      ++peeled;
    }

    // Only innermost loops that the dependence analysis proves parallel
    // (reductions through iter_args included) and whose trip count is a
    // multiple of the vector length are handed to the upstream vectorizer:
    // it rejects neither loop-carried dependences through memory (a
    // reduction accumulated in a buffer) nor trip counts that are not a
    // multiple of the vector length (its transfers are masked only at the
    // memref's bounds, not at the loop's, so an intra-tile loop would
    // write past its tile).
    std::map<int64_t, llvm::DenseSet<Operation *>> loopsByLanes;
    affine::ReductionLoopMap reductions;
    unsigned skipped = 0, vectorized = 0;
    func.walk([&](affine::AffineForOp loop) {
      if (!isInnermost(loop))
        return;
      int64_t lanes = getLanes(loop);
      SmallVector<affine::LoopReduction> loopReductions;
      std::optional<uint64_t> trip = affine::getConstantTripCount(loop);
      // A loop shorter than a vector, or a remainder split off above (72
      // channels: 64 + 8 on 16 lanes), runs in the widest narrower vector
      // that divides it (8 lanes, half a register) instead of scalars.
      while (lanes > 2 && trip && *trip % lanes != 0 &&
             (*trip < static_cast<uint64_t>(lanes) ||
              remainders.contains(loop.getOperation())))
        lanes /= 2;
      bool multiple =
          lanes &&
          (trip ? *trip % lanes == 0
                : runTimeMultiples.lookup(loop.getOperation()) == lanes);
      if (!lanes || !multiple || hasStridedAccess(loop) ||
          !hasUnitStrideAccesses(loop) ||
          !affine::isLoopParallel(loop, &loopReductions)) {
        ++skipped;
        return;
      }
      loopsByLanes[lanes].insert(loop);
      ++vectorized;
      if (!loopReductions.empty())
        reductions[loop] = loopReductions;
    });
    if (loopsByLanes.empty()) {
      if (failed(restoreIndexCasts(indexBuffers)))
        signalPassFailure();
      return;
    }
    // The transfers the vectorizer makes are in bounds: each covers `lanes`
    // consecutive elements of a loop whose trip count is a multiple of
    // `lanes` and whose scalar accesses were in bounds. Left unmarked, S4's
    // vector-to-scf lowering turns every one into a bounds-checked loop
    // over a stack buffer (a 16M-element elementwise op ran 6x slower than
    // the scalar code). Transfers that existed before (the micro-kernel's
    // masked edges) are left as they are.
    llvm::DenseSet<Operation *> existing;
    func.walk([&](VectorTransferOpInterface transfer) {
      existing.insert(transfer.getOperation());
    });
    // The vectorizer replaces each loop by a new one with the same location
    // and no attributes; a loop marked parallel (pb.parallel, for S4's
    // threads) gets a tagged location so that its replacement is marked too.
    auto parallelTag = StringAttr::get(&getContext(), "pb.parallel-loop");
    for (auto &[lanes, loops] : loopsByLanes)
      for (Operation *loop : loops)
        if (loop->hasAttr(PBDialect::kParallelAttrName))
          loop->setLoc(
              FusedLoc::get(&getContext(), loop->getLoc(), parallelTag));
    std::string lanesUsed;
    for (auto &[lanes, loops] : loopsByLanes) {
      // Only this group's reductions: the loops of groups vectorized before
      // are gone, and a new loop may reuse an erased one's address.
      affine::ReductionLoopMap groupReductions;
      for (Operation *loop : loops)
        if (auto it = reductions.find(loop); it != reductions.end())
          groupReductions[loop] = it->second;
      affine::vectorizeAffineLoops(func, loops, {lanes}, {}, groupReductions);
      lanesUsed +=
          llvm::formatv("{0}{1} loops x {2} lanes",
                        lanesUsed.empty() ? "" : ", ", loops.size(), lanes);
    }
    func.walk([&](affine::AffineForOp loop) {
      auto fused = dyn_cast<FusedLoc>(loop.getLoc());
      if (!fused || fused.getMetadata() != parallelTag)
        return;
      loop->setLoc(fused.getLocations().front());
      loop->setAttr(PBDialect::kParallelAttrName, UnitAttr::get(&getContext()));
    });
    unsigned marked = 0;
    func.walk([&](VectorTransferOpInterface transfer) {
      if (existing.contains(transfer.getOperation()))
        return;
      SmallVector<bool> inBounds(transfer.getTransferRank(), true);
      transfer->setAttr(transfer.getInBoundsAttrName(),
                        OpBuilder(transfer).getBoolArrayAttr(inBounds));
      ++marked;
    });
    FailureOr<unsigned> indexVectors = restoreIndexCasts(indexBuffers);
    if (failed(indexVectors))
      return signalPassFailure();
    explain(func,
            llvm::formatv("vectorize: {0}-bit vectors ({1}); {2} innermost "
                          "loops proven parallel with a trip count multiple "
                          "of their lanes ({3}; lanes = vector width over the "
                          "narrowest element), {4} left scalar ({5} of them "
                          "remainders split off); {6} transfers in bounds; "
                          "{7} loop indices read as values made vectors of "
                          "consecutive indices",
                          chip->vectorWidthBits, chip->name, vectorized,
                          lanesUsed, skipped, peeled, marked, *indexVectors));
  }
};
} // namespace
