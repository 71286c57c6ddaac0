//===- AMDBackend.h - S4/S5 for AMD GPUs -----------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef PB_AMD_AMDBACKEND_H
#define PB_AMD_AMDBACKEND_H

#include "pb/Target/Backend.h"
#include "pb/Target/TargetDesc.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::pb::amd {

#define GEN_PASS_DECL
#include "pb/AMD/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "pb/AMD/Passes.h.inc"

/// S5: every kernel module compiled by LLVM's AMDGPU back end for the
/// chip into an object, with the ROCm device libraries linked where the
/// kernels call them (ocml, ockl), and linked by ld.lld into a code object;
/// the launch plan of every entry, as one JSON document
/// ("amd-hsaco+plan", docs/AMD.md).
LogicalResult emitAMD(ModuleOp module, const ChipDesc &chip,
                      const EmitOptions &options, TimingScope &timing,
                      EmittedBinary &binary);

/// Registers the AMD passes, the `pb-amd-s4` pipeline, the shared GPU passes
/// and the AMD
/// backend (pb::registerTargetBackend).
void registerAMDBackend();

} // namespace mlir::pb::amd

#endif // PB_AMD_AMDBACKEND_H
