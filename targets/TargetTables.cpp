//===- TargetTables.cpp - The generated target tables
//----------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Compiles the tables pb-tblgen generated from a set of .td files. The same
// file builds the product tables (targets/AllTargets.td) and the test tables
// (test/tblgen/TestTargets.td, which adds the toy chip): it names no chip.
//
//===----------------------------------------------------------------------===//

#include "pb/Target/TargetDesc.h"

namespace mlir::pb {
namespace {
#include "cost-model.inc"
#include "matrix-units.inc"
#include "target-descriptors.inc"
#include "target-registry.inc"
} // namespace

llvm::ArrayRef<TargetRegistryEntry> getTargetRegistry() {
  return kTargetRegistry;
}
} // namespace mlir::pb
