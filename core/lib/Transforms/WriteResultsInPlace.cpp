//===- WriteResultsInPlace.cpp - Results of run-time size in place --------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// pb-write-results-in-place (S2): an out-parameter filled by a copy of a
// whole allocation of its own run-time sizes takes the allocation's place
// (what upstream's hoist-static-allocs does for static shapes). A result
// that updates an argument (pb.in_place) is left in the argument's buffer:
// its out-parameter is not written.
//
//===----------------------------------------------------------------------===//

#include "pb/Transforms/DimArgs.h"
#include "pb/Transforms/InPlace.h"
#include "pb/Transforms/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::pb {
#define GEN_PASS_DEF_PBWRITERESULTSINPLACEPASS
#include "pb/Transforms/Passes.h.inc"
} // namespace mlir::pb

using namespace mlir;

/// Whether `alloc` has the sizes of `out`, an argument whose dynamic
/// dimensions pb.dim_args names.
static bool hasSizesOf(memref::AllocOp alloc, BlockArgument out) {
  MemRefType type = alloc.getType();
  if (type != out.getType() || !type.getLayout().isIdentity())
    return false;
  for (int64_t dim = 0, rank = type.getRank(); dim < rank; ++dim) {
    if (!type.isDynamicDim(dim))
      continue;
    Value size = pb::getDimArg(out, dim);
    if (!size || alloc.getDynamicSizes()[type.getDynamicDimIndex(dim)] != size)
      return false;
  }
  return true;
}

namespace {
class PBWriteResultsInPlacePass
    : public pb::impl::PBWriteResultsInPlacePassBase<
          PBWriteResultsInPlacePass> {
public:
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    Block &entry = func.getBody().front();
    SmallVector<memref::CopyOp> copies;
    for (auto copy : entry.getOps<memref::CopyOp>())
      copies.push_back(copy);
    for (memref::CopyOp copy : copies) {
      auto out = dyn_cast<BlockArgument>(copy.getTarget());
      auto alloc = copy.getSource().getDefiningOp<memref::AllocOp>();
      if (!out || out.getOwner() != &entry || !alloc ||
          alloc->getBlock() != &entry || !out.hasOneUse() ||
          !hasSizesOf(alloc, out))
        continue;
      // The copy is the allocation's last use.
      bool last = llvm::all_of(alloc->getUsers(), [&](Operation *user) {
        Operation *inEntry = entry.findAncestorOpInBlock(*user);
        return user == copy || (inEntry && inEntry->isBeforeInBlock(copy));
      });
      if (!last)
        continue;
      copy->erase();
      alloc.getResult().replaceAllUsesWith(out);
      alloc->erase();
    }
    for (BlockArgument out : entry.getArguments())
      if (auto arg = func.getArgAttrOfType<IntegerAttr>(out.getArgNumber(),
                                                        pb::kInPlaceAttrName))
        if (failed(updateInPlace(func, entry.getArgument(arg.getInt()), out)))
          return signalPassFailure();
  }

private:
  /// `out`, the out-parameter of a result that updates `arg`: the caller
  /// passes `arg`'s buffer for both. Bufferization wrote the update into
  /// `arg` itself (then `out` is only its copy's target: the copy goes) or
  /// computed it elsewhere (then into a buffer of its own, copied to `arg`
  /// at the end, when nothing reads `arg` any more).
  static LogicalResult updateInPlace(func::FuncOp func, BlockArgument arg,
                                     BlockArgument out) {
    Block &entry = func.getBody().front();
    if (out.hasOneUse())
      if (auto copy = dyn_cast<memref::CopyOp>(*out.getUsers().begin()))
        if (copy.getSource() == arg && copy.getTarget() == out &&
            copy->getBlock() == &entry) {
          copy->erase();
          return success();
        }
    auto type = cast<MemRefType>(out.getType());
    if (type != arg.getType())
      return func.emitError() << "argument " << arg.getArgNumber()
                              << " is updated in place by a result of "
                                 "another buffer type ("
                              << type << ")";
    OpBuilder b = OpBuilder::atBlockBegin(&entry);
    SmallVector<Value> sizes;
    for (int64_t dim = 0, rank = type.getRank(); dim < rank; ++dim)
      if (type.isDynamicDim(dim)) {
        Value size = pb::getDimArg(out, dim);
        if (!size)
          return func.emitError() << "out-parameter " << out.getArgNumber()
                                  << " has no size for dimension " << dim;
        sizes.push_back(size);
      }
    auto alloc = memref::AllocOp::create(b, func.getLoc(), type, sizes);
    out.replaceAllUsesWith(alloc.getResult());
    b.setInsertionPoint(entry.getTerminator());
    memref::CopyOp::create(b, func.getLoc(), alloc.getResult(), arg);
    return success();
  }
};
} // namespace
