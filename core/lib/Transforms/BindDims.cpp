//===- BindDims.cpp - Dynamic dimensions of arguments as size arguments ---===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// pb-bind-dims (S1, and S2 after bufferization): a tensor.dim or memref.dim
// of a function argument's dynamic dimension becomes the size argument that
// `pb.dim_args` names for it. Also the helpers of pb/Transforms/DimArgs.h.
//
//===----------------------------------------------------------------------===//

#include "pb/Transforms/DimArgs.h"
#include "pb/Transforms/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::pb {
#define GEN_PASS_DEF_PBBINDDIMSPASS
#include "pb/Transforms/Passes.h.inc"
} // namespace mlir::pb

using namespace mlir;

std::string mlir::pb::checkDimArgs(FunctionOpInterface func, Type type,
                                   Attribute attr) {
  auto shaped = dyn_cast<ShapedType>(type);
  bool dynamic = shaped && shaped.hasRank() && !shaped.hasStaticShape();
  if (!attr)
    return dynamic ? "has a dynamic shape but no pb.dim_args naming the "
                     "size arguments of its dynamic dimensions"
                   : "";
  std::string reason;
  llvm::raw_string_ostream os(reason);
  auto positions = dyn_cast<DenseI64ArrayAttr>(attr);
  if (!positions || !shaped || !shaped.hasRank()) {
    os << "has a pb.dim_args that is no array<i64> of a ranked shape";
    return reason;
  }
  if (positions.size() != shaped.getRank()) {
    os << "has a pb.dim_args of " << positions.size() << " elements for "
       << shaped.getRank() << " dimensions";
    return reason;
  }
  ArrayRef<Type> inputs = func.getArgumentTypes();
  for (auto [dim, position] : llvm::enumerate(positions.asArrayRef())) {
    if (!shaped.isDynamicDim(dim)) {
      if (position != -1) {
        os << "has a pb.dim_args naming argument " << position
           << " for its static dimension " << dim << " (-1 expected)";
        return reason;
      }
      continue;
    }
    if (position < 0 || position >= int64_t(inputs.size()) ||
        !inputs[position].isIndex()) {
      os << "has a pb.dim_args whose element " << dim << " (" << position
         << ") is no position of an index argument of '" << func.getName()
         << "'";
      return reason;
    }
  }
  return reason;
}

Value mlir::pb::getDimArg(BlockArgument arg, int64_t dim) {
  auto func = dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp());
  if (!func || arg.getOwner() != &func.getFunctionBody().front())
    return nullptr;
  auto positions = dyn_cast_or_null<DenseI64ArrayAttr>(
      func.getArgAttr(arg.getArgNumber(), kDimArgsAttrName));
  if (!positions || dim < 0 || dim >= positions.size() || positions[dim] < 0 ||
      positions[dim] >= int64_t(func.getNumArguments()))
    return nullptr;
  Value size = func.getArgument(positions[dim]);
  return size.getType().isIndex() ? size : nullptr;
}

namespace {
class PBBindDimsPass : public pb::impl::PBBindDimsPassBase<PBBindDimsPass> {
public:
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
      // Only a malformed pb.dim_args is an error here: dynamic arguments
      // without one are the input contract's to reject.
      Attribute attr = func.getArgAttr(i, pb::kDimArgsAttrName);
      std::string reason =
          attr ? pb::checkDimArgs(func, func.getArgument(i).getType(), attr)
               : "";
      if (!reason.empty()) {
        func.emitError() << "argument " << i << " of '" << func.getName()
                         << "' " << reason;
        return signalPassFailure();
      }
    }
    SmallVector<Operation *> dims;
    func.walk([&](Operation *op) {
      if (isa<tensor::DimOp, memref::DimOp>(op))
        dims.push_back(op);
    });
    for (Operation *op : dims) {
      Value source = op->getOperand(0);
      auto arg = dyn_cast<BlockArgument>(source);
      std::optional<int64_t> dim =
          isa<tensor::DimOp>(op) ? cast<tensor::DimOp>(op).getConstantIndex()
                                 : cast<memref::DimOp>(op).getConstantIndex();
      if (!arg || !dim)
        continue;
      if (Value size = pb::getDimArg(arg, *dim)) {
        op->getResult(0).replaceAllUsesWith(size);
        op->erase();
      }
    }
  }
};
} // namespace
