//===- MapMatrixUnits.cpp - Contractions onto matrix units
//------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Contractions become the Goto/BLIS algorithm over packed operands, with the
// register tile built from the target's thread-scope matrix unit (a vector
// FMA of `lanes` elements on CPUs) and the blocking from its cache levels:
//
//   for each batch index b:
//     for jc in [0, N) step NC:                    B panel: outermost cache
//       for pc in [0, K) step KC:                  B micro-panel: L1
//         parallel jp: pack B[b][pc:+KC, jc+jp*NR:+NR] -> Bp[jp][k][NR]
//         parallel ic in [0, M) step MC:           A block: middle cache
//           pack A[b][ic:+MC, pc:+KC] -> Ap[ip][k][MR]
//           for jr, ir: MR x NR micro-kernel, accumulators in registers
//                       (from zero; then + C, or + C's fill in the first
//                       K block, which no longer runs as a nest of its own)
//
//===----------------------------------------------------------------------===//

#include "pb/Target/TargetDesc.h"
#include "pb/Transforms/Passes.h"

#include "mlir/Dialect/Affine/LoopUtils.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::pb {
#define GEN_PASS_DEF_PBMAPMATRIXUNITSPASS
#include "pb/Transforms/Passes.h.inc"
} // namespace mlir::pb

using namespace mlir;
using namespace mlir::pb;

/// The share of the register file the accumulators may take; the rest
/// holds B's vectors and A's broadcast.
static constexpr double kAccumulatorShare = 0.75;
/// The share of a cache level a packed panel may take.
static constexpr double kCacheShare = 0.5;
static constexpr double kL1Share = 0.75;
/// Vector registers across one row of the register tile.
static constexpr int64_t kTileRowVectors = 2;
/// Core counts are known only at run time; cut M into at least this many
/// blocks so that every core gets work and the load balances.
static constexpr int64_t kMinParallelBlocks = 8;
/// The shortest blocked K loop worth a pass over C; shorter ones take in
/// the K loops around them.
static constexpr int64_t kMinBlockedK = 32;

namespace {
/// How the loops of a contraction play the GEMM roles. M may span several
/// loops (a convolution's image, oh, ow), flattened in loop order; K is
/// iterated as its outer loops times KC blocks of its innermost loop.
struct GemmDims {
  SmallVector<unsigned> batch, m, kOuter;
  unsigned n = 0, kInner = 0;
  /// N loops outside `n` flattened with it into the GEMM's N (outer to
  /// inner): a projection whose N a reshape split (q, k, v of 3 x E;
  /// heads x head size) stays one GEMM over all its columns.
  SmallVector<unsigned> nOuter;
  /// K loops flattened with kInner into the blocked K (outer to inner): a
  /// convolution whose channels are few (an RGB input) blocks over
  /// (kh, kw, c) instead of running its window as outer loops.
  SmallVector<unsigned> kFlat;
};

/// Every size of the generated code, from the target's tables.
struct GemmPlan {
  const MatrixUnitDesc *unit;
  int64_t lanes, mr, nr, kc, mc, nc;
  /// The NR-column panels of an NC block are split into `groups` groups
  /// of `groupPanels` panels, each with its own A block: with few M blocks
  /// (small M, a batch-1 classifier or a 7x7 feature map) the cores then
  /// still share the work.
  int64_t groups = 1, groupPanels = 1;
  /// The batch loops are the parallel tasks (attention's heads): each runs
  /// its whole GEMM, packing included, on one core, instead of two forks
  /// per KC block of every batch index.
  bool batchParallel = false;
  /// The micro-kernel broadcasts A's elements from A itself, not from a
  /// packed copy: A's rows are contiguous along the blocked K (a
  /// channels-last convolution's pixels, x of x @ W), so a packed row panel
  /// saves nothing while packing costs a pass over A per N block and per
  /// window position (a 3x3 convolution with 32 output channels spent as
  /// long packing A as multiplying it).
  bool directA = false;
  /// A's consecutive rows are consecutive in memory (an NCHW 1x1
  /// convolution's pixels, DenseNet's concatenated feature maps): its row
  /// panels are packed MR rows per vector load, one per K index, instead of
  /// element by element along K (a strided gather). Holds A's linear
  /// offset: `aOffset` + row + sum of `aCoefficients[d]` x loop d over
  /// the other loops (K, batch; N's are 0).
  bool aAlongM = false;
  int64_t aOffset = 0;
  DenseMap<unsigned, int64_t> aCoefficients;
  /// B is packed for all of K before the tasks start, each task running all
  /// its K blocks: two forks per NC block instead of two per K block (a 3x3
  /// convolution over 7x7 pixels forked 18 times for 1.6 MFLOP). Chosen
  /// when all of K's packed B fits the per-core cache: a larger one would
  /// be streamed from memory once per M block.
  bool allK = false;
  /// B (N x K, K innermost: a convolution's O x C x KH x KW weights) is
  /// packed for all of K before the K blocks run, reading each of its rows
  /// along its contiguous K dimensions, lanes x lanes at a time, transposed
  /// in registers. Packing one K block at a time would read one window
  /// position of every row: strided gathers, and every cache line of B
  /// fetched once per window position (ResNet-18's 3x3 convolutions spent
  /// as long packing their weights as multiplying them).
  bool packWhole = false;
  /// The NC blocks are the parallel tasks, each packing its columns of B
  /// for all of K into its own buffer, sized for the per-core cache, and
  /// running every K block of every M block over it: when B packed whole
  /// does not fit that cache (a 3x3 convolution with 512 channels: 9.4 MB
  /// of weights for 49 pixels), B is then read once from memory and its
  /// packed copy never leaves the core's cache. Only with `directA`.
  bool nParallel = false;
  /// Flattened M, and the extents of N and of the blocked K loop.
  int64_t m, n, k;
};

class GemmBuilder {
public:
  GemmBuilder(linalg::LinalgOp op, const GemmDims &dims, const GemmPlan &plan)
      : op(op), dims(dims), p(plan), b(op.getLoc(), op),
        ranges(op.getStaticLoopRanges()) {}

  void build();
  void setLevel(StringAttr attr) { levelAttr = attr; }
  /// Fuses `generic` (see pb::findFusableEpilogue) into the final stores.
  void setEpilogue(linalg::GenericOp generic) { epilogue = generic; }
  /// C holds `value` everywhere before the contraction (a fill that the
  /// caller removes): the first K block stores without reading C.
  void setInitialValue(Value value) { initialValue = value; }

private:
  Value idx(int64_t value) { return arith::ConstantIndexOp::create(b, value); }
  Value minIdx(Value lhs, int64_t rhs) {
    return arith::MinSIOp::create(b, lhs, idx(rhs));
  }
  /// The indices of `operand` for the loop values `loops` (null entries are
  /// loops the operand does not use).
  SmallVector<Value> indices(OpOperand *operand, ArrayRef<Value> loops) {
    AffineMap map = op.getMatchingIndexingMap(operand);
    SmallVector<Value> operands;
    for (Value v : loops)
      operands.push_back(v ? v : idx(0));
    return applyIndexingMap(b, b.getLoc(), map, operands);
  }
  /// Sets the loops `flatDims` (outer to inner) of `loops` from their
  /// flattened index `flat` (row-major over their ranges).
  void setFlattened(SmallVector<Value> &loops, ArrayRef<unsigned> flatDims,
                    Value flat) {
    for (unsigned dim : llvm::reverse(flatDims.drop_front())) {
      loops[dim] = arith::RemUIOp::create(b, flat, idx(ranges[dim]));
      flat = arith::DivUIOp::create(b, flat, idx(ranges[dim]));
    }
    loops[flatDims.front()] = flat;
  }
  /// Sets the M loops of `loops` from a flattened row index.
  void setRow(SmallVector<Value> &loops, Value row) {
    setFlattened(loops, dims.m, row);
  }
  /// Sets the N loops of `loops` from a flattened column index.
  void setColumn(SmallVector<Value> &loops, Value column) {
    SmallVector<unsigned> nDims(dims.nOuter);
    nDims.push_back(dims.n);
    setFlattened(loops, nDims, column);
  }
  /// Sets the blocked K loops of `loops` from a flattened K index.
  void setK(SmallVector<Value> &loops, Value k) {
    SmallVector<unsigned> kDims(dims.kFlat);
    kDims.push_back(dims.kInner);
    setFlattened(loops, kDims, k);
  }
  /// Packs panel `jp` of the K block [pc, pc + kc) (whose outer K loops
  /// `loops` sets) into `bp`, that block's (panels, KC, NR) buffer.
  void packB(Value bp, ArrayRef<Value> loops, Value jp, Value jc, Value pc,
             Value kc);
  /// Packs panel `jp` of the NC block at `jc` for every K block into `bp`
  /// (K blocks x panels x KC x NR); see GemmPlan::packWhole.
  void packWholeB(Value bp, Value jp, Value jc);
  /// Sets the outer K loops of `loops` from the K block index `kb` (row-major
  /// over the outer K loops, then the `pcBlocks` KC blocks); returns the
  /// block's first K index.
  Value setKBlock(SmallVector<Value> &loops, Value kb, int64_t pcBlocks);
  /// The (panels, KC, NR) view of K block `kb` of the packed B `bp`.
  Value kBlockOf(Value bp, Value kb);
  void transposeSquare(SmallVector<Value> &rows);
  /// Loops over the tasks [0, uppers): a parallel loop on the chosen level,
  /// or plain loops inside a batch-parallel task. The insertion point moves
  /// into the innermost body; returns the induction variables.
  SmallVector<Value> taskLoops(ArrayRef<Value> uppers);
  /// The tasks (M blocks x N groups) of the NC block at `jc`, each running
  /// every K block over the packed B `bp` (K blocks x panels x KC x NR), or
  /// only K block `kbFixed` when given (`bp` then holds that block alone).
  void computeBlocks(Value bp, ArrayRef<Value> loops, Value jc, Value nc,
                     int64_t pcBlocks, Value kbFixed = nullptr);
  void microKernel(Value ap, Value bp, ArrayRef<Value> loops, Value i0,
                   Value j0, Value ip, Value jp, Value pc, Value kc);
  void microKernelBody(Value ap, Value bp, ArrayRef<Value> loops, Value i0,
                       Value j0, Value ip, Value jp, Value pc, Value kc,
                       bool fullTile);

  linalg::LinalgOp op;
  const GemmDims &dims;
  GemmPlan p;
  ImplicitLocOpBuilder b;
  SmallVector<int64_t> ranges;
  StringAttr levelAttr;
  linalg::GenericOp epilogue;
  /// True in the last K block, where the epilogue applies (set per block).
  Value lastK;
  /// C's value before the contraction, when a fill made it uniform.
  Value initialValue;
  /// True in the first K block (set per block, with initialValue).
  Value firstK;
  /// Inside a batch-parallel task: the task loops below are serial.
  bool serialTasks = false;

  void storeTile(ArrayRef<Value> accs, ArrayRef<SmallVector<Value>> cIndex,
                 ArrayRef<Value> rows, bool fullTile, bool applyEpilogue);
  Value applyEpilogue(Value acc, ArrayRef<Value> cIndex, bool fullTile);
};
} // namespace

void GemmBuilder::build() {
  Type f = cast<MemRefType>(op.getDpsInitOperand(0)->get().getType())
               .getElementType();
  int64_t ncPanels = llvm::divideCeil(p.nc, p.nr);
  // With `allK`, B is packed for all of K at once (every window position,
  // every KC block), then every task runs all its K blocks; otherwise B is
  // packed and the tasks run one K block at a time.
  int64_t pcBlocks = llvm::divideCeil(p.k, p.kc);
  int64_t kBlocks = pcBlocks;
  for (unsigned d : dims.kOuter)
    kBlocks *= ranges[d];
  auto bpType = MemRefType::get(
      {p.allK || p.packWhole ? kBlocks : 1, ncPanels, p.kc, p.nr}, f);
  // One packed B for the GEMM, or one per batch-parallel or N-parallel task.
  Value bp;
  if (!p.batchParallel && !p.nParallel)
    bp = memref::AllocOp::create(b, bpType, b.getI64IntegerAttr(64));

  SmallVector<Value> loops(ranges.size());
  auto jcBlock = [&]() {
    Value jc = loops[dims.n];
    Value nc = minIdx(arith::SubIOp::create(b, idx(p.n), jc), p.nc);
    Value panels = arith::CeilDivSIOp::create(b, nc, idx(p.nr));
    // Packs panel `jp` of K block `kb` into `bpBlock`.
    auto packKBlock = [&](Value kb, Value jp, Value bpBlock) {
      SmallVector<Value> blockLoops(loops);
      Value pc = setKBlock(blockLoops, kb, pcBlocks);
      Value kc = minIdx(arith::SubIOp::create(b, idx(p.k), pc), p.kc);
      packB(bpBlock, blockLoops, jp, jc, pc, kc);
    };
    if (p.packWhole) {
      OpBuilder::InsertionGuard guard(b);
      Value jp = taskLoops({panels})[0];
      packWholeB(bp, jp, jc);
    } else if (p.allK) {
      OpBuilder::InsertionGuard guard(b);
      SmallVector<Value> task = taskLoops({idx(kBlocks), panels});
      packKBlock(task[0], task[1], kBlockOf(bp, task[0]));
    }
    if (p.allK) {
      computeBlocks(bp, loops, jc, nc, pcBlocks);
      return;
    }
    auto kbLoop = scf::ForOp::create(b, idx(0), idx(kBlocks), idx(1));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(kbLoop.getBody());
    Value kb = kbLoop.getInductionVar();
    if (!p.packWhole) {
      OpBuilder::InsertionGuard g(b);
      Value jp = taskLoops({panels})[0];
      packKBlock(kb, jp, kBlockOf(bp, idx(0)));
    }
    computeBlocks(bp, loops, jc, nc, pcBlocks, kb);
  };
  std::function<void(unsigned)> batchLoop = [&](unsigned i) {
    if (i == dims.batch.size()) {
      auto jcLoop = scf::ForOp::create(b, idx(0), idx(p.n), idx(p.nc));
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(jcLoop.getBody());
      // Holds jc until the panel loops replace it with a column.
      loops[dims.n] = jcLoop.getInductionVar();
      jcBlock();
      return;
    }
    if (p.batchParallel) {
      OpBuilder::InsertionGuard guard(b);
      SmallVector<Value> uppers;
      for (unsigned dim : dims.batch)
        uppers.push_back(idx(ranges[dim]));
      SmallVector<Value> ivs = taskLoops(uppers);
      for (auto [dim, iv] : llvm::zip(dims.batch, ivs))
        loops[dim] = iv;
      bp = memref::AllocOp::create(b, bpType, b.getI64IntegerAttr(64));
      serialTasks = true;
      batchLoop(dims.batch.size());
      memref::DeallocOp::create(b, bp);
      return;
    }
    unsigned dim = dims.batch[i];
    auto loop = scf::ForOp::create(b, idx(0), idx(ranges[dim]), idx(1));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    loops[dim] = loop.getInductionVar();
    batchLoop(i + 1);
  };
  if (p.nParallel) {
    OpBuilder::InsertionGuard guard(b);
    Value task = taskLoops({idx(llvm::divideCeil(p.n, p.nc))})[0];
    loops[dims.n] = arith::MulIOp::create(b, task, idx(p.nc));
    bp = memref::AllocOp::create(b, bpType, b.getI64IntegerAttr(64));
    serialTasks = true;
    jcBlock();
    memref::DeallocOp::create(b, bp);
    return;
  }
  batchLoop(0);
  if (!p.batchParallel)
    memref::DeallocOp::create(b, bp);
}

Value GemmBuilder::setKBlock(SmallVector<Value> &loops, Value kb,
                             int64_t pcBlocks) {
  Value pcIndex = arith::RemUIOp::create(b, kb, idx(pcBlocks));
  Value outer = arith::DivUIOp::create(b, kb, idx(pcBlocks));
  if (!dims.kOuter.empty())
    setFlattened(loops, dims.kOuter, outer);
  return arith::MulIOp::create(b, pcIndex, idx(p.kc));
}

Value GemmBuilder::kBlockOf(Value bp, Value kb) {
  auto type = cast<MemRefType>(bp.getType());
  ArrayRef<int64_t> shape = type.getShape();
  SmallVector<OpFoldResult> offsets{kb, b.getIndexAttr(0), b.getIndexAttr(0),
                                    b.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes{b.getIndexAttr(1), b.getIndexAttr(shape[1]),
                                  b.getIndexAttr(shape[2]),
                                  b.getIndexAttr(shape[3])};
  SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
  auto resultType = memref::SubViewOp::inferRankReducedResultType(
      shape.drop_front(), type, offsets, sizes, strides);
  return memref::SubViewOp::create(b, cast<MemRefType>(resultType), bp, offsets,
                                   sizes, strides);
}

SmallVector<Value> GemmBuilder::taskLoops(ArrayRef<Value> uppers) {
  SmallVector<Value> lowers(uppers.size(), idx(0)),
      steps(uppers.size(), idx(1));
  if (!serialTasks) {
    auto par = scf::ParallelOp::create(b, lowers, uppers, steps);
    par->setAttr(PBDialect::kLevelAttrName, levelAttr);
    b.setInsertionPointToStart(par.getBody());
    return llvm::to_vector(par.getInductionVars());
  }
  SmallVector<Value> ivs;
  for (auto [lower, upper, step] : llvm::zip(lowers, uppers, steps)) {
    auto loop = scf::ForOp::create(b, lower, upper, step);
    b.setInsertionPointToStart(loop.getBody());
    ivs.push_back(loop.getInductionVar());
  }
  return ivs;
}

void GemmBuilder::packB(Value bp, ArrayRef<Value> loopsIn, Value jp, Value jc,
                        Value pc, Value kc) {
  OpOperand *bOperand = op.getDpsInputOperand(1);
  Value bMem = bOperand->get();
  Type f = cast<MemRefType>(bMem.getType()).getElementType();
  auto vecType = VectorType::get({p.lanes}, f);
  Value zero = arith::ConstantOp::create(b, b.getZeroAttr(f));
  OpBuilder::InsertionGuard guard(b);
  bool exact = p.n % p.nr == 0 && p.nc % p.nr == 0;
  // The dimension of B that N indexes: usually its innermost (contiguous
  // vector loads). Otherwise (B transposed: torch's x @ W^T, Q @ K^T) B is
  // read along K, its innermost dimension, lanes x lanes at a time and
  // transposed in registers; the K remainder and partial panels read
  // strided along N, a cost paid once per packed element.
  AffineMap mapB = op.getMatchingIndexingMap(bOperand);
  unsigned nResult = 0;
  for (unsigned r = 0, e = mapB.getNumResults(); r < e; ++r)
    if (auto expr = dyn_cast<AffineDimExpr>(mapB.getResult(r)))
      if (expr.getPosition() == dims.n)
        nResult = r;
  bool contiguous = nResult + 1 == mapB.getNumResults();
  auto lastB = dyn_cast<AffineDimExpr>(mapB.getResults().back());
  bool alongK = !contiguous && dims.kFlat.empty() && lastB &&
                lastB.getPosition() == dims.kInner &&
                llvm::isPowerOf2_64(p.lanes);
  AffineMap alongN = AffineMap::get(
      mapB.getNumResults(), 0, b.getAffineDimExpr(nResult), b.getContext());
  auto column = [&](int64_t offset) {
    return arith::AddIOp::create(
        b, jc,
        arith::AddIOp::create(b, arith::MulIOp::create(b, jp, idx(p.nr)),
                              idx(offset)));
  };
  // Packs row kk of the micro-panel, one vector of NR / lanes at a time.
  auto packRow = [&](Value kk) {
    SmallVector<Value> loops(loopsIn);
    setK(loops, arith::AddIOp::create(b, pc, kk));
    for (int64_t v = 0; v < p.nr / p.lanes; ++v) {
      setColumn(loops, column(v * p.lanes));
      SmallVector<Value> index = indices(bOperand, loops);
      Value vec;
      if (exact && contiguous)
        vec = vector::LoadOp::create(b, vecType, bMem, index);
      else if (contiguous)
        vec = vector::TransferReadOp::create(b, vecType, bMem, index, zero,
                                             ArrayRef<bool>{false});
      else
        vec = vector::TransferReadOp::create(b, vecType, bMem, index, zero,
                                             alongN, ArrayRef<bool>{exact});
      vector::StoreOp::create(b, vec, bp, ValueRange{jp, kk, idx(v * p.lanes)});
    }
  };
  Value kcMain = idx(0);
  if (alongK) {
    kcMain = arith::MulIOp::create(
        b, arith::DivUIOp::create(b, kc, idx(p.lanes)), idx(p.lanes));
    // A panel past N's edge (a classifier's 1000 columns) reads row by row,
    // masked.
    if (!exact) {
      Value full = arith::CmpIOp::create(b, arith::CmpIPredicate::sle,
                                         column(p.nr), idx(p.n));
      kcMain = arith::SelectOp::create(b, full, kcMain, idx(0));
    }
    auto kLoop = scf::ForOp::create(b, idx(0), kcMain, idx(p.lanes));
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(kLoop.getBody());
    Value kk = kLoop.getInductionVar();
    SmallVector<Value> loops(loopsIn);
    setK(loops, arith::AddIOp::create(b, pc, kk));
    for (int64_t v = 0; v < p.nr / p.lanes; ++v) {
      SmallVector<Value> square;
      for (int64_t i = 0; i < p.lanes; ++i) {
        setColumn(loops, column(v * p.lanes + i));
        square.push_back(
            vector::LoadOp::create(b, vecType, bMem, indices(bOperand, loops)));
      }
      transposeSquare(square);
      for (int64_t t = 0; t < p.lanes; ++t)
        vector::StoreOp::create(b, square[t], bp,
                                ValueRange{jp,
                                           arith::AddIOp::create(b, kk, idx(t)),
                                           idx(v * p.lanes)});
    }
  }
  auto kLoop = scf::ForOp::create(b, kcMain, kc, idx(1));
  b.setInsertionPointToStart(kLoop.getBody());
  packRow(kLoop.getInductionVar());
}

void GemmBuilder::packWholeB(Value bp, Value jp, Value jc) {
  OpOperand *bOperand = op.getDpsInputOperand(1);
  Value bMem = bOperand->get();
  auto bType = cast<MemRefType>(bMem.getType());
  Type f = bType.getElementType();
  auto vecType = VectorType::get({p.lanes}, f);
  AffineMap mapB = op.getMatchingIndexingMap(bOperand);
  unsigned rank = mapB.getNumResults();
  // B as N rows of Q elements: its K dimensions, contiguous after N,
  // flattened into one.
  SmallVector<ReassociationIndices> groups{{0}, {}};
  for (unsigned r = 1; r < rank; ++r)
    groups[1].push_back(r);
  Value rows = memref::CollapseShapeOp::create(b, bMem, groups);
  int64_t q = bType.getNumElements() / bType.getDimSize(0);
  int64_t pcBlocks = llvm::divideCeil(p.k, p.kc);
  // The K block of element `qi` of a row, and its row in that block.
  auto destination = [&](Value qi) -> std::pair<Value, Value> {
    DenseMap<unsigned, Value> value;
    for (unsigned r = rank - 1; r >= 1; --r) {
      unsigned dim = cast<AffineDimExpr>(mapB.getResult(r)).getPosition();
      value[dim] = arith::RemUIOp::create(b, qi, idx(ranges[dim]));
      qi = arith::DivUIOp::create(b, qi, idx(ranges[dim]));
    }
    Value kb = idx(0);
    for (unsigned dim : dims.kOuter)
      kb = arith::AddIOp::create(
          b, arith::MulIOp::create(b, kb, idx(ranges[dim])), value[dim]);
    Value kInner = idx(0);
    for (unsigned dim : dims.kFlat)
      kInner = arith::AddIOp::create(
          b, arith::MulIOp::create(b, kInner, idx(ranges[dim])), value[dim]);
    kInner = arith::AddIOp::create(
        b, arith::MulIOp::create(b, kInner, idx(ranges[dims.kInner])),
        value[dims.kInner]);
    kb = arith::AddIOp::create(b, arith::MulIOp::create(b, kb, idx(pcBlocks)),
                               arith::DivUIOp::create(b, kInner, idx(p.kc)));
    return {kb, arith::RemUIOp::create(b, kInner, idx(p.kc))};
  };
  Value panelColumn =
      arith::AddIOp::create(b, jc, arith::MulIOp::create(b, jp, idx(p.nr)));
  auto column = [&](int64_t offset) {
    return arith::AddIOp::create(b, panelColumn, idx(offset));
  };
  OpBuilder::InsertionGuard guard(b);
  int64_t qMain = q / p.lanes * p.lanes;
  if (qMain > 0) {
    auto qLoop = scf::ForOp::create(b, idx(0), idx(qMain), idx(p.lanes));
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(qLoop.getBody());
    Value q0 = qLoop.getInductionVar();
    SmallVector<std::pair<Value, Value>> dest;
    for (int64_t t = 0; t < p.lanes; ++t)
      dest.push_back(destination(arith::AddIOp::create(b, q0, idx(t))));
    for (int64_t v = 0; v < p.nr / p.lanes; ++v) {
      SmallVector<Value> square;
      for (int64_t i = 0; i < p.lanes; ++i)
        square.push_back(vector::LoadOp::create(
            b, vecType, rows, ValueRange{column(v * p.lanes + i), q0}));
      transposeSquare(square);
      for (int64_t t = 0; t < p.lanes; ++t)
        vector::StoreOp::create(
            b, square[t], bp,
            ValueRange{dest[t].first, jp, dest[t].second, idx(v * p.lanes)});
    }
  }
  if (qMain == q)
    return;
  // The last Q % lanes elements of each row, one at a time.
  auto qLoop = scf::ForOp::create(b, idx(qMain), idx(q), idx(1));
  b.setInsertionPointToStart(qLoop.getBody());
  Value qi = qLoop.getInductionVar();
  auto [kb, kk] = destination(qi);
  for (int64_t i = 0; i < p.nr; ++i) {
    Value value = memref::LoadOp::create(b, rows, ValueRange{column(i), qi});
    memref::StoreOp::create(b, value, bp, ValueRange{kb, jp, kk, idx(i)});
  }
}

/// Transposes the square `rows` (lanes vectors of lanes elements, lanes a
/// power of two) in place: log2(lanes) rounds of two-source shuffles, each
/// swapping the off-diagonal s x s blocks of every 2s x 2s block.
void GemmBuilder::transposeSquare(SmallVector<Value> &rows) {
  int64_t n = rows.size();
  for (int64_t s = 1; s < n; s *= 2) {
    SmallVector<int64_t> lowMask, highMask;
    for (int64_t j = 0; j < n; ++j) {
      lowMask.push_back((j & s) == 0 ? j : j - s + n);
      highMask.push_back((j & s) == 0 ? j + s : j + n);
    }
    for (int64_t i = 0; i < n; ++i) {
      if (i & s)
        continue;
      Value low = vector::ShuffleOp::create(b, rows[i], rows[i + s], lowMask);
      Value high = vector::ShuffleOp::create(b, rows[i], rows[i + s], highMask);
      rows[i] = low;
      rows[i + s] = high;
    }
  }
}

void GemmBuilder::computeBlocks(Value bpAll, ArrayRef<Value> loopsIn, Value jc,
                                Value nc, int64_t pcBlocks, Value kbFixed) {
  OpOperand *aOperand = op.getDpsInputOperand(0);
  Value aMem = aOperand->get();
  Type f = cast<MemRefType>(aMem.getType()).getElementType();
  Value zero = arith::ConstantOp::create(b, b.getZeroAttr(f));
  int64_t blocks = llvm::divideCeil(p.m, p.mc);
  OpBuilder::InsertionGuard guard(b);
  SmallVector<Value> task = taskLoops({idx(blocks), idx(p.groups)});
  Value ic = arith::MulIOp::create(b, task[0], idx(p.mc));
  Value firstPanel = arith::MulIOp::create(b, task[1], idx(p.groupPanels));
  Value mc = minIdx(arith::SubIOp::create(b, idx(p.m), ic), p.mc);
  int64_t mcPanels = llvm::divideCeil(p.mc, p.mr);
  auto apType = MemRefType::get({mcPanels, p.kc, p.mr}, f);
  Value ap;
  if (!p.directA)
    ap = memref::AllocOp::create(b, apType, b.getI64IntegerAttr(64));
  Value rowPanels = arith::CeilDivSIOp::create(b, mc, idx(p.mr));

  // The task's K blocks (all: the outer K loops, then KC blocks of the
  // inner; or the one `kbFixed`, whose B alone `bpAll` holds).
  SmallVector<Value> loops(loopsIn);
  Operation *outermostK = nullptr;
  Value pc, bp;
  if (kbFixed) {
    pc = setKBlock(loops, kbFixed, pcBlocks);
    bp = kBlockOf(bpAll, p.packWhole ? kbFixed : idx(0));
  } else {
    Value kb = idx(0);
    for (unsigned dim : dims.kOuter) {
      auto loop = scf::ForOp::create(b, idx(0), idx(ranges[dim]), idx(1));
      if (!outermostK)
        outermostK = loop;
      b.setInsertionPointToStart(loop.getBody());
      loops[dim] = loop.getInductionVar();
      kb = arith::AddIOp::create(
          b, arith::MulIOp::create(b, kb, idx(ranges[dim])), loops[dim]);
    }
    auto pcLoop = scf::ForOp::create(b, idx(0), idx(pcBlocks), idx(1));
    if (!outermostK)
      outermostK = pcLoop;
    b.setInsertionPointToStart(pcLoop.getBody());
    kb = arith::AddIOp::create(b, arith::MulIOp::create(b, kb, idx(pcBlocks)),
                               pcLoop.getInductionVar());
    pc = arith::MulIOp::create(b, pcLoop.getInductionVar(), idx(p.kc));
    bp = kBlockOf(bpAll, kb);
  }
  Value kc = minIdx(arith::SubIOp::create(b, idx(p.k), pc), p.kc);
  if (initialValue) {
    firstK = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, pc, idx(0));
    for (unsigned dim : dims.kOuter)
      firstK = arith::AndIOp::create(
          b, firstK,
          arith::CmpIOp::create(b, arith::CmpIPredicate::eq, loops[dim],
                                idx(0)));
  }
  if (epilogue) {
    lastK = arith::CmpIOp::create(b, arith::CmpIPredicate::eq,
                                  arith::AddIOp::create(b, pc, kc), idx(p.k));
    for (unsigned dim : dims.kOuter)
      lastK = arith::AndIOp::create(
          b, lastK,
          arith::CmpIOp::create(b, arith::CmpIPredicate::eq, loops[dim],
                                idx(ranges[dim] - 1)));
  }
  ArrayRef<Value> blockLoops = loops;

  // Pack A: row panels of MR rows, k-major inside a panel; rows past M are
  // zeros. A row's M indices are computed once per row.
  if (p.aAlongM) {
    // Rows past M are zeros (masked loads) when M's panels are not full.
    auto aType = cast<MemRefType>(aMem.getType());
    SmallVector<ReassociationIndices> all(1);
    for (int64_t d = 0, e = aType.getRank(); d < e; ++d)
      all[0].push_back(d);
    Value flat = memref::CollapseShapeOp::create(b, aMem, all);
    auto panelType = VectorType::get({p.mr}, f);
    auto ipLoop = scf::ForOp::create(b, idx(0), rowPanels, idx(1));
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ipLoop.getBody());
    Value ip = ipLoop.getInductionVar();
    Value row0 =
        arith::AddIOp::create(b, ic, arith::MulIOp::create(b, ip, idx(p.mr)));
    Value base = arith::AddIOp::create(b, row0, idx(p.aOffset));
    // One K loop of loads: plain ones for a full panel, masked ones for the
    // partial panel at M's end.
    auto kLoop = [&](Value mask) {
      auto loop = scf::ForOp::create(b, idx(0), kc, idx(1));
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(loop.getBody());
      Value kk = loop.getInductionVar();
      SmallVector<Value> loops(blockLoops);
      setK(loops, arith::AddIOp::create(b, pc, kk));
      Value offset = base;
      for (auto [dim, coefficient] : p.aCoefficients)
        if (coefficient)
          offset = arith::AddIOp::create(
              b, offset,
              arith::MulIOp::create(b, loops[dim], idx(coefficient)));
      Value panel;
      if (mask)
        panel = vector::MaskedLoadOp::create(
            b, panelType, flat, offset, mask,
            arith::ConstantOp::create(
                b, panelType,
                DenseElementsAttr::get(panelType, b.getZeroAttr(f))));
      else
        panel = vector::LoadOp::create(b, panelType, flat, offset);
      vector::StoreOp::create(b, panel, ap, ValueRange{ip, kk, idx(0)});
    };
    if (p.m % p.mr == 0 && p.mc % p.mr == 0) {
      kLoop(nullptr);
    } else {
      Value rows = arith::SubIOp::create(b, idx(p.m), row0);
      Value full =
          arith::CmpIOp::create(b, arith::CmpIPredicate::sge, rows, idx(p.mr));
      auto ifOp = scf::IfOp::create(b, full, /*withElseRegion=*/true);
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      kLoop(nullptr);
      b.setInsertionPointToStart(ifOp.elseBlock());
      kLoop(vector::CreateMaskOp::create(
          b, VectorType::get({p.mr}, b.getI1Type()), ValueRange{rows}));
    }
  } else if (!p.directA) {
    auto ipLoop = scf::ForOp::create(b, idx(0), rowPanels, idx(1));
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ipLoop.getBody());
    Value ip = ipLoop.getInductionVar();
    for (int64_t r = 0; r < p.mr; ++r) {
      Value row = arith::AddIOp::create(
          b, ic,
          arith::AddIOp::create(b, arith::MulIOp::create(b, ip, idx(p.mr)),
                                idx(r)));
      auto copyRow = [&](bool inBounds) {
        SmallVector<Value> loops(blockLoops);
        if (inBounds)
          setRow(loops, row);
        auto kLoop = scf::ForOp::create(b, idx(0), kc, idx(1));
        OpBuilder::InsertionGuard g2(b);
        b.setInsertionPointToStart(kLoop.getBody());
        Value kk = kLoop.getInductionVar();
        Value value = zero;
        if (inBounds) {
          setK(loops, arith::AddIOp::create(b, pc, kk));
          value = memref::LoadOp::create(b, aMem, indices(aOperand, loops));
        }
        memref::StoreOp::create(b, value, ap, ValueRange{ip, kk, idx(r)});
      };
      if (p.m % p.mr == 0 && p.mc % p.mr == 0) {
        copyRow(true);
        continue;
      }
      Value inside =
          arith::CmpIOp::create(b, arith::CmpIPredicate::slt, row, idx(p.m));
      auto ifOp = scf::IfOp::create(b, inside, /*withElseRegion=*/true);
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      copyRow(true);
      b.setInsertionPointToStart(ifOp.elseBlock());
      copyRow(false);
    }
  }

  Value colPanels = arith::MinSIOp::create(
      b, arith::CeilDivSIOp::create(b, nc, idx(p.nr)),
      arith::AddIOp::create(b, firstPanel, idx(p.groupPanels)));
  auto jrLoop = scf::ForOp::create(b, firstPanel, colPanels, idx(1));
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(jrLoop.getBody());
    Value jp = jrLoop.getInductionVar();
    auto irLoop = scf::ForOp::create(b, idx(0), rowPanels, idx(1));
    b.setInsertionPointToStart(irLoop.getBody());
    Value ip = irLoop.getInductionVar();
    Value i0 =
        arith::AddIOp::create(b, ic, arith::MulIOp::create(b, ip, idx(p.mr)));
    Value j0 =
        arith::AddIOp::create(b, jc, arith::MulIOp::create(b, jp, idx(p.nr)));
    microKernel(ap, bp, blockLoops, i0, j0, ip, jp, pc, kc);
  }
  if (outermostK)
    b.setInsertionPointAfter(outermostK);
  else
    b.setInsertionPointAfter(jrLoop);
  if (!p.directA)
    memref::DeallocOp::create(b, ap);
}

void GemmBuilder::microKernel(Value ap, Value bp, ArrayRef<Value> loopsIn,
                              Value i0, Value j0, Value ip, Value jp, Value pc,
                              Value kc) {
  bool exact = p.m % p.mr == 0 && p.mc % p.mr == 0 && p.n % p.nr == 0 &&
               p.nc % p.nr == 0;
  if (exact)
    return microKernelBody(ap, bp, loopsIn, i0, j0, ip, jp, pc, kc, true);
  // Full tiles take the unmasked path; only tiles on M's or N's edge pay for
  // masks and row checks.
  Value rowsFit =
      arith::CmpIOp::create(b, arith::CmpIPredicate::sle,
                            arith::AddIOp::create(b, i0, idx(p.mr)), idx(p.m));
  Value colsFit =
      arith::CmpIOp::create(b, arith::CmpIPredicate::sle,
                            arith::AddIOp::create(b, j0, idx(p.nr)), idx(p.n));
  Value full = arith::AndIOp::create(b, rowsFit, colsFit);
  auto ifOp = scf::IfOp::create(b, full, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  microKernelBody(ap, bp, loopsIn, i0, j0, ip, jp, pc, kc, true);
  b.setInsertionPointToStart(ifOp.elseBlock());
  microKernelBody(ap, bp, loopsIn, i0, j0, ip, jp, pc, kc, false);
}

void GemmBuilder::microKernelBody(Value ap, Value bp, ArrayRef<Value> loopsIn,
                                  Value i0, Value j0, Value ip, Value jp,
                                  Value pc, Value kc, bool fullTile) {
  OpOperand *cOperand = op.getDpsInitOperand(0);
  Value cMem = cOperand->get();
  Type f = cast<MemRefType>(cMem.getType()).getElementType();
  auto vecType = VectorType::get({p.lanes}, f);
  int64_t nv = p.nr / p.lanes;
  Value zero = arith::ConstantOp::create(b, b.getZeroAttr(f));
  Value zeroVec = arith::ConstantOp::create(
      b, vecType, DenseElementsAttr::get(vecType, b.getZeroAttr(f)));

  // C's indices of row i0 + r, columns j0 + v * lanes.
  SmallVector<SmallVector<Value>> rowLoops;
  SmallVector<Value> rows;
  for (int64_t r = 0; r < p.mr; ++r) {
    rows.push_back(arith::AddIOp::create(b, i0, idx(r)));
    rowLoops.emplace_back(loopsIn);
    setRow(rowLoops.back(), rows.back());
  }
  auto cIndices = [&](int64_t r, int64_t v) {
    SmallVector<Value> loops(rowLoops[r]);
    setColumn(loops, arith::AddIOp::create(b, j0, idx(v * p.lanes)));
    return std::make_pair(indices(cOperand, loops), rows[r]);
  };

  // Prefetch the C tile, which the K loop's result is added to: the rows
  // are a row stride apart and missed the caches when the accumulators
  // were loaded from them before the loop.
  if (fullTile)
    for (int64_t r = 0; r < p.mr; ++r)
      for (int64_t v = 0; v < nv; ++v)
        memref::PrefetchOp::create(b, cMem, cIndices(r, v).first,
                                   /*isWrite=*/true, /*localityHint=*/3,
                                   /*isDataCache=*/true);

  // With `directA`, row r's indices into A at the block's first K (pc);
  // the K loop adds its index to the last (A's unit-stride K). Rows past M
  // read row M - 1 (their sums are not stored).
  SmallVector<SmallVector<Value>> aIndex;
  OpOperand *aOperand = op.getDpsInputOperand(0);
  if (p.directA) {
    for (int64_t r = 0; r < p.mr; ++r) {
      SmallVector<Value> loops(loopsIn);
      Value row = rows[r];
      if (!fullTile)
        row = minIdx(row, p.m - 1);
      setRow(loops, row);
      setK(loops, pc);
      aIndex.push_back(indices(aOperand, loops));
    }
  }

  // The K loop: NR/lanes loads of B, MR broadcasts of A, MR*NR/lanes FMAs,
  // into accumulators that start at zero.
  SmallVector<Value> zeros(p.mr * nv, zeroVec);
  auto kLoop = scf::ForOp::create(b, idx(0), kc, idx(1), zeros);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(kLoop.getBody());
    Value kk = kLoop.getInductionVar();
    SmallVector<Value> bVecs;
    for (int64_t v = 0; v < nv; ++v)
      bVecs.push_back(vector::LoadOp::create(
          b, vecType, bp, ValueRange{jp, kk, idx(v * p.lanes)}));
    SmallVector<Value> next;
    for (int64_t r = 0; r < p.mr; ++r) {
      Value a;
      if (p.directA) {
        SmallVector<Value> index(aIndex[r]);
        index.back() = arith::AddIOp::create(b, index.back(), kk);
        a = memref::LoadOp::create(b, aOperand->get(), index);
      } else {
        a = memref::LoadOp::create(b, ap, ValueRange{ip, kk, idx(r)});
      }
      Value aVec = vector::BroadcastOp::create(b, vecType, a);
      for (int64_t v = 0; v < nv; ++v)
        next.push_back(vector::FMAOp::create(
            b, aVec, bVecs[v], kLoop.getRegionIterArgs()[r * nv + v]));
    }
    scf::YieldOp::create(b, next);
  }

  // Add the C tile: what the earlier K blocks left there, or, in the first
  // block after a fill, the fill's value without reading C.
  auto addC = [&]() {
    SmallVector<Value> sums;
    for (int64_t r = 0; r < p.mr; ++r) {
      for (int64_t v = 0; v < nv; ++v) {
        auto [index, row] = cIndices(r, v);
        Value acc = kLoop.getResult(r * nv + v);
        Value c;
        if (fullTile) {
          c = vector::LoadOp::create(b, vecType, cMem, index);
        } else {
          Value inside = arith::CmpIOp::create(b, arith::CmpIPredicate::slt,
                                               row, idx(p.m));
          auto ifOp = scf::IfOp::create(b, TypeRange{vecType}, inside, true);
          OpBuilder::InsertionGuard g(b);
          b.setInsertionPointToStart(ifOp.thenBlock());
          Value read = vector::TransferReadOp::create(
              b, vecType, cMem, index, zero, ArrayRef<bool>{false});
          scf::YieldOp::create(b, read);
          b.setInsertionPointToStart(ifOp.elseBlock());
          scf::YieldOp::create(b, zeroVec);
          c = ifOp.getResult(0);
        }
        sums.push_back(arith::AddFOp::create(b, c, acc));
      }
    }
    return sums;
  };
  SmallVector<Value> accs;
  if (!initialValue) {
    accs = addC();
  } else {
    SmallVector<Type> types(p.mr * nv, vecType);
    auto ifOp = scf::IfOp::create(b, types, firstK, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    SmallVector<Value> firstSums(kLoop.getResults());
    if (!matchPattern(initialValue, m_PosZeroFloat())) {
      Value init = vector::BroadcastOp::create(b, vecType, initialValue);
      for (Value &sum : firstSums)
        sum = arith::AddFOp::create(b, init, sum);
    }
    scf::YieldOp::create(b, firstSums);
    b.setInsertionPointToStart(ifOp.elseBlock());
    scf::YieldOp::create(b, addC());
    b.setInsertionPointAfter(ifOp);
    accs.assign(ifOp.getResults().begin(), ifOp.getResults().end());
  }

  // Store the sums back to C; in the last K block, through the fused
  // epilogue into its output instead.
  SmallVector<SmallVector<Value>> cIndex;
  for (int64_t r = 0; r < p.mr; ++r)
    for (int64_t v = 0; v < nv; ++v)
      cIndex.push_back(cIndices(r, v).first);
  if (!epilogue)
    return storeTile(accs, cIndex, rows, fullTile, false);
  auto ifOp = scf::IfOp::create(b, lastK, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  storeTile(accs, cIndex, rows, fullTile, true);
  b.setInsertionPointToStart(ifOp.elseBlock());
  storeTile(accs, cIndex, rows, fullTile, false);
}

void GemmBuilder::storeTile(ArrayRef<Value> accs,
                            ArrayRef<SmallVector<Value>> cIndex,
                            ArrayRef<Value> rows, bool fullTile,
                            bool withEpilogue) {
  int64_t nv = p.nr / p.lanes;
  Value target = withEpilogue ? epilogue.getDpsInitOperand(0)->get()
                              : op.getDpsInitOperand(0)->get();
  for (int64_t r = 0; r < p.mr; ++r) {
    std::optional<OpBuilder::InsertionGuard> guard;
    if (!fullTile) {
      // Rows past M are neither read (epilogue inputs) nor written.
      Value inside = arith::CmpIOp::create(b, arith::CmpIPredicate::slt,
                                           rows[r], idx(p.m));
      auto ifOp = scf::IfOp::create(b, inside, /*withElseRegion=*/false);
      guard.emplace(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
    }
    for (int64_t v = 0; v < nv; ++v) {
      ArrayRef<Value> index = cIndex[r * nv + v];
      Value value = accs[r * nv + v];
      if (withEpilogue)
        value = applyEpilogue(value, index, fullTile);
      if (fullTile)
        vector::StoreOp::create(b, value, target, index);
      else
        vector::TransferWriteOp::create(b, value, target, index,
                                        ArrayRef<bool>{false});
    }
  }
}

Value GemmBuilder::applyEpilogue(Value acc, ArrayRef<Value> cIndex,
                                 bool fullTile) {
  // The epilogue's loops are the result's dimensions (identity maps).
  Block *body = epilogue.getBlock();
  Value cMem = op.getDpsInitOperand(0)->get();
  unsigned innermost = epilogue.getNumLoops() - 1;
  IRMapping mapping;
  for (OpOperand *input : epilogue.getDpsInputOperands()) {
    BlockArgument arg = body->getArgument(input->getOperandNumber());
    if (input->get() == cMem) {
      mapping.map(arg, acc);
      continue;
    }
    AffineMap map = epilogue.getMatchingIndexingMap(input);
    SmallVector<Value> index;
    for (unsigned i = 0, e = map.getNumResults(); i < e; ++i)
      index.push_back(cIndex[map.getDimPosition(i)]);
    Type elementType = arg.getType();
    auto vecType = VectorType::get({p.lanes}, elementType);
    bool vectorRead = map.getNumResults() > 0 &&
                      map.getDimPosition(map.getNumResults() - 1) == innermost;
    Value value;
    if (!vectorRead) {
      value = vector::BroadcastOp::create(
          b, vecType, memref::LoadOp::create(b, input->get(), index));
    } else if (fullTile) {
      value = vector::LoadOp::create(b, vecType, input->get(), index);
    } else {
      Value pad = arith::ConstantOp::create(b, b.getZeroAttr(elementType));
      value = vector::TransferReadOp::create(b, vecType, input->get(), index,
                                             pad, ArrayRef<bool>{false});
    }
    mapping.map(arg, value);
  }
  for (Operation &scalarOp : body->without_terminator()) {
    for (Value operand : scalarOp.getOperands()) {
      if (mapping.contains(operand))
        continue;
      // A value from outside the body (a constant): splat it.
      mapping.map(operand, vector::BroadcastOp::create(
                               b, VectorType::get({p.lanes}, operand.getType()),
                               operand));
    }
    Operation *vectorOp = b.clone(scalarOp, mapping);
    for (Value result : vectorOp->getResults())
      result.setType(VectorType::get({p.lanes}, result.getType()));
  }
  return mapping.lookup(body->getTerminator()->getOperand(0));
}

namespace {
class PBMapMatrixUnitsPass
    : public pb::impl::PBMapMatrixUnitsPassBase<PBMapMatrixUnitsPass> {
public:
  using Base::Base;
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    const ChipDesc *chip = getTargetChip(func);
    if (!chip) {
      func.emitError("pb-map-matrix-units needs a target: run with --target");
      return signalPassFailure();
    }
    SmallVector<linalg::LinalgOp> candidates;
    func.walk([&](linalg::LinalgOp op) {
      if (op.hasPureBufferSemantics() && isMultiplyAccumulate(op))
        candidates.push_back(op);
    });
    for (linalg::LinalgOp op : candidates)
      mapContraction(op, *chip);
  }

private:
  void mapContraction(linalg::LinalgOp op, const ChipDesc &chip);
  bool tagForCooperativeUnit(linalg::LinalgOp op, const GemmDims &dims,
                             const ChipDesc &chip);
};
} // namespace

/// The thread-scope, vector-outer-product unit for these element types with
/// the most lanes, or null.
static const MatrixUnitDesc *findUnit(const ChipDesc &chip, ElementType a,
                                      ElementType bt, ElementType c) {
  const MatrixUnitDesc *best = nullptr;
  for (const MatrixUnitDesc *unit : chip.matrixUnits) {
    if (unit->scope != MatrixScope::ThreadScope ||
        unit->lowering != MatrixLowering::VectorOuterProduct || unit->m != 1 ||
        unit->k != 1 || unit->aType != a || unit->bType != bt ||
        unit->cType != c)
      continue;
    if (!best || unit->n > best->n)
      best = unit;
  }
  return best;
}

/// Whether S4 builds a whole kernel around units of `scope`: a subgroup's
/// (a warp's mma) or, when `warpgroups`, several subgroups' together.
static bool isCooperativeScope(MatrixScope scope, bool warpgroups) {
  return scope == MatrixScope::SubgroupScope ||
         (warpgroups && scope == MatrixScope::WarpgroupScope);
}

/// The cooperative unit (see isCooperativeScope) multiplying `a` x `b` into
/// f32 with the largest M x N x K, or null. f32 data runs on tf32 units only
/// when `allowTF32`.
static const MatrixUnitDesc *findCooperativeUnit(const ChipDesc &chip,
                                                 ElementType a, ElementType b,
                                                 bool allowTF32,
                                                 bool warpgroups) {
  if (a != b || a == ElementType::F64)
    return nullptr;
  ElementType want = a;
  if (a == ElementType::F32) {
    if (!allowTF32)
      return nullptr;
    want = ElementType::TF32;
  }
  const MatrixUnitDesc *best = nullptr;
  for (const MatrixUnitDesc *unit : chip.matrixUnits) {
    if (!isCooperativeScope(unit->scope, warpgroups) || unit->aType != want ||
        unit->bType != want || unit->cType != ElementType::F32)
      continue;
    if (!best || unit->m * unit->n * unit->k > best->m * best->n * best->k)
      best = unit;
  }
  return best;
}

/// The GEMM roles of `op`'s loops, or failure with the reason in `why`.
static FailureOr<GemmDims> classify(linalg::LinalgOp op, std::string &why) {
  AffineMap mapA = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
  AffineMap mapB = op.getMatchingIndexingMap(op.getDpsInputOperand(1));
  AffineMap mapC = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (!mapC.isProjectedPermutation()) {
    why = "the result is not a plain projection of the loops";
    return failure();
  }
  GemmDims dims;
  SmallVector<unsigned> n, k;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned d = 0, e = op.getNumLoops(); d < e; ++d) {
    bool inA = mapA.isFunctionOfDim(d), inB = mapB.isFunctionOfDim(d),
         inC = mapC.isFunctionOfDim(d);
    if (iterators[d] == utils::IteratorType::reduction) {
      if (inC) {
        why = "a reduction loop indexes the result";
        return failure();
      }
      k.push_back(d);
    } else if (inA && inB && inC) {
      dims.batch.push_back(d);
    } else if (inA && inC) {
      dims.m.push_back(d);
    } else if (inB && inC) {
      n.push_back(d);
    } else {
      why = llvm::formatv("parallel loop {0} is not an M, N or batch loop", d);
      return failure();
    }
  }
  if (n.empty() || dims.m.empty() || k.empty()) {
    why = "no M, N or K loop";
    return failure();
  }
  // N must be the innermost dimension of B and C (vector loads and stores).
  auto innermostIs = [&](AffineMap map, unsigned dim) {
    auto expr = dyn_cast<AffineDimExpr>(map.getResult(map.getNumResults() - 1));
    return expr && expr.getPosition() == dim;
  };
  // B may have N anywhere (packing reads it strided), but as a plain index.
  auto plainIn = [](AffineMap map, unsigned dim) {
    return llvm::any_of(map.getResults(), [&](AffineExpr e) {
      auto d = dyn_cast<AffineDimExpr>(e);
      return d && d.getPosition() == dim;
    });
  };
  auto innermostN = llvm::find_if(n, [&](unsigned d) {
    return innermostIs(mapB, d) && innermostIs(mapC, d);
  });
  if (innermostN == n.end())
    innermostN = llvm::find_if(n, [&](unsigned d) {
      return innermostIs(mapC, d) && plainIn(mapB, d);
    });
  if (innermostN == n.end()) {
    why = "no N loop is the innermost dimension of C and a plain index of B";
    return failure();
  }
  dims.n = *innermostN;
  // Further N loops (a projection whose N was split by a reshape, e.g.
  // attention heads x head size) iterate around the GEMM like batch loops:
  // A, which they do not index, is repacked for each of them.
  for (unsigned d : n)
    if (d != dims.n)
      dims.batch.push_back(d);
  llvm::sort(dims.batch);
  // KC blocks run along A's innermost dimension when it is a K loop, so
  // that packing A reads consecutive elements.
  dims.kInner = k.back();
  if (auto expr =
          dyn_cast<AffineDimExpr>(mapA.getResult(mapA.getNumResults() - 1)))
    if (llvm::is_contained(k, expr.getPosition()))
      dims.kInner = expr.getPosition();
  for (unsigned d : k)
    if (d != dims.kInner)
      dims.kOuter.push_back(d);
  return dims;
}

/// The nest that fills all of `mem` with one value defined outside it, if
/// it comes right before `op` (only side-effect-free ops and allocations of
/// other buffers between: an epilogue's output moved above `op`), and the
/// value: S2's form of the linalg.fill that initializes a contraction.
static std::optional<std::pair<affine::AffineForOp, Value>>
findInitialFill(Operation *op, Value mem) {
  auto type = dyn_cast<MemRefType>(mem.getType());
  if (!type || !type.hasStaticShape() || !type.getLayout().isIdentity())
    return std::nullopt;
  Operation *prev = op->getPrevNode();
  while (prev && !isa<affine::AffineForOp>(prev) &&
         (isMemoryEffectFree(prev) ||
          (isa<memref::AllocOp>(prev) && prev->getResult(0) != mem)))
    prev = prev->getPrevNode();
  auto outer = dyn_cast_or_null<affine::AffineForOp>(prev);
  if (!outer)
    return std::nullopt;
  // One loop per dimension of `mem`, over all of it, around a single store.
  SmallVector<affine::AffineForOp> nest;
  affine::getPerfectlyNestedLoops(nest, outer);
  if (nest.size() != static_cast<size_t>(type.getRank()))
    return std::nullopt;
  SmallVector<Value> ivs;
  for (auto [loop, size] : llvm::zip(nest, type.getShape())) {
    if (!loop.hasConstantBounds() || loop.getConstantLowerBound() != 0 ||
        loop.getConstantUpperBound() != size || loop.getStepAsInt() != 1)
      return std::nullopt;
    ivs.push_back(loop.getInductionVar());
  }
  Block *body = nest.back().getBody();
  auto store = dyn_cast<affine::AffineStoreOp>(body->front());
  if (body->getOperations().size() != 2 || !store || store.getMemRef() != mem ||
      store.getMapOperands() != ValueRange(ivs) ||
      !store.getAffineMap().isIdentity() ||
      !store.getValueToStore().getParentRegion()->isProperAncestor(
          &outer.getRegion()))
    return std::nullopt;
  return std::make_pair(outer, store.getValueToStore());
}

/// Moves the N loops that classify() left as batch loops (loops that A
/// does not index) into `dims.nOuter` while each is the dimension right
/// outside the N found so far in both B and C: the GEMM then runs over all
/// the columns at once (A packed once, not once per head), its column
/// index split into these loops. The innermost N extent must be a multiple
/// of the register tile's `nr` columns, so that no vector crosses an outer
/// index.
static void mergeSplitN(linalg::LinalgOp op, GemmDims &dims, int64_t nr) {
  AffineMap mapA = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
  AffineMap mapB = op.getMatchingIndexingMap(op.getDpsInputOperand(1));
  AffineMap mapC = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (op.getStaticLoopRanges()[dims.n] % nr != 0)
    return;
  auto position = [&](AffineMap map, unsigned dim) {
    return map.getResultPosition(getAffineDimExpr(dim, op.getContext()));
  };
  unsigned inner = dims.n;
  while (true) {
    std::optional<unsigned> innerB = position(mapB, inner),
                            innerC = position(mapC, inner);
    if (!innerB || !innerC || *innerB == 0 || *innerC == 0)
      return;
    auto outer = llvm::find_if(dims.batch, [&](unsigned d) {
      return !mapA.isFunctionOfDim(d) &&
             position(mapB, d) == std::optional<unsigned>(*innerB - 1) &&
             position(mapC, d) == std::optional<unsigned>(*innerC - 1);
    });
    if (outer == dims.batch.end())
      return;
    inner = *outer;
    dims.nOuter.insert(dims.nOuter.begin(), inner);
    dims.batch.erase(outer);
  }
}

/// Sets GemmPlan::aAlongM when A's offset is linear in the loops, one
/// flattened row apart per row of M (its strides from A's static,
/// row-major shape).
static void setAlongM(linalg::LinalgOp op, const GemmDims &dims,
                      ArrayRef<int64_t> ranges, GemmPlan &p) {
  OpOperand *aOperand = op.getDpsInputOperand(0);
  auto aType = cast<MemRefType>(aOperand->get().getType());
  AffineMap mapA = op.getMatchingIndexingMap(aOperand);
  if (!aType.hasStaticShape() || !aType.getLayout().isIdentity())
    return;
  bool linear = true;
  for (AffineExpr e : mapA.getResults())
    e.walk([&](AffineExpr sub) {
      if (sub.getKind() != AffineExprKind::Add &&
          sub.getKind() != AffineExprKind::Mul &&
          sub.getKind() != AffineExprKind::DimId &&
          sub.getKind() != AffineExprKind::Constant)
        linear = false;
    });
  if (!linear)
    return;
  // The offset with every loop at 0, and each loop's coefficient in it.
  unsigned numDims = mapA.getNumDims();
  MLIRContext *ctx = op->getContext();
  auto offsetAt = [&](std::optional<unsigned> unitDim) {
    SmallVector<AffineExpr> values;
    for (unsigned d = 0; d < numDims; ++d)
      values.push_back(getAffineConstantExpr(d == unitDim ? 1 : 0, ctx));
    int64_t offset = 0, stride = 1;
    for (int64_t r = mapA.getNumResults() - 1; r >= 0; --r) {
      AffineExpr value =
          simplifyAffineExpr(mapA.getResult(r).replaceDims(values), numDims, 0);
      offset += stride * cast<AffineConstantExpr>(value).getValue();
      stride *= aType.getDimSize(r);
    }
    return offset;
  };
  int64_t offset = offsetAt(std::nullopt);
  auto coefficient = [&](unsigned d) { return offsetAt(d) - offset; };
  int64_t expected = 1;
  for (unsigned d : llvm::reverse(dims.m)) {
    if (ranges[d] != 1 && coefficient(d) != expected)
      return;
    expected *= ranges[d];
  }
  p.aAlongM = true;
  p.aOffset = offset;
  for (unsigned d = 0; d < numDims; ++d)
    if (!llvm::is_contained(dims.m, d))
      p.aCoefficients[d] = coefficient(d);
}

/// Whether B is packed whole (see GemmPlan::packWhole): its first index is
/// N, its others every K loop once, contiguous in memory, and N's panels
/// full; not when its last index is the blocked K alone (a row-major N x K
/// B: packB transposes one K block at a time, lanes x lanes along K).
static bool isPackedWhole(linalg::LinalgOp op, const GemmDims &dims,
                          const GemmPlan &p) {
  if (!dims.batch.empty() || !dims.nOuter.empty() ||
      !llvm::isPowerOf2_64(p.lanes) || p.n % p.nr || p.nc % p.nr)
    return false;
  AffineMap mapB = op.getMatchingIndexingMap(op.getDpsInputOperand(1));
  if (mapB.getNumResults() != 2 + dims.kOuter.size() + dims.kFlat.size())
    return false;
  SmallVector<unsigned> positions;
  for (AffineExpr e : mapB.getResults()) {
    auto d = dyn_cast<AffineDimExpr>(e);
    if (!d)
      return false;
    positions.push_back(d.getPosition());
  }
  if (positions.front() != dims.n ||
      (positions.back() == dims.kInner && dims.kFlat.empty()))
    return false;
  SmallVector<unsigned> kDims(dims.kOuter);
  llvm::append_range(kDims, dims.kFlat);
  kDims.push_back(dims.kInner);
  return llvm::all_of(
      kDims, [&](unsigned d) { return llvm::count(positions, d) == 1; });
}

void PBMapMatrixUnitsPass::mapContraction(linalg::LinalgOp op,
                                          const ChipDesc &chip) {
  auto skip = [&](const Twine &why) {
    explain(op, "matrix units: " + op->getName().getStringRef() +
                    " left to loop tiling: " + why);
  };
  std::string why;
  FailureOr<GemmDims> classified = classify(op, why);
  if (failed(classified))
    return skip(why);
  if (tagForCooperativeUnit(op, *classified, chip))
    return;
  GemmDims dims = *classified;
  auto typeOf = [](Value v) {
    return cast<MemRefType>(v.getType()).getElementType();
  };
  Value aMem = op.getDpsInputOperand(0)->get();
  Value bMem = op.getDpsInputOperand(1)->get();
  Value cMem = op.getDpsInitOperand(0)->get();
  for (Value mem : {aMem, bMem, cMem})
    if (!cast<MemRefType>(mem.getType()).getLayout().isIdentity())
      return skip("an operand has a non-identity layout");
  std::optional<ElementType> at = getTargetElementType(typeOf(aMem));
  std::optional<ElementType> bt = getTargetElementType(typeOf(bMem));
  std::optional<ElementType> ct = getTargetElementType(typeOf(cMem));
  const MatrixUnitDesc *unit =
      at && bt && ct ? findUnit(chip, *at, *bt, *ct) : nullptr;
  if (!unit)
    return skip("the target has no thread-scope vector outer-product unit "
                "for these element types");
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t flatM = 1;
  for (unsigned d : dims.m)
    flatM *= ranges[d];

  GemmPlan p;
  p.unit = unit;
  p.lanes = unit->n;
  p.m = flatM;
  p.k = ranges[dims.kInner];
  p.nr = kTileRowVectors * p.lanes;
  mergeSplitN(op, dims, p.nr);
  p.n = ranges[dims.n];
  for (unsigned d : dims.nOuter)
    p.n *= ranges[d];
  const MemoryLevelDesc *regs = chip.getMemoryLevel(MemoryKind::RegisterFile);
  int64_t elemBytes = typeOf(cMem).getIntOrFloatBitWidth() / 8;
  if (!regs)
    return skip("the target states no register file");
  int64_t vectorRegs = regs->capacityBytes / (p.lanes * elemBytes);
  p.mr = static_cast<int64_t>(kAccumulatorShare * vectorRegs) / kTileRowVectors;
  if (p.mr < 1)
    return skip("the register file cannot hold a register tile");
  // Fewer rows than the register tile (a batch-1 classifier, a
  // matrix-vector product) still run on the micro-kernel: the packed rows
  // past M are zeros, and the N groups below spread the columns over the
  // cores. Fewer columns than NR would waste most of every vector.
  if (p.n < p.nr)
    return skip(llvm::formatv("N = {0} is narrower than the register tile's "
                              "{1} columns",
                              p.n, p.nr)
                    .str());

  SmallVector<const MemoryLevelDesc *> caches;
  for (const MemoryLevelDesc &level : chip.memoryLevels)
    if (level.kind == MemoryKind::Cache)
      caches.push_back(&level);
  llvm::sort(caches, [](auto *x, auto *y) {
    return x->capacityBytes < y->capacityBytes;
  });
  if (caches.empty())
    return skip("the target states no caches to block for");
  auto budget = [&](size_t i) {
    const MemoryLevelDesc *level = caches[std::min(i, caches.size() - 1)];
    return static_cast<int64_t>(kCacheShare * level->capacityBytes);
  };
  auto alignUp = [](int64_t x, int64_t a) -> int64_t {
    return llvm::divideCeil(x, a) * a;
  };
  // KC: the B micro-panel KC x NR in the innermost cache, together with the
  // A micro-panel MR x KC that streams through it (B alone in L1 was evicted
  // by A's stream and the micro-kernel waited on B's loads).
  p.kc = std::max<int64_t>(1, int64_t(kL1Share * caches[0]->capacityBytes) /
                                  ((p.nr + p.mr) * elemBytes) / 16 * 16);
  // A blocked K shorter than kMinBlockedK (a convolution over an RGB input)
  // takes in the K loops outside it, innermost first: C is then read and
  // written once per KC block instead of once per window position. Longer
  // ones are not flattened: the packing would pay a division per element.
  while (p.k < kMinBlockedK && !dims.kOuter.empty()) {
    unsigned dim = dims.kOuter.pop_back_val();
    dims.kFlat.insert(dims.kFlat.begin(), dim);
    p.k *= ranges[dim];
  }
  // A is read in place when its rows run along the blocked K with unit
  // stride: its last index is the blocked K loop alone, which no other index
  // uses (see GemmPlan::directA).
  AffineMap mapA = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
  auto lastA = dyn_cast<AffineDimExpr>(mapA.getResults().back());
  p.directA = dims.kFlat.empty() && lastA &&
              lastA.getPosition() == dims.kInner &&
              llvm::none_of(mapA.getResults().drop_back(), [&](AffineExpr e) {
                return e.isFunctionOfDim(dims.kInner);
              });
  if (!p.directA)
    setAlongM(op, dims, ranges, p);
  // K blocks of equal length (768 = 3 x 256, not 272 + 272 + 224).
  p.kc = std::min(
      p.k, alignUp(llvm::divideCeil(p.k, llvm::divideCeil(p.k, p.kc)), 16));
  // NC: the B panel KC x NC in the outermost cache.
  int64_t ncCache = std::max<int64_t>(p.nr, budget(2) / (p.kc * elemBytes));
  p.nc = std::max(p.nr, std::min(ncCache / p.nr * p.nr, alignUp(p.n, p.nr)));
  int64_t ncPanels = llvm::divideCeil(std::min(p.nc, p.n), p.nr);
  // All of K's packed B for the NC block in the per-core cache: allK.
  int64_t kTotal = alignUp(p.k, p.kc);
  for (unsigned d : dims.kOuter)
    kTotal *= ranges[d];
  p.allK = kTotal * ncPanels * p.nr * elemBytes <= budget(1);
  p.packWhole = isPackedWhole(op, dims, p);
  if (p.packWhole && !p.allK && p.directA) {
    // N-parallel: NC as wide as the per-core cache holds all of K for, and
    // narrow enough for kMinParallelBlocks tasks. Not with a packed A: each
    // task would pack all of it again (DenseNet's 1x1 convolutions over
    // 7x7 pixels ran 5% slower).
    int64_t ncFit = budget(1) / (kTotal * elemBytes) / p.nr * p.nr;
    int64_t ncTasks = alignUp(llvm::divideCeil(p.n, kMinParallelBlocks), p.nr);
    int64_t nc = std::max(p.nr, std::min(ncFit, ncTasks));
    p.packWhole = p.n % nc == 0;
    if (p.packWhole) {
      p.nc = nc;
      ncPanels = p.nc / p.nr;
      p.nParallel = p.allK = true;
    }
  }
  // MC: the A block MC x KC in the next cache, at most M / kMinParallelBlocks.
  // (Fewer, taller M blocks with more N groups keep B micro-panels in L1
  // longer, but every group packs its A block again, element by element:
  // BERT-base at batch 1 ran 20% slower that way.)
  int64_t mcCache = std::max<int64_t>(p.mr, budget(1) / (p.kc * elemBytes));
  int64_t mcParallel = llvm::divideCeil(p.m, kMinParallelBlocks);
  // N-parallel tasks run all of M: every M block reads the packed B again.
  p.mc = alignUp(p.nParallel ? mcCache : std::min(mcCache, mcParallel), p.mr);
  p.mc = std::max(p.mr, std::min(p.mc, alignUp(p.m, p.mr)));
  // Fewer M blocks than kMinParallelBlocks: split N's panels too.
  int64_t mBlocks = llvm::divideCeil(p.m, p.mc);
  int64_t wantedGroups =
      p.nParallel ? 1 : llvm::divideCeil(kMinParallelBlocks, mBlocks);
  p.groupPanels = llvm::divideCeil(ncPanels, std::min(ncPanels, wantedGroups));
  p.groups = llvm::divideCeil(ncPanels, p.groupPanels);
  int64_t batchTasks = 1;
  for (unsigned d : dims.batch)
    batchTasks *= ranges[d];
  p.batchParallel = batchTasks >= kMinParallelBlocks;

  ArrayRef<ComputeLevelDesc> levels = chip.computeLevels;
  const ComputeLevelDesc &level = levels[levels.size() > 1 ? 1 : 0];
  GemmBuilder builder(op, dims, p);
  // C's fill goes into the first K block's stores (A and B must not be C:
  // the fill would change them). Found before the statements between `op`
  // and its epilogue move above `op` (they do not touch C).
  std::optional<std::pair<affine::AffineForOp, Value>> fill;
  if (aMem != cMem && bMem != cMem)
    fill = findInitialFill(op, cMem);
  linalg::GenericOp epilogue = findFusableEpilogue(op);
  if (epilogue) {
    // The epilogue runs inside the kernel, at `op`: the buffers and constants
    // that S2 placed between the two (operand-free) must be defined before.
    while (op->getNextNode() != epilogue)
      op->getNextNode()->moveBefore(op);
    builder.setEpilogue(epilogue);
  }
  builder.setLevel(
      StringAttr::get(op->getContext(), stringifyComputeLevelKind(level.kind)));
  if (fill)
    builder.setInitialValue(fill->second);
  builder.build();
  if (fill) {
    explain(op, "matrix units: C's fill folded into the first K block, which "
                "stores without reading C");
    fill->first->erase();
  }
  explain(op,
          llvm::formatv(
              "matrix units: {0} MxNxK {1}x{2}x{3} -> {4} register tile "
              "{5}x{6} ({7} accumulators of {8} registers), KC={9} "
              "({10}), MC={11} ({12}), NC={13} ({14}), {15} M blocks x "
              "{16} N groups (>= {17} tasks){19}, A {20}, {21}{22}, on "
              "level '{18}'",
              op->getName(), p.m, p.n, p.k, unit->name, p.mr, p.nr,
              p.mr * kTileRowVectors, vectorRegs, p.kc, caches[0]->name, p.mc,
              caches[std::min<size_t>(1, caches.size() - 1)]->name, p.nc,
              caches[std::min<size_t>(p.nParallel ? 1 : 2, caches.size() - 1)]
                  ->name,
              mBlocks, p.groups, kMinParallelBlocks, level.name,
              p.batchParallel ? ", the batch loops as the tasks"
              : p.nParallel   ? ", the NC blocks as the tasks"
                              : "",
              p.directA   ? "read in place"
              : p.aAlongM ? "packed MR rows per load"
                          : "packed",
              p.allK ? "all K blocks per task" : "one K block per task",
              p.packWhole ? ", B packed whole along its rows" : ""));
  if (epilogue) {
    explain(epilogue,
            llvm::formatv("matrix units: epilogue of {0} ops fused "
                          "into the micro-kernel's final stores",
                          epilogue.getBlock()->getOperations().size() - 1));
    epilogue->erase();
  }
  op->erase();
}

/// Tags `op` with the chip's cooperative unit for S4 when its operands
/// have the layouts a warp-level kernel reads (see the pass description).
bool PBMapMatrixUnitsPass::tagForCooperativeUnit(linalg::LinalgOp op,
                                                 const GemmDims &dims,
                                                 const ChipDesc &chip) {
  bool hasCooperativeUnits = llvm::any_of(chip.matrixUnits, [&](auto *unit) {
    return isCooperativeScope(unit->scope, warpgroupUnits);
  });
  if (!hasCooperativeUnits)
    return false;
  auto skip = [&](const Twine &why) {
    explain(op, "matrix units: " + op->getName().getStringRef() +
                    " not on a subgroup- or warpgroup-scope unit: " + why);
    return false;
  };
  Value aMem = op.getDpsInputOperand(0)->get();
  Value bMem = op.getDpsInputOperand(1)->get();
  Value cMem = op.getDpsInitOperand(0)->get();
  for (Value mem : {aMem, bMem, cMem}) {
    auto type = cast<MemRefType>(mem.getType());
    if (!type.getLayout().isIdentity() || !type.hasStaticShape())
      return skip("an operand has a non-identity layout or a dynamic shape");
  }
  // Every batch loop indexes A, B and C (an N loop that classify treats as
  // batch does not index A).
  AffineMap mapA = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
  AffineMap mapB = op.getMatchingIndexingMap(op.getDpsInputOperand(1));
  AffineMap mapC = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  SmallVector<unsigned> batch;
  for (AffineExpr e : mapC.getResults()) {
    unsigned d = cast<AffineDimExpr>(e).getPosition();
    if (llvm::is_contained(dims.batch, d))
      batch.push_back(d);
  }
  auto concat = [](ArrayRef<unsigned> x, ArrayRef<unsigned> y,
                   ArrayRef<unsigned> z) {
    SmallVector<unsigned> result(x);
    result.append(y.begin(), y.end());
    result.append(z.begin(), z.end());
    return result;
  };
  std::optional<SmallVector<unsigned>> b = getPlainDims(mapB),
                                       c = getPlainDims(mapC);
  if (!b || !c)
    return skip("B or C is not indexed by plain loop indices");
  if (*c != concat(batch, dims.m, {dims.n}))
    return skip("C is not indexed (batch, M, N)");
  // B: the batch loops, then every K loop and N (either order); the K loops'
  // order in B is the GEMM's K order and must end with A's innermost.
  SmallVector<unsigned> kLoops(dims.kOuter);
  kLoops.push_back(dims.kInner);
  ArrayRef<unsigned> bRest = ArrayRef<unsigned>(*b).drop_front(batch.size());
  if (ArrayRef<unsigned>(*b).take_front(batch.size()) != ArrayRef(batch) ||
      bRest.size() != kLoops.size() + 1)
    return skip("B is not indexed (batch, K..., N) or (batch, N, K...)");
  ArrayRef<unsigned> bK = bRest.back() == dims.n    ? bRest.drop_back()
                          : bRest.front() == dims.n ? bRest.drop_front()
                                                    : ArrayRef<unsigned>();
  if (bK.empty() ||
      !std::is_permutation(bK.begin(), bK.end(), kLoops.begin(),
                           kLoops.end()) ||
      bK.back() != dims.kInner)
    return skip("B is not indexed (batch, K..., N) or (batch, N, K...) "
                "with A's innermost K loop last");
  // A: the batch loops first, then any affine function of the M and K loops
  // (a convolution's oh * stride + kh) whose innermost is the plain
  // innermost K loop (contiguous copies).
  auto lastA =
      dyn_cast<AffineDimExpr>(mapA.getResult(mapA.getNumResults() - 1));
  if (!lastA || lastA.getPosition() != dims.kInner)
    return skip("A's innermost dimension is not its innermost K loop");
  for (auto [i, d] : llvm::enumerate(batch)) {
    auto expr = dyn_cast<AffineDimExpr>(mapA.getResult(i));
    if (!expr || expr.getPosition() != d)
      return skip("A is not indexed by the batch loops first");
  }
  for (unsigned d = 0, e = op.getNumLoops(); d < e; ++d)
    if (d == dims.n && mapA.isFunctionOfDim(d))
      return skip("A depends on the N loop");

  auto elementOf = [](Value v) {
    return getTargetElementType(cast<MemRefType>(v.getType()).getElementType());
  };
  std::optional<ElementType> at = elementOf(aMem), bt = elementOf(bMem),
                             ct = elementOf(cMem);
  // PyTorch allows tf32 for convolutions and for matmuls separately.
  bool tf32 =
      allowTF32 || (allowTF32Convolutions &&
                    isa<linalg::ConvolutionOpInterface>(op.getOperation()));
  const MatrixUnitDesc *unit =
      at && bt ? findCooperativeUnit(chip, *at, *bt, tf32, warpgroupUnits)
               : nullptr;
  if (!unit)
    return skip(
        at && *at == ElementType::F32 && !tf32
            ? "f32 operands (tf32 units need allow-tf32, or "
              "allow-tf32-convolutions for a convolution)"
            : "no subgroup- or warpgroup-scope unit for these element types");
  if (!ct || (*ct != ElementType::F32 && *ct != *at))
    return skip("C is neither f32 nor of A's element type");
  op->setAttr(PBDialect::kMatrixUnitAttrName,
              StringAttr::get(op->getContext(), unit->name));
  // An elementwise epilogue (bias, activation) reading the result once goes
  // into the kernel's final stores.
  if (linalg::GenericOp epilogue = findFusableEpilogue(op, /*permuted=*/true)) {
    epilogue->setAttr(PBDialect::kMatrixUnitEpilogueAttrName,
                      UnitAttr::get(op->getContext()));
    explain(epilogue,
            llvm::formatv("matrix units: epilogue of {0} ops left to S4 to "
                          "fuse into the stores of the {1} kernel",
                          epilogue.getBlock()->getOperations().size() - 1,
                          unit->name));
  }
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t flatM = 1;
  for (unsigned d : dims.m)
    flatM *= ranges[d];
  int64_t flatK = ranges[dims.kInner];
  for (unsigned d : dims.kOuter)
    flatK *= ranges[d];
  explain(op, llvm::formatv("matrix units: {0} MxNxK {1}x{2}x{3} on {4} "
                            "({5}), left to S4",
                            op->getName(), flatM, ranges[dims.n], flatK,
                            unit->name, stringifyMatrixScope(unit->scope)));
  return true;
}
