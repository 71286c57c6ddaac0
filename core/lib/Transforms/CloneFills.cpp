//===- CloneFills.cpp - One linalg.fill per use ---------------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// pb-clone-fills (S2, before bufferization): CSE merges the identical fills
// of a model's layers (every attention layer's zero accumulator) into one
// tensor with many uses. Each use then writes its own copy: the bufferizer
// fills one buffer and copies it into a fresh buffer for every writer, and
// S3 sees a copy, not a fill, before each contraction. A fill costs no more
// to redo than a copy, so every use gets its own, right before it.
//
//===----------------------------------------------------------------------===//

#include "pb/Transforms/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::pb {
#define GEN_PASS_DEF_PBCLONEFILLSPASS
#include "pb/Transforms/Passes.h.inc"
} // namespace mlir::pb

using namespace mlir;

namespace {
/// Whether `use` is the source of a tensor.extract_slice or the destination
/// of a tensor.insert_slice.
bool isSliceUse(OpOperand &use) {
  Operation *user = use.getOwner();
  if (isa<tensor::ExtractSliceOp>(user))
    return true;
  auto insert = dyn_cast<tensor::InsertSliceOp>(user);
  return insert && &use == &insert.getDestMutable();
}

class PBCloneFillsPass
    : public pb::impl::PBCloneFillsPassBase<PBCloneFillsPass> {
public:
  void runOnOperation() override {
    SmallVector<linalg::FillOp> fills;
    getOperation().walk([&](linalg::FillOp fill) {
      if (fill.hasPureTensorSemantics() && !fill->hasOneUse() &&
          !fill->use_empty())
        fills.push_back(fill);
    });
    OpBuilder b(&getContext());
    for (linalg::FillOp fill : fills) {
      // The uses that read or write the fill through a slice (a padded
      // tensor: the interior extracted, written and inserted back) stay on
      // it: bufferized in place, they are one buffer. Of the other uses,
      // the first (in the fill's block) keeps the fill when there is no
      // slice use; every other gets a clone in front of its user (the
      // fill's operands dominate the fill, hence every user).
      SmallVector<OpOperand *> uses;
      bool hasSliceUse = false;
      for (OpOperand &use : fill->getResult(0).getUses()) {
        if (isSliceUse(use))
          hasSliceUse = true;
        else
          uses.push_back(&use);
      }
      if (uses.empty())
        continue;
      // Users sit in the fill's block or in regions of ops there.
      Block *block = fill->getBlock();
      auto ancestor = [&](OpOperand *use) {
        return block->findAncestorOpInBlock(*use->getOwner());
      };
      OpOperand *kept =
          hasSliceUse ? nullptr
                      : *llvm::min_element(uses, [&](auto *x, auto *y) {
                          return ancestor(x) != ancestor(y) &&
                                 ancestor(x)->isBeforeInBlock(ancestor(y));
                        });
      for (OpOperand *use : uses) {
        if (use == kept)
          continue;
        b.setInsertionPoint(use->getOwner());
        // A fresh tensor.empty too: sharing one, the clones bufferized into
        // one buffer that each user then overwrote in place, and a
        // contraction's epilogue could no longer be fused into its kernel
        // (the buffer was read again later).
        // The clones take their user's location: CSE left the shared fill
        // with the first one's, and the loop nests that S3 fuses from the
        // fill and its user (the kernels) would name that op.
        Location loc = use->getOwner()->getLoc();
        IRMapping mapping;
        Value init = fill.getDpsInitOperand(0)->get();
        if (auto empty = init.getDefiningOp<tensor::EmptyOp>()) {
          Operation *clone = b.clone(*empty);
          clone->setLoc(loc);
          mapping.map(init, clone->getResult(0));
        }
        Operation *clone = b.clone(*fill, mapping);
        clone->setLoc(loc);
        use->set(clone->getResult(0));
      }
    }
  }
};
} // namespace
