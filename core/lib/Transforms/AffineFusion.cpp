//===- AffineFusion.cpp - Target-sized slicing-based affine fusion
//---------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "pb/Target/TargetDesc.h"
#include "pb/Transforms/Passes.h"

#include "mlir/Dialect/Affine/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::pb {
#define GEN_PASS_DEF_PBAFFINEFUSIONPASS
#include "pb/Transforms/Passes.h.inc"
} // namespace mlir::pb

using namespace mlir;
using namespace mlir::pb;

/// The innermost level a fused nest's private buffers should fit: the
/// scratchpad when the chip has one, else its innermost cache.
static const MemoryLevelDesc *getPrivateBufferLevel(const ChipDesc &chip) {
  if (const MemoryLevelDesc *scratch =
          chip.getMemoryLevel(MemoryKind::Scratchpad))
    return scratch;
  return chip.getMemoryLevel(MemoryKind::Cache);
}

namespace {
class PBAffineFusionPass
    : public pb::impl::PBAffineFusionPassBase<PBAffineFusionPass> {
public:
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    const ChipDesc *chip = getTargetChip(func);
    if (!chip) {
      func.emitError("pb-affine-fusion needs a target: run with --target");
      return signalPassFailure();
    }
    const MemoryLevelDesc *level = getPrivateBufferLevel(*chip);
    uint64_t thresholdKiB = level ? level->capacityBytes / 1024 : 0;
    unsigned nestsBefore = countNests(func);

    OpPassManager pm(func::FuncOp::getOperationName());
    std::string spec = llvm::formatv(
        "affine-loop-fusion{{compute-tolerance={0} local-buf-threshold={1}}",
        computeTolerance.getValue(), thresholdKiB);
    if (failed(parsePassPipeline(spec, pm)) || failed(runPipeline(pm, func)))
      return signalPassFailure();

    explain(func, llvm::formatv("fusion: {0} -> {1} top-level loop nests; "
                                "private buffers up to {2} KiB ({3} of {4}), "
                                "compute tolerance {5}",
                                nestsBefore, countNests(func), thresholdKiB,
                                level ? level->name : "no on-chip level",
                                chip->name, computeTolerance.getValue()));
  }

private:
  static unsigned countNests(func::FuncOp func) {
    unsigned count = 0;
    for (Operation &op : func.getBody().getOps())
      count += isa<affine::AffineForOp>(op);
    return count;
  }
};
} // namespace
