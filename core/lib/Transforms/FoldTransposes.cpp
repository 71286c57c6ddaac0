//===- FoldTransposes.cpp - Transposed B operands read in place -----------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// pb-fold-transposes (S1): on chips with matrix units (GPU tensor cores
// read B either (k, n) or (n, k); a CPU's packing reads either), a matmul
// or batch matmul whose B is a linalg.transpose of its last two dimensions
// reads the transpose's input directly: the op becomes a
// linalg.generic whose B map is the swapped one, and the transpose (a
// kernel of its own, on every call for a model's weights) goes away once
// unused. x @ W^T of a linear layer then reads W as (n, k), the K-major
// layout that wgmma reads for every element type; on chips with
// thread-scope units (CPUs) the micro-kernel's packing reads it in 8x8
// squares along K and transposes them in registers.
//
//===----------------------------------------------------------------------===//

#include "pb/Target/TargetRegistry.h"
#include "pb/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::pb {
#define GEN_PASS_DEF_PBFOLDTRANSPOSESPASS
#include "pb/Transforms/Passes.h.inc"
} // namespace mlir::pb

using namespace mlir;
using namespace mlir::pb;

/// Whether `permutation` swaps the last two dimensions and keeps the others.
static bool swapsLastTwo(ArrayRef<int64_t> permutation) {
  int64_t rank = permutation.size();
  if (rank < 2)
    return false;
  for (int64_t i = 0; i + 2 < rank; ++i)
    if (permutation[i] != i)
      return false;
  return permutation[rank - 2] == rank - 1 && permutation[rank - 1] == rank - 2;
}

namespace {
class PBFoldTransposesPass
    : public pb::impl::PBFoldTransposesPassBase<PBFoldTransposesPass> {
public:
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    const ChipDesc *chip = getTargetChip(func);
    if (!chip || chip->matrixUnits.empty())
      return;
    SmallVector<linalg::LinalgOp> candidates;
    func.walk([&](linalg::LinalgOp op) {
      if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op) &&
          op.hasPureTensorSemantics())
        candidates.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : candidates) {
      OpOperand *bOperand = op.getDpsInputOperand(1);
      auto transpose = bOperand->get().getDefiningOp<linalg::TransposeOp>();
      if (!transpose || !swapsLastTwo(transpose.getPermutation()) ||
          !op.getMatchingIndexingMap(bOperand).isProjectedPermutation())
        continue;
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::GenericOp> generic =
          linalg::generalizeNamedOp(rewriter, op);
      if (failed(generic))
        continue;
      // B[x] = transpose.input[swap(x)]: the swapped results of B's map.
      SmallVector<AffineMap> maps = generic->getIndexingMapsArray();
      AffineMap bMap = maps[1];
      SmallVector<AffineExpr> results(bMap.getResults());
      std::swap(results[results.size() - 2], results.back());
      maps[1] = AffineMap::get(bMap.getNumDims(), bMap.getNumSymbols(), results,
                               &getContext());
      rewriter.modifyOpInPlace(*generic, [&]() {
        generic->setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
        generic->getDpsInputOperand(1)->set(transpose.getInput());
      });
      explain(*generic, "fold-transposes: B's transpose folded into the "
                        "contraction, which reads the transpose's input");
      if (transpose->use_empty())
        rewriter.eraseOp(transpose);
    }
  }
};
} // namespace
