//===- ConvToChannelsLast.cpp - NCHW convolutions to NHWC
//------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "pb/Target/TargetDesc.h"
#include "pb/Transforms/Passes.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::pb {
#define GEN_PASS_DEF_PBCONVTOCHANNELSLASTPASS
#include "pb/Transforms/Passes.h.inc"
} // namespace mlir::pb

using namespace mlir;
using namespace mlir::pb;

/// `value` transposed by `permutation` (result dim i = input dim perm[i]),
/// as a linalg.generic so that elementwise fusion can fold it into its
/// neighbours. A splat fill is refilled in the new shape instead.
static Value transpose(OpBuilder &b, Location loc, Value value,
                       ArrayRef<int64_t> permutation) {
  auto type = cast<RankedTensorType>(value.getType());
  // Sizes known only at run time (a dynamic batch) are read from `value`.
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, value);
  SmallVector<OpFoldResult> shape;
  for (int64_t dim : permutation)
    shape.push_back(sizes[dim]);
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

/// init += input * filter through `maps` over `iterators`: a float
/// multiply-accumulate generic (the form pb::isMultiplyAccumulate accepts).
static Value buildMultiplyAccumulate(OpBuilder &b, Location loc, Value input,
                                     Value filter, Value init,
                                     ArrayRef<AffineMap> maps,
                                     ArrayRef<utils::IteratorType> iterators) {
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ValueRange{input, filter},
      ValueRange{init}, maps, iterators,
      [](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        // Narrower operands (bf16 or f16 into an f32 accumulator) are
        // widened first, as the named convolutions define it.
        Type acc = args[2].getType();
        auto widen = [&](Value v) -> Value {
          if (v.getType() == acc)
            return v;
          return arith::ExtFOp::create(nested, nestedLoc, acc, v);
        };
        Value product = arith::MulFOp::create(nested, nestedLoc, widen(args[0]),
                                              widen(args[1]));
        Value sum = arith::AddFOp::create(nested, nestedLoc, args[2], product);
        linalg::YieldOp::create(nested, nestedLoc, sum);
      });
  return generic.getResult(0);
}

/// The NHWC convolution of `input` (NHWC) and `filter` (FCHW, as the
/// framework holds it) into `init` (NHWC), as a multiply-accumulate generic
/// over (n, oh, ow, f, kh, kw, c) with `conv`'s strides and dilations.
static Value buildFchwConv(OpBuilder &b, Location loc, Value input,
                           Value filter, Value init,
                           linalg::Conv2DNchwFchwOp conv) {
  MLIRContext *ctx = b.getContext();
  SmallVector<int64_t> strides(conv.getStrides().getValues<int64_t>());
  SmallVector<int64_t> dilations(conv.getDilations().getValues<int64_t>());
  AffineExpr n, oh, ow, f, kh, kw, c;
  bindDims(ctx, n, oh, ow, f, kh, kw, c);
  SmallVector<AffineMap> maps = {
      AffineMap::get(7, 0,
                     {n, oh * strides[0] + kh * dilations[0],
                      ow * strides[1] + kw * dilations[1], c},
                     ctx),
      AffineMap::get(7, 0, {f, c, kh, kw}, ctx),
      AffineMap::get(7, 0, {n, oh, ow, f}, ctx)};
  SmallVector<utils::IteratorType> iterators(4, utils::IteratorType::parallel);
  iterators.append(3, utils::IteratorType::reduction);
  return buildMultiplyAccumulate(b, loc, input, filter, init, maps, iterators);
}

/// Whether `from` and `to` are float types and `to` holds every value of
/// `from` (the same type, or bf16/f16 summed into f32).
static bool isWideningFloat(Type from, Type to) {
  auto f = dyn_cast<FloatType>(from), t = dyn_cast<FloatType>(to);
  return f && t && (f == t || (f.getWidth() == 16 && t.isF32()));
}

/// Whether `conv` is depthwise: one input and one output channel per group.
static bool isDepthwise(linalg::Conv2DNgchwGfchwOp conv) {
  auto input = cast<RankedTensorType>(conv.getInputs()[0].getType());
  auto filter = cast<RankedTensorType>(conv.getInputs()[1].getType());
  return input.hasStaticShape() && filter.hasStaticShape() &&
         input.getDimSize(2) == 1 && filter.getDimSize(1) == 1 &&
         filter.getDimSize(2) == 1 &&
         getElementTypeOrSelf(input) == getElementTypeOrSelf(filter) &&
         isWideningFloat(getElementTypeOrSelf(input),
                         getElementTypeOrSelf(conv.getOutputs()[0]));
}

/// A depthwise NGCHW convolution (one channel per group, as PyTorch's
/// groups == channels convolutions are emitted) as a channels-last generic
/// over (n, oh, ow, kh, kw, c): the channel loop innermost and parallel
/// (vectorized), the window loops before it; the input and the result
/// transposed around it, which elementwise fusion and pb-propagate-layouts
/// fold into the neighbours. The filter (g, 1, 1, kh, kw) is copied to
/// (kh, kw, g), tagged pb.keep_layout so that S1 keeps the copy: read in
/// place, its stride of kh x kw elements along the channel loop kept that
/// loop scalar (the upstream vectorizer needs contiguous or invariant
/// accesses). The copy is kh x kw x C elements per call, and folds into a
/// constant when the filter is one.
static Value buildDepthwiseNhwc(OpBuilder &b, Location loc,
                                linalg::Conv2DNgchwGfchwOp conv) {
  MLIRContext *ctx = b.getContext();
  Value input = conv.getInputs()[0], filter = conv.getInputs()[1];
  Value init = conv.getOutputs()[0];
  // The frontends' reshapes between NCHW and (n, g, 1, h, w) merge the unit
  // dimension into the rows; the same reassociation folds with them.
  SmallVector<ReassociationIndices> dropGroup = {{0}, {1}, {2, 3}, {4}};
  Value input4 = tensor::CollapseShapeOp::create(b, loc, input, dropGroup);
  Value inputNhwc = transpose(b, loc, input4, {0, 2, 3, 1});
  Value initNhwc;
  if (auto fill = init.getDefiningOp<linalg::FillOp>()) {
    auto type = cast<RankedTensorType>(init.getType());
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, init);
    SmallVector<OpFoldResult> shape = {sizes[0], sizes[3], sizes[4], sizes[1]};
    Value empty = tensor::EmptyOp::create(b, loc, shape, type.getElementType());
    initNhwc =
        linalg::FillOp::create(b, loc, fill.getInputs()[0], empty).getResult(0);
  } else {
    Value init4 = tensor::CollapseShapeOp::create(b, loc, init, dropGroup);
    initNhwc = transpose(b, loc, init4, {0, 2, 3, 1});
  }
  Value filter3 = tensor::CollapseShapeOp::create(
      b, loc, filter, SmallVector<ReassociationIndices>{{0, 1, 2}, {3}, {4}});
  Value filterHwc = transpose(b, loc, filter3, {1, 2, 0});
  filterHwc.getDefiningOp()->setAttr(PBDialect::kKeepLayoutAttrName,
                                     b.getUnitAttr());
  SmallVector<int64_t> strides(conv.getStrides().getValues<int64_t>());
  SmallVector<int64_t> dilations(conv.getDilations().getValues<int64_t>());
  AffineExpr n, oh, ow, kh, kw, c;
  bindDims(ctx, n, oh, ow, kh, kw, c);
  SmallVector<AffineMap> maps = {
      AffineMap::get(6, 0,
                     {n, oh * strides[0] + kh * dilations[0],
                      ow * strides[1] + kw * dilations[1], c},
                     ctx),
      AffineMap::get(6, 0, {kh, kw, c}, ctx),
      AffineMap::get(6, 0, {n, oh, ow, c}, ctx)};
  SmallVector<utils::IteratorType> iterators = {
      utils::IteratorType::parallel,  utils::IteratorType::parallel,
      utils::IteratorType::parallel,  utils::IteratorType::reduction,
      utils::IteratorType::reduction, utils::IteratorType::parallel};
  Value conv2 = buildMultiplyAccumulate(b, loc, inputNhwc, filterHwc, initNhwc,
                                        maps, iterators);
  Value result = transpose(b, loc, conv2, {0, 3, 1, 2});
  return tensor::ExpandShapeOp::create(b, loc, init.getType(), result,
                                       dropGroup);
}

/// Whether `conv` is a grouped convolution with more than one channel per
/// group that the channels-last form below takes: static float operands of
/// one element type, summed in it or (bf16, f16) in f32.
static bool isGroupedFloat(linalg::Conv2DNgchwGfchwOp conv) {
  Value input = conv.getInputs()[0], filter = conv.getInputs()[1];
  Value init = conv.getOutputs()[0];
  Type element = getElementTypeOrSelf(input);
  return !isDepthwise(conv) &&
         cast<RankedTensorType>(input.getType()).hasStaticShape() &&
         cast<RankedTensorType>(filter.getType()).hasStaticShape() &&
         getElementTypeOrSelf(filter) == element &&
         isWideningFloat(element, getElementTypeOrSelf(init));
}

/// A grouped NGCHW convolution (1 < groups < channels) as a channels-last
/// multiply-accumulate generic over (n, oh, ow, g, f, kh, kw, c): input
/// (n, h, w, g, c), result (n, oh, ow, g, f), both transposed around it
/// (the frontends' channel splits then read NHWC as it is, and
/// pb-propagate-layouts folds the transposes into the neighbours). Per
/// group it is a GEMM whose N (the group's output channels) is innermost
/// in the result and a plain index of the filter: pb-map-matrix-units runs
/// all the groups as one batched micro-kernel (the batch loop g) instead
/// of the NCHW form's scalar loops. The filter is read in place
/// (g, f, c, kh, kw) where the chip packs it inside the kernel (and it is
/// not a constant), else transposed to (g, kh, kw, c, f).
static Value buildGroupedNhwc(OpBuilder &b, Location loc,
                              linalg::Conv2DNgchwGfchwOp conv,
                              bool filterInPlace) {
  MLIRContext *ctx = b.getContext();
  const SmallVector<int64_t> toNhwgc = {0, 3, 4, 1, 2};
  Value input = transpose(b, loc, conv.getInputs()[0], toNhwgc);
  Value init = transpose(b, loc, conv.getOutputs()[0], toNhwgc);
  Value filter = conv.getInputs()[1];
  SmallVector<int64_t> strides(conv.getStrides().getValues<int64_t>());
  SmallVector<int64_t> dilations(conv.getDilations().getValues<int64_t>());
  AffineExpr n, oh, ow, g, f, kh, kw, c;
  bindDims(ctx, n, oh, ow, g, f, kh, kw, c);
  AffineMap filterMap;
  if (filterInPlace) {
    filterMap = AffineMap::get(8, 0, {g, f, c, kh, kw}, ctx);
  } else {
    filter = transpose(b, loc, filter, {0, 3, 4, 2, 1});
    filterMap = AffineMap::get(8, 0, {g, kh, kw, c, f}, ctx);
  }
  SmallVector<AffineMap> maps = {
      AffineMap::get(8, 0,
                     {n, oh * strides[0] + kh * dilations[0],
                      ow * strides[1] + kw * dilations[1], g, c},
                     ctx),
      filterMap, AffineMap::get(8, 0, {n, oh, ow, g, f}, ctx)};
  SmallVector<utils::IteratorType> iterators(5, utils::IteratorType::parallel);
  iterators.append(3, utils::IteratorType::reduction);
  Value result =
      buildMultiplyAccumulate(b, loc, input, filter, init, maps, iterators);
  return transpose(b, loc, result, {0, 3, 4, 1, 2});
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
    // Chips whose matrix units are per thread (CPUs) pack the filter inside
    // the contraction's kernel, which reads it in any layout: there a
    // filter that is not a constant stays FCHW, read through the
    // convolution's indexing map, so that no weight transpose runs on every
    // call. Constant filters (frozen models) are transposed, which S1 folds
    // at compile time into contiguous HWCF constants.
    const ChipDesc *chip = getTargetChip(getOperation());
    bool packsFilter = chip && !hasCooperativeMatrixUnits(*chip);
    IRRewriter rewriter(&getContext());
    for (linalg::Conv2DNchwFchwOp conv : convs) {
      rewriter.setInsertionPoint(conv);
      Location loc = conv.getLoc();
      Value input = transpose(rewriter, loc, conv.getInputs()[0], {0, 2, 3, 1});
      Value filter = conv.getInputs()[1];
      bool filterInPlace = packsFilter && !matchPattern(filter, m_Constant()) &&
                           isa<FloatType>(getElementTypeOrSelf(filter)) &&
                           getElementTypeOrSelf(filter) ==
                               getElementTypeOrSelf(conv.getInputs()[0]) &&
                           getElementTypeOrSelf(filter) ==
                               getElementTypeOrSelf(conv.getOutputs()[0]);
      if (!filterInPlace)
        filter = transpose(rewriter, loc, filter, {2, 3, 1, 0});
      Value init = transpose(rewriter, loc, conv.getOutputs()[0], {0, 2, 3, 1});
      Value result =
          filterInPlace
              ? buildFchwConv(rewriter, loc, input, filter, init, conv)
              : linalg::Conv2DNhwcHwcfOp::create(
                    rewriter, loc, TypeRange{init.getType()},
                    ValueRange{input, filter}, ValueRange{init},
                    conv.getStrides(), conv.getDilations())
                    .getResult(0);
      result = transpose(rewriter, loc, result, {0, 3, 1, 2});
      rewriter.replaceOp(conv, result);
    }
    SmallVector<linalg::Conv2DNgchwGfchwOp> grouped;
    getOperation().walk([&](linalg::Conv2DNgchwGfchwOp conv) {
      if (conv.hasPureTensorSemantics() &&
          (isDepthwise(conv) || isGroupedFloat(conv)))
        grouped.push_back(conv);
    });
    for (linalg::Conv2DNgchwGfchwOp conv : grouped) {
      rewriter.setInsertionPoint(conv);
      Location loc = conv.getLoc();
      rewriter.replaceOp(
          conv, isDepthwise(conv)
                    ? buildDepthwiseNhwc(rewriter, loc, conv)
                    : buildGroupedNhwc(rewriter, loc, conv,
                                       packsFilter &&
                                           !matchPattern(conv.getInputs()[1],
                                                         m_Constant())));
    }
  }
};
} // namespace
