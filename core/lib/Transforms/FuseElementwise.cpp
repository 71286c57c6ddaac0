//===- FuseElementwise.cpp - Elementwise fusion that keeps contractions ---===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Stage S1's producer-consumer fusion of linalg ops on tensors: upstream's
// elementwise fusion, reshape folding by expansion and linalg constant
// folding (the patterns of upstream's linalg-fuse-elementwise-ops), with one
// change to its cost function. An elementwise producer that computes
// something (q * scale before q @ k^T) is not fused into a
// multiply-accumulate consumer: the fused body would no longer be a
// multiply-accumulate, and S3 could not map it to the matrix units (it ran
// as naive loops). Producers that only move data (transposes, broadcasts:
// a body that yields an input) still fuse, as the result stays a
// multiply-accumulate that reads through the composed map. A producer whose
// body reads its output's initial value is not fused at all.
//
//===----------------------------------------------------------------------===//

#include "pb/Dialect/PBDialect.h"
#include "pb/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::pb {
#define GEN_PASS_DEF_PBFUSEELEMENTWISEPASS
#include "pb/Transforms/Passes.h.inc"
} // namespace mlir::pb

using namespace mlir;

/// Whether `op`'s body only yields one of its inputs (a transpose or a
/// broadcast written as a generic).
static bool onlyMovesData(Operation *op) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInits() != 1)
    return false;
  Block &body = generic.getRegion().front();
  if (body.getOperations().size() != 1)
    return false;
  auto yielded = dyn_cast<BlockArgument>(body.getTerminator()->getOperand(0));
  return yielded && yielded.getArgNumber() <
                        static_cast<unsigned>(generic.getNumDpsInputs());
}

static bool shouldFuse(OpOperand *fused) {
  Operation *producer = fused->get().getDefiningOp();
  // A pb.keep_layout generic is neither fused into its consumer nor rebuilt
  // around a reshape of its operand (reshape fusion by expansion would drop
  // the attribute with the op).
  if (!producer || !producer->hasOneUse() ||
      producer->hasAttr(pb::PBDialect::kKeepLayoutAttrName) ||
      fused->getOwner()->hasAttr(pb::PBDialect::kKeepLayoutAttrName))
    return false;
  auto consumer = dyn_cast<linalg::LinalgOp>(fused->getOwner());
  // Mixed-precision contractions (bf16 operands widened in the body) too:
  // a producer fused into a contraction's body would run once per K step.
  if (consumer &&
      pb::isMultiplyAccumulate(consumer, /*allowExtensions=*/true) &&
      !onlyMovesData(producer))
    return false;
  return true;
}

/// shouldFuse, for producer-consumer fusion (not reshape folding): a
/// producer whose body reads its own output's initial value (a scatter that
/// adds to it) computes each element once; fused, it would run once per
/// consumer iteration that reads the element (a reduction or a broadcast
/// loop), adding to its running value every time.
static bool shouldFuseProducer(OpOperand *fused) {
  if (auto producer = fused->get().getDefiningOp<linalg::LinalgOp>())
    for (OpOperand &init : producer.getDpsInitsMutable())
      if (producer.payloadUsesValueFromOperand(&init))
        return false;
  return shouldFuse(fused);
}

namespace {
class PBFuseElementwisePass
    : public pb::impl::PBFuseElementwisePassBase<PBFuseElementwisePass> {
public:
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    linalg::populateElementwiseOpsFusionPatterns(patterns, shouldFuseProducer);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, shouldFuse);
    tensor::populateBubbleUpExpandShapePatterns(patterns);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, context);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, context);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, context);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, context);
    context->getLoadedDialect<linalg::LinalgDialect>()
        ->getCanonicalizationPatterns(patterns);
    linalg::populateConstantFoldLinalgOperations(patterns, shouldFuse);
    if (failed(applyPatternsGreedily(
            getOperation(), std::move(patterns),
            GreedyRewriteConfig().setUseTopDownTraversal())))
      return signalPassFailure();
  }
};
} // namespace
