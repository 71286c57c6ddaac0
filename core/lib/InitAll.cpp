//===- InitAll.cpp - Register everything PolyBlocks defines
//----------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "pb/InitAll.h"
#include "pb/Dialect/PBDialect.h"
#include "pb/Transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"

void mlir::pb::registerAllDialects(DialectRegistry &registry) {
  registry.insert<PBDialect>();
}

void mlir::pb::registerAllPasses() {
  registerPBPasses();
  registerPBPipelines();
}
