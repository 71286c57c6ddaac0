//===- LowerToAffine.cpp - linalg on buffers to affine loops
//---------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "pb/Dialect/PBDialect.h"
#include "pb/Transforms/DimArgs.h"
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
    // The loops' run-time bounds are memref.dim ops of the operands. One of
    // a buffer allocated or viewed inside a parallel task (a block of
    // attention's scores, a head's slice of k) is no valid affine symbol
    // there: it becomes the size the buffer was made with, defined outside
    // (a size of the entry).
    SmallVector<memref::DimOp> dims;
    getOperation().walk([&](memref::DimOp dim) { dims.push_back(dim); });
    for (memref::DimOp dim : dims) {
      std::optional<int64_t> index = dim.getConstantIndex();
      if (!index)
        continue;
      std::optional<OpFoldResult> source =
          getSourceSize(dim.getSource(), *index);
      if (!source)
        continue;
      OpFoldResult size = *source;
      if (auto value = dyn_cast<Value>(size)) {
        if (value != dim.getResult())
          rewriter.replaceAllUsesWith(dim.getResult(), value);
      } else {
        rewriter.setInsertionPoint(dim);
        rewriter.replaceOp(
            dim, arith::ConstantIndexOp::create(rewriter, dim.getLoc(),
                                                *getConstantIntValue(size)));
      }
    }
  }

private:
  /// Dimension `dim` of `memref` from what made it: an allocation's or a
  /// subview's size, an expand_shape's output size, the source's size
  /// through a collapse_shape that keeps that dimension whole, an entry's
  /// size argument, or a static extent; none when it is none of those.
  static std::optional<OpFoldResult> getSourceSize(Value memref, int64_t dim) {
    auto type = cast<MemRefType>(memref.getType());
    if (dim < 0 || dim >= type.getRank())
      return std::nullopt;
    if (!type.isDynamicDim(dim))
      return OpFoldResult(IntegerAttr::get(IndexType::get(memref.getContext()),
                                           type.getDimSize(dim)));
    Operation *def = memref.getDefiningOp();
    if (auto alloc = dyn_cast_or_null<memref::AllocOp>(def))
      return OpFoldResult(
          alloc.getDynamicSizes()[type.getDynamicDimIndex(dim)]);
    if (auto alloca = dyn_cast_or_null<memref::AllocaOp>(def))
      return OpFoldResult(
          alloca.getDynamicSizes()[type.getDynamicDimIndex(dim)]);
    if (auto subview = dyn_cast_or_null<memref::SubViewOp>(def)) {
      // (Rank-reducing subviews drop unit sizes: counted by position.)
      llvm::SmallBitVector dropped = subview.getDroppedDims();
      int64_t kept = -1;
      for (auto [i, size] : llvm::enumerate(subview.getMixedSizes()))
        if (!dropped.test(i) && ++kept == dim)
          return size;
      return std::nullopt;
    }
    if (auto expand = dyn_cast_or_null<memref::ExpandShapeOp>(def))
      return expand.getMixedOutputShape()[dim];
    if (auto collapse = dyn_cast_or_null<memref::CollapseShapeOp>(def)) {
      auto sourceType = cast<MemRefType>(collapse.getSrc().getType());
      SmallVector<ReassociationIndices> groups =
          collapse.getReassociationIndices();
      SmallVector<int64_t> whole;
      for (int64_t d : groups[dim])
        if (sourceType.getDimSize(d) != 1)
          whole.push_back(d);
      if (whole.size() == 1)
        return getSourceSize(collapse.getSrc(), whole.front());
      return std::nullopt;
    }
    if (auto arg = dyn_cast<BlockArgument>(memref))
      if (Value size = pb::getDimArg(arg, dim))
        return OpFoldResult(size);
    return std::nullopt;
  }
};
} // namespace
