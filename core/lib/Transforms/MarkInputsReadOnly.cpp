//===- MarkInputsReadOnly.cpp - Entry arguments stay unwritten
//-------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "pb/Transforms/Passes.h"

namespace mlir::pb {
#define GEN_PASS_DEF_PBMARKINPUTSREADONLYPASS
#include "pb/Transforms/Passes.h.inc"
} // namespace mlir::pb

using namespace mlir;

namespace {
class PBMarkInputsReadOnlyPass
    : public pb::impl::PBMarkInputsReadOnlyPassBase<PBMarkInputsReadOnlyPass> {
public:
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (!func.isPublic() || func.isExternal())
      return;
    auto readOnly = BoolAttr::get(&getContext(), false);
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
      if (isa<TensorType>(func.getArgument(i).getType()))
        func.setArgAttr(i, "bufferization.writable", readOnly);
  }
};
} // namespace
