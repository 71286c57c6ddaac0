//===- ApproximateMath.cpp - Polynomial approximations on CPUs
//-------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "pb/CPU/CPUBackend.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::pb::cpu {
#define GEN_PASS_DEF_PBCPUAPPROXIMATEMATHPASS
#include "pb/CPU/Passes.h.inc"
} // namespace mlir::pb::cpu

using namespace mlir;

namespace {
class PBCPUApproximateMathPass
    : public pb::cpu::impl::PBCPUApproximateMathPassBase<
          PBCPUApproximateMathPass> {
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
