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
// static height: when they do not divide the rows, the contraction is split
// (upstream's linalg::splitOp) and the rows after the last full block are
// one more block, in a second loop. The keys are not tiled: a row's
// softmax sees all its scores at once, and needs no online rescaling while
// a row of them fits that cache.
//
//===----------------------------------------------------------------------===//

#include "pb/Target/TargetDesc.h"
#include "pb/Transforms/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Dialect/Affine/Transforms/Transforms.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
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
/// The keys a block is sized for when their number is known only at run
/// time (dynamic shapes): a row of scores of this many keys, and of
/// probabilities, in half the per-core cache.
static constexpr int64_t kPlannedRunTimeKeys = 512;

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
  // (Of run-time shapes: the same extents but for unit ones, the batch and
  // heads of (1, 12, ?, ?) scores reshaped into (12, ?, ?) probabilities.)
  auto nonUnit = [](ShapedType type) {
    SmallVector<int64_t> extents;
    for (int64_t extent : type.getShape())
      if (extent != 1)
        extents.push_back(extent);
    return extents;
  };
  if (scoresType.hasStaticShape() != probabilitiesType.hasStaticShape() ||
      (scoresType.hasStaticShape()
           ? scoresType.getNumElements() != probabilitiesType.getNumElements()
           : nonUnit(scoresType) != nonUnit(probabilitiesType)))
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
    bool inA = mapA.isFunctionOfDim(d), inB = mapB.isFunctionOfDim(d);
    // (A loop that runs once needs no loop of tasks.)
    if (inA && (ranges[d] > 1 || ShapedType::isDynamic(ranges[d])))
      sizes[d] = 1;
    if (inA && !inB)
      m = d;
  }
  if (!m)
    return std::nullopt;
  innerM = *m;
  // A run-time extent: the rows (queries), nothing else.
  for (auto [d, range] : llvm::enumerate(ranges))
    if (sizes[d] && ShapedType::isDynamic(range) && d != innerM)
      return std::nullopt;
  sizes[innerM] = ShapedType::isDynamic(ranges[innerM])
                      ? rows
                      : std::min(rows, ranges[innerM]);
  return sizes;
}

/// Tiles `op` by `sizes` into an scf.forall and computes the spine of
/// `attention` and the fills `op` reads inside it, per task; returns the
/// loop, or null when tile-and-fuse fails (nothing rewritten then).
static Operation *tileAndFuse(IRRewriter &rewriter, TilingInterface op,
                              ArrayRef<OpFoldResult> sizes,
                              const Attention &attention,
                              int64_t fullRows = 0) {
  MLIRContext *context = op->getContext();
  if (llvm::all_of(sizes, isZeroInteger))
    return nullptr; // no loop to make
  rewriter.setInsertionPoint(op);
  scf::SCFTilingOptions tiling;
  tiling.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
  tiling.setTileSizes(sizes);
  scf::SCFTileAndFuseOptions options;
  options.setTilingOptions(tiling);
  // The spine is computed per block; so are fills (the reductions' initial
  // values, C's zeros). Anything else (a mask from the inputs, q, k, v) is
  // computed once, outside.
  options.setFusionControlFn(
      [&](tensor::ExtractSliceOp, OpResult producer,
          bool) -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
        Operation *def = producer.getOwner();
        if (attention.spine.contains(def) || isa<linalg::FillOp>(def))
          return scf::SCFTileAndFuseOptions::ControlFnResult{};
        return std::nullopt;
      });
  RewritePatternSet cleanup(context);
  tensor::ExtractSliceOp::getCanonicalizationPatterns(cleanup, context);
  tensor::populateMergeConsecutiveInsertExtractSlicePatterns(cleanup);
  tensor::populateBubbleUpExtractSliceOpPatterns(cleanup);
  // A block's intermediates are tensors of the block's shape, not slices
  // of whole ones: buffers of a task, not views of a buffer of all rows.
  tensor::populateFoldTensorEmptyPatterns(cleanup);
  options.cleanupPatterns = FrozenRewritePatternSet(std::move(cleanup));
  FailureOr<scf::SCFTileAndFuseResult> result =
      scf::tileConsumerAndFuseProducersUsingSCF(rewriter, op, options);
  if (failed(result))
    return nullptr;
  for (OpResult res : op->getResults())
    rewriter.replaceAllUsesWith(res, result->replacements.lookup(res));
  rewriter.eraseOp(op);
  // A producer with several consumers in the block (the scores feed the
  // row maximum and the exponentials) was fused once per consumer, each
  // copy indexed by its own (equal) affine.apply: canonicalized, the
  // copies are one; the slices fusion replaced are dead.
  Operation *loop = result->loops.front();
  // Run-time extents: tensor.dim ops of different values of one size,
  // which splitting and tiling made, in and before the loop, become that
  // size, so that the copies are equal too.
  {
    SmallVector<Operation *> dims;
    loop->getParentOfType<func::FuncOp>().walk(
        [&](tensor::DimOp dim) { dims.push_back(dim); });
    RewritePatternSet resolve(context);
    memref::populateResolveRankedShapedTypeResultDimsPatterns(resolve);
    tensor::DimOp::getCanonicalizationPatterns(resolve, context);
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    (void)applyOpPatternsGreedily(dims, std::move(resolve), config);
  }
  RewritePatternSet patterns(context);
  affine::AffineApplyOp::getCanonicalizationPatterns(patterns, context);
  affine::AffineLinearizeIndexOp::getCanonicalizationPatterns(patterns,
                                                              context);
  affine::AffineDelinearizeIndexOp::getCanonicalizationPatterns(patterns,
                                                                context);
  tensor::ExtractSliceOp::getCanonicalizationPatterns(patterns, context);
  tensor::populateFoldTensorEmptyPatterns(patterns);
  (void)applyPatternsGreedily(loop, std::move(patterns));
  // With `fullRows`, the caller knows every block to be full (its rows a
  // multiple of them, counted at run time): the blocks' heights that tiling
  // computed as the minimum of `fullRows` and the rows left are `fullRows`
  // (computed from the task's index, they would be no valid bound of S2's
  // loops).
  if (fullRows) {
    SmallVector<affine::AffineMinOp> mins;
    loop->walk([&](affine::AffineMinOp min) { mins.push_back(min); });
    for (affine::AffineMinOp min : mins)
      if (llvm::any_of(min.getAffineMap().getResults(), [&](AffineExpr e) {
            auto constant = dyn_cast<AffineConstantExpr>(e);
            return constant && constant.getValue() == fullRows;
          })) {
        rewriter.setInsertionPoint(min);
        rewriter.replaceOp(min, arith::ConstantIndexOp::create(
                                    rewriter, min.getLoc(), fullRows));
      }
    (void)applyPatternsGreedily(loop, FrozenRewritePatternSet());
  }
  DominanceInfo dominance(loop);
  eliminateCommonSubExpressions(rewriter, dominance, loop);
  // The blocks' offsets as arith ops, as S1 leaves indices (lower-affine):
  // in the loops S2 makes of the bodies, the task's index is no valid
  // affine symbol.
  RewritePatternSet lowering(context);
  populateAffineToStdConversionPatterns(lowering);
  affine::populateAffineExpandIndexOpsPatterns(lowering);
  (void)applyPatternsGreedily(loop, std::move(lowering));
  return loop;
}

/// After linalg::splitOp along the rows, `head` and `tail` write disjoint
/// rows of C, which starts as a fill: each part fills its own slice (the
/// fill fused into its blocks then), and the head's slice and result go
/// into C's empty tensor, which the parts cover, rather than into the fill.
/// The slices stay those splitOp made, so that the parts' loops write the
/// one buffer of C in place.
static void startPartsFromFill(IRRewriter &rewriter, linalg::LinalgOp head,
                               linalg::LinalgOp tail) {
  // Each part's C: a slice of C's fill (the head's) or of the head's
  // result inserted into that fill (the tail's).
  linalg::FillOp fill;
  SmallVector<std::pair<OpOperand *, tensor::ExtractSliceOp>> inits;
  for (linalg::LinalgOp part : {head, tail}) {
    OpOperand *init = part.getDpsInitOperand(0);
    auto slice = init->get().getDefiningOp<tensor::ExtractSliceOp>();
    if (!slice || !slice->hasOneUse())
      return;
    Value whole = slice.getSource();
    if (auto inserted = whole.getDefiningOp<tensor::InsertSliceOp>())
      whole = inserted.getDest();
    auto partFill = whole.getDefiningOp<linalg::FillOp>();
    if (!partFill || (fill && partFill != fill))
      return;
    fill = partFill;
    inits.push_back({init, slice});
  }
  auto empty = fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>();
  tensor::InsertSliceOp headInsert;
  for (Operation *user : head->getResult(0).getUsers())
    if (auto insert = dyn_cast<tensor::InsertSliceOp>(user))
      if (insert.getDest() == fill.getResult(0))
        headInsert = insert;
  if (!empty || !headInsert || inits[0].second.getSource() != fill.getResult(0))
    return;
  rewriter.modifyOpInPlace(
      inits[0].second, [&] { inits[0].second.getSourceMutable().set(empty); });
  rewriter.modifyOpInPlace(headInsert,
                           [&] { headInsert.getDestMutable().set(empty); });
  for (auto [init, slice] : inits) {
    rewriter.setInsertionPointAfter(slice);
    Value zeros = linalg::FillOp::create(rewriter, slice.getLoc(),
                                         fill.getInputs()[0], slice.getResult())
                      .getResult(0);
    rewriter.modifyOpInPlace(init->getOwner(), [&] { init->set(zeros); });
  }
}

/// After tile-and-fuse: erases what the blocks replaced (the slices that
/// splitting made of the probabilities, the spine, the fills the blocks now
/// make their own, unless something else still reads them); returns the
/// softmax's ops per block (the generics but the two contractions) in
/// `loop`.
static unsigned cleanUp(IRRewriter &rewriter, const Attention &attention,
                        Operation *loop) {
  auto func = loop->getParentOfType<func::FuncOp>();
  SmallVector<tensor::ExtractSliceOp> slices;
  func.walk([&](tensor::ExtractSliceOp slice) {
    if (slice->use_empty())
      slices.push_back(slice);
  });
  for (tensor::ExtractSliceOp slice : slices)
    rewriter.eraseOp(slice);
  for (Operation *op : llvm::reverse(attention.spine))
    if (op->use_empty())
      rewriter.eraseOp(op);
  SmallVector<Operation *> unused;
  func.walk([&](Operation *op) {
    if (isa<linalg::FillOp, tensor::EmptyOp>(op) && isMemoryEffectFree(op))
      unused.push_back(op);
  });
  for (Operation *op : llvm::reverse(unused))
    if (op->use_empty())
      rewriter.eraseOp(op);
  // Common subexpressions over the whole function, now that nothing refers
  // to the erased ops: the copies of the scores may differ by equal values
  // made outside the loops (a run-time extent's tensor.dim ops).
  DominanceInfo dominance(func);
  eliminateCommonSubExpressions(rewriter, dominance, func);
  unsigned softmaxOps = 0;
  loop->walk([&](linalg::GenericOp generic) {
    softmaxOps += !pb::isMultiplyAccumulate(generic);
  });
  return softmaxOps;
}

/// Attention whose number of rows (queries) is known only at run time:
/// blocks of `sizes[innerM]` rows over the largest multiple of them,
/// counted at run time, then the rows after it as one block per batch
/// index (its height a size computed before the loop, a valid bound for
/// S2's loops), in a second loop. Returns false when nothing was rewritten.
static bool fuseRunTimeRows(linalg::LinalgOp output, ArrayRef<int64_t> sizes,
                            unsigned innerM, int64_t batchTasks,
                            const Attention &attention, StringRef keysWord,
                            int64_t keys, StringRef cacheName, int64_t rows) {
  IRRewriter rewriter(output->getContext());
  rewriter.setInsertionPoint(output);
  Location loc = output.getLoc();
  int64_t blockRows = sizes[innerM];
  OpFoldResult extent = output.createLoopRanges(rewriter, loc)[innerM].size;
  AffineExpr m = rewriter.getAffineSymbolExpr(0);
  OpFoldResult split = affine::makeComposedFoldedAffineApply(
      rewriter, loc, m.floorDiv(blockRows) * blockRows, {extent});
  auto [head, tail] = linalg::splitOp(
      rewriter, cast<TilingInterface>(output.getOperation()), innerM, split);
  if (!head || !tail)
    return false;
  startPartsFromFill(rewriter, cast<linalg::LinalgOp>(head.getOperation()),
                     cast<linalg::LinalgOp>(tail.getOperation()));
  SmallVector<OpFoldResult> headSizes =
      getAsIndexOpFoldResult(output->getContext(), sizes);
  // The tail's rows untiled: its extent, defined before the loop, bounds
  // the loops inside (a tile size computed from the task's index would not
  // be a valid affine symbol there), and a tail of no rows makes no
  // zero-step loop.
  SmallVector<OpFoldResult> tailSizes(headSizes);
  tailSizes[innerM] = rewriter.getIndexAttr(0);
  SmallVector<Operation *> loops;
  if (Operation *loop =
          tileAndFuse(rewriter, head, headSizes, attention, blockRows))
    loops.push_back(loop);
  if (Operation *loop = tileAndFuse(rewriter, tail, tailSizes, attention))
    loops.push_back(loop);
  if (loops.empty())
    return false;
  unsigned softmaxOps = cleanUp(rewriter, attention, loops.front());
  std::string keysText = keys ? std::to_string(keys) : keysWord.str();
  explain(
      loops.front(),
      llvm::formatv(
          "fuse-attention: q @ k^T, {0} ops of the softmax and "
          "@ v in two parallel loops: {1} batch x blocks of {2} "
          "rows, counted at run time, then {1} batch x the "
          "rows after the last full block ({3} keys; '{4}' "
          "holds {5} rows of scores and probabilities{6})",
          softmaxOps, batchTasks, blockRows, keysText, cacheName, rows,
          keys ? "" : llvm::formatv(" of {0} keys", kPlannedRunTimeKeys).str())
          .str());
  return true;
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
    // Keys known only at run time: blocks sized for kPlannedRunTimeKeys.
    bool runTimeKeys = ShapedType::isDynamic(keys);
    int64_t plannedKeys = runTimeKeys ? kPlannedRunTimeKeys : keys;
    if (plannedKeys <= 0) {
      skip("no keys");
      continue;
    }
    int64_t rowBytes =
        plannedKeys * kLiveRows *
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
    if (ShapedType::isDynamic(mExtent)) {
      // The rows after the last full block are one block per batch index:
      // without batch loops, no tasks.
      if (batchTasks == 1) {
        skip("a run-time number of rows and no batch loops");
        continue;
      }
      if (fuseRunTimeRows(output, *sizes, innerM, batchTasks, *attention,
                          runTimeKeys ? "a run-time number of" : "",
                          runTimeKeys ? 0 : keys, cache->name, rows))
        continue;
      skip("tile-and-fuse failed");
      continue;
    }
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

    // Rows that the blocks do not divide: the contraction is split at the
    // last full block, and the rows after it are a block of their own, so
    // that every block has a static height (a dynamic one would bound S2's
    // loops by a value computed in the task, no valid affine dimension) and
    // no two tasks write the same rows.
    int64_t tailRows = blocks > 1 ? mExtent % blockRows : 0;
    IRRewriter rewriter(&getContext());
    rewriter.setInsertionPoint(output);
    SmallVector<std::pair<TilingInterface, SmallVector<int64_t>>> parts;
    if (tailRows == 0) {
      parts.push_back({cast<TilingInterface>(output.getOperation()), *sizes});
    } else {
      auto [head, tail] = linalg::splitOp(
          rewriter, cast<TilingInterface>(output.getOperation()), innerM,
          rewriter.getIndexAttr(mExtent - tailRows));
      if (!head || !tail) {
        skip("the rows after the last full block could not be split off");
        continue;
      }
      startPartsFromFill(rewriter, cast<linalg::LinalgOp>(head.getOperation()),
                         cast<linalg::LinalgOp>(tail.getOperation()));
      SmallVector<int64_t> tailSizes = *sizes;
      tailSizes[innerM] = tailRows;
      parts.push_back({head, *sizes});
      parts.push_back({tail, tailSizes});
    }
    SmallVector<Operation *> loops;
    for (auto &[part, partSizes] : parts) {
      Operation *loop = tileAndFuse(
          rewriter, part, getAsIndexOpFoldResult(&getContext(), partSizes),
          *attention);
      if (loop)
        loops.push_back(loop);
    }
    // (A part left untiled stays correct: it reads the spine, which then
    // stays too.)
    if (loops.empty()) {
      skip("tile-and-fuse failed");
      continue;
    }
    unsigned softmaxOps = cleanUp(rewriter, *attention, loops.front());
    std::string tasks =
        loops.size() == 1
            ? llvm::formatv("one parallel loop of {0} tasks: {1} batch x {2} "
                            "block{3} of {4} rows",
                            batchTasks * blocks, batchTasks, blocks,
                            blocks > 1 ? "s" : "", blockRows)
                  .str()
            : llvm::formatv("two parallel loops: {0} batch x {1} block{2} of "
                            "{3} rows, then {0} batch x the last {4} rows",
                            batchTasks, blocks - 1, blocks > 2 ? "s" : "",
                            blockRows, tailRows)
                  .str();
    explain(loops.front(),
            llvm::formatv("fuse-attention: q @ k^T, {0} ops of the softmax "
                          "and @ v in {1} ({2} keys; '{3}' holds {4} rows of "
                          "scores and probabilities)",
                          softmaxOps, tasks,
                          runTimeKeys ? llvm::formatv("a run-time number of "
                                                      "(planned: {0})",
                                                      plannedKeys)
                                            .str()
                                      : std::to_string(keys),
                          cache->name, rows)
                .str());
  }
}
