//===- HoistReciprocals.cpp - Loop-invariant divisors become multipliers --===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// pb-hoist-reciprocals (S3, after pb-vectorize): `x / d` inside a loop whose
// divisor `d` is defined outside that loop becomes `x * r`, with `r = 1 / d`
// computed once, right after `d`. A softmax's normalization divides every
// element of a row by the row's sum; a vector division costs 5-16 cycles of
// throughput on x86 cores (and more on GPUs) where a multiplication costs
// one half, so the division, not memory, bounded the row.
//
// The product differs from the quotient by at most one rounding (1.5 ulp
// instead of 0.5), as with LLVM's `arcp` flag and PyTorch's own CPU softmax,
// which multiplies by the reciprocal of the sum. A divisor whose reciprocal
// overflows (|d| < 2^-126 in f32) would give an infinite product where the
// quotient is finite: the pass is left out of `pipeline=reference`.
//
//===----------------------------------------------------------------------===//

#include "pb/Transforms/Passes.h"

#include "mlir/Dialect/Affine/Analysis/LoopAnalysis.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

namespace mlir::pb {
#define GEN_PASS_DEF_PBHOISTRECIPROCALSPASS
#include "pb/Transforms/Passes.h.inc"
} // namespace mlir::pb

using namespace mlir;

namespace {
/// Whether `loop` may run its body more than once: an affine.for with a
/// constant trip count of 1 or 0 gains nothing from a hoisted reciprocal.
bool mayRepeat(LoopLikeOpInterface loop) {
  auto forOp = dyn_cast<affine::AffineForOp>(loop.getOperation());
  if (!forOp)
    return true;
  std::optional<uint64_t> trips = affine::getConstantTripCount(forOp);
  return !trips || *trips > 1;
}

class PBHoistReciprocalsPass
    : public pb::impl::PBHoistReciprocalsPassBase<PBHoistReciprocalsPass> {
public:
  void runOnOperation() override {
    SmallVector<arith::DivFOp> divisions;
    getOperation().walk([&](arith::DivFOp div) {
      auto loop = div->getParentOfType<LoopLikeOpInterface>();
      if (loop && loop.isDefinedOutsideOfLoop(div.getRhs()) && mayRepeat(loop))
        divisions.push_back(div);
    });
    // One reciprocal per divisor, shared by all its divisions.
    llvm::DenseMap<Value, Value> reciprocals;
    OpBuilder b(&getContext());
    for (arith::DivFOp div : divisions) {
      Value divisor = div.getRhs();
      Value &reciprocal = reciprocals[divisor];
      if (!reciprocal) {
        if (Operation *def = divisor.getDefiningOp())
          b.setInsertionPointAfter(def);
        else
          b.setInsertionPointToStart(cast<BlockArgument>(divisor).getOwner());
        Type type = divisor.getType();
        Location loc = divisor.getLoc();
        Value one = createScalarOrSplatConstant(
            b, loc, type,
            llvm::APFloat::getOne(cast<FloatType>(getElementTypeOrSelf(type))
                                      .getFloatSemantics()));
        reciprocal =
            arith::DivFOp::create(b, loc, one, divisor, div.getFastmathAttr());
      }
      b.setInsertionPoint(div);
      Value product = arith::MulFOp::create(b, div.getLoc(), div.getLhs(),
                                            reciprocal, div.getFastmathAttr());
      div.replaceAllUsesWith(product);
      div.erase();
    }
  }
};
} // namespace
