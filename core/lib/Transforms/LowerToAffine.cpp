//===- LowerToAffine.cpp - linalg on buffers to affine loops
//---------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "pb/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::pb {
#define GEN_PASS_DEF_PBLOWERTOAFFINEPASS
#include "pb/Transforms/Passes.h.inc"
} // namespace mlir::pb

using namespace mlir;

bool mlir::pb::isMultiplyAccumulate(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() == 0 || op->getNumRegions() != 1)
    return false;
  Block &body = op->getRegion(0).front();
  if (body.getNumArguments() != 3 || body.getOperations().size() != 3)
    return false;
  auto yield = dyn_cast<linalg::YieldOp>(body.getTerminator());
  if (!yield || yield.getNumOperands() != 1)
    return false;
  Operation *add = yield.getOperand(0).getDefiningOp();
  if (!add || !isa<arith::AddFOp, arith::AddIOp>(add))
    return false;
  Value acc = body.getArgument(2);
  Value product =
      add->getOperand(0) == acc ? add->getOperand(1) : add->getOperand(0);
  if (add->getOperand(0) != acc && add->getOperand(1) != acc)
    return false;
  Operation *mul = product.getDefiningOp();
  if (!mul || !isa<arith::MulFOp, arith::MulIOp>(mul))
    return false;
  Value x = mul->getOperand(0), y = mul->getOperand(1);
  return (x == body.getArgument(0) && y == body.getArgument(1)) ||
         (x == body.getArgument(1) && y == body.getArgument(0));
}

namespace {
class PBLowerToAffinePass
    : public pb::impl::PBLowerToAffinePassBase<PBLowerToAffinePass> {
public:
  void runOnOperation() override {
    // memref.copy between strided views (a tensor.pad's interior, a slice)
    // would otherwise become a call into MLIR's runner library; as a
    // linalg.copy it becomes an affine nest that S3 can fuse and vectorize.
    IRRewriter rewriter(&getContext());
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp copy) { copies.push_back(copy); });
    for (memref::CopyOp copy : copies) {
      rewriter.setInsertionPoint(copy);
      linalg::CopyOp::create(rewriter, copy.getLoc(), copy.getSource(),
                             copy.getTarget());
      rewriter.eraseOp(copy);
    }

    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op.hasPureBufferSemantics() && !pb::isMultiplyAccumulate(op))
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
