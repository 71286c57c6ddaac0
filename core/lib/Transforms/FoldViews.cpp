//===- FoldViews.cpp - Affine accesses through views to the base buffer --===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// pb-fold-views (S2, after the lowering to affine loops): an affine.load or
// affine.store that goes through a static view (memref.subview,
// memref.expand_shape) accesses the viewed buffer instead, with the view
// folded into its affine map; upstream's fold-memref-alias-ops leaves
// affine accesses alone. Afterwards S3 sees plain buffers: the vectorizer
// no longer skips the strided copies of padding, and fusion's dependence
// analysis, which compares buffers by SSA value, sees every access to a
// buffer (DESIGN.md, S2). collapse_shape views fold when each group merges
// one dimension with unit ones (squeezes); the others are left: their
// folded indices need floordiv/mod, which the affine vectorizer cannot
// prove contiguous.
//
//===----------------------------------------------------------------------===//

#include "pb/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::pb {
#define GEN_PASS_DEF_PBFOLDVIEWSPASS
#include "pb/Transforms/Passes.h.inc"
} // namespace mlir::pb

using namespace mlir;
using namespace mlir::pb;

FailureOr<Value> mlir::pb::foldViewIndices(Operation *view,
                                           SmallVectorImpl<AffineExpr> &exprs) {
  MLIRContext *ctx = view->getContext();
  if (auto subview = dyn_cast<memref::SubViewOp>(view)) {
    ArrayRef<int64_t> offsets = subview.getStaticOffsets();
    ArrayRef<int64_t> strides = subview.getStaticStrides();
    if (ShapedType::isDynamicShape(offsets) ||
        ShapedType::isDynamicShape(strides) ||
        !subview.getSourceType().getLayout().isIdentity())
      return failure();
    llvm::SmallBitVector dropped = subview.getDroppedDims();
    SmallVector<AffineExpr> source;
    unsigned next = 0;
    for (unsigned d = 0, e = offsets.size(); d < e; ++d) {
      AffineExpr index =
          dropped.test(d) ? getAffineConstantExpr(0, ctx) : exprs[next++];
      source.push_back(index * strides[d] + offsets[d]);
    }
    exprs.assign(source);
    return subview.getSource();
  }
  if (auto expand = dyn_cast<memref::ExpandShapeOp>(view)) {
    // An expansion splits logical indices whatever its source's layout: the
    // head split of a strided column block of a QKV projection folds into
    // that block's indices, and its subview then into the projection.
    MemRefType result = expand.getResultType();
    if (!result.hasStaticShape())
      return failure();
    SmallVector<AffineExpr> source;
    for (ReassociationIndices group : expand.getReassociationIndices()) {
      AffineExpr index = getAffineConstantExpr(0, ctx);
      for (int64_t d : group)
        index = index * result.getDimSize(d) + exprs[d];
      source.push_back(index);
    }
    exprs.assign(source);
    return expand.getSrc();
  }
  if (auto collapse = dyn_cast<memref::CollapseShapeOp>(view)) {
    // A collapse whose groups each merge at most one dimension larger than
    // one with unit dimensions (the frontends' squeezes): the merged index
    // is that dimension's, the unit ones are 0; no floordiv or mod.
    MemRefType source = collapse.getSrcType();
    if (!source.hasStaticShape())
      return failure();
    SmallVector<AffineExpr> indices;
    for (auto [group, index] :
         llvm::zip(collapse.getReassociationIndices(), exprs)) {
      unsigned large = llvm::count_if(
          group, [&](int64_t d) { return source.getDimSize(d) != 1; });
      if (large > 1)
        return failure();
      bool placed = false;
      for (int64_t d : group) {
        // The last dimension takes the index when all are units (its
        // index is 0 then anyway).
        bool takes =
            source.getDimSize(d) != 1 || (large == 0 && d == group.back());
        indices.push_back(takes && !placed ? index
                                           : getAffineConstantExpr(0, ctx));
        placed |= takes;
      }
    }
    // A collapse to rank 0 has no groups: every source dimension is a unit.
    if (collapse.getReassociationIndices().empty())
      indices.assign(source.getRank(), getAffineConstantExpr(0, ctx));
    exprs.assign(indices);
    return collapse.getSrc();
  }
  return failure();
}

/// Whether each group of `collapse` merges at most one dimension larger
/// than one (with unit dimensions): foldViewIndices folds those.
static bool isSqueeze(memref::CollapseShapeOp collapse) {
  MemRefType source = collapse.getSrcType();
  return source.hasStaticShape() &&
         llvm::all_of(collapse.getReassociationIndices(),
                      [&](ReassociationIndices group) {
                        return llvm::count_if(group, [&](int64_t d) {
                                 return source.getDimSize(d) != 1;
                               }) <= 1;
                      });
}

/// Whether every access to `base` through a view is an affine load or store
/// through views this pass folds. Otherwise none is folded: a view that
/// stays (a linalg op or a micro-kernel writing through it) must keep
/// fusion's guard on (pb-affine-fusion turns itself off while any affine
/// access goes through a view), or fusion would miss that op's accesses.
static bool allViewAccessesFold(Value base) {
  SmallVector<Value> worklist = {base};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (auto view = dyn_cast<ViewLikeOpInterface>(user)) {
        if (view.getViewSource() != value)
          continue;
        auto collapse = dyn_cast<memref::CollapseShapeOp>(user);
        if (!isa<memref::SubViewOp, memref::ExpandShapeOp>(user) &&
            !(collapse && isSqueeze(collapse)))
          return false;
        worklist.push_back(user->getResult(0));
        continue;
      }
      if (value == base)
        continue;
      if (!isa<affine::AffineLoadOp, affine::AffineStoreOp>(user))
        return false;
      if (auto store = dyn_cast<affine::AffineStoreOp>(user))
        if (store.getValueToStore() == value)
          return false;
    }
  }
  return true;
}

/// Rewrites `op` (an affine load or store) to access the buffer its memref
/// views; returns whether it changed.
template <typename AccessOp> static bool foldAccess(AccessOp op) {
  Value memref = op.getMemRef();
  Operation *view = memref.getDefiningOp();
  if (!view || !isa<ViewLikeOpInterface>(view) ||
      !allViewAccessesFold(getBaseBuffer(memref)))
    return false;
  AffineMap map = op.getAffineMap();
  SmallVector<AffineExpr> exprs(map.getResults());
  FailureOr<Value> source = foldViewIndices(view, exprs);
  if (failed(source))
    return false;
  AffineMap newMap = simplifyAffineMap(AffineMap::get(
      map.getNumDims(), map.getNumSymbols(), exprs, op.getContext()));
  OpBuilder b(op);
  SmallVector<Value> operands(op.getMapOperands());
  if constexpr (std::is_same_v<AccessOp, affine::AffineLoadOp>) {
    auto load =
        affine::AffineLoadOp::create(b, op.getLoc(), *source, newMap, operands);
    op.getResult().replaceAllUsesWith(load.getResult());
  } else {
    affine::AffineStoreOp::create(b, op.getLoc(), op.getValueToStore(), *source,
                                  newMap, operands);
  }
  op.erase();
  return true;
}

namespace {
class PBFoldViewsPass : public pb::impl::PBFoldViewsPassBase<PBFoldViewsPass> {
public:
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    unsigned folded = 0;
    bool changed = true;
    // Views of views fold one level per round.
    while (changed) {
      changed = false;
      SmallVector<Operation *> accesses;
      func.walk([&](Operation *op) {
        if (isa<affine::AffineLoadOp, affine::AffineStoreOp>(op))
          accesses.push_back(op);
      });
      for (Operation *op : accesses) {
        bool done = isa<affine::AffineLoadOp>(op)
                        ? foldAccess(cast<affine::AffineLoadOp>(op))
                        : foldAccess(cast<affine::AffineStoreOp>(op));
        folded += done;
        changed |= done;
      }
    }
    // Views left without users go (their sources stay alive).
    SmallVector<Operation *> views;
    func.walk([&](Operation *op) {
      if (isa<memref::SubViewOp, memref::ExpandShapeOp,
              memref::CollapseShapeOp>(op))
        views.push_back(op);
    });
    for (Operation *view : llvm::reverse(views))
      if (view->use_empty())
        view->erase();
    if (folded)
      explain(func, llvm::formatv("fold-views: {0} affine accesses through "
                                  "views now address the viewed buffers",
                                  folded));
  }
};
} // namespace
