//===- NVIDIABackend.h - S4/S5 for NVIDIA GPUs ----------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef PB_NVIDIA_NVIDIABACKEND_H
#define PB_NVIDIA_NVIDIABACKEND_H

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

namespace mlir::pb::nvidia {

#define GEN_PASS_DECL
#include "pb/NVIDIA/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "pb/NVIDIA/Passes.h.inc"

/// The launch limits of a GPU chip, read from its compute and memory levels.
struct LaunchLimits {
  /// Lanes per warp (the Lane level's fixed count).
  int64_t warpSize = 0;
  /// Threads per block: warps per block (the Subgroup level's maximum) times
  /// the warp size.
  int64_t maxThreadsPerBlock = 0;
  /// Blocks along the grid's x dimension (the Block level's maximum), or 0
  /// when the chip states no limit.
  int64_t maxBlocksPerGrid = 0;
  /// Bytes of shared memory one block may use (the Scratchpad level).
  int64_t sharedBytesPerBlock = 0;
};

/// The limits of `chip`; an error on `op` when the chip lacks a level they
/// come from.
FailureOr<LaunchLimits> getLaunchLimits(Operation *op, const ChipDesc &chip);

/// Clones into `launch` the host-side ops whose values it uses, transitively,
/// when they are views of buffers (subview, reshapes, casts), globals'
/// addresses or pure region-free ops, so that the kernel's arguments are
/// whole buffers (the launch plan's terms). Upstream's
/// sinkOperationsIntoLaunchOp keeps a view whose source the kernel does not
/// use directly.
void sinkIntoLaunch(gpu::LaunchOp launch);

/// One line describing a launch's estimate (explain remarks, pb-compile
/// --estimate): bytes, FLOPs, shape, occupancy, waves and times.
std::string describeEstimate(const Work &work, const LaunchShape &shape,
                             const LaunchEstimate &estimate);

/// S5: the PTX of every kernel (assembled into a cubin when ptxas is found)
/// and the launch plan of every entry, as one JSON document. (One thread;
/// `options` and `timing` are not used yet.)
LogicalResult emitNVIDIA(ModuleOp module, const ChipDesc &chip,
                         const EmitOptions &options, TimingScope &timing,
                         EmittedBinary &binary);

/// Registers the NVIDIA passes, the `pb-nvidia-s4` pipeline and the NVIDIA
/// backend (pb::registerTargetBackend).
void registerNVIDIABackend();

} // namespace mlir::pb::nvidia

#endif // PB_NVIDIA_NVIDIABACKEND_H
