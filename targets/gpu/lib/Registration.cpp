//===- Registration.cpp - Register the shared GPU passes ------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "pb/GPU/GPUCommon.h"

namespace mlir::pb::gpucommon {
#define GEN_PASS_REGISTRATION
#include "pb/GPU/Passes.h.inc"
} // namespace mlir::pb::gpucommon

void mlir::pb::gpucommon::registerGPUCommonPasses() {
  static bool registered = [] {
    registerPBGPUPasses();
    return true;
  }();
  (void)registered;
}
