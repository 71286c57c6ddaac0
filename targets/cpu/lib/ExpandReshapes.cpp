//===- ExpandReshapes.cpp - expand_shape of several run-time sizes --------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// pb-cpu-expand-reshapes (S4): upstream expand-strided-metadata crashes on a
// memref.expand_shape that splits one dimension into several of run-time
// size (it reads their sizes as constants). Such an op becomes the view it
// stands for, a reinterpret_cast of its source's base buffer with the
// strides the split implies.
//
//===----------------------------------------------------------------------===//

#include "IndexProducts.h"
#include "pb/CPU/CPUBackend.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"

namespace mlir::pb::cpu {
#define GEN_PASS_DEF_PBCPUEXPANDRESHAPESPASS
#include "pb/CPU/Passes.h.inc"
} // namespace mlir::pb::cpu

using namespace mlir;

/// True when a group of `op`'s reassociation has more than one dimension
/// of run-time size.
static bool splitsIntoRunTimeSizes(memref::ExpandShapeOp op) {
  ArrayRef<int64_t> shape = op.getResultType().getShape();
  for (const ReassociationIndices &group : op.getReassociationIndices())
    if (llvm::count_if(group, [&](int64_t d) {
          return ShapedType::isDynamic(shape[d]);
        }) > 1)
      return true;
  return false;
}

/// `value` as the result type states it: its static value where the type
/// has one, else an SSA value.
static OpFoldResult asTypeStates(OpBuilder &b, Location loc, OpFoldResult value,
                                 int64_t stated) {
  if (!ShapedType::isDynamic(stated))
    return b.getIndexAttr(stated);
  return getValueOrCreateConstantIndexOp(b, loc, value);
}

static LogicalResult rewrite(memref::ExpandShapeOp op) {
  MemRefType result = op.getResultType();
  SmallVector<int64_t> statedStrides;
  int64_t statedOffset;
  if (failed(result.getStridesAndOffset(statedStrides, statedOffset)))
    return op.emitError("an expanded buffer without strides");
  OpBuilder b(op);
  Location loc = op.getLoc();
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, op.getSrc());
  SmallVector<OpFoldResult> outShape = op.getMixedOutputShape();
  SmallVector<OpFoldResult> sourceStrides =
      getAsOpFoldResult(meta.getStrides());
  SmallVector<OpFoldResult> strides(result.getRank());
  for (auto [source, group] : llvm::enumerate(op.getReassociationIndices())) {
    OpFoldResult stride = sourceStrides[source];
    for (int64_t d : llvm::reverse(group)) {
      strides[d] = stride;
      if (d != group.front())
        stride = pb::cpu::multiplyIndices(b, loc, stride, outShape[d]);
    }
  }
  SmallVector<OpFoldResult> sizes;
  for (auto [d, size] : llvm::enumerate(outShape)) {
    sizes.push_back(asTypeStates(b, loc, size, result.getDimSize(d)));
    strides[d] = asTypeStates(b, loc, strides[d], statedStrides[d]);
  }
  OpFoldResult offset =
      asTypeStates(b, loc, getAsOpFoldResult(meta.getOffset()), statedOffset);
  auto view = memref::ReinterpretCastOp::create(
      b, loc, result, meta.getBaseBuffer(), offset, sizes, strides);
  op.getResult().replaceAllUsesWith(view.getResult());
  op.erase();
  return success();
}

namespace {
class PBCPUExpandReshapesPass
    : public pb::cpu::impl::PBCPUExpandReshapesPassBase<
          PBCPUExpandReshapesPass> {
public:
  void runOnOperation() override {
    SmallVector<memref::ExpandShapeOp> ops;
    getOperation().walk([&](memref::ExpandShapeOp op) {
      if (splitsIntoRunTimeSizes(op))
        ops.push_back(op);
    });
    for (memref::ExpandShapeOp op : ops)
      if (failed(rewrite(op)))
        return signalPassFailure();
  }
};
} // namespace
