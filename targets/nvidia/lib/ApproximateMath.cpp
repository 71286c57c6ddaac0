//===- ApproximateMath.cpp - Polynomial approximations in kernels ---------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "pb/NVIDIA/NVIDIABackend.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::pb::nvidia {
#define GEN_PASS_DEF_PBNVIDIAAPPROXIMATEMATHPASS
#include "pb/NVIDIA/Passes.h.inc"
} // namespace mlir::pb::nvidia

using namespace mlir;

namespace {
class PBNVIDIAApproximateMathPass
    : public pb::nvidia::impl::PBNVIDIAApproximateMathPassBase<
          PBNVIDIAApproximateMathPass> {
public:
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns, [](StringRef name) {
      name.consume_front("math.");
      return llvm::is_contained(ArrayRef<StringRef>{"exp", "expm1", "log",
                                                    "log1p", "log2", "tanh",
                                                    "erf", "atan"},
                                name);
    });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
