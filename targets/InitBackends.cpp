//===- InitBackends.cpp - Register every built vendor backend -------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "pb/Targets/InitBackends.h"

#include "mlir/IR/DialectRegistry.h"

#ifdef PB_HAVE_CPU_BACKEND
#include "pb/CPU/CPUBackend.h"
#endif
#ifdef PB_HAVE_NVIDIA_BACKEND
#include "pb/NVIDIA/NVIDIABackend.h"
#include "pb/TileIR/TileIR.h"
#endif
#ifdef PB_HAVE_AMD_BACKEND
#include "pb/AMD/AMDBackend.h"
#endif

void mlir::pb::registerAllTargetBackends() {
#ifdef PB_HAVE_CPU_BACKEND
  cpu::registerCPUBackend();
#endif
#ifdef PB_HAVE_NVIDIA_BACKEND
  nvidia::registerNVIDIABackend();
#endif
#ifdef PB_HAVE_AMD_BACKEND
  amd::registerAMDBackend();
#endif
}

void mlir::pb::registerAllTargetDialects(DialectRegistry &registry) {
#ifdef PB_HAVE_NVIDIA_BACKEND
  registry.insert<tileir::TileIRDialect>();
#endif
  (void)registry;
}
