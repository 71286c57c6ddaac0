//===- InitAll.h - Register everything PolyBlocks defines ---*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef PB_INITALL_H
#define PB_INITALL_H

namespace mlir {
class DialectRegistry;
namespace pb {

/// Adds the pb dialect to `registry`.
void registerAllDialects(DialectRegistry &registry);

/// Registers every PolyBlocks pass and pass pipeline with the global
/// registry (for pb-opt and the C API).
void registerAllPasses();

} // namespace pb
} // namespace mlir

#endif // PB_INITALL_H
