//===- FuseAttention.cpp - q @ k^T, softmax and @ v per block of rows -----===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// pb-fuse-attention (S2, before bufferization). Attention arrives as
//
//   %s = q @ k^T                    (a contraction: the scores)
//   ... softmax over the keys ...   (elementwise ops, row reductions,
//                                    reshapes; a mask, a scale)
//   %o = %p @ v                     (a contraction over the keys)
//
// and, run op by op, writes the scores and every intermediate of the softmax
// whole to memory: heads x queries x keys elements each, several times.
// Here %o is tiled by upstream's tile-and-fuse (TilingInterface) into one
// parallel loop over its batch loops and blocks of its rows, and the ops
// from %s to %p are computed inside it for that block only: each task
// multiplies its rows of q by k^T, runs the softmax over those rows and
// multiplies the probabilities by v, its intermediates sized by the block.
// The block holds as many rows as the per-core cache keeps, with the scores
// and the probabilities of a row, and no more than leave the cores tasks
// enough (pb-map-matrix-units' kMinParallelBlocks). Blocks are of equal,
// static height: when they do not divide the rows, the last one starts
// earlier and overlaps its predecessor. The keys are not tiled: a row's
// softmax sees all its scores at once, and needs no online rescaling while
// a row of them fits that cache.
//
//===----------------------------------------------------------------------===//

#include "pb/Target/TargetDesc.h"
#include "pb/Transforms/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Dialect/Affine/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::pb {
#define GEN_PASS_DEF_PBFUSEATTENTIONPASS
#include "pb/Transforms/Passes.h.inc"
} // namespace mlir::pb

using namespace mlir;
using namespace mlir::pb;

/// The share of the per-core cache a block's rows of scores and
/// probabilities may take.
static constexpr double kCacheShare = 0.5;
/// Row-long buffers of a block live at once: the scores and the
/// probabilities (the softmax's other intermediates reuse them or are one
/// value per row).
static constexpr int64_t kLiveRows = 2;

namespace {
/// The ops of one attention: `scores` (q @ k^T) and the ops between it and
/// `output` (p @ v) that depend on it (`spine`, `scores` included).
struct Attention {
  linalg::LinalgOp scores, output;
  llvm::SetVector<Operation *> spine;
};

class PBFuseAttentionPass
    : public pb::impl::PBFuseAttentionPassBase<PBFuseAttentionPass> {
public:
  using Base::Base;
  void runOnOperation() override;
};
} // namespace

static bool isTensorContraction(Operation *op) {
  auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(op);
  return linalgOp && linalgOp.hasPureTensorSemantics() &&
         pb::isMultiplyAccumulate(linalgOp);
}

/// The attention whose probabilities `output` multiplies, or failure: with
/// `why` set when a contraction computes scores that cannot be fused.
static FailureOr<Attention> matchAttention(linalg::LinalgOp output,
                                           std::string &why) {
  Attention attention;
  attention.output = output;
  // Backward from the probabilities, through the ops a block can compute,
  // to the contraction that produces the scores.
  llvm::SetVector<Operation *> upstream;
  SmallVector<Value> worklist{output.getDpsInputOperand(0)->get()};
  while (!worklist.empty()) {
    Operation *def = worklist.pop_back_val().getDefiningOp();
    if (!def || upstream.contains(def))
      continue;
    if (isTensorContraction(def)) {
      if (attention.scores && attention.scores != def) {
        why = "two contractions feed the probabilities";
        return failure();
      }
      attention.scores = cast<linalg::LinalgOp>(def);
      upstream.insert(def);
      continue;
    }
    auto generic = dyn_cast<linalg::GenericOp>(def);
    if ((generic && generic.hasPureTensorSemantics()) ||
        isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def)) {
      upstream.insert(def);
      llvm::append_range(worklist, def->getOperands());
    }
  }
  if (!attention.scores)
    return failure(); // `output` is no attention: nothing to report.
  // The softmax keeps the scores' shape: as many probabilities as scores (a
  // pooling between a convolution and a classifier does not).
  auto scoresType = cast<ShapedType>(attention.scores->getResult(0).getType());
  auto probabilitiesType =
      cast<ShapedType>(output.getDpsInputOperand(0)->get().getType());
  if (!scoresType.hasStaticShape() || !probabilitiesType.hasStaticShape() ||
      scoresType.getNumElements() != probabilitiesType.getNumElements())
    return failure();
  // The spine: what depends on the scores, in program order.
  attention.spine.insert(attention.scores);
  for (Operation *op = attention.scores->getNextNode(); op && op != output;
       op = op->getNextNode())
    if (upstream.contains(op) && llvm::any_of(op->getOperands(), [&](Value v) {
          return attention.spine.contains(v.getDefiningOp());
        }))
      attention.spine.insert(op);
  bool softmax = false;
  for (Operation *op : attention.spine) {
    for (Operation *user : op->getUsers())
      if (user != output.getOperation() && !attention.spine.contains(user)) {
        why = llvm::formatv("{0} has a use outside the attention ({1})",
                            op->getName(), user->getName())
                  .str();
        return failure();
      }
    auto generic = dyn_cast<linalg::GenericOp>(op);
    softmax |= generic && op != attention.scores.getOperation() &&
               generic.getNumReductionLoops() > 0;
  }
  if (!softmax) {
    why = "no row reduction (softmax) between the contractions";
    return failure();
  }
  return attention;
}

/// The tile sizes of `output`'s loops: 1 for its batch loops (indexing A, B
/// and C), `rows` for the innermost of its M loops (A and C), 1 for the
/// other M loops, 0 (whole) for N and the reductions; none when a map is
/// not a projection of the loops.
static std::optional<SmallVector<int64_t>>
getTileSizes(linalg::LinalgOp output, int64_t rows, unsigned &innerM) {
  AffineMap mapA = output.getMatchingIndexingMap(output.getDpsInputOperand(0));
  AffineMap mapB = output.getMatchingIndexingMap(output.getDpsInputOperand(1));
  AffineMap mapC = output.getMatchingIndexingMap(output.getDpsInitOperand(0));
  if (!mapA.isProjectedPermutation() || !mapB.isProjectedPermutation() ||
      !mapC.isProjectedPermutation())
    return std::nullopt;
  SmallVector<int64_t> ranges = output.getStaticLoopRanges();
  SmallVector<int64_t> sizes(output.getNumLoops(), 0);
  std::optional<unsigned> m;
  for (AffineExpr e : mapC.getResults()) {
    unsigned d = cast<AffineDimExpr>(e).getPosition();
    if (ShapedType::isDynamic(ranges[d]))
      return std::nullopt;
    bool inA = mapA.isFunctionOfDim(d), inB = mapB.isFunctionOfDim(d);
    // (A loop that runs once needs no loop of tasks.)
    if (inA && ranges[d] > 1)
      sizes[d] = 1;
    if (inA && !inB)
      m = d;
  }
  if (!m)
    return std::nullopt;
  innerM = *m;
  sizes[innerM] = std::min(rows, ranges[innerM]);
  return sizes;
}

/// Makes the row blocks of `forall`, tiled by `sizes` with `blockRows` of
/// `mExtent` rows in loop `innerM`, all `blockRows` high: the last block,
/// which tiling leaves shorter, starts at `mExtent - blockRows` instead.
/// Its first rows are its predecessor's last ones, computed again with the
/// same values. The sizes that tiling computed from the block's offset
/// become the constant height, and the intermediates static tensors.
static void alignLastBlock(scf::ForallOp forall, ArrayRef<int64_t> sizes,
                           unsigned innerM, int64_t mExtent,
                           int64_t blockRows) {
  MLIRContext *context = forall.getContext();
  // The forall has one induction variable per tiled loop, in loop order.
  unsigned position = 0;
  for (unsigned d = 0; d < innerM; ++d)
    position += sizes[d] > 0;
  Value iv = forall.getInductionVar(position);
  int64_t lastOffset = mExtent - blockRows;
  IRRewriter rewriter(context);
  // A size of the block: a minimum of the offset's functions that is
  // `blockRows` for every offset up to `lastOffset` (one result is that
  // constant, the others, linear, are no smaller at both ends).
  auto isBlockSize = [&](affine::AffineMinOp min) {
    AffineMap map = min.getAffineMap();
    if (min.getMapOperands().size() != 1 || min.getMapOperands()[0] != iv ||
        map.getNumDims() != 1 || map.getNumSymbols() != 0)
      return false;
    bool constant = false;
    for (AffineExpr e : map.getResults()) {
      if (!e.isPureAffine())
        return false;
      auto c = dyn_cast<AffineConstantExpr>(e);
      if (c && c.getValue() == blockRows) {
        constant = true;
        continue;
      }
      for (int64_t at : {int64_t(0), lastOffset}) {
        AffineExpr value = simplifyAffineExpr(
            e.replaceDims(getAffineConstantExpr(at, context)), 1, 0);
        auto folded = dyn_cast<AffineConstantExpr>(value);
        if (!folded || folded.getValue() < blockRows)
          return false;
      }
    }
    return constant;
  };
  SmallVector<affine::AffineMinOp> blockSizes;
  forall.walk([&](affine::AffineMinOp min) {
    if (isBlockSize(min))
      blockSizes.push_back(min);
  });
  rewriter.setInsertionPointToStart(forall.getBody());
  for (affine::AffineMinOp min : blockSizes)
    rewriter.replaceOpWithNewOp<arith::ConstantIndexOp>(min, blockRows);
  AffineExpr d0 = getAffineDimExpr(0, context);
  auto offset = affine::AffineMinOp::create(
      rewriter, forall.getLoc(),
      AffineMap::get(1, 0, {d0, getAffineConstantExpr(lastOffset, context)},
                     context),
      ValueRange{iv});
  rewriter.replaceAllUsesExcept(iv, offset.getResult(), offset);
  // Constant sizes into the types: the slices, the intermediates' empty
  // tensors and the ops on them (linalg's folding of tensor casts).
  RewritePatternSet patterns(context);
  for (Dialect *dialect : context->getLoadedDialects())
    dialect->getCanonicalizationPatterns(patterns);
  for (RegisteredOperationName op : context->getRegisteredOperations())
    op.getCanonicalizationPatterns(patterns, context);
  (void)applyPatternsGreedily(forall, std::move(patterns));
  DominanceInfo dominance(forall);
  eliminateCommonSubExpressions(rewriter, dominance, forall);
}

void PBFuseAttentionPass::runOnOperation() {
  func::FuncOp func = getOperation();
  const ChipDesc *chip = getTargetChip(func);
  if (!chip)
    return;
  // Blocks sized for the per-core cache: the second-smallest cache level
  // (the only one when there is one).
  SmallVector<const MemoryLevelDesc *> caches = chip->getCachesBySize();
  if (caches.empty())
    return;
  const MemoryLevelDesc *cache = caches[std::min<size_t>(1, caches.size() - 1)];

  SmallVector<linalg::LinalgOp> outputs;
  func.walk([&](linalg::LinalgOp op) {
    if (isTensorContraction(op) && !op->getParentOfType<scf::ForallOp>())
      outputs.push_back(op);
  });
  for (linalg::LinalgOp output : outputs) {
    std::string why;
    auto skip = [&](const Twine &reason) {
      explain(output, "fuse-attention: not fused: " + reason);
    };
    FailureOr<Attention> attention = matchAttention(output, why);
    if (failed(attention)) {
      if (!why.empty())
        skip(why);
      continue;
    }
    // Only where the contractions become the target's thread-scope
    // micro-kernels, which run inside a task (pb-map-matrix-units); GPU
    // kernels map the loops themselves.
    Type element = getElementTypeOrSelf(output.getDpsInits()[0].getType());
    std::optional<ElementType> target = getTargetElementType(element);
    if (!target || !findThreadScopeUnit(*chip, *target, *target, *target)) {
      skip("the target has no thread-scope matrix unit for this element type");
      continue;
    }
    // A row of scores and of probabilities: the keys, the K of `output`.
    SmallVector<int64_t> ranges = output.getStaticLoopRanges();
    int64_t keys = 1;
    SmallVector<utils::IteratorType> iterators = output.getIteratorTypesArray();
    for (auto [range, iterator] : llvm::zip(ranges, iterators))
      if (iterator == utils::IteratorType::reduction)
        keys = ShapedType::isDynamic(range) ? range : keys * range;
    if (ShapedType::isDynamic(keys) || keys <= 0) {
      skip("the keys' extent is not static");
      continue;
    }
    int64_t rowBytes =
        keys * kLiveRows *
        std::max<int64_t>(1, element.getIntOrFloatBitWidth() / 8);
    int64_t rows = std::max<int64_t>(
        1, static_cast<int64_t>(kCacheShare * cache->capacityBytes) / rowBytes);
    unsigned innerM = 0;
    std::optional<SmallVector<int64_t>> sizes =
        getTileSizes(output, rows, innerM);
    if (!sizes) {
      skip("the probabilities' contraction is not indexed by plain loops");
      continue;
    }
    // Enough tasks for the cores: the other tiled loops' tasks times the
    // row blocks, the blocks of equal height.
    int64_t mExtent = ranges[innerM];
    int64_t batchTasks = 1;
    for (auto [d, size] : llvm::enumerate(*sizes))
      if (size > 0 && d != innerM)
        batchTasks *= ranges[d];
    int64_t blocks = llvm::divideCeil(mExtent, (*sizes)[innerM]);
    if (batchTasks * blocks < kMinParallelBlocks)
      blocks = std::min<int64_t>(
          mExtent, llvm::divideCeil(kMinParallelBlocks, batchTasks));
    (*sizes)[innerM] = llvm::divideCeil(mExtent, blocks);
    blocks = llvm::divideCeil(mExtent, (*sizes)[innerM]);
    int64_t blockRows = (*sizes)[innerM];
    if (blocks == 1)
      (*sizes)[innerM] = 0;
    if (llvm::all_of(*sizes, [](int64_t size) { return size == 0; })) {
      skip("one batch index and one block of rows: no tasks to make");
      continue;
    }

    IRRewriter rewriter(&getContext());
    rewriter.setInsertionPoint(output);
    scf::SCFTilingOptions tiling;
    tiling.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
    tiling.setTileSizes(
        getAsIndexOpFoldResult(&getContext(), ArrayRef<int64_t>(*sizes)));
    scf::SCFTileAndFuseOptions options;
    options.setTilingOptions(tiling);
    // The spine is computed per block; so are fills (the reductions' initial
    // values, C's zeros). Anything else (a mask from the inputs, q, k, v) is
    // computed once, outside.
    options.setFusionControlFn(
        [&](tensor::ExtractSliceOp, OpResult producer, bool)
            -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
          Operation *op = producer.getOwner();
          if (attention->spine.contains(op) || isa<linalg::FillOp>(op))
            return scf::SCFTileAndFuseOptions::ControlFnResult{};
          return std::nullopt;
        });
    RewritePatternSet cleanup(&getContext());
    tensor::ExtractSliceOp::getCanonicalizationPatterns(cleanup, &getContext());
    tensor::populateMergeConsecutiveInsertExtractSlicePatterns(cleanup);
    tensor::populateBubbleUpExtractSliceOpPatterns(cleanup);
    // A block's intermediates are tensors of the block's shape, not slices
    // of whole ones: buffers of a task, not views of a buffer of all rows.
    tensor::populateFoldTensorEmptyPatterns(cleanup);
    options.cleanupPatterns = FrozenRewritePatternSet(std::move(cleanup));
    auto tilingOp = cast<TilingInterface>(output.getOperation());
    FailureOr<scf::SCFTileAndFuseResult> result =
        scf::tileConsumerAndFuseProducersUsingSCF(rewriter, tilingOp, options);
    if (failed(result)) {
      skip("tile-and-fuse failed");
      continue;
    }
    for (OpResult res : output->getResults())
      rewriter.replaceAllUsesWith(res, result->replacements.lookup(res));
    rewriter.eraseOp(output);
    // A producer with several consumers in the block (the scores feed the
    // row maximum and the exponentials) was fused once per consumer, each
    // copy indexed by its own (equal) affine.apply: canonicalized, the
    // copies are one; the slices fusion replaced are dead.
    Operation *loop = result->loops.front();
    RewritePatternSet patterns(&getContext());
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, &getContext());
    affine::AffineLinearizeIndexOp::getCanonicalizationPatterns(patterns,
                                                                &getContext());
    affine::AffineDelinearizeIndexOp::getCanonicalizationPatterns(
        patterns, &getContext());
    tensor::ExtractSliceOp::getCanonicalizationPatterns(patterns,
                                                        &getContext());
    tensor::populateFoldTensorEmptyPatterns(patterns);
    (void)applyPatternsGreedily(loop, std::move(patterns));
    DominanceInfo dominance(loop);
    eliminateCommonSubExpressions(rewriter, dominance, loop);
    // Rows that the blocks do not divide: the last block moves up to end at
    // the last row, overlapping its predecessor, so that every block has
    // the same static height (a dynamic one would bound S2's loops by a
    // value computed in the task, no valid affine dimension).
    if (blocks > 1 && mExtent % blockRows != 0)
      alignLastBlock(cast<scf::ForallOp>(loop), *sizes, innerM, mExtent,
                     blockRows);
    // The blocks' offsets as arith ops, as S1 leaves indices (lower-affine):
    // in the loops S2 makes of the bodies, the task's index is no valid
    // affine symbol.
    RewritePatternSet lowering(&getContext());
    populateAffineToStdConversionPatterns(lowering);
    affine::populateAffineExpandIndexOpsPatterns(lowering);
    (void)applyPatternsGreedily(loop, std::move(lowering));
    for (Operation *op : llvm::reverse(attention->spine))
      if (op->use_empty())
        rewriter.eraseOp(op);
    // The fills the blocks now make their own (of the scores, of the row
    // maximum and sum), unless something else still reads them.
    SmallVector<Operation *> unused;
    func.walk([&](Operation *op) {
      if (isa<linalg::FillOp, tensor::EmptyOp>(op) && isMemoryEffectFree(op))
        unused.push_back(op);
    });
    for (Operation *op : llvm::reverse(unused))
      if (op->use_empty())
        rewriter.eraseOp(op);
    // The softmax's ops per block: the generics but the two contractions.
    unsigned softmaxOps = 0;
    loop->walk([&](linalg::GenericOp generic) {
      softmaxOps += !pb::isMultiplyAccumulate(generic);
    });
    explain(loop,
            llvm::formatv("fuse-attention: q @ k^T, {0} ops of the softmax "
                          "and @ v in one parallel loop of {1} tasks: {2} "
                          "batch x {3} blocks of {4} rows ({5} keys; '{6}' "
                          "holds {7} rows of scores and probabilities)",
                          softmaxOps, batchTasks * blocks, batchTasks, blocks,
                          blockRows, keys, cache->name, rows)
                .str());
  }
}
