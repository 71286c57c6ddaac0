//===- LaunchLimits.cpp - Launch limits of a GPU chip --------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "pb/GPU/GPUCommon.h"

using namespace mlir;
using namespace mlir::pb;

FailureOr<gpucommon::LaunchLimits>
gpucommon::getLaunchLimits(Operation *op, const ChipDesc &chip) {
  const ComputeLevelDesc *lane = chip.getComputeLevel(ComputeLevelKind::Lane);
  const ComputeLevelDesc *warp =
      chip.getComputeLevel(ComputeLevelKind::Subgroup);
  const ComputeLevelDesc *block = chip.getComputeLevel(ComputeLevelKind::Block);
  const MemoryLevelDesc *shared = chip.getMemoryLevel(MemoryKind::Scratchpad);
  if (!lane || lane->fixedCountPerParent <= 0 || !warp ||
      warp->maxCountPerParent <= 0 || !block || !shared)
    return op->emitError()
           << "target '" << chip.name
           << "' needs a Lane level with a fixed count, a Subgroup level "
              "with a maximum count, a Block level and a Scratchpad memory "
              "level for GPU code generation";
  LaunchLimits limits;
  limits.warpSize = lane->fixedCountPerParent;
  limits.maxThreadsPerBlock = warp->maxCountPerParent * limits.warpSize;
  limits.maxBlocksPerGrid = block->maxCountPerParent;
  limits.sharedBytesPerBlock = shared->capacityBytes;
  return limits;
}
