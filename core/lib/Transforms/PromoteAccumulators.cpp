//===- PromoteAccumulators.cpp - Reductions through iter_args -------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// pb-promote-accumulators (S3): S2 lowers a linalg reduction to loops that
// accumulate in the output buffer, `m[i] = max(m[i], x[i, j])` in the loop
// over j. The dependence through memory keeps the upstream vectorizer away
// and costs a load and a store per element. Where the loop reads and
// writes that element at one loop-invariant subscript and touches its
// buffer nowhere else, the element travels through an iter_args value
// instead, and the loop becomes a reduction that pb-vectorize vectorizes.
//
//===----------------------------------------------------------------------===//

#include "pb/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::pb {
#define GEN_PASS_DEF_PBPROMOTEACCUMULATORSPASS
#include "pb/Transforms/Passes.h.inc"
} // namespace mlir::pb

using namespace mlir;
using namespace mlir::pb;

/// A load and a store of one loop-invariant element, directly in `loop`'s
/// body, the load first, and no other access to that buffer in the loop.
static std::optional<std::pair<affine::AffineLoadOp, affine::AffineStoreOp>>
findAccumulator(affine::AffineForOp loop, affine::AffineStoreOp store) {
  if (store->getParentOp() != loop)
    return std::nullopt;
  if (llvm::any_of(store.getMapOperands(), [&](Value operand) {
        return !loop.isDefinedOutsideOfLoop(operand);
      }))
    return std::nullopt;
  Value base = getBaseBuffer(store.getMemRef());
  affine::AffineLoadOp load;
  WalkResult walk = loop.walk([&](Operation *op) {
    Value memref;
    if (auto read = dyn_cast<affine::AffineReadOpInterface>(op))
      memref = read.getMemRef();
    else if (auto write = dyn_cast<affine::AffineWriteOpInterface>(op))
      memref = write.getMemRef();
    if (!memref || getBaseBuffer(memref) != base || op == store)
      return WalkResult::advance();
    auto candidate = dyn_cast<affine::AffineLoadOp>(op);
    if (load || !candidate || candidate->getParentOp() != loop ||
        candidate.getMemRef() != store.getMemRef() ||
        candidate.getAffineMap() != store.getAffineMap() ||
        candidate.getMapOperands() != store.getMapOperands() ||
        !candidate->isBeforeInBlock(store))
      return WalkResult::interrupt();
    load = candidate;
    return WalkResult::advance();
  });
  if (walk.wasInterrupted() || !load)
    return std::nullopt;
  return std::make_pair(load, store);
}

LogicalResult mlir::pb::carryThroughIterArgs(
    RewriterBase &rewriter, affine::AffineForOp &loop,
    ArrayRef<std::pair<Operation *, Operation *>> accesses) {
  rewriter.setInsertionPoint(loop);
  SmallVector<Value> inits, stored;
  for (auto [read, write] : accesses) {
    inits.push_back(rewriter.clone(*read)->getResult(0));
    stored.push_back(write->getOperand(0));
  }
  FailureOr<LoopLikeOpInterface> newLoop = loop.replaceWithAdditionalYields(
      rewriter, inits, /*replaceInitOperandUsesInLoop=*/false,
      [&](OpBuilder &, Location, ArrayRef<BlockArgument>) { return stored; });
  if (failed(newLoop))
    return failure();
  loop = cast<affine::AffineForOp>(newLoop->getOperation());
  unsigned first = loop.getNumResults() - accesses.size();
  rewriter.setInsertionPointAfter(loop);
  for (auto [index, access] : llvm::enumerate(accesses)) {
    auto [read, write] = access;
    read->getResult(0).replaceAllUsesWith(
        loop.getRegionIterArgs()[first + index]);
    Operation *after = rewriter.clone(*write);
    after->setOperand(0, loop.getResult(first + index));
    rewriter.eraseOp(write);
    rewriter.eraseOp(read);
  }
  return success();
}

/// Carries the accumulators of `loop` through iter_args; returns how many.
static unsigned promoteAccumulators(affine::AffineForOp &loop) {
  if (!hasOnlyAffineMemoryEffects(loop))
    return 0;
  SmallVector<std::pair<Operation *, Operation *>> pairs;
  for (auto store : loop.getBody()->getOps<affine::AffineStoreOp>())
    if (auto pair = findAccumulator(loop, store))
      pairs.push_back({pair->first, pair->second});
  if (pairs.empty())
    return 0;
  IRRewriter rewriter(loop.getContext());
  if (failed(carryThroughIterArgs(rewriter, loop, pairs)))
    return 0;
  return pairs.size();
}

namespace {
class PBPromoteAccumulatorsPass
    : public pb::impl::PBPromoteAccumulatorsPassBase<
          PBPromoteAccumulatorsPass> {
public:
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    // Post-order: inner loops first, so that the load and store an inner
    // loop leaves around itself can be promoted by the loop around it.
    SmallVector<affine::AffineForOp> loops;
    func.walk([&](affine::AffineForOp loop) { loops.push_back(loop); });
    unsigned promoted = 0, promotedLoops = 0;
    for (affine::AffineForOp loop : loops) {
      unsigned count = promoteAccumulators(loop);
      promoted += count;
      promotedLoops += count > 0;
    }
    if (promoted)
      explain(func, llvm::formatv("promote-accumulators: {0} reductions "
                                  "through memory now carried by iter_args "
                                  "in {1} loops",
                                  promoted, promotedLoops));
  }
};
} // namespace
