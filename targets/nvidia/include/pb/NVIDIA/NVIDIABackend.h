//===- NVIDIABackend.h - S4/S5 for NVIDIA GPUs ----------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef PB_NVIDIA_NVIDIABACKEND_H
#define PB_NVIDIA_NVIDIABACKEND_H

#include "pb/GPU/GPUCommon.h"
#include "pb/Target/Backend.h"
#include "pb/Target/TargetDesc.h"
#include "pb/Transforms/Roofline.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/Support/JSON.h"

namespace mlir::pb::nvidia {

#define GEN_PASS_DECL
#include "pb/NVIDIA/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "pb/NVIDIA/Passes.h.inc"

// The shared GPU layer's helpers, used by the tensor-core kernels.
using gpucommon::getLaunchLimits;
using gpucommon::LaunchLimits;
using gpucommon::sinkIntoLaunch;

/// S5: the PTX of every kernel (assembled into a cubin when ptxas is found)
/// and the launch plan of every entry, as one JSON document. (One thread;
/// `options` and `timing` are not used yet.)
LogicalResult emitNVIDIA(ModuleOp module, const ChipDesc &chip,
                         const EmitOptions &options, TimingScope &timing,
                         EmittedBinary &binary);

/// The Tile IR path's S5 (AssembleTileIR.cpp). The launch plan entry of a
/// `tileir.launch` (the block from the chip's TileIRPath until the cubin
/// gives it); failure after an error on other operations.
FailureOr<llvm::json::Object> describeTileIRLaunch(Operation *op,
                                                   const ChipDesc &chip);
/// Writes each `tileir.module` of `module` as bytecode and, when tileiras
/// is found ($POLYBLOCKS_TILEIRAS, else PATH), assembles it for the chip;
/// appends the payload's modules to `modules`, sets the block size and
/// static shared memory of their launches in `entries` from the cubins,
/// and erases the Tile IR modules.
LogicalResult emitTileIRModules(ModuleOp module, const ChipDesc &chip,
                                llvm::json::Array &modules,
                                llvm::json::Array &entries);

/// Registers the NVIDIA passes, the `pb-nvidia-s4` pipeline and the NVIDIA
/// backend (pb::registerTargetBackend).
void registerNVIDIABackend();

} // namespace mlir::pb::nvidia

#endif // PB_NVIDIA_NVIDIABACKEND_H
