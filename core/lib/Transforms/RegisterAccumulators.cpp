//===- RegisterAccumulators.cpp - Vector accumulators in registers --------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// pb-register-accumulators (S3, after pb-vectorize). A depthwise
// convolution, a pooling window or a sum over H and W of a channels-last
// map leaves, per output position, a vector loop over the channels inside
// the reduction loops (the window's taps, the rows):
//
//   for kh { for kw { for c step 16 {
//     acc[n, oh, ow, c] += in[n, oh + kh, ow + kw, c] * w[kh, kw, c] } } }
//
// Each tap loads and stores the accumulator, and one vector chain runs per
// output position. Here the channel loop moves outside the reduction loops,
// unrolled and jammed by the chains the chip keeps in flight (the FMA
// latency times the vector issue, from the .td): each block of channels
// is then read once, carried through the reduction loops in registers
// (iter_args) and written once, with that many independent chains.
//
// Moving the channel loop out is legal because its iterations touch
// disjoint elements: every buffer it writes is written only at the
// accumulator's element of that channel block, and read only there.
//
//===----------------------------------------------------------------------===//

#include "pb/Target/TargetDesc.h"
#include "pb/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Affine/LoopUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::pb {
#define GEN_PASS_DEF_PBREGISTERACCUMULATORSPASS
#include "pb/Transforms/Passes.h.inc"
} // namespace mlir::pb

using namespace mlir;
using namespace mlir::pb;

namespace {
/// A vector accumulator of a loop: `read` and `write` of one element block
/// of one buffer, at the same indices, the read first.
struct Accumulator {
  vector::TransferReadOp read;
  vector::TransferWriteOp write;
};
} // namespace

/// Whether `read` and `write` access the same buffer at the same indices
/// with the same vector type and maps.
static bool sameElement(vector::TransferReadOp read,
                        vector::TransferWriteOp write) {
  return read.getBase() == write.getBase() &&
         read.getIndices() == write.getIndices() &&
         read.getVectorType() == write.getVectorType() &&
         read.getPermutationMap() == write.getPermutationMap() &&
         !read.getMask() && !write.getMask();
}

/// `value` as `base + offset` through affine.applies whose result is one of
/// their operands plus a constant (the copies of an unrolled loop's
/// induction variable, the vectorizer's copies of a load's map).
static std::pair<Value, int64_t> getConstantOffset(Value value) {
  int64_t offset = 0;
  while (auto apply = value.getDefiningOp<affine::AffineApplyOp>()) {
    AffineMap map = apply.getAffineMap();
    if (map.getNumSymbols() != 0)
      break;
    AffineExpr result = map.getResult(0);
    std::optional<std::pair<unsigned, int64_t>> dimPlus;
    for (unsigned d = 0; d < map.getNumDims() && !dimPlus; ++d) {
      AffineExpr diff = simplifyAffineExpr(
          result - getAffineDimExpr(d, map.getContext()), map.getNumDims(), 0);
      if (auto constant = dyn_cast<AffineConstantExpr>(diff))
        dimPlus = std::make_pair(d, constant.getValue());
    }
    if (!dimPlus)
      break;
    offset += dimPlus->second;
    value = apply.getMapOperands()[dimPlus->first];
  }
  return {value, offset};
}

/// Whether two accesses of `lanes`-element vectors at `a` and `b` (the same
/// buffer) touch disjoint elements: the same indices but the last, whose
/// values differ by a constant of at least `lanes`.
static bool areDisjoint(ValueRange a, ValueRange b, int64_t lanes) {
  if (a.size() != b.size() || a.empty() || a.drop_back() != b.drop_back())
    return false;
  auto [baseA, offsetA] = getConstantOffset(a.back());
  auto [baseB, offsetB] = getConstantOffset(b.back());
  return baseA == baseB && std::abs(offsetA - offsetB) >= lanes;
}

/// The accumulators of `loop`'s body block: every write in the loop is one
/// (with a read of the same element before it, both directly in the body),
/// each other access to an accumulator's buffer in the loop is to a
/// disjoint block of it (another accumulator), and everything else in the
/// loop is a read or free of memory effects. Writes must satisfy
/// `indicesOk`.
static std::optional<SmallVector<Accumulator>>
findAccumulators(affine::AffineForOp loop,
                 llvm::function_ref<bool(vector::TransferWriteOp)> indicesOk) {
  SmallVector<Accumulator> accumulators;
  SmallVector<vector::TransferReadOp> reads;
  WalkResult walk = loop.getBody()->walk([&](Operation *op) {
    if (auto read = dyn_cast<vector::TransferReadOp>(op)) {
      reads.push_back(read);
      return WalkResult::advance();
    }
    if (auto write = dyn_cast<vector::TransferWriteOp>(op)) {
      if (write->getParentOp() != loop || !indicesOk(write) ||
          !isa<MemRefType>(write.getBase().getType()) || write.getMask() ||
          write.getVectorType().getRank() != 1 ||
          !write.getPermutationMap().isMinorIdentity())
        return WalkResult::interrupt();
      accumulators.push_back({nullptr, write});
      return WalkResult::advance();
    }
    if (isa<affine::AffineForOp, affine::AffineYieldOp>(op) ||
        isMemoryEffectFree(op))
      return WalkResult::advance();
    return WalkResult::interrupt();
  });
  if (walk.wasInterrupted() || accumulators.empty())
    return std::nullopt;
  for (Accumulator &acc : accumulators) {
    Value base = getBaseBuffer(acc.write.getBase());
    int64_t lanes = acc.write.getVectorType().getNumElements();
    for (vector::TransferReadOp read : reads) {
      if (getBaseBuffer(read.getBase()) != base)
        continue;
      if (read->getParentOp() == loop && sameElement(read, acc.write) &&
          read->isBeforeInBlock(acc.write) && !acc.read) {
        acc.read = read;
        continue;
      }
      if (read.getBase() != acc.write.getBase() ||
          read.getVectorType() != acc.write.getVectorType() ||
          !read.getPermutationMap().isMinorIdentity() ||
          !areDisjoint(read.getIndices(), acc.write.getIndices(), lanes))
        return std::nullopt;
    }
    if (!acc.read)
      return std::nullopt;
    for (Accumulator &other : accumulators)
      if (&other != &acc && getBaseBuffer(other.write.getBase()) == base &&
          (other.write.getBase() != acc.write.getBase() ||
           other.write.getVectorType() != acc.write.getVectorType() ||
           !areDisjoint(other.write.getIndices(), acc.write.getIndices(),
                        lanes)))
        return std::nullopt;
  }
  return accumulators;
}

/// Carries the accumulators of `loop` (indices defined outside it) through
/// iter_args: read once before it, written once after it. Returns how many.
static unsigned hoistAccumulators(IRRewriter &rewriter,
                                  affine::AffineForOp &loop) {
  std::optional<SmallVector<Accumulator>> found =
      findAccumulators(loop, [&](vector::TransferWriteOp write) {
        return llvm::all_of(write.getIndices(), [&](Value index) {
          return loop.isDefinedOutsideOfLoop(index);
        });
      });
  if (!found)
    return 0;
  SmallVector<Accumulator> &accumulators = *found;
  // The padding values and indices are defined outside the loop.
  for (Accumulator &acc : accumulators)
    if (!loop.isDefinedOutsideOfLoop(acc.read.getPadding()))
      return 0;
  SmallVector<std::pair<Operation *, Operation *>> accesses;
  for (Accumulator &acc : accumulators)
    accesses.push_back({acc.read, acc.write});
  if (failed(carryThroughIterArgs(rewriter, loop, accesses)))
    return 0;
  return accumulators.size();
}

/// The loops around `vectorLoop` that it could move out of: parent loops
/// with constant bounds, no iter_args and nothing in their bodies but the
/// next loop, whose induction variables index no accumulator of
/// `vectorLoop`. Outermost first.
static SmallVector<affine::AffineForOp>
getReductionBand(affine::AffineForOp vectorLoop,
                 ArrayRef<Accumulator> accumulators) {
  SmallVector<affine::AffineForOp> band;
  affine::AffineForOp child = vectorLoop;
  while (auto parent = dyn_cast<affine::AffineForOp>(child->getParentOp())) {
    if (parent.getNumIterOperands() != 0 || !parent.hasConstantBounds() ||
        parent.getBody()->getOperations().size() != 2)
      break;
    // The accumulator's other indices are defined outside the vector
    // loop; they must be outside this one too (not its induction variable).
    bool indexes = llvm::any_of(accumulators, [&](Accumulator acc) {
      return llvm::any_of(acc.write.getIndices().drop_back(), [&](Value index) {
        return !parent.isDefinedOutsideOfLoop(index);
      });
    });
    if (indexes)
      break;
    band.push_back(parent);
    child = parent;
  }
  std::reverse(band.begin(), band.end());
  return band;
}

namespace {
class PBRegisterAccumulatorsPass
    : public pb::impl::PBRegisterAccumulatorsPassBase<
          PBRegisterAccumulatorsPass> {
public:
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    const ChipDesc *chip = getTargetChip(func);
    if (!chip) {
      func.emitError("pb-register-accumulators needs a target: run with "
                     "--target");
      return signalPassFailure();
    }
    int64_t chains = getChainsInFlight(*chip);

    // Vector loops: innermost, constant bounds, a step of a whole vector,
    // accumulating at their own induction variable in the last index.
    SmallVector<affine::AffineForOp> vectorLoops;
    func.walk([&](affine::AffineForOp loop) {
      if (!loop.getBody()->getOps<affine::AffineForOp>().empty() ||
          !loop.hasConstantBounds() || loop.getNumIterOperands() != 0 ||
          loop.getStepAsInt() < 2)
        return;
      vectorLoops.push_back(loop);
    });
    IRRewriter rewriter(&getContext());
    unsigned moved = 0, registers = 0;
    for (affine::AffineForOp vectorLoop : vectorLoops) {
      Value iv = vectorLoop.getInductionVar();
      std::optional<SmallVector<Accumulator>> accumulators =
          findAccumulators(vectorLoop, [&](vector::TransferWriteOp write) {
            auto type = write.getVectorType();
            ValueRange indices = write.getIndices();
            return type.getRank() == 1 &&
                   type.getNumElements() == vectorLoop.getStepAsInt() &&
                   write.getPermutationMap().isMinorIdentity() &&
                   !indices.empty() && indices.back() == iv &&
                   llvm::all_of(indices.drop_back(), [&](Value index) {
                     return vectorLoop.isDefinedOutsideOfLoop(index);
                   });
          });
      if (!accumulators)
        continue;
      SmallVector<affine::AffineForOp> band =
          getReductionBand(vectorLoop, *accumulators);
      if (band.empty())
        continue;
      // Blocks of `unroll` vectors: the most chains in flight that divide
      // the vector count.
      int64_t vectors = (vectorLoop.getConstantUpperBound() -
                         vectorLoop.getConstantLowerBound()) /
                        vectorLoop.getStepAsInt();
      if (vectors < 1 || (vectorLoop.getConstantUpperBound() -
                          vectorLoop.getConstantLowerBound()) %
                                 vectorLoop.getStepAsInt() !=
                             0)
        continue;
      int64_t unroll = 1;
      for (int64_t f = std::min(vectors, chains); f > 1; --f)
        if (vectors % f == 0) {
          unroll = f;
          break;
        }
      // The vector loop becomes the band's outermost loop.
      SmallVector<affine::AffineForOp> nest(band);
      nest.push_back(vectorLoop);
      // permMap[i] is the new position of loop i: the band shifts in by one.
      SmallVector<unsigned> permMap;
      for (unsigned i = 0; i + 1 < nest.size(); ++i)
        permMap.push_back(i + 1);
      permMap.push_back(0);
      if (!affine::isPerfectlyNested(nest))
        continue;
      unsigned outer = affine::permuteLoops(nest, permMap);
      affine::AffineForOp channels = nest[outer];
      if (unroll > 1 && failed(affine::loopUnrollJamByFactor(channels, unroll)))
        continue;
      // The band's loops (the same operations, now inside the channel loop,
      // which unroll-and-jam erases when one iteration is left) carry the
      // accumulators: innermost first, so the outer ones find the read and
      // write that the inner ones left around themselves. The jammed
      // copies' channel offsets are invariant in the band.
      unsigned hoisted = 0;
      for (affine::AffineForOp loop : llvm::reverse(band)) {
        (void)moveLoopInvariantCode(
            cast<LoopLikeOpInterface>(loop.getOperation()));
        hoisted = hoistAccumulators(rewriter, loop);
      }
      ++moved;
      registers += hoisted;
    }
    if (moved)
      explain(func, llvm::formatv("register-accumulators: {0} vector loops "
                                  "moved out of their reduction loops, {1} "
                                  "vector accumulators carried in registers "
                                  "(blocks of up to {2} vectors: FMA latency "
                                  "x vector issue of {3})",
                                  moved, registers, chains, chip->name));
  }
};
} // namespace
