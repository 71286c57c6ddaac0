//===- Explain.cpp - Reporting the decisions of passes
//---------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "pb/Transforms/Passes.h"

#include "mlir/IR/Diagnostics.h"

#include <atomic>

static std::atomic<bool> explainEnabled{false};

void mlir::pb::setExplainEnabled(bool enabled) { explainEnabled = enabled; }

bool mlir::pb::isExplainEnabled() { return explainEnabled; }

void mlir::pb::explain(Operation *op, const llvm::Twine &message) {
  if (explainEnabled)
    mlir::emitRemark(op->getLoc()) << "pb-explain: " << message;
}
