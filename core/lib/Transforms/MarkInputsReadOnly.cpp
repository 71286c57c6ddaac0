//===- MarkInputsReadOnly.cpp - Entry arguments stay unwritten
//-------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "pb/Transforms/InPlace.h"
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
    // An argument that a result updates in place (pb.in_place) is
    // writable: bufferization may then write the update into its buffer.
    SmallVector<int64_t> updated;
    for (unsigned r = 0, e = func.getNumResults(); r < e; ++r)
      if (auto arg =
              func.getResultAttrOfType<IntegerAttr>(r, pb::kInPlaceAttrName))
        updated.push_back(arg.getInt());
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
      if (isa<TensorType>(func.getArgument(i).getType()))
        func.setArgAttr(
            i, "bufferization.writable",
            BoolAttr::get(&getContext(), llvm::is_contained(updated, i)));
  }
};
} // namespace
