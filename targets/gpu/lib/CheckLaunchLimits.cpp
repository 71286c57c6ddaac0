//===- CheckLaunchLimits.cpp - GPU launches within the chip's limits ------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "pb/GPU/GPUCommon.h"

#include "pb/Dialect/PBDialect.h"

#include "mlir/IR/Matchers.h"

namespace mlir::pb::gpucommon {
#define GEN_PASS_DEF_PBGPUCHECKLAUNCHLIMITSPASS
#include "pb/GPU/Passes.h.inc"
} // namespace mlir::pb::gpucommon

using namespace mlir;
using namespace mlir::pb;

/// Bytes of the workgroup (shared-memory) buffers of a kernel body.
static std::optional<int64_t> getSharedBytes(ArrayRef<BlockArgument> buffers) {
  int64_t bytes = 0;
  for (BlockArgument buffer : buffers) {
    auto type = dyn_cast<MemRefType>(buffer.getType());
    if (!type || !type.hasStaticShape())
      return std::nullopt;
    bytes += type.getNumElements() *
             llvm::divideCeil(type.getElementTypeBitWidth(), 8);
  }
  return bytes;
}

static LogicalResult checkLaunch(Operation *op, const ChipDesc &chip,
                                 const gpucommon::LaunchLimits &limits,
                                 ValueRange grid, ValueRange block,
                                 ArrayRef<BlockArgument> shared,
                                 Value dynamicShared) {
  SmallVector<int64_t> sizes;
  for (Value size : llvm::concat<Value>(grid, block)) {
    APInt value;
    if (!matchPattern(size, m_ConstantInt(&value)))
      return op->emitError("grid and block sizes must be constants");
    sizes.push_back(value.getSExtValue());
  }
  if (llvm::any_of(sizes, [](int64_t size) { return size <= 0; }))
    return op->emitError("grid and block sizes must be positive");
  int64_t threads = sizes[3] * sizes[4] * sizes[5];
  if (threads > limits.maxThreadsPerBlock)
    return op->emitError() << "the launch has " << threads
                           << " threads per block; " << chip.name << " allows "
                           << limits.maxThreadsPerBlock;
  if (limits.maxBlocksPerGrid > 0 && sizes[0] > limits.maxBlocksPerGrid)
    return op->emitError() << "the launch has " << sizes[0]
                           << " blocks along x; " << chip.name << " allows "
                           << limits.maxBlocksPerGrid;
  std::optional<int64_t> bytes = getSharedBytes(shared);
  if (!bytes)
    return op->emitError("shared-memory buffers need static shapes");
  if (dynamicShared) {
    APInt value;
    if (!matchPattern(dynamicShared, m_ConstantInt(&value)))
      return op->emitError("dynamic shared memory must be a constant");
    *bytes += value.getSExtValue();
  }
  if (*bytes > limits.sharedBytesPerBlock)
    return op->emitError() << "the kernel uses " << *bytes
                           << " bytes of shared memory; " << chip.name
                           << " allows " << limits.sharedBytesPerBlock
                           << " per block";
  return success();
}

namespace {
class PBGPUCheckLaunchLimitsPass
    : public pb::gpucommon::impl::PBGPUCheckLaunchLimitsPassBase<
          PBGPUCheckLaunchLimitsPass> {
public:
  void runOnOperation() override {
    ModuleOp module = getOperation();
    const ChipDesc *chip = getTargetChip(module);
    if (!chip) {
      module.emitError("pb-gpu-check-launch-limits needs a target: run "
                       "with --target");
      return signalPassFailure();
    }
    FailureOr<gpucommon::LaunchLimits> limits =
        gpucommon::getLaunchLimits(module, *chip);
    if (failed(limits))
      return signalPassFailure();
    bool failedAny = false;
    module.walk([&](gpu::LaunchOp launch) {
      gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
      gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
      failedAny |= failed(checkLaunch(
          launch, *chip, *limits, {grid.x, grid.y, grid.z},
          {block.x, block.y, block.z}, launch.getWorkgroupAttributions(),
          launch.getDynamicSharedMemorySize()));
    });
    SymbolTableCollection symbols;
    module.walk([&](gpu::LaunchFuncOp launch) {
      auto kernel = symbols.lookupNearestSymbolFrom<gpu::GPUFuncOp>(
          launch, launch.getKernel());
      gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
      gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
      ArrayRef<BlockArgument> shared;
      if (kernel)
        shared = kernel.getWorkgroupAttributions();
      failedAny |=
          failed(checkLaunch(launch, *chip, *limits, {grid.x, grid.y, grid.z},
                             {block.x, block.y, block.z}, shared,
                             launch.getDynamicSharedMemorySize()));
    });
    if (failedAny)
      signalPassFailure();
  }
};
} // namespace
