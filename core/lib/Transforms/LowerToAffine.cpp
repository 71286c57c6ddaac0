//===- LowerToAffine.cpp - linalg on buffers to affine loops
//---------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "pb/Dialect/PBDialect.h"
#include "pb/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::pb {
#define GEN_PASS_DEF_PBLOWERTOAFFINEPASS
#include "pb/Transforms/Passes.h.inc"
} // namespace mlir::pb

using namespace mlir;

namespace {
class PBLowerToAffinePass
    : public pb::impl::PBLowerToAffinePassBase<PBLowerToAffinePass> {
public:
  using Base::Base;
  void runOnOperation() override {
    // memref.copy between strided views (a tensor.pad's interior, a slice)
    // would otherwise become a call into MLIR's runner library; as a
    // linalg.copy it becomes an affine nest that S3 can fuse and vectorize.
    IRRewriter rewriter(&getContext());
    const pb::ChipDesc *chip = pb::getTargetChip(getOperation());
    // The parallel loops S2 formed on tensors (pb-fuse-attention's tasks),
    // now on buffers: scf.parallel loops on the chip's level of threads
    // (cores), as pb-map-matrix-units marks its own.
    SmallVector<scf::ForallOp> foralls;
    getOperation().walk([&](scf::ForallOp forall) {
      if (forall->getNumResults() == 0)
        foralls.push_back(forall);
    });
    for (scf::ForallOp forall : foralls) {
      scf::ParallelOp parallel;
      if (failed(scf::forallToParallelLoop(rewriter, forall, &parallel))) {
        forall->emitError("cannot turn this scf.forall into scf.parallel");
        return signalPassFailure();
      }
      if (const pb::ComputeLevelDesc *level =
              chip ? chip->getTaskLevel() : nullptr)
        parallel->setAttr(
            pb::PBDialect::kLevelAttrName,
            rewriter.getStringAttr(pb::stringifyComputeLevelKind(level->kind)));
    }

    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp copy) { copies.push_back(copy); });
    for (memref::CopyOp copy : copies) {
      rewriter.setInsertionPoint(copy);
      linalg::CopyOp::create(rewriter, copy.getLoc(), copy.getSource(),
                             copy.getTarget());
      rewriter.eraseOp(copy);
    }

    // Multiply-accumulate ops stay for S3's matrix units, with the
    // epilogues S3 may fuse into them.
    // With `contractions` (S3), only the ops tagged for the target's S4 stay
    // (pb.matrix_unit contractions and their pb.matrix_unit_epilogue).
    // GPU tensor-core kernels also take epilogues through permutations.
    llvm::SmallPtrSet<Operation *, 8> kept;
    bool permuted = chip && pb::hasCooperativeMatrixUnits(*chip);
    bool mixed = chip && pb::hasMixedPrecisionMatrixUnits(*chip);
    if (!contractions)
      getOperation().walk([&](linalg::LinalgOp op) {
        if (op.hasPureBufferSemantics() &&
            pb::isMultiplyAccumulate(op, /*allowExtensions=*/mixed))
          if (linalg::GenericOp epilogue =
                  pb::findFusableEpilogue(op, permuted))
            kept.insert(epilogue);
      });
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) {
      // Row kernels stay whole for the target's S4 (pb-group-row-kernels).
      if (kept.contains(op) || !op.hasPureBufferSemantics() ||
          op->hasAttr(pb::PBDialect::kRowKernelAttrName))
        return;
      // Chips with mixed-precision units keep mixed-precision contractions
      // too: the units (or the CPU micro-kernel's packing) widen the
      // operands.
      bool contraction =
          pb::isMultiplyAccumulate(op, /*allowExtensions=*/mixed);
      if (contractions
              ? !op->hasAttr(pb::PBDialect::kMatrixUnitAttrName) &&
                    !op->hasAttr(pb::PBDialect::kMatrixUnitEpilogueAttrName)
              : !contraction)
        ops.push_back(op);
    });
    for (linalg::LinalgOp op : ops) {
      rewriter.setInsertionPoint(op);
      if (failed(linalg::linalgOpToAffineLoops(rewriter, op))) {
        op->emitError() << "cannot lower '" << op->getName()
                        << "' to affine loops";
        return signalPassFailure();
      }
      rewriter.eraseOp(op);
    }
  }
};
} // namespace
