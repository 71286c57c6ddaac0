//===- ConvToChannelsLast.cpp - NCHW convolutions to NHWC
//------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "pb/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir::pb {
#define GEN_PASS_DEF_PBCONVTOCHANNELSLASTPASS
#include "pb/Transforms/Passes.h.inc"
} // namespace mlir::pb

using namespace mlir;

/// `value` transposed by `permutation` (result dim i = input dim perm[i]),
/// as a linalg.generic so that elementwise fusion can fold it into its
/// neighbours. A splat fill is refilled in the new shape instead.
static Value transpose(OpBuilder &b, Location loc, Value value,
                       ArrayRef<int64_t> permutation) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> shape;
  for (int64_t dim : permutation)
    shape.push_back(type.getDimSize(dim));
  Value init = tensor::EmptyOp::create(b, loc, shape, type.getElementType());
  if (auto fill = value.getDefiningOp<linalg::FillOp>())
    return linalg::FillOp::create(b, loc, fill.getInputs()[0], init)
        .getResult(0);
  MLIRContext *ctx = b.getContext();
  unsigned rank = permutation.size();
  // out[i0, ..., in] = in[...] with input dim perm[i] = output dim i.
  SmallVector<AffineExpr> inputExprs(rank);
  for (unsigned i = 0; i < rank; ++i)
    inputExprs[permutation[i]] = getAffineDimExpr(i, ctx);
  SmallVector<AffineMap> maps = {AffineMap::get(rank, 0, inputExprs, ctx),
                                 AffineMap::getMultiDimIdentityMap(rank, ctx)};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ValueRange{value}, ValueRange{init},
      maps, iterators,
      [](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        linalg::YieldOp::create(nested, nestedLoc, args[0]);
      });
  return generic.getResult(0);
}

namespace {
class PBConvToChannelsLastPass
    : public pb::impl::PBConvToChannelsLastPassBase<PBConvToChannelsLastPass> {
public:
  void runOnOperation() override {
    SmallVector<linalg::Conv2DNchwFchwOp> convs;
    getOperation().walk([&](linalg::Conv2DNchwFchwOp conv) {
      if (conv.hasPureTensorSemantics())
        convs.push_back(conv);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::Conv2DNchwFchwOp conv : convs) {
      rewriter.setInsertionPoint(conv);
      Location loc = conv.getLoc();
      Value input = transpose(rewriter, loc, conv.getInputs()[0], {0, 2, 3, 1});
      Value filter =
          transpose(rewriter, loc, conv.getInputs()[1], {2, 3, 1, 0});
      Value init = transpose(rewriter, loc, conv.getOutputs()[0], {0, 2, 3, 1});
      auto nhwc = linalg::Conv2DNhwcHwcfOp::create(
          rewriter, loc, TypeRange{init.getType()}, ValueRange{input, filter},
          ValueRange{init}, conv.getStrides(), conv.getDilations());
      Value result = transpose(rewriter, loc, nhwc.getResult(0), {0, 3, 1, 2});
      rewriter.replaceOp(conv, result);
    }
  }
};
} // namespace
