//===- PrepareParallel.cpp - Choose the thread-level loops ----------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Inside each grid-level affine.parallel of S3's output, picks the loops a
// block's threads share and turns each into a 1-d affine.parallel, which
// pb-gpu-map-to-gpu distributes over the threads after lower-affine.
//
//===----------------------------------------------------------------------===//

#include "pb/GPU/GPUCommon.h"

#include "pb/Dialect/PBDialect.h"

#include "mlir/Dialect/Affine/Analysis/LoopAnalysis.h"
#include "mlir/Dialect/Affine/LoopUtils.h"
#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::pb::gpucommon {
#define GEN_PASS_DEF_PBGPUPREPAREPARALLELPASS
#include "pb/GPU/Passes.h.inc"
} // namespace mlir::pb::gpucommon

using namespace mlir;

/// Whether `loop`'s iterations are independent: proven by upstream's
/// dependence analysis, or stated by the pass that built the loop
/// (`pb.parallel`, e.g. pb-promote-to-scratchpad's copies, whose vector
/// transfers that analysis does not see through).
static bool isParallel(affine::AffineForOp loop) {
  return loop->hasAttr(pb::PBDialect::kParallelAttrName) ||
         affine::isLoopParallel(loop);
}

/// The single op of `block` besides its terminator, or null.
static Operation *getSoleOp(Block &block) {
  if (block.getOperations().size() != 2)
    return nullptr;
  return &block.front();
}

/// Turns the parallel band starting at `loop` (the perfectly nested parallel
/// loops under it with constant trip counts) into one 1-d affine.parallel.
static void makeThreadLoop(affine::AffineForOp loop) {
  SmallVector<affine::AffineForOp> band = {loop};
  MLIRContext *ctx = loop.getContext();
  while (affine::getConstantTripCount(band.back())) {
    auto inner = dyn_cast_or_null<affine::AffineForOp>(
        getSoleOp(*band.back().getBody()));
    if (!inner || !affine::getConstantTripCount(inner) || !isParallel(inner))
      break;
    band.push_back(inner);
  }
  // The band's iterations, for the coalesced loop's bound (which
  // coalescing builds as a product through affine.apply).
  int64_t total = 1;
  for (affine::AffineForOp l : band)
    total *= static_cast<int64_t>(affine::getConstantTripCount(l).value_or(1));
  bool coalesced = false;
  if (band.size() > 1) {
    bool normalized = llvm::all_of(band, [](affine::AffineForOp l) {
      return succeeded(affine::normalizeAffineFor(l));
    });
    // Normalizing a loop rewrites the uses of its IV into an affine.apply
    // at the start of its body, i.e. between the band's loops; coalescing
    // remaps IVs only inside the innermost loop, so those applies move
    // there (outer ones first). The normalized bounds are constants.
    if (normalized) {
      Block *innermost = band.back().getBody();
      Operation *insertionPoint = &innermost->front();
      for (size_t i = 0; i + 1 < band.size(); ++i)
        for (Operation &op : llvm::make_early_inc_range(*band[i].getBody()))
          if (&op != band[i + 1].getOperation() &&
              !op.hasTrait<OpTrait::IsTerminator>())
            op.moveBefore(insertionPoint);
    }
    coalesced = normalized && succeeded(affine::coalesceLoops(band));
    // Coalescing leaves the band's outer loop; the inner ones are gone.
    band.resize(1);
  } else if (affine::getConstantTripCount(loop)) {
    // Bounds from the grid's IVs (an intra-tile loop) become 0 to its trip
    // count, so that S4 sizes the block from it.
    (void)affine::normalizeAffineFor(loop);
  }
  affine::AffineParallelOp par;
  if (failed(affine::affineParallelize(band.front(), {}, &par)) || !par)
    return;
  // Stated as a constant, S4 sizes blocks and grids from the bound.
  if (coalesced && par.getNumDims() == 1 && par.getSteps()[0] == 1)
    par.setUpperBounds(ValueRange{}, AffineMap::getConstantMap(total, ctx));
}

/// Walks the statements of `block` (inside a grid-level loop) and makes the
/// outermost parallel loop of every path a thread-level loop.
static void prepareBlock(Block &block) {
  for (Operation &op : llvm::make_early_inc_range(block)) {
    if (auto loop = dyn_cast<affine::AffineForOp>(op)) {
      if (isParallel(loop))
        makeThreadLoop(loop);
      else
        prepareBlock(*loop.getBody());
    } else if (auto branch = dyn_cast<affine::AffineIfOp>(op)) {
      for (Region &region : branch->getRegions())
        for (Block &inner : region)
          prepareBlock(inner);
    }
  }
}

namespace {
class PBGPUPrepareParallelPass
    : public pb::gpucommon::impl::PBGPUPrepareParallelPassBase<
          PBGPUPrepareParallelPass> {
public:
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    // Nests that S4 itself made from linalg ops (an epilogue or a
    // contraction the tensor-core kernels did not take) have no grid loop:
    // their outermost parallel band (loops of constant trip counts,
    // coalesced) becomes one, instead of a one-thread kernel.
    SmallVector<affine::AffineForOp> nests(
        func.getBody().getOps<affine::AffineForOp>());
    for (affine::AffineForOp nest : nests)
      if (nest.getNumResults() == 0 && affine::isLoopParallel(nest))
        makeThreadLoop(nest);
    SmallVector<affine::AffineParallelOp> grids(
        func.getBody().getOps<affine::AffineParallelOp>());
    for (affine::AffineParallelOp grid : grids) {
      prepareBlock(*grid.getBody());
    }
  }
};
} // namespace
