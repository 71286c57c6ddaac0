//===- AffineFusion.cpp - Target-sized slicing-based affine fusion
//---------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "pb/Target/TargetDesc.h"
#include "pb/Transforms/Passes.h"

#include "mlir/Dialect/Affine/Transforms/Passes.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
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

/// A memref stored to by more than one loop nest of one block (a buffer the
/// bufferizer reused, or an accumulator and its fill fused into one row
/// loop by pb-fuse-reductions), or null. Upstream's producer-consumer
/// fusion, which fuses the nests of every block, can move a later nest's
/// write of such a buffer above an earlier nest's read of it (a missed
/// write-after-read dependence, seen on decomposed softmax and average
/// pooling), so the pass then restricts itself to sibling fusion.
static Value findBufferWrittenByManyNests(func::FuncOp func) {
  Value shared;
  func.walk([&](Block *block) {
    llvm::DenseMap<Value, Operation *> writer;
    for (auto nest : block->getOps<affine::AffineForOp>()) {
      nest.walk([&](affine::AffineWriteOpInterface store) {
        auto [it, inserted] = writer.try_emplace(store.getMemRef(), nest);
        if (!inserted && it->second != nest.getOperation())
          shared = store.getMemRef();
      });
      if (shared)
        return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return shared;
}

/// A memref accessed by an affine load or store through a view (a subview,
/// a reshape) of another buffer, or null. Upstream fusion's dependence
/// analysis compares memrefs by SSA value, so it would miss the dependence
/// between accesses to the view and to the viewed buffer.
static Value findAccessedView(func::FuncOp func) {
  Value view;
  func.walk([&](Operation *op) {
    Value memref;
    if (auto read = dyn_cast<affine::AffineReadOpInterface>(op))
      memref = read.getMemRef();
    else if (auto write = dyn_cast<affine::AffineWriteOpInterface>(op))
      memref = write.getMemRef();
    if (memref && memref.getDefiningOp<ViewLikeOpInterface>()) {
      view = memref;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return view;
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
    if (nestsBefore > maxNests) {
      explain(func, llvm::formatv("fusion: off in this function: {0} "
                                  "top-level loop nests exceed max-nests "
                                  "({1}), the compile-time budget of "
                                  "upstream fusion's dependence analysis",
                                  nestsBefore, maxNests.getValue()));
      return;
    }

    if (Value view = findAccessedView(func)) {
      explain(func, llvm::formatv("fusion: off in this function: {0} is "
                                  "accessed through a view of another "
                                  "buffer, which fusion's dependence "
                                  "analysis cannot see",
                                  view.getDefiningOp()->getName()));
      return;
    }
    OpPassManager pm(func::FuncOp::getOperationName());
    Value reused = findBufferWrittenByManyNests(func);
    StringRef mode = reused ? "sibling" : "greedy";
    std::string spec = llvm::formatv(
        "affine-loop-fusion{{compute-tolerance={0} local-buf-threshold={1} "
        "mode={2}}",
        computeTolerance.getValue(), thresholdKiB, mode);
    if (failed(parsePassPipeline(spec, pm)) || failed(runPipeline(pm, func)))
      return signalPassFailure();

    explain(func, llvm::formatv("fusion ({6}): {0} -> {1} top-level loop "
                                "nests; private buffers up to {2} KiB ({3} "
                                "of {4}), compute tolerance {5}{7}",
                                nestsBefore, countNests(func), thresholdKiB,
                                level ? level->name : "no on-chip level",
                                chip->name, computeTolerance.getValue(), mode,
                                reused ? "; a buffer is written by several "
                                         "nests, so producer-consumer fusion "
                                         "is off"
                                       : ""));
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
