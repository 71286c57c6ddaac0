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

namespace {
class PBLowerToAffinePass
    : public pb::impl::PBLowerToAffinePassBase<PBLowerToAffinePass> {
public:
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op.hasPureBufferSemantics() && !linalg::isaContractionOpInterface(op))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
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
