//===- InitBackends.h - Register every built vendor backend ---*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef PB_TARGETS_INITBACKENDS_H
#define PB_TARGETS_INITBACKENDS_H

namespace mlir::pb {

/// Registers the S4/S5 backends (and their passes and pipelines) of every
/// vendor this build includes (CMake's PB_TARGETS_TO_BUILD).
void registerAllTargetBackends();

} // namespace mlir::pb

#endif // PB_TARGETS_INITBACKENDS_H
