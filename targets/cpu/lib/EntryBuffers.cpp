//===- EntryBuffers.cpp - Dynamic entry buffers as bare pointers ----------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// pb-cpu-entry-buffers (S4): the bare-pointer calling convention of the
// LLVM lowering takes only statically shaped memrefs. An entry's buffer of
// dynamic shape is passed as a rank-0 memref (a bare pointer) and viewed
// with its sizes, the entry's size arguments, by a reinterpret_cast.
//
//===----------------------------------------------------------------------===//

#include "IndexProducts.h"
#include "pb/CPU/CPUBackend.h"
#include "pb/Transforms/DimArgs.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"

namespace mlir::pb::cpu {
#define GEN_PASS_DEF_PBCPUENTRYBUFFERSPASS
#include "pb/CPU/Passes.h.inc"
} // namespace mlir::pb::cpu

using namespace mlir;

namespace {
class PBCPUEntryBuffersPass
    : public pb::cpu::impl::PBCPUEntryBuffersPassBase<PBCPUEntryBuffersPass> {
public:
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (!func.isPublic() || func.isExternal())
        continue;
      if (failed(rewrite(func)))
        return signalPassFailure();
    }
  }

private:
  LogicalResult rewrite(func::FuncOp func) {
    Block &entry = func.getBody().front();
    OpBuilder builder = OpBuilder::atBlockBegin(&entry);
    SmallVector<Type> inputs(func.getArgumentTypes());
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
      auto type = dyn_cast<MemRefType>(inputs[i]);
      if (!type || type.hasStaticShape())
        continue;
      BlockArgument arg = entry.getArgument(i);
      if (!type.getLayout().isIdentity())
        return func.emitError()
               << "argument " << i << " of entry '" << func.getName()
               << "' is a buffer of dynamic shape without the identity "
                  "layout ("
               << type << ")";
      // Sizes: the size arguments; strides: the products of the sizes to
      // the right (row-major).
      Location loc = arg.getLoc();
      int64_t rank = type.getRank();
      SmallVector<OpFoldResult> sizes(rank), strides(rank);
      OpFoldResult stride = builder.getIndexAttr(1);
      for (int64_t d = rank - 1; d >= 0; --d) {
        if (type.isDynamicDim(d)) {
          Value size = pb::getDimArg(arg, d);
          if (!size)
            return func.emitError()
                   << "argument " << i << " of entry '" << func.getName()
                   << "' has a dynamic dimension " << d
                   << " that no size argument holds (pb.dim_args)";
          sizes[d] = size;
        } else {
          sizes[d] = builder.getIndexAttr(type.getDimSize(d));
        }
        strides[d] = stride;
        if (d > 0)
          stride = pb::cpu::multiplyIndices(builder, loc, stride, sizes[d]);
      }
      auto pointer =
          MemRefType::get({}, type.getElementType(),
                          MemRefLayoutAttrInterface(), type.getMemorySpace());
      arg.setType(pointer);
      inputs[i] = pointer;
      auto view = memref::ReinterpretCastOp::create(
          builder, loc, type, arg, builder.getIndexAttr(0), sizes, strides);
      arg.replaceAllUsesExcept(view.getResult(), view);
    }
    func.setFunctionType(
        builder.getFunctionType(inputs, func.getResultTypes()));
    return success();
  }
};
} // namespace
