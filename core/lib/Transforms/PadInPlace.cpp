//===- PadInPlace.cpp - Padded tensors written where they live ------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// pb-pad-in-place (S2, before bufferization). The frontends pad a tensor X
// as
//
//   %f = linalg.fill ins(%v) outs(%e)            // the whole padded tensor
//   %s = tensor.extract_slice %f[offsets][sizes] // its interior
//   %c = linalg.copy ins(%x) outs(%s)
//   %p = tensor.insert_slice %c into %f[offsets][sizes]
//
// which bufferizes to a fill of the whole padded buffer and a copy of X into
// its interior: two passes over memory that a convolution's input (every
// depthwise convolution of a MobileNet) pays on every call. Here
//  - X's producer writes the interior itself, when it is a linalg op that
//    does not read its destination and X has no other use: the copy goes;
//  - the fill writes only the border, when nothing reads the interior
//    before the insert overwrites it: one fill per padded side, each on a
//    slice of the padded tensor, disjoint from the others.
//
//===----------------------------------------------------------------------===//

#include "pb/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::pb {
#define GEN_PASS_DEF_PBPADINPLACEPASS
#include "pb/Transforms/Passes.h.inc"
} // namespace mlir::pb

using namespace mlir;

namespace {
/// A padded tensor: `writer` (a linalg op that does not read its
/// destination `slice`, the interior of `fill`) produces the value that
/// `insert` puts back into `fill`.
struct Pad {
  linalg::FillOp fill;
  tensor::ExtractSliceOp slice;
  linalg::LinalgOp writer;
  tensor::InsertSliceOp insert;
};
} // namespace

/// The init operand of `op` that `slice` is, when `op`'s payload does not
/// read it and the tied result is what `insert` inserts.
static OpOperand *getUnreadInit(linalg::LinalgOp op,
                                tensor::ExtractSliceOp slice,
                                tensor::InsertSliceOp insert) {
  for (OpOperand &init : op.getDpsInitsMutable()) {
    if (init.get() != slice.getResult())
      continue;
    if (op.payloadUsesValueFromOperand(&init) ||
        op.getTiedOpResult(&init) != insert.getSource())
      return nullptr;
    return &init;
  }
  return nullptr;
}

/// The padded tensor that `insert` completes: it puts back the result of a
/// linalg op that writes, without reading, a slice of a fill at the same
/// place. The fill may have other uses (CSE merges the fills of all pads
/// of one shape).
static std::optional<Pad> matchPad(tensor::InsertSliceOp insert) {
  Pad pad;
  pad.insert = insert;
  pad.fill = insert.getDest().getDefiningOp<linalg::FillOp>();
  auto writer = dyn_cast<OpResult>(insert.getSource());
  if (!pad.fill || !pad.fill.hasPureTensorSemantics() ||
      !pad.fill.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>() || !writer)
    return std::nullopt;
  pad.writer = dyn_cast<linalg::LinalgOp>(writer.getOwner());
  if (!pad.writer || !pad.writer.hasPureTensorSemantics())
    return std::nullopt;
  pad.slice = pad.writer.getDpsInitOperand(writer.getResultNumber())
                  ->get()
                  .getDefiningOp<tensor::ExtractSliceOp>();
  if (!pad.slice || pad.slice.getSource() != pad.fill.getResult(0) ||
      !pad.slice.getResult().hasOneUse() || !pad.slice.hasUnitStride() ||
      !insert.hasUnitStride() ||
      pad.slice.getSourceType().getRank() !=
          pad.slice.getResultType().getRank() ||
      pad.slice.getStaticOffsets() != insert.getStaticOffsets() ||
      pad.slice.getStaticSizes() != insert.getStaticSizes() ||
      ShapedType::isDynamicShape(pad.slice.getStaticOffsets()) ||
      ShapedType::isDynamicShape(pad.slice.getStaticSizes()) ||
      !pad.slice.getSourceType().hasStaticShape() ||
      !getUnreadInit(pad.writer, pad.slice, insert))
    return std::nullopt;
  return pad;
}

/// When `pad.writer` copies the result of a linalg op that does not read
/// its destination and has no other use, that op writes the interior and
/// the copy goes.
static void foldCopyIntoProducer(RewriterBase &rewriter, Pad &pad) {
  auto copy = dyn_cast<linalg::CopyOp>(pad.writer.getOperation());
  if (!copy)
    return;
  auto result = dyn_cast<OpResult>(copy.getDpsInputs()[0]);
  if (!result || !result.hasOneUse())
    return;
  auto producer = dyn_cast<linalg::LinalgOp>(result.getOwner());
  if (!producer || !producer.hasPureTensorSemantics() ||
      producer->getBlock() != copy->getBlock() ||
      result.getType() != pad.slice.getResultType())
    return;
  OpOperand *init = producer.getDpsInitOperand(result.getResultNumber());
  if (producer.payloadUsesValueFromOperand(init))
    return;
  // The slice is defined before the copy; so are the producer's operands.
  rewriter.moveOpBefore(producer, copy);
  rewriter.modifyOpInPlace(producer, [&] { init->set(pad.slice.getResult()); });
  rewriter.replaceOp(copy, result);
  pad.writer = producer;
}

/// The padded tensor gets its own tensor.empty, of which only the border is
/// filled: for each dimension, the slices below and above the interior,
/// spanning the interior of the dimensions before it and all of the
/// dimensions after it (disjoint slices that cover the border once).
static void fillBorderOnly(RewriterBase &rewriter, Pad pad) {
  linalg::FillOp fill = pad.fill;
  ArrayRef<int64_t> shape = pad.slice.getSourceType().getShape();
  ArrayRef<int64_t> offsets = pad.slice.getStaticOffsets();
  ArrayRef<int64_t> sizes = pad.slice.getStaticSizes();
  Location loc = fill.getLoc();
  rewriter.setInsertionPoint(pad.slice);
  Value padded =
      rewriter.clone(*fill.getDpsInits()[0].getDefiningOp())->getResult(0);
  Value value = fill.getDpsInputs()[0];
  int64_t rank = shape.size();
  auto fillSide = [&](int64_t dim, int64_t begin, int64_t size) {
    if (size == 0)
      return;
    SmallVector<OpFoldResult> sideOffsets, sideSizes;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t o = d < dim ? offsets[d] : d == dim ? begin : 0;
      int64_t s = d < dim ? sizes[d] : d == dim ? size : shape[d];
      sideOffsets.push_back(rewriter.getIndexAttr(o));
      sideSizes.push_back(rewriter.getIndexAttr(s));
    }
    SmallVector<OpFoldResult> strides(rank, rewriter.getIndexAttr(1));
    Value side = tensor::ExtractSliceOp::create(
        rewriter, loc, padded, sideOffsets, sideSizes, strides);
    Value filled =
        linalg::FillOp::create(rewriter, loc, value, side).getResult(0);
    padded = tensor::InsertSliceOp::create(rewriter, loc, filled, padded,
                                           sideOffsets, sideSizes, strides);
  };
  for (int64_t d = 0; d < rank; ++d) {
    fillSide(d, 0, offsets[d]);
    fillSide(d, offsets[d] + sizes[d], shape[d] - offsets[d] - sizes[d]);
  }
  rewriter.modifyOpInPlace(pad.slice,
                           [&] { pad.slice.getSourceMutable().set(padded); });
  rewriter.modifyOpInPlace(pad.insert,
                           [&] { pad.insert.getDestMutable().set(padded); });
  if (!fill->use_empty())
    return;
  Operation *empty = fill.getDpsInits()[0].getDefiningOp();
  rewriter.eraseOp(fill);
  if (empty->use_empty())
    rewriter.eraseOp(empty);
}

namespace {
class PBPadInPlacePass
    : public pb::impl::PBPadInPlacePassBase<PBPadInPlacePass> {
public:
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    // CSE merges the interiors of pads of one shape too (one extract_slice
    // of the shared fill, written by each pad's copy): each writer gets a
    // slice of its own, as each pad gets its own fill below.
    SmallVector<tensor::ExtractSliceOp> shared;
    getOperation().walk([&](tensor::ExtractSliceOp slice) {
      if (slice.getSource().getDefiningOp<linalg::FillOp>() &&
          !slice.getResult().hasOneUse() &&
          llvm::all_of(slice.getResult().getUses(), [](OpOperand &use) {
            auto dps = dyn_cast<DestinationStyleOpInterface>(use.getOwner());
            return dps && dps.isDpsInit(&use);
          }))
        shared.push_back(slice);
    });
    for (tensor::ExtractSliceOp slice : shared) {
      for (OpOperand &use :
           llvm::make_early_inc_range(llvm::drop_begin(slice->getUses()))) {
        rewriter.setInsertionPoint(use.getOwner());
        Operation *copy = rewriter.clone(*slice);
        rewriter.modifyOpInPlace(use.getOwner(),
                                 [&] { use.set(copy->getResult(0)); });
      }
    }
    SmallVector<Pad> pads;
    getOperation().walk([&](tensor::InsertSliceOp insert) {
      if (std::optional<Pad> pad = matchPad(insert))
        pads.push_back(*pad);
    });
    for (Pad &pad : pads) {
      foldCopyIntoProducer(rewriter, pad);
      fillBorderOnly(rewriter, pad);
    }
  }
};
} // namespace
