//===- MarkParallel.cpp - Parallel loops and their hardware level
//----------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "pb/Target/TargetDesc.h"
#include "pb/Transforms/Passes.h"

#include "mlir/Dialect/Affine/Transforms/Passes.h"
#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::pb {
#define GEN_PASS_DEF_PBMARKPARALLELPASS
#include "pb/Transforms/Passes.h.inc"
} // namespace mlir::pb

using namespace mlir;
using namespace mlir::pb;

namespace {
class PBMarkParallelPass
    : public pb::impl::PBMarkParallelPassBase<PBMarkParallelPass> {
public:
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    const ChipDesc *chip = getTargetChip(func);
    if (!chip) {
      func.emitError("pb-mark-parallel needs a target: run with --target");
      return signalPassFailure();
    }
    // Loops pb-tile proved parallel before tiling: the outermost one of each
    // nest becomes the parallel loop (upstream's analysis below would only
    // find the intra-tile loops, one fork per tile).
    SmallVector<affine::AffineForOp> proven;
    func.walk<WalkOrder::PreOrder>([&](affine::AffineForOp loop) {
      if (!loop->hasAttr(PBDialect::kParallelAttrName))
        return WalkResult::advance();
      proven.push_back(loop);
      return WalkResult::skip();
    });
    for (affine::AffineForOp loop : proven) {
      loop->removeAttr(PBDialect::kParallelAttrName);
      if (failed(affine::affineParallelize(loop)))
        continue;
    }
    func.walk([](affine::AffineForOp loop) {
      loop->removeAttr(PBDialect::kParallelAttrName);
    });

    OpPassManager pm(func::FuncOp::getOperationName());
    // One parallel loop per nest: inner loops stay affine.for for the
    // vectorizer and for register tiling.
    affine::AffineParallelizeOptions options;
    options.maxNested = 1;
    pm.addPass(affine::createAffineParallelize(options));
    if (failed(runPipeline(pm, func)))
      return signalPassFailure();

    // Iterations of an outermost parallel loop become instances of the level
    // below the hierarchy's root: blocks of a grid, cores of a socket.
    ArrayRef<ComputeLevelDesc> levels = chip->computeLevels;
    const ComputeLevelDesc &level = levels[levels.size() > 1 ? 1 : 0];
    auto levelAttr =
        StringAttr::get(&getContext(), stringifyComputeLevelKind(level.kind));
    func.walk([&](affine::AffineParallelOp loop) {
      if (loop->getParentOfType<affine::AffineParallelOp>())
        return;
      loop->setAttr(PBDialect::kLevelAttrName, levelAttr);
      explain(loop, llvm::formatv("parallel: {0}-d loop mapped to level "
                                  "'{1}' ({2})",
                                  loop.getNumDims(), level.name, chip->name));
    });
  }
};
} // namespace
