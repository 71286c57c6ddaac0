//===- GPUCommon.h - S4/S5 pieces shared by the GPU vendors ----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What a GPU back end needs whatever its vendor: the passes that map S3's
// parallel loops onto a grid of blocks of threads (sizes from the chip's
// compute and memory levels), check the launches against the chip's limits,
// state the vector accesses' alignment and keep each launch's work for the
// roofline estimate; and S5's launch plan (the buffers and launches of every
// entry, as JSON) with the estimate of every launch. The vendors
// (targets/nvidia, targets/amd) add their kernels' code and binaries; they
// include this and never each other.
//
//===----------------------------------------------------------------------===//

#ifndef PB_GPU_GPUCOMMON_H
#define PB_GPU_GPUCOMMON_H

#include <functional>

#include "pb/Target/TargetDesc.h"
#include "pb/Transforms/Roofline.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/JSON.h"

#include <optional>

namespace mlir::pb::gpucommon {

#define GEN_PASS_DECL
#include "pb/GPU/Passes.h.inc"

/// Registers the shared GPU passes (once, whichever vendor asks first).
void registerGPUCommonPasses();

/// The launch limits of a GPU chip, read from its compute and memory levels.
struct LaunchLimits {
  /// Lanes per warp or wavefront (the Lane level's fixed count).
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

/// The operations before `op` (a contraction a matrix kernel replaces) that
/// zero-fill its C and can go, the kernel's accumulators starting at 0:
/// statements that only store zeros to C, and zero stores to C inside
/// statements fused with other work; when C is a buffer of this function
/// that nothing before `op` reads and, with an `epilogue` (which does not
/// store C), that nothing after `op` but the epilogue uses. Empty
/// otherwise. With `entryArguments`, C may also be an argument of the
/// entry (a result the caller reads) when there is no epilogue or one that
/// overwrites C in place: the kernel then writes all of it.
SmallVector<Operation *> findRemovableZeroFills(linalg::LinalgOp op,
                                                Operation *epilogue,
                                                bool entryArguments = false);

/// Applies `epilogue` (an elementwise generic that reads the contraction's
/// C, `cMem`, through a permutation of its loops) to the result `value` of
/// C at `cIndex`: its other inputs are read and its output written at their
/// projections of the loops C's index gives; C itself is not stored.
void storeThroughEpilogue(OpBuilder &b, linalg::GenericOp epilogue, Value cMem,
                          ArrayRef<Value> cIndex, Value value);

/// The chip's matrix unit named by `op`'s `pb.matrix_unit` tag, which this
/// removes; null, after an error on `op`, when the chip has none of that
/// name.
const MatrixUnitDesc *takeTaggedUnit(linalg::LinalgOp op, const ChipDesc &chip);

/// What a matrix kernel replacing `op` takes in besides `op`.
struct MatrixKernelParts {
  /// The epilogue S3 tagged, moved right after `op`, or null.
  linalg::GenericOp epilogue;
  /// C's zero fills the kernel's accumulators replace
  /// (findRemovableZeroFills).
  SmallVector<Operation *> fills;
  /// The kernel's work for the roofline estimate.
  Work work;
};
/// The parts of the kernel for `op`, whose `multiplyAdds` run on a unit of
/// `unitType`.
MatrixKernelParts prepareMatrixKernel(linalg::LinalgOp op, ElementType unitType,
                                      double multiplyAdds);
/// Once the kernel is built right before `op`: its launch gets the work,
/// the fills, the epilogue (explained) and `op` go.
void finishMatrixKernel(linalg::LinalgOp op, const MatrixKernelParts &parts,
                        llvm::StringRef unitName);

/// The launch plan of S4's output (docs/NVIDIA.md, "The launch plan"): one
/// JSON object per public entry,
///   {"name", "buffers": [{"kind": "argument", "index"} |
///                        {"kind": "temporary", "bytes"}],
///    "launches": [{"module", "kernel", "grid": [x, y, z],
///                  "block": [x, y, z], "dynamic_shared_memory_bytes",
///                  "static_shared_memory_bytes", "args": [buffer, ...]}]}
/// and each entry's launch work (the `pb.launch_work` S4 kept, which this
/// removes from the entry). Errors name `vendor` ("S5 (amd): ...").
struct LaunchPlan {
  llvm::json::Array entries;
  SmallVector<SmallVector<std::optional<Work>>> works;
  /// Each launch's source location ("file:line:col", or "").
  SmallVector<SmallVector<std::string>> locations;
};
/// A launch of a kernel a back end built in its own IR (an operation with
/// `pb.kernel_launch`): its plan entry ({"module", "kernel", "grid",
/// "block", shared memory bytes}; "args" are added from its operands), or
/// failure after an error.
using DescribeKernelLaunch =
    std::function<FailureOr<llvm::json::Object>(Operation *)>;
FailureOr<LaunchPlan>
describeLaunchPlan(ModuleOp module, llvm::StringRef vendor,
                   const DescribeKernelLaunch &describeKernelLaunch = {});

/// Adds to every launch of `plan` its estimate (the work S4 counted, the
/// launch's shape, the kernel's registers per thread where the vendor's
/// assembler reported them, by module name) and returns the estimate of
/// every entry for the metadata: the launches, their sum and the entry's
/// roofline (its bytes and FLOPs at the chip's peaks).
llvm::json::Value
estimateLaunchPlan(const ChipDesc &chip, LaunchPlan &plan,
                   const llvm::StringMap<int64_t> &registersByModule);

} // namespace mlir::pb::gpucommon

#endif // PB_GPU_GPUCOMMON_H
