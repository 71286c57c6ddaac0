//===- Vectorize.cpp - Vectorize to the target's vector width
//--------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "pb/Target/TargetDesc.h"
#include "pb/Transforms/Passes.h"

#include "mlir/Dialect/Affine/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::pb {
#define GEN_PASS_DEF_PBVECTORIZEPASS
#include "pb/Transforms/Passes.h.inc"
} // namespace mlir::pb

using namespace mlir;
using namespace mlir::pb;

/// The narrowest integer or float element width loaded in `func`, or 0.
static unsigned getNarrowestElementBits(func::FuncOp func) {
  unsigned bits = 0;
  func.walk([&](affine::AffineLoadOp load) {
    Type type = load.getMemRefType().getElementType();
    if (!type.isIntOrFloat())
      return;
    unsigned width = type.getIntOrFloatBitWidth();
    if (bits == 0 || width < bits)
      bits = width;
  });
  return bits;
}

namespace {
class PBVectorizePass : public pb::impl::PBVectorizePassBase<PBVectorizePass> {
public:
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    const ChipDesc *chip = getTargetChip(func);
    if (!chip) {
      func.emitError("pb-vectorize needs a target: run with --target");
      return signalPassFailure();
    }
    unsigned bits = getNarrowestElementBits(func);
    if (bits == 0 || chip->vectorWidthBits < bits)
      return;
    int64_t lanes = chip->vectorWidthBits / bits;
    if (lanes < 2)
      return;

    affine::AffineVectorizeOptions options;
    options.vectorSizes = {lanes};
    options.vectorizeReductions = true;
    OpPassManager pm(func::FuncOp::getOperationName());
    pm.addPass(affine::createAffineVectorize(options));
    if (failed(runPipeline(pm, func)))
      return signalPassFailure();
    explain(func,
            llvm::formatv("vectorize: {0} lanes = {1}-bit vectors of "
                          "{2}-bit elements ({3})",
                          lanes, chip->vectorWidthBits, bits, chip->name));
  }
};
} // namespace
