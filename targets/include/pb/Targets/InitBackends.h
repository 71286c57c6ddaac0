//===- InitBackends.h - Register every built vendor backend ---*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef PB_TARGETS_INITBACKENDS_H
#define PB_TARGETS_INITBACKENDS_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::pb {

/// Registers the S4/S5 backends (and their passes and pipelines) of every
/// vendor this build includes (CMake's PB_TARGETS_TO_BUILD).
void registerAllTargetBackends();

/// The dialects of the built vendors' own IRs (NVIDIA's Tile IR), so that
/// the drivers parse and print them.
void registerAllTargetDialects(DialectRegistry &registry);

} // namespace mlir::pb

#endif // PB_TARGETS_INITBACKENDS_H
