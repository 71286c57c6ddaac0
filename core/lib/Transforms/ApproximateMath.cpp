//===- ApproximateMath.cpp - Polynomial approximations of math functions ===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "pb/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::pb {
#define GEN_PASS_DEF_PBAPPROXIMATEMATHPASS
#include "pb/Transforms/Passes.h.inc"
} // namespace mlir::pb

using namespace mlir;

namespace {
class PBApproximateMathPass
    : public pb::impl::PBApproximateMathPassBase<PBApproximateMathPass> {
public:
  LogicalResult initialize(MLIRContext *context) override {
    // Built once: the CPU S4 runs the pass on every kernel function.
    RewritePatternSet set(context);
    populateMathPolynomialApproximationPatterns(set, [](StringRef name) {
      name.consume_front("math.");
      return llvm::is_contained(ArrayRef<StringRef>{"exp", "expm1", "log",
                                                    "log1p", "log2", "tanh",
                                                    "erf", "atan"},
                                name);
    });
    patterns = std::move(set);
    return success();
  }

  void runOnOperation() override {
    if (failed(applyPatternsGreedily(getOperation(), patterns)))
      return signalPassFailure();
  }

private:
  FrozenRewritePatternSet patterns;
};
} // namespace
