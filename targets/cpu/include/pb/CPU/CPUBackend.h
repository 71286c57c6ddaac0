//===- CPUBackend.h - S4/S5 for CPUs -------------------------------*- C++
//-*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef PB_CPU_CPUBACKEND_H
#define PB_CPU_CPUBACKEND_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::pb::cpu {

#define GEN_PASS_DECL
#include "pb/CPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "pb/CPU/Passes.h.inc"

/// Prefix of the packed-argument wrapper of every entry function.
inline constexpr llvm::StringLiteral kEntryWrapperPrefix = "__pb_entry_";

/// Registers the CPU passes, the `pb-cpu-s4` pipeline and the CPU backend
/// (pb::registerTargetBackend).
void registerCPUBackend();

} // namespace mlir::pb::cpu

#endif // PB_CPU_CPUBACKEND_H
