//===- EstimateLaunches.cpp - The roofline estimate of each launch --------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The last step of S4 before kernel outlining: each launch's work (`pb.work`,
// set by the passes that built the launch) goes, in launch order, into the
// entry's `pb.launch_work` for S5, which completes the estimate with
// ptxas's register counts (Emit.cpp). With --pb-explain, each launch gets
// its estimate as far as S4 knows it (registers not yet known).
//
//===----------------------------------------------------------------------===//

#include "pb/GPU/GPUCommon.h"

#include "pb/Dialect/PBDialect.h"
#include "pb/Transforms/Passes.h"
#include "pb/Transforms/Roofline.h"

#include "mlir/IR/Matchers.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::pb::gpucommon {
#define GEN_PASS_DEF_PBGPUESTIMATELAUNCHESPASS
#include "pb/GPU/Passes.h.inc"
} // namespace mlir::pb::gpucommon

using namespace mlir;
using namespace mlir::pb;

static int64_t getConstantProduct(ArrayRef<Value> values) {
  int64_t product = 1;
  for (Value value : values) {
    APInt constant;
    if (!matchPattern(value, m_ConstantInt(&constant)))
      return 0;
    product *= constant.getSExtValue();
  }
  return product;
}

std::string
mlir::pb::gpucommon::describeEstimate(const Work &work,
                                      const LaunchShape &shape,
                                      const LaunchEstimate &estimate) {
  auto flops = [](const auto &list, llvm::StringRef unit) {
    std::string text;
    for (auto [type, value] : list)
      text += llvm::formatv("{0}{1:F0} {2} {3}", text.empty() ? "" : ", ",
                            value, unit, stringifyElementType(type))
                  .str();
    return text;
  };
  std::string operations = flops(work.vectorFlops, "vector");
  std::string matrix = flops(work.matrixFlops, "matrix");
  if (!matrix.empty())
    operations += (operations.empty() ? "" : ", ") + matrix;
  if (operations.empty())
    operations = "none";
  return llvm::formatv(
             "{0:F0} B, FLOPs: {1}{2}; {3} blocks x {4} threads, {5} B shared, "
             "registers {6}; {7} blocks per SM ({8}), {9} wave(s), "
             "{10:P0} of the chip; memory {11:F2} us, compute {12:F2} us, "
             "launch {13:F2} us -> {14:F2} us ({15}-bound)",
             work.bytes, operations, work.exact ? "" : " (inexact)",
             shape.blocks, shape.threadsPerBlock, shape.sharedBytesPerBlock,
             shape.registersPerThread
                 ? std::to_string(*shape.registersPerThread)
                 : std::string("unknown"),
             estimate.residentBlocksPerUnit, estimate.occupancyLimit,
             estimate.waves, estimate.chipFraction,
             estimate.memorySeconds * 1e6, estimate.computeSeconds * 1e6,
             estimate.overheadSeconds * 1e6, estimate.seconds * 1e6,
             estimate.memoryBound ? "memory" : "compute")
      .str();
}

namespace {
class PBGPUEstimateLaunchesPass
    : public pb::gpucommon::impl::PBGPUEstimateLaunchesPassBase<
          PBGPUEstimateLaunchesPass> {
public:
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    const ChipDesc *chip = getTargetChip(func);
    SmallVector<Attribute> works;
    func.walk([&](Operation *op) {
      // Kernels a back end built in its own IR count with their work; the
      // shape of their launch is known in S5 only.
      if (op->hasAttr(PBDialect::kKernelLaunchAttrName)) {
        std::optional<Work> work =
            Work::fromAttr(op->getAttr(PBDialect::kWorkAttrName));
        op->removeAttr(PBDialect::kWorkAttrName);
        if (!work) {
          work = Work();
          work->exact = false;
        }
        NamedAttrList fields(work->toAttr(&getContext()));
        fields.set("loc", StringAttr::get(&getContext(),
                                          describeFileLocation(op->getLoc())));
        works.push_back(fields.getDictionary(&getContext()));
        return;
      }
      auto launch = dyn_cast<gpu::LaunchOp>(op);
      if (!launch)
        return;
      Attribute attr = launch->getAttr(PBDialect::kWorkAttrName);
      launch->removeAttr(PBDialect::kWorkAttrName);
      std::optional<Work> work = Work::fromAttr(attr);
      if (!work) {
        Work unknown;
        unknown.exact = false;
        work = unknown;
      }
      // With the launch's source location, for the artifact's estimate.
      NamedAttrList fields(work->toAttr(&getContext()));
      fields.set("loc", StringAttr::get(&getContext(),
                                        describeFileLocation(launch.getLoc())));
      works.push_back(fields.getDictionary(&getContext()));
      if (!chip || !isExplainEnabled())
        return;
      LaunchShape shape;
      gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
      gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
      shape.blocks = getConstantProduct({grid.x, grid.y, grid.z});
      shape.threadsPerBlock = getConstantProduct({block.x, block.y, block.z});
      if (Value bytes = launch.getDynamicSharedMemorySize())
        shape.sharedBytesPerBlock = getConstantProduct({bytes});
      std::string why;
      FailureOr<LaunchEstimate> estimate =
          estimateLaunch(*chip, *work, shape, why);
      if (failed(estimate))
        explain(launch, "estimate: none (" + why + ")");
      else
        explain(launch, "estimate: " + gpucommon::describeEstimate(*work, shape,
                                                                   *estimate));
    });
    if (!works.empty())
      func->setAttr(PBDialect::kLaunchWorkAttrName,
                    ArrayAttr::get(&getContext(), works));
  }
};
} // namespace
