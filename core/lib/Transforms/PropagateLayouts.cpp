//===- PropagateLayouts.cpp - One layout between convolutions ------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// pb-propagate-layouts (S1, after elementwise fusion). A generic that reads
// its operands in another dimension order than it writes its result (after
// pb-conv-to-channels-last: a batch norm that reads a channels-last
// convolution result and writes NCHW) is a transpose in disguise: its loops
// walk one of the two tensors across its rows. When most of its inputs are
// read through one permutation and some use of its result can read it
// through any indexing map (generics, and the fill + copy + insert_slice
// padding that the frontends emit in front of the next convolution), the
// generic is rewritten to produce its result in its inputs' order and the
// permutation moves into its users' maps; a copy into anything else (a
// slice of a concatenation) becomes a generic that reads the result through
// the permutation: the copy transposes, the producer (a pooling window)
// walks its inputs contiguously. The propagation is total: any other use
// (an op the pass does not know, a return, a reshape that merges
// dimensions) keeps its old layout, read through one transpose of the new
// value at its boundary. Applied from the top down, the
// layout of the first convolution's result flows through batch norms,
// activations, pooling, residual adds and padding to the last consumer:
// no transpose is left between two convolutions.
//
//===----------------------------------------------------------------------===//

#include "pb/Target/TargetDesc.h"
#include "pb/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InterleavedRange.h"

namespace mlir::pb {
#define GEN_PASS_DEF_PBPROPAGATELAYOUTSPASS
#include "pb/Transforms/Passes.h.inc"
} // namespace mlir::pb

using namespace mlir;
using namespace mlir::pb;

namespace {
/// The padding the frontends emit: `insert` puts `copy`'s result (a copy of
/// the padded value into `slice`, a slice of `fill`) back into `fill`.
struct PadChain {
  linalg::CopyOp copy;
  tensor::ExtractSliceOp slice;
  tensor::InsertSliceOp insert;
  linalg::FillOp fill;
};

/// A generic input that reads the value through collapse_shape and
/// expand_shape ops that only add or drop unit dimensions (the frontends'
/// reshapes around a squeeze-excitation block): `toInput[i]` is the
/// operand's dimension that holds the value's dimension i, or -1 for a unit
/// dimension that the reshapes drop.
struct ReshapedInput {
  OpOperand *use;
  SmallVector<int64_t> toInput;
  /// The operand's unit dimensions (added by the reshapes) whose loops no
  /// other operand bounds: the new value is read with as many trailing unit
  /// dimensions, indexed by them, so that those loops keep their range (the
  /// mean over a squeeze-excitation block's pixels, through a 7-d view).
  SmallVector<unsigned> unboundUnits;
};

/// A concatenation as the frontends emit it: `pieces[i]` copies a value into
/// `slices[i]`, a slice of the tensor built so far (at first `empty`), and
/// `inserts[i]` puts the copy back into it at the same place. A piece is a
/// linalg.copy or a generic that only copies (one input, all loops
/// parallel, the result indexed in loop order): a copy that transposes.
struct ConcatChain {
  tensor::EmptyOp empty;
  SmallVector<tensor::ExtractSliceOp> slices;
  SmallVector<linalg::LinalgOp> pieces;
  SmallVector<tensor::InsertSliceOp> inserts;
  Value result() { return inserts.back().getResult(); }
};

/// Everything that reads a value whose layout changes.
struct LayoutUses {
  SmallVector<OpOperand *> genericInputs;
  SmallVector<PadChain> pads;
  SmallVector<ReshapedInput> reshapedInputs;
  /// The reshapes read by `reshapedInputs`, users first: erased once their
  /// generics read the value directly.
  SmallVector<Operation *> reshapes;
  /// Copies of the value into something that is not a padding (a slice of
  /// a concatenation): each becomes a generic that reads the value through
  /// the permutation, a copy that transposes.
  SmallVector<linalg::CopyOp> copies;
  /// Every other use (an op the pass does not understand: a return, a
  /// named contraction, a reshape that merges dimensions, an init): it
  /// reads the value in its old layout, transposed back at its boundary.
  SmallVector<OpOperand *> others;

  /// The uses that read the new layout directly.
  size_t numUnderstood() const {
    return genericInputs.size() + pads.size() + reshapedInputs.size() +
           copies.size();
  }
};
} // namespace

/// `values` permuted: result k is values[perm[k]].
template <typename T>
static SmallVector<T> permute(ArrayRef<T> values, ArrayRef<int64_t> perm) {
  SmallVector<T> result;
  for (int64_t p : perm)
    result.push_back(values[p]);
  return result;
}

/// The permutation of the output dimensions that `map` reads its operand
/// through, when each of its results is driven by one distinct output
/// dimension (`d_q` alone, or `d_q * s + e` with e over non-output loops:
/// a window of pooling or convolution), or nothing.
static std::optional<SmallVector<int64_t>>
getDrivingPermutation(AffineMap map, unsigned outputRank) {
  if (map.getNumResults() != outputRank)
    return std::nullopt;
  SmallVector<int64_t> perm;
  llvm::SmallBitVector seen(outputRank);
  for (AffineExpr expr : map.getResults()) {
    std::optional<unsigned> driver;
    bool ok = true;
    expr.walk([&](AffineExpr e) {
      auto dim = dyn_cast<AffineDimExpr>(e);
      if (!dim || dim.getPosition() >= outputRank)
        return;
      if (driver && *driver != dim.getPosition())
        ok = false;
      driver = dim.getPosition();
    });
    if (!ok || !driver || seen.test(*driver))
      return std::nullopt;
    seen.set(*driver);
    perm.push_back(*driver);
  }
  return perm;
}

/// (d0, ..., dn) -> (d0, ..., d(rank-1)): a result indexed by the leading
/// loops in order.
static AffineMap getLeadingLoopsMap(unsigned numLoops, unsigned rank,
                                    MLIRContext *ctx) {
  SmallVector<AffineExpr> dims;
  for (unsigned d = 0; d < rank; ++d)
    dims.push_back(getAffineDimExpr(d, ctx));
  return AffineMap::get(numLoops, 0, dims, ctx);
}

/// For a collapse_shape or expand_shape whose every reassociation group has
/// at most one dimension of size other than 1: the result dimension that
/// holds each source dimension, or -1 for a unit one; nothing otherwise.
static std::optional<SmallVector<int64_t>> getUnitReshapeMap(Operation *op) {
  auto collapse = dyn_cast<tensor::CollapseShapeOp>(op);
  auto expand = dyn_cast<tensor::ExpandShapeOp>(op);
  if (!collapse && !expand)
    return std::nullopt;
  auto srcType = cast<RankedTensorType>(op->getOperand(0).getType());
  auto resType = cast<RankedTensorType>(op->getResult(0).getType());
  if (!srcType.hasStaticShape() || !resType.hasStaticShape())
    return std::nullopt;
  SmallVector<ReassociationIndices> groups =
      collapse ? collapse.getReassociationIndices()
               : expand.getReassociationIndices();
  // The grouped side: the source of a collapse, the result of an expand.
  ArrayRef<int64_t> grouped =
      collapse ? srcType.getShape() : resType.getShape();
  SmallVector<int64_t> map(srcType.getRank(), -1);
  for (auto [g, group] : llvm::enumerate(groups)) {
    std::optional<int64_t> wide;
    for (int64_t d : group) {
      if (grouped[d] == 1)
        continue;
      if (wide)
        return std::nullopt;
      wide = d;
    }
    if (!wide)
      continue;
    if (collapse)
      map[*wide] = g;
    else
      map[g] = *wide;
  }
  return map;
}

/// Collects the users of the unit-dimension reshape `reshape` of a value
/// whose dimensions it moves as `toReshaped` says (see ReshapedInput):
/// generic inputs, or further such reshapes.
static bool collectReshapedUses(Operation *reshape,
                                ArrayRef<int64_t> toReshaped,
                                LayoutUses &uses) {
  for (OpOperand &use : reshape->getResult(0).getUses()) {
    Operation *user = use.getOwner();
    if (auto generic = dyn_cast<linalg::GenericOp>(user)) {
      // A convolution behind the reshapes (a depthwise one, between the
      // frontends' NGCHW reshapes) reads the layout it was built for.
      if (!generic.isDpsInput(&use) ||
          isMultiplyAccumulate(generic, /*allowExtensions=*/true))
        return false;
      // Reading the value directly drops the operand's dimensions that the
      // reshapes added; a loop that indexes one of them and nothing else
      // would be left without an operand to bound it (an invalid generic:
      // mobilenet_v3_large and efficientnet_b0 at batch 8), so such
      // dimensions stay, as trailing unit dimensions of the new value.
      AffineMap map = generic.getMatchingIndexingMap(&use);
      llvm::SmallBitVector kept(map.getNumResults());
      for (int64_t d : toReshaped)
        if (d >= 0)
          kept.set(d);
      SmallVector<unsigned> unboundUnits;
      for (unsigned r = 0, e = map.getNumResults(); r < e; ++r) {
        auto dim = dyn_cast<AffineDimExpr>(map.getResult(r));
        if (kept.test(r) || !dim)
          continue;
        bool boundElsewhere = false;
        for (OpOperand &other : generic->getOpOperands()) {
          if (&other == &use)
            continue;
          AffineMap otherMap = generic.getMatchingIndexingMap(&other);
          boundElsewhere |= llvm::is_contained(otherMap.getResults(), dim);
        }
        for (unsigned r2 = 0; r2 < e; ++r2)
          boundElsewhere |=
              r2 != r && kept.test(r2) && map.getResult(r2) == dim;
        if (!boundElsewhere)
          unboundUnits.push_back(r);
      }
      uses.reshapedInputs.push_back(
          {&use, llvm::to_vector(toReshaped), std::move(unboundUnits)});
      continue;
    }
    std::optional<SmallVector<int64_t>> next = getUnitReshapeMap(user);
    if (!next)
      return false;
    SmallVector<int64_t> composed;
    for (int64_t d : toReshaped)
      composed.push_back(d < 0 ? -1 : (*next)[d]);
    if (!collectReshapedUses(user, composed, uses))
      return false;
  }
  uses.reshapes.push_back(reshape);
  return true;
}

static bool matchPadChain(linalg::CopyOp copy, LayoutUses &uses);

/// Collects the uses of `value` (and, through paddings, of the padded
/// values): those that can read it in another layout by kind, every other
/// one in `uses.others`.
static void collectUses(Value value, LayoutUses &uses) {
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (auto generic = dyn_cast<linalg::GenericOp>(user)) {
      if (generic.isDpsInput(&use))
        uses.genericInputs.push_back(&use);
      else
        uses.others.push_back(&use);
      continue;
    }
    if (std::optional<SmallVector<int64_t>> toReshaped =
            getUnitReshapeMap(user)) {
      // A chain that cannot read the new value (a convolution behind it)
      // is left as it was, and its first reshape reads the old layout.
      size_t numInputs = uses.reshapedInputs.size();
      size_t numReshapes = uses.reshapes.size();
      if (!collectReshapedUses(user, *toReshaped, uses)) {
        uses.reshapedInputs.truncate(numInputs);
        uses.reshapes.truncate(numReshapes);
        uses.others.push_back(&use);
      }
      continue;
    }
    auto copy = dyn_cast<linalg::CopyOp>(user);
    if (!copy || !copy.hasPureTensorSemantics() || !copy.isDpsInput(&use)) {
      uses.others.push_back(&use);
      continue;
    }
    if (!matchPadChain(copy, uses)) {
      uses.copies.push_back(copy);
      continue;
    }
    collectUses(uses.pads.back().insert.getResult(), uses);
  }
}

/// Whether `copy` is the copy of a PadChain; appends the chain to `uses`.
static bool matchPadChain(linalg::CopyOp copy, LayoutUses &uses) {
  if (!copy->getResult(0).hasOneUse())
    return false;
  PadChain pad;
  pad.copy = copy;
  pad.slice = copy.getDpsInits()[0].getDefiningOp<tensor::ExtractSliceOp>();
  pad.insert =
      dyn_cast<tensor::InsertSliceOp>(*copy->getResult(0).getUsers().begin());
  if (!pad.slice || !pad.insert)
    return false;
  pad.fill = pad.slice.getSource().getDefiningOp<linalg::FillOp>();
  if (!pad.fill || pad.insert.getDest() != pad.slice.getSource() ||
      !pad.fill.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>() ||
      !pad.slice.hasUnitStride() || !pad.insert.hasUnitStride() ||
      pad.slice.getStaticOffsets() != pad.insert.getStaticOffsets() ||
      pad.slice.getStaticSizes() != pad.insert.getStaticSizes() ||
      ShapedType::isDynamicShape(pad.slice.getStaticOffsets()) ||
      ShapedType::isDynamicShape(pad.slice.getStaticSizes()) ||
      pad.slice.getSourceType().getRank() !=
          pad.slice.getResultType().getRank())
    return false;
  uses.pads.push_back(pad);
  return true;
}

/// `type` with its dimensions permuted.
static RankedTensorType permuteType(RankedTensorType type,
                                    ArrayRef<int64_t> perm) {
  return RankedTensorType::get(permute(type.getShape(), perm),
                               type.getElementType());
}

/// A tensor of `type`: filled with `fillValue`, or empty when it is null.
static Value createInit(OpBuilder &b, Location loc, RankedTensorType type,
                        Value fillValue) {
  Value empty =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  if (!fillValue)
    return empty;
  return linalg::FillOp::create(b, loc, fillValue, empty).getResult(0);
}

/// `newValue` = transpose(old, perm) transposed back into `oldType`: a
/// generic that reads it through the permutation.
static Value transposeBack(OpBuilder &b, Location loc, Value newValue,
                           ArrayRef<int64_t> perm, RankedTensorType oldType) {
  MLIRContext *ctx = b.getContext();
  unsigned rank = perm.size();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
  AffineMap read =
      AffineMap::get(rank, 0, permute(identity.getResults(), perm), ctx);
  Value init = tensor::EmptyOp::create(b, loc, oldType.getShape(),
                                       oldType.getElementType());
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{oldType}, ValueRange{newValue}, ValueRange{init},
      ArrayRef<AffineMap>{read, identity},
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [](OpBuilder &nested, Location l, ValueRange args) {
        linalg::YieldOp::create(nested, l, args[0]);
      });
  return generic.getResult(0);
}

/// Makes every user in `uses` read `newValue` = transpose(old, perm) instead
/// of the old value: generics through permuted maps, padding rebuilt in the
/// permuted order.
static void rewriteUses(RewriterBase &rewriter, Value oldValue, Value newValue,
                        ArrayRef<int64_t> perm, LayoutUses &uses) {
  // Uses the pass does not understand read the old layout through one
  // transpose of the new value, at their boundary.
  SmallVector<OpOperand *> others;
  llvm::erase_if(uses.others, [&](OpOperand *use) {
    if (use->get() != oldValue)
      return false;
    others.push_back(use);
    return true;
  });
  if (!others.empty()) {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointAfterValue(newValue);
    Value back = transposeBack(rewriter, newValue.getLoc(), newValue, perm,
                               cast<RankedTensorType>(oldValue.getType()));
    for (OpOperand *use : others)
      rewriter.modifyOpInPlace(use->getOwner(), [&]() { use->set(back); });
  }
  // Users of `oldValue` only: pads further down are reached recursively.
  for (OpOperand *use : uses.genericInputs) {
    if (use->get() != oldValue)
      continue;
    auto generic = cast<linalg::GenericOp>(use->getOwner());
    SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
    AffineMap map = maps[use->getOperandNumber()];
    maps[use->getOperandNumber()] =
        AffineMap::get(map.getNumDims(), map.getNumSymbols(),
                       permute(map.getResults(), perm), map.getContext());
    rewriter.modifyOpInPlace(generic, [&]() {
      generic.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
      use->set(newValue);
    });
  }
  // Reshaped inputs read the new value directly: operand dimension k is the
  // old value's dimension perm[k], reached through the reshapes' map.
  for (const ReshapedInput &input : uses.reshapedInputs) {
    Operation *reshape = input.use->get().getDefiningOp();
    if (!llvm::is_contained(uses.reshapes, reshape))
      continue;
    // Only the chains that start at `oldValue`.
    Value source = reshape->getOperand(0);
    while (Operation *def = source.getDefiningOp()) {
      if (!llvm::is_contained(uses.reshapes, def))
        break;
      source = def->getOperand(0);
    }
    if (source != oldValue)
      continue;
    auto generic = cast<linalg::GenericOp>(input.use->getOwner());
    SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
    AffineMap map = maps[input.use->getOperandNumber()];
    SmallVector<AffineExpr> results;
    for (int64_t old : perm)
      results.push_back(input.toInput[old] < 0
                            ? getAffineConstantExpr(0, map.getContext())
                            : map.getResult(input.toInput[old]));
    Value read = newValue;
    if (!input.unboundUnits.empty()) {
      // newValue with trailing unit dimensions for the loops only the
      // reshapes' unit dimensions bounded.
      auto type = cast<RankedTensorType>(newValue.getType());
      SmallVector<int64_t> shape(type.getShape());
      SmallVector<ReassociationIndices> groups;
      for (int64_t d = 0, e = type.getRank(); d < e; ++d)
        groups.push_back({d});
      for (unsigned r : input.unboundUnits) {
        groups.back().push_back(static_cast<int64_t>(shape.size()));
        shape.push_back(1);
        results.push_back(map.getResult(r));
      }
      rewriter.setInsertionPoint(generic);
      read = tensor::ExpandShapeOp::create(
          rewriter, generic.getLoc(),
          RankedTensorType::get(shape, type.getElementType()), newValue,
          groups);
    }
    maps[input.use->getOperandNumber()] = AffineMap::get(
        map.getNumDims(), map.getNumSymbols(), results, map.getContext());
    rewriter.modifyOpInPlace(generic, [&]() {
      generic.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
      input.use->set(read);
    });
  }
  // The reshapes of `oldValue` have no users left: erased (users first)
  // before `oldValue`'s producer is.
  SmallVector<Operation *> kept;
  for (Operation *reshape : uses.reshapes) {
    if (reshape->use_empty())
      rewriter.eraseOp(reshape);
    else
      kept.push_back(reshape);
  }
  uses.reshapes = std::move(kept);
  // Copies and pads are taken out of `uses` as they are rewritten (and
  // their ops erased): a deeper call, for a pad's result, must not look at
  // them again.
  SmallVector<linalg::CopyOp> copies;
  llvm::erase_if(uses.copies, [&](linalg::CopyOp copy) {
    if (copy.getDpsInputs()[0] != oldValue)
      return false;
    copies.push_back(copy);
    return true;
  });
  for (linalg::CopyOp copy : copies) {
    rewriter.setInsertionPoint(copy);
    MLIRContext *ctx = copy.getContext();
    unsigned rank = perm.size();
    AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
    AffineMap read =
        AffineMap::get(rank, 0, permute(identity.getResults(), perm), ctx);
    Value init = copy.getDpsInits()[0];
    auto transposing = linalg::GenericOp::create(
        rewriter, copy.getLoc(), TypeRange{init.getType()},
        ValueRange{newValue}, ValueRange{init},
        ArrayRef<AffineMap>{read, identity},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [](OpBuilder &b, Location loc, ValueRange args) {
          linalg::YieldOp::create(b, loc, args[0]);
        });
    rewriter.replaceOp(copy, transposing.getResults());
  }
  SmallVector<PadChain> pads;
  llvm::erase_if(uses.pads, [&](PadChain &pad) {
    if (pad.copy.getDpsInputs()[0] != oldValue)
      return false;
    pads.push_back(pad);
    return true;
  });
  for (PadChain pad : pads) {
    rewriter.setInsertionPoint(pad.insert);
    Location loc = pad.insert.getLoc();
    RankedTensorType paddedType =
        permuteType(cast<RankedTensorType>(pad.insert.getType()), perm);
    Value fill =
        createInit(rewriter, loc, paddedType, pad.fill.getDpsInputs()[0]);
    SmallVector<int64_t> offsets = permute(pad.slice.getStaticOffsets(), perm);
    SmallVector<int64_t> sizes = permute(pad.slice.getStaticSizes(), perm);
    SmallVector<OpFoldResult> offsetAttrs, sizeAttrs,
        strideAttrs(perm.size(), rewriter.getIndexAttr(1));
    for (auto [offset, size] : llvm::zip(offsets, sizes)) {
      offsetAttrs.push_back(rewriter.getIndexAttr(offset));
      sizeAttrs.push_back(rewriter.getIndexAttr(size));
    }
    Value slice = tensor::ExtractSliceOp::create(
        rewriter, loc, fill, offsetAttrs, sizeAttrs, strideAttrs);
    Value copied =
        linalg::CopyOp::create(rewriter, loc, newValue, slice).getResult(0);
    Value inserted = tensor::InsertSliceOp::create(
        rewriter, loc, copied, fill, offsetAttrs, sizeAttrs, strideAttrs);
    Value oldPadded = pad.insert.getResult();
    rewriteUses(rewriter, oldPadded, inserted, perm, uses);
    rewriter.eraseOp(pad.insert);
    rewriter.eraseOp(pad.copy);
  }
}

/// Makes the parallel loop that indexes the innermost dimension of
/// `generic`'s largest input the innermost loop, when the innermost loop is a
/// reduction (a mean over H and W of a channels-last map: the channel loop
/// walks the input's rows). Unit dimensions (the frontends' reshapes add
/// them) do not count as innermost. Moving a parallel loop does not reorder
/// any reduction. Returns whether the loops moved.
static bool moveInnermostLoop(RewriterBase &rewriter,
                              linalg::GenericOp generic) {
  SmallVector<int64_t> ranges = generic.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators = generic.getIteratorTypesArray();
  auto isUnit = [&](unsigned loop) { return ranges[loop] == 1; };
  std::optional<unsigned> lastLoop;
  for (unsigned d = ranges.size(); d-- > 0;)
    if (!isUnit(d)) {
      lastLoop = d;
      break;
    }
  if (!lastLoop || iterators[*lastLoop] != utils::IteratorType::reduction)
    return false;
  OpOperand *largest = nullptr;
  int64_t largestSize = 0;
  for (OpOperand *input : generic.getDpsInputOperands()) {
    auto type = dyn_cast<RankedTensorType>(input->get().getType());
    if (!type || !type.hasStaticShape())
      return false;
    if (type.getNumElements() > largestSize) {
      largest = input;
      largestSize = type.getNumElements();
    }
  }
  if (!largest)
    return false;
  AffineMap map = generic.getMatchingIndexingMap(largest);
  ArrayRef<int64_t> shape =
      cast<RankedTensorType>(largest->get().getType()).getShape();
  for (unsigned r = map.getNumResults(); r-- > 0;) {
    if (shape[r] == 1)
      continue;
    auto dim = dyn_cast<AffineDimExpr>(map.getResult(r));
    if (!dim || iterators[dim.getPosition()] != utils::IteratorType::parallel)
      return false;
    SmallVector<unsigned> order;
    for (unsigned d = 0; d < ranges.size(); ++d)
      if (d != dim.getPosition())
        order.push_back(d);
    order.push_back(dim.getPosition());
    rewriter.setInsertionPoint(generic);
    return succeeded(linalg::interchangeGenericOp(rewriter, generic, order));
  }
  return false;
}

/// Rewrites `generic` to produce its result permuted by `perm` with its
/// loops in the new order, and its users to read that result.
static void relayout(RewriterBase &rewriter, linalg::GenericOp generic,
                     ArrayRef<int64_t> perm, LayoutUses &uses) {
  MLIRContext *ctx = generic.getContext();
  unsigned numLoops = generic.getNumLoops();
  unsigned rank = perm.size();
  // The new loop order (new position -> old loop): the result's dimensions
  // in the new order, with the reductions (a pooling window) before the
  // innermost one, so that the innermost loop stays parallel and walks the
  // result and the inputs contiguously (vectorizable).
  SmallVector<unsigned> order(perm.begin(), perm.end() - 1);
  for (unsigned d = rank; d < numLoops; ++d)
    order.push_back(d);
  order.push_back(perm.back());
  SmallVector<AffineExpr> oldLoops(numLoops);
  SmallVector<unsigned> newPosition(numLoops);
  for (auto [pos, old] : llvm::enumerate(order)) {
    oldLoops[old] = getAffineDimExpr(pos, ctx);
    newPosition[old] = pos;
  }
  AffineMap toOld = AffineMap::get(numLoops, 0, oldLoops, ctx);
  SmallVector<AffineMap> maps;
  for (OpOperand *input : generic.getDpsInputOperands())
    maps.push_back(generic.getMatchingIndexingMap(input).compose(toOld));
  SmallVector<AffineExpr> outExprs;
  for (int64_t old : perm)
    outExprs.push_back(getAffineDimExpr(newPosition[old], ctx));
  maps.push_back(AffineMap::get(numLoops, 0, outExprs, ctx));
  SmallVector<utils::IteratorType> iterators = generic.getIteratorTypesArray();
  SmallVector<utils::IteratorType> newIterators;
  for (unsigned old : order)
    newIterators.push_back(iterators[old]);

  rewriter.setInsertionPoint(generic);
  auto oldType = cast<RankedTensorType>(generic.getResult(0).getType());
  RankedTensorType newType = permuteType(oldType, perm);
  // The init: refilled in the new shape, or empty (see choosePermutation).
  auto fill = generic.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
  Value newInit = createInit(rewriter, generic.getLoc(), newType,
                             fill ? fill.getDpsInputs()[0] : Value());
  auto newGeneric = linalg::GenericOp::create(
      rewriter, generic.getLoc(), TypeRange{newType}, generic.getDpsInputs(),
      ValueRange{newInit}, maps, newIterators);
  rewriter.inlineRegionBefore(generic.getRegion(), newGeneric.getRegion(),
                              newGeneric.getRegion().begin());
  rewriteUses(rewriter, generic.getResult(0), newGeneric.getResult(0), perm,
              uses);
  rewriter.eraseOp(generic);
}

/// Drops the trailing unit loops of `generic` when its result is only read
/// through collapse_shapes that merge those dimensions away (a squeeze-
/// excitation multiply written as (n, h, w, c, 1, 1)): its innermost loop
/// then walks the result contiguously and S3 vectorizes it. Returns whether
/// it changed.
static bool dropTrailingUnitLoops(RewriterBase &rewriter,
                                  linalg::GenericOp generic) {
  if (generic.getNumDpsInits() != 1 || generic.getNumResults() != 1 ||
      generic.getNumReductionLoops() != 0 || generic.hasIndexSemantics())
    return false;
  auto type = dyn_cast<RankedTensorType>(generic.getResult(0).getType());
  if (!type || !type.hasStaticShape() || type.getRank() < 2)
    return false;
  AffineMap outMap =
      generic.getMatchingIndexingMap(generic.getDpsInitOperand(0));
  if (!outMap.isIdentity())
    return false;
  SmallVector<unsigned> unit;
  for (int64_t d = type.getRank() - 1; d > 0 && type.getDimSize(d) == 1; --d)
    unit.push_back(d);
  if (unit.empty() || unit.size() + 1 == static_cast<size_t>(type.getRank()))
    return false;
  // The trailing unit dimensions merge into the group before them.
  int64_t firstUnit = unit.back();
  for (Operation *user : generic->getUsers()) {
    auto collapse = dyn_cast<tensor::CollapseShapeOp>(user);
    if (!collapse)
      return false;
    bool merged = llvm::any_of(collapse.getReassociationIndices(),
                               [&](ReassociationIndices group) {
                                 return group.front() < firstUnit &&
                                        group.back() == type.getRank() - 1;
                               });
    if (!merged)
      return false;
  }
  linalg::ControlDropUnitDims control;
  control.controlFn = [&](Operation *) { return unit; };
  rewriter.setInsertionPoint(generic);
  FailureOr<linalg::DropUnitDimsResult> result =
      linalg::dropUnitDims(rewriter, generic, control);
  if (failed(result))
    return false;
  rewriter.replaceOp(generic, result->replacements);
  return true;
}

/// Whether `op` only copies its one input into its init: a linalg.copy, or
/// a generic over parallel loops that index its result in order and yield
/// the input (reading it through any map).
static bool isCopyLike(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
      op->getNumResults() != 1 || !op.hasPureTensorSemantics())
    return false;
  if (isa<linalg::CopyOp>(op))
    return true;
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic || generic.getNumReductionLoops() != 0 ||
      !generic.getMatchingIndexingMap(generic.getDpsInitOperand(0))
           .isIdentity())
    return false;
  auto yield = cast<linalg::YieldOp>(generic.getBody()->getTerminator());
  return yield.getNumOperands() == 1 &&
         yield.getOperand(0) == generic.getBody()->getArgument(0);
}

/// The concatenation that starts at `empty` (see ConcatChain), or nothing.
static std::optional<ConcatChain> matchConcat(tensor::EmptyOp empty) {
  auto type = dyn_cast<RankedTensorType>(empty.getType());
  if (!type || !type.hasStaticShape() || type.getRank() < 2)
    return std::nullopt;
  ConcatChain chain;
  chain.empty = empty;
  Value current = empty.getResult();
  while (true) {
    tensor::ExtractSliceOp slice;
    tensor::InsertSliceOp insert;
    bool others = false;
    for (OpOperand &use : current.getUses()) {
      auto s = dyn_cast<tensor::ExtractSliceOp>(use.getOwner());
      auto i = dyn_cast<tensor::InsertSliceOp>(use.getOwner());
      if (s && !slice)
        slice = s;
      else if (i && !insert && use.getOperandNumber() == 1)
        insert = i;
      else
        others = true;
    }
    if (others || !slice || !insert)
      break;
    auto piece = insert.getSource().getDefiningOp<linalg::LinalgOp>();
    if (!piece || !isCopyLike(piece) || !slice->hasOneUse() ||
        piece.getDpsInits()[0] != slice.getResult() ||
        !piece->getResult(0).hasOneUse() || !slice.hasUnitStride() ||
        !insert.hasUnitStride() ||
        slice.getStaticOffsets() != insert.getStaticOffsets() ||
        slice.getStaticSizes() != insert.getStaticSizes() ||
        ShapedType::isDynamicShape(slice.getStaticOffsets()) ||
        ShapedType::isDynamicShape(slice.getStaticSizes()) ||
        slice.getResultType().getRank() != type.getRank())
      return std::nullopt;
    chain.slices.push_back(slice);
    chain.pieces.push_back(piece);
    chain.inserts.push_back(insert);
    current = insert.getResult();
  }
  if (chain.pieces.empty() || current == empty.getResult())
    return std::nullopt;
  return chain;
}

/// The permutation most pieces of `chain` read their values through, when
/// they outnumber the pieces that read in the concatenation's order.
static std::optional<SmallVector<int64_t>>
chooseConcatPermutation(ConcatChain &chain) {
  unsigned rank = chain.empty.getType().getRank();
  SmallVector<int64_t> identity = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  unsigned inOrder = 0;
  SmallVector<std::pair<SmallVector<int64_t>, unsigned>> votes;
  for (linalg::LinalgOp piece : chain.pieces) {
    std::optional<SmallVector<int64_t>> perm = getDrivingPermutation(
        piece.getMatchingIndexingMap(piece.getDpsInputOperand(0)), rank);
    if (!perm || *perm == identity) {
      ++inOrder;
      continue;
    }
    auto it = llvm::find_if(votes, [&](auto &v) { return v.first == *perm; });
    if (it == votes.end())
      votes.push_back({*perm, 1});
    else
      ++it->second;
  }
  if (votes.empty())
    return std::nullopt;
  auto best = llvm::max_element(
      votes, [](auto &a, auto &b) { return a.second < b.second; });
  if (best->second <= inOrder)
    return std::nullopt;
  return best->first;
}

/// Builds `chain` with its dimensions permuted by `perm`: each piece copies
/// its value into the permuted slice (a plain copy when it read the value
/// through `perm`), and `uses` read the permuted result. The old chain is
/// erased; its pieces go into `erased`.
static void relayoutConcat(RewriterBase &rewriter, ConcatChain &chain,
                           ArrayRef<int64_t> perm, LayoutUses &uses,
                           DenseSet<Operation *> &erased) {
  MLIRContext *ctx = rewriter.getContext();
  unsigned rank = perm.size();
  // New loop k runs over old dimension perm[k].
  SmallVector<AffineExpr> toOldExprs(rank);
  for (unsigned k = 0; k < rank; ++k)
    toOldExprs[perm[k]] = getAffineDimExpr(k, ctx);
  AffineMap toOld = AffineMap::get(rank, 0, toOldExprs, ctx);
  AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
  Operation *last = chain.inserts.back();
  rewriter.setInsertionPoint(last);
  Location loc = chain.empty.getLoc();
  Value current =
      createInit(rewriter, loc, permuteType(chain.empty.getType(), perm), {});
  for (auto [slice, piece, insert] :
       llvm::zip(chain.slices, chain.pieces, chain.inserts)) {
    SmallVector<OpFoldResult> offsets, sizes,
        strides(rank, rewriter.getIndexAttr(1));
    for (int64_t o : permute(slice.getStaticOffsets(), perm))
      offsets.push_back(rewriter.getIndexAttr(o));
    for (int64_t z : permute(slice.getStaticSizes(), perm))
      sizes.push_back(rewriter.getIndexAttr(z));
    Value newSlice = tensor::ExtractSliceOp::create(rewriter, loc, current,
                                                    offsets, sizes, strides);
    AffineMap read = piece.getMatchingIndexingMap(piece.getDpsInputOperand(0))
                         .compose(toOld);
    auto copied = linalg::GenericOp::create(
        rewriter, piece.getLoc(), TypeRange{newSlice.getType()},
        ValueRange{piece.getDpsInputs()[0]}, ValueRange{newSlice},
        ArrayRef<AffineMap>{read, identity},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [](OpBuilder &b, Location l, ValueRange args) {
          linalg::YieldOp::create(b, l, args[0]);
        });
    current = tensor::InsertSliceOp::create(rewriter, insert.getLoc(),
                                            copied.getResult(0), current,
                                            offsets, sizes, strides);
  }
  rewriteUses(rewriter, chain.result(), current, perm, uses);
  for (int64_t i = chain.pieces.size() - 1; i >= 0; --i) {
    rewriter.eraseOp(chain.inserts[i]);
    erased.insert(chain.pieces[i]);
    rewriter.eraseOp(chain.pieces[i]);
    rewriter.eraseOp(chain.slices[i]);
  }
  erased.insert(chain.empty);
  rewriter.eraseOp(chain.empty);
}

namespace {
class PBPropagateLayoutsPass
    : public pb::impl::PBPropagateLayoutsPassBase<PBPropagateLayoutsPass> {
public:
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    IRRewriter rewriter(&getContext());
    // Pooling ops read their input through a window map like any generic.
    SmallVector<linalg::LinalgOp> pools;
    func.walk([&](linalg::LinalgOp op) {
      if (isa<linalg::PoolingNchwMaxOp, linalg::PoolingNchwSumOp>(op) &&
          op.hasPureTensorSemantics())
        pools.push_back(op);
    });
    for (linalg::LinalgOp pool : pools) {
      rewriter.setInsertionPoint(pool);
      (void)linalg::generalizeNamedOp(rewriter, pool);
    }

    // Generics and the empty tensors that concatenations start from, in
    // program order: a concatenation is built in the layout its pieces
    // arrive in, after their producers changed theirs and before its
    // readers change theirs.
    SmallVector<Operation *> worklist;
    func.walk([&](Operation *op) {
      if (isa<linalg::GenericOp, tensor::EmptyOp>(op))
        worklist.push_back(op);
    });
    DenseSet<Operation *> erased;
    unsigned changed = 0, concats = 0;
    for (Operation *op : worklist) {
      if (erased.contains(op))
        continue;
      if (auto empty = dyn_cast<tensor::EmptyOp>(op)) {
        std::optional<ConcatChain> chain = matchConcat(empty);
        if (!chain)
          continue;
        std::optional<SmallVector<int64_t>> perm =
            chooseConcatPermutation(*chain);
        if (!perm)
          continue;
        LayoutUses uses;
        collectUses(chain->result(), uses);
        if (uses.numUnderstood() == 0)
          continue;
        explain(chain->inserts.back(),
                llvm::formatv("layout: concatenation of {0} pieces built in "
                              "their order (permutation [{1}]); {2} generic, "
                              "{3} padding and {4} reshaped users read it "
                              "through permuted maps, {5} copies transpose "
                              "it, {6} other uses read it transposed back",
                              chain->pieces.size(), llvm::interleaved(*perm),
                              uses.genericInputs.size(), uses.pads.size(),
                              uses.reshapedInputs.size(), uses.copies.size(),
                              uses.others.size()));
        relayoutConcat(rewriter, *chain, *perm, uses, erased);
        ++concats;
        continue;
      }
      auto generic = cast<linalg::GenericOp>(op);
      std::optional<SmallVector<int64_t>> perm = choosePermutation(generic);
      if (!perm)
        continue;
      // With no use that reads the new layout directly, a transpose back
      // would only add a pass over the result.
      LayoutUses uses;
      collectUses(generic.getResult(0), uses);
      if (uses.numUnderstood() == 0)
        continue;
      explain(generic,
              llvm::formatv("layout: result produced in its inputs' order "
                            "(permutation [{0}]); {1} generic, {2} padding "
                            "and {3} reshaped users read it through permuted "
                            "maps, {4} copies transpose it, {5} other uses "
                            "read it transposed back",
                            llvm::interleaved(*perm), uses.genericInputs.size(),
                            uses.pads.size(), uses.reshapedInputs.size(),
                            uses.copies.size(), uses.others.size()));
      relayout(rewriter, generic, *perm, uses);
      ++changed;
    }
    // A reduction whose innermost loop strides across its input (a
    // squeeze-excitation mean over H and W of a channels-last map, read
    // through the reshapes that add unit dimensions): the parallel loop
    // that walks the input's innermost dimension moves innermost, so that
    // each element is read once, contiguously, into a row of accumulators.
    SmallVector<linalg::GenericOp> reductions;
    func.walk([&](linalg::GenericOp op) {
      if (op.getNumReductionLoops() > 0 &&
          !isMultiplyAccumulate(op, /*allowExtensions=*/true) &&
          op.hasPureTensorSemantics())
        reductions.push_back(op);
    });
    unsigned moved = 0;
    for (linalg::GenericOp reduction : reductions)
      moved += moveInnermostLoop(rewriter, reduction);
    if (moved)
      explain(func, llvm::formatv("layout: {0} reductions walk their input "
                                  "along its rows (a parallel loop moved "
                                  "innermost)",
                                  moved));
    // Results written with trailing unit dimensions that their users
    // collapse away lose them.
    SmallVector<linalg::GenericOp> all;
    func.walk([&](linalg::GenericOp op) { all.push_back(op); });
    unsigned dropped = 0;
    for (linalg::GenericOp generic : all)
      dropped += dropTrailingUnitLoops(rewriter, generic);
    if (dropped)
      explain(func, llvm::formatv("layout: {0} results lose trailing unit "
                                  "dimensions",
                                  dropped));
    if (changed == 0 && concats == 0)
      return;
    // What remains: generics that still read an operand through a
    // permutation of their output (layout changes at the function's edges
    // or in front of ops that need one layout).
    unsigned left = 0;
    func.walk([&](linalg::GenericOp generic) {
      if (choosePermutation(generic, /*requireMajority=*/false))
        ++left;
    });
    explain(func, llvm::formatv("layout: {0} results and {1} "
                                "concatenations change layout; {2} generics "
                                "still read an operand transposed",
                                changed, concats, left));
  }

private:
  /// The permutation most of `generic`'s inputs of the result's rank are
  /// read through, when it is not the identity and outnumbers the inputs
  /// read in the result's order (with `requireMajority` false: any such
  /// permutation).
  static std::optional<SmallVector<int64_t>>
  choosePermutation(linalg::GenericOp generic, bool requireMajority = true) {
    if (generic.getNumDpsInits() != 1 || generic.getNumResults() != 1 ||
        generic.hasIndexSemantics() ||
        generic->hasAttr(PBDialect::kKeepLayoutAttrName))
      return std::nullopt;
    auto type = dyn_cast<RankedTensorType>(generic.getResult(0).getType());
    if (!type || type.getRank() < 2 || !type.hasStaticShape())
      return std::nullopt;
    unsigned rank = type.getRank();
    // The result indexed by the first `rank` loops in order, all parallel;
    // reductions (pooling windows) only after them.
    AffineMap outMap =
        generic.getMatchingIndexingMap(generic.getDpsInitOperand(0));
    if (outMap != getLeadingLoopsMap(generic.getNumLoops(), rank,
                                     generic.getContext()) ||
        outMap.getNumDims() != rank + generic.getNumReductionLoops())
      return std::nullopt;
    for (unsigned d = 0; d < rank; ++d)
      if (generic.getIteratorTypesArray()[d] != utils::IteratorType::parallel)
        return std::nullopt;
    // The init: a fill or an empty tensor, whose layout can be rebuilt;
    // read in the body only for a fill (a reduction's start value).
    Value init = generic.getDpsInits()[0];
    bool initRead =
        generic.payloadUsesValueFromOperand(generic.getDpsInitOperand(0));
    if (!init.getDefiningOp<tensor::EmptyOp>() &&
        !init.getDefiningOp<linalg::FillOp>())
      return std::nullopt;
    if (initRead && !init.getDefiningOp<linalg::FillOp>())
      return std::nullopt;
    // Votes: inputs read in the result's order against each permutation.
    SmallVector<int64_t> identity =
        llvm::to_vector(llvm::seq<int64_t>(0, rank));
    unsigned inOrder = 0;
    SmallVector<std::pair<SmallVector<int64_t>, unsigned>> votes;
    for (OpOperand *input : generic.getDpsInputOperands()) {
      std::optional<SmallVector<int64_t>> perm =
          getDrivingPermutation(generic.getMatchingIndexingMap(input), rank);
      if (!perm)
        continue;
      if (*perm == identity) {
        ++inOrder;
        continue;
      }
      auto it = llvm::find_if(votes, [&](auto &v) { return v.first == *perm; });
      if (it == votes.end())
        votes.push_back({*perm, 1});
      else
        ++it->second;
    }
    if (votes.empty())
      return std::nullopt;
    auto best = llvm::max_element(
        votes, [](auto &a, auto &b) { return a.second < b.second; });
    if (requireMajority && best->second <= inOrder)
      return std::nullopt;
    return best->first;
  }
};
} // namespace
