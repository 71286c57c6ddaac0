//===- DistinctResults.cpp - One tensor per entry result
//--------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "pb/Transforms/Passes.h"

#include "llvm/ADT/DenseSet.h"

namespace mlir::pb {
#define GEN_PASS_DEF_PBDISTINCTRESULTSPASS
#include "pb/Transforms/Passes.h.inc"
} // namespace mlir::pb

using namespace mlir;

namespace {
class PBDistinctResultsPass
    : public pb::impl::PBDistinctResultsPassBase<PBDistinctResultsPass> {
public:
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (!func.isPublic() || func.isExternal())
      return;
    func.walk([&](func::ReturnOp ret) {
      llvm::DenseSet<Value> seen;
      OpBuilder b(ret);
      for (OpOperand &operand : ret->getOpOperands()) {
        Value value = operand.get();
        auto type = dyn_cast<RankedTensorType>(value.getType());
        if (!type || seen.insert(value).second)
          continue;
        Value empty = tensor::EmptyOp::create(
            b, ret.getLoc(), tensor::getMixedSizes(b, ret.getLoc(), value),
            type.getElementType());
        operand.set(
            linalg::CopyOp::create(b, ret.getLoc(), value, empty).getResult(0));
      }
    });
  }
};
} // namespace
