//===- GemmBuilder.h - Goto/BLIS GEMM code of pb-map-matrix-units -*- C++
//-*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The loop roles and sizes pb-map-matrix-units chooses for a contraction
// (GemmDims, GemmPlan: MapMatrixUnits.cpp) and the builder that emits the
// Goto/BLIS algorithm for them (GemmBuilder.cpp): packing, the parallel
// tasks, the register-tiled micro-kernel and the fused epilogue. Private to
// this library.
//
//===----------------------------------------------------------------------===//

#ifndef PB_TRANSFORMS_GEMMBUILDER_H
#define PB_TRANSFORMS_GEMMBUILDER_H

#include "pb/Target/TargetDesc.h"
#include "pb/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::pb::gemm {

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
  /// With `directA`: each task copies its A block's rows, one K block at a
  /// time, into a buffer whose rows are `aCopyStride` elements apart, where
  /// the micro-kernel reads them. A's own rows are a multiple of the
  /// innermost cache's set span apart (a row-major A 1024 floats wide:
  /// 4 KiB), so that a register tile's rows start in more lines of one set
  /// than the set holds and evict each other (pb-map-matrix-units'
  /// rowsShareCacheSets). The copy reads contiguous rows, a vector at a
  /// time; unlike a packed A it is not transposed.
  bool copyA = false;
  int64_t aCopyStride = 0;
  /// A's element offset is linear in the loops (a row-major A read through
  /// an affine map without divisions): `aOffset` + sum over the loops d of
  /// `aCoefficients[d]` x d. A packed A then adds a row's offset, computed
  /// once per row, to each K index's, computed once per K block into a
  /// table, instead of computing A's indices per element (an RGB stem's
  /// flattened (kh, kw, c): a division and a remainder per element).
  bool aLinear = false;
  int64_t aOffset = 0;
  SmallVector<int64_t> aCoefficients;
  /// And A's consecutive rows are consecutive in memory (an NCHW 1x1
  /// convolution's pixels, DenseNet's concatenated feature maps): its row
  /// panels are packed MR rows per vector load, one per K index, instead of
  /// element by element along K (a strided gather).
  bool aAlongM = false;
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
  /// The register tiles run row panel by row panel, each over the NR
  /// panels of its N group: with `directA`, a tile's rows of A come from
  /// memory once per K block and stay in L1 while the packed B panels
  /// stream from the per-core cache. The other order (each B micro-panel
  /// in L1 while the tiles' rows stream past) fetches A's rows, MR short
  /// strided streams, once per panel: 1.1-1.4x slower for x @ W^T with
  /// 1024-1576 rows.
  bool rowsOuter = false;
  /// B is a constant, packed at compile time (packConstantB): the code
  /// reads its panels from the packed global and packs nothing.
  bool constantB = false;
  /// The contraction runs inside a task of an enclosing parallel loop
  /// (pb-fuse-attention's blocks of rows): its own task loops are
  /// sequential, and M and N are not split for the cores.
  bool insideTask = false;
  /// Flattened M, and the extents of N and of the blocked K loop.
  int64_t m, n, k;
  /// M's extent is known only at run time (dynamic shapes): `m` is the
  /// number of rows the sizes above were chosen for, and the code takes
  /// the number of M blocks and every check of a row against M from the
  /// run-time extent.
  bool runTimeM = false;
  /// Likewise N (`n` planned, the NC blocks' number and N's edge at run
  /// time) and the blocked K (`k` planned, the KC blocks' number and K's
  /// edge at run time; then with no outer or flattened K loops, and B
  /// packed one K block at a time).
  bool runTimeN = false, runTimeK = false;
};

/// Where an operand's rows run contiguously: the position in its indexing
/// map of the first of several M loops (`dims.m`) that index consecutive
/// dimensions of the operand in their order, each one after the first over
/// the operand's whole extent, in a buffer with the identity layout; none
/// otherwise (one M loop, a convolution's window rows oh + kh, a transposed
/// order). A flattened row r then lies one row stride after row r - 1, as
/// in a two-dimensional operand: accessed through the M dimensions
/// collapsed, a register tile's rows share one base address (BERT's x @ W^T
/// over (batch, sequence) computed twelve row addresses of A and of C, each
/// from a division, live across the K loop).
std::optional<unsigned> contiguousRows(linalg::LinalgOp op, OpOperand *operand,
                                       const GemmDims &dims);
inline std::optional<unsigned> contiguousRowsOfA(linalg::LinalgOp op,
                                                 const GemmDims &dims) {
  return contiguousRows(op, op.getDpsInputOperand(0), dims);
}

/// The shape of B packed at compile time: N blocks x K blocks x panels x
/// KC x NR (`kBlocks`: the outer K loops' extents times the KC blocks).
SmallVector<int64_t> packedBShape(const GemmPlan &p, int64_t kBlocks);
/// The constant global (dense initial value, identity layout) that `mem`
/// reads, through reshapes, or null.
memref::GlobalOp findConstantGlobal(Value mem);
/// The row-major bytes of the elements of a global that findConstantGlobal
/// returned.
ArrayRef<char> getDenseBytes(memref::GlobalOp global);
/// A new private constant global, 64-byte aligned, named after `source`
/// with `suffix`, of `shape` x `element` holding the row-major `bytes`,
/// inserted into `symbols` (a packed copy of `source`).
memref::GlobalOp createPackedGlobal(memref::GlobalOp source, StringRef suffix,
                                    ArrayRef<int64_t> shape, Type element,
                                    ArrayRef<char> bytes, SymbolTable &symbols);
/// A new constant global holding `source`, `op`'s B, packed for the plan
/// (packedBShape; zero past N's and K's edges), inserted into `symbols`.
/// B's indices must be loops other than the batch loops (checked by
/// pb-map-matrix-units before it plans for a constant B).
memref::GlobalOp packConstantB(linalg::LinalgOp op, const GemmDims &dims,
                               const GemmPlan &p, memref::GlobalOp source,
                               SymbolTable &symbols);

/// Why `op` cannot run as a matrix-vector product (Gemv.cpp: B read once,
/// in place, along N or along K), or "" when it can: f32 buffers, static
/// sizes, no batch, split N or outer K loops, plain indices.
std::string checkGemv(linalg::LinalgOp op, const GemmDims &dims);
/// Emits `op` (checkGemv) as a matrix-vector product before `op` (which the
/// caller erases): `lanes`-lane vectors, at most `accumulators` vectors of
/// sums in registers, `fill` C's uniform value before it (the caller erases
/// the fill) or null, the tasks on compute level `level` (sequential
/// `insideTask`). Returns the plan in words.
std::string buildGemv(linalg::LinalgOp op, const GemmDims &dims, int64_t lanes,
                      int64_t accumulators, Value fill, StringAttr level,
                      bool insideTask);

/// The chip's thread-scope units for a x b -> c whose B holds K's
/// consecutive pairs or quads per column (VNNI): on tile registers
/// (OperandLayout TileRegisters, lowered as AMXTileMul) or vector dot
/// products (RegistersBroadcastGroups, X86VectorDot), in the chip's order
/// (TileGemm.cpp).
SmallVector<const MatrixUnitDesc *> findVNNIUnits(const ChipDesc &chip,
                                                  ElementType a, ElementType b,
                                                  ElementType c);
/// Why `op` cannot run on the unit `unit` (findVNNIUnits), or "" when it
/// can. With `onlyUnit` (the chip has no vector outer-product unit for
/// these types: i8) one smaller than the unit in M, N or K runs on it
/// padded rather than as scalar loops.
std::string checkTileGemm(linalg::LinalgOp op, const GemmDims &dims,
                          const MatrixUnitDesc &unit, const ChipDesc &chip,
                          bool onlyUnit);
/// Emits `op` on the unit before `op` (which the caller erases), with
/// `fill` C's uniform value before it (the caller erases the fill) or null,
/// the tasks on compute level `level`; returns the plan in words. With
/// `symbols`, a constant B is packed at compile time into a new global and
/// `packedSource` set to the original. `epilogue` (findFusableEpilogue's,
/// moved right after `op`, or null) is fused into the last stores of the
/// dot-product micro-kernels where they store C themselves (the caller
/// erases it); else it is set to null.
std::string buildTileGemm(linalg::LinalgOp op, const GemmDims &dims,
                          const MatrixUnitDesc &unit, const ChipDesc &chip,
                          bool onlyUnit, Value fill, StringAttr level,
                          SymbolTable *symbols, memref::GlobalOp &packedSource,
                          linalg::GenericOp &epilogue);

/// `epilogue` (findFusableEpilogue: loops over C's dimensions, C read with
/// the identity map) applied to `acc`, the `lanes` sums of C at `cIndex`
/// and the next lanes - 1 columns: C's element read as `acc`, each other
/// input's vector (or a broadcast element, where its innermost index is not
/// C's) read at its indices of `cIndex`, masked past its end unless
/// `inBounds`; the body's ops cloned on vectors. Returns the yielded vector.
Value applyEpilogueToVector(OpBuilder &b, Location loc,
                            linalg::GenericOp epilogue, Value cMem, Value acc,
                            ArrayRef<Value> cIndex, int64_t lanes,
                            bool inBounds);

/// Transposes the n x n matrix whose rows are the n-lane vectors `rows` in
/// registers: log2(n) rounds of two shuffles per pair of rows.
void transposeSquare(ImplicitLocOpBuilder &b, SmallVector<Value> &rows);

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
  /// B packed at compile time (GemmPlan::constantB): `global` has the
  /// shape packedBShape.
  void setPackedB(memref::GlobalOp global) { packedB = global; }
  /// True when `epilogue` is applied by a loop over a register tile's rows
  /// rather than to each of its sums in straight-line code.
  static bool rollsEpilogue(linalg::GenericOp epilogue);

private:
  /// The index constant `value`, created once, at the start of the
  /// function (where the canonicalizer would move it). One per use made 48k
  /// of the 144k lines of IR that pb-map-matrix-units left in
  /// efficientnet_b0's function; with this and createOrFold, 71k.
  Value idx(int64_t value) {
    Value &constant = indexConstants[value];
    if (!constant) {
      OpBuilder::InsertionGuard guard(b);
      Operation *scope = op->getParentWithTrait<OpTrait::IsIsolatedFromAbove>();
      b.setInsertionPointToStart(&scope->getRegion(0).front());
      constant = arith::ConstantIndexOp::create(b, value);
    }
    return constant;
  }
  /// `v` (a scalar or a vector of A's or B's element type) in C's element
  /// type: a mixed-precision GEMM (bf16 or f16 operands, an f32
  /// accumulator) widens its operands where it packs or copies them.
  Value widen(Value v);
  Value minIdx(Value lhs, int64_t rhs) {
    return b.createOrFold<arith::MinSIOp>(lhs, idx(rhs));
  }
  /// The extent of loop `dim`: a constant, or, where it is known only at
  /// run time, the size build() read from the operands.
  Value range(unsigned dim) {
    return ShapedType::isDynamic(ranges[dim]) ? runTimeRanges[dim]
                                              : idx(ranges[dim]);
  }
  /// Flattened M: a constant, or its run-time extent (GemmPlan::runTimeM).
  Value mExtent() { return p.runTimeM ? runTimeM : idx(p.m); }
  /// N (flattened) and the blocked K likewise.
  Value nExtent() { return p.runTimeN ? runTimeN : idx(p.n); }
  Value kExtent() { return p.runTimeK ? range(dims.kInner) : idx(p.k); }
  /// The KC blocks of the blocked K.
  Value kcBlocks() {
    return p.runTimeK ? b.createOrFold<arith::CeilDivSIOp>(kExtent(), idx(p.kc))
                      : idx(llvm::divideCeil(p.k, p.kc));
  }
  /// Whether the register tiles divide M and its blocks exactly (never
  /// known of a run-time M): no tile then needs row checks.
  bool tilesDivideM() const {
    return !p.runTimeM && p.m % p.mr == 0 && p.mc % p.mr == 0;
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
      loops[dim] = b.createOrFold<arith::RemUIOp>(flat, range(dim));
      flat = b.createOrFold<arith::DivUIOp>(flat, range(dim));
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
  /// `memref` with the M dimensions starting at `first` collapsed into one
  /// (see contiguousRows).
  Value collapseDims(Value memref, unsigned first);
  /// Loops over the tasks [0, uppers): a parallel loop on the chosen level,
  /// or plain loops inside a batch-parallel task. The insertion point moves
  /// into the innermost body; returns the induction variables.
  SmallVector<Value> taskLoops(ArrayRef<Value> uppers);
  /// The tasks (M blocks x N groups) of the NC block at `jc`, each running
  /// every K block over the packed B `bp` (K blocks x panels x KC x NR), or
  /// only K block `kbFixed` when given (`bp` then holds that block alone).
  void computeBlocks(Value bp, ArrayRef<Value> loops, Value jc, Value nc,
                     int64_t pcBlocks, Value kbFixed = nullptr);
  /// Copies the rows [ic, ic + mc) of A, K indices [pc, pc + kc), into
  /// `aCopy` (GemmPlan::copyA).
  void copyABlock(ArrayRef<Value> loops, Value ic, Value mc, Value pc,
                  Value kc);
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
  /// The run-time extents of the loops whose `ranges` are dynamic (null for
  /// the others), and flattened M's (GemmPlan::runTimeM), set by build().
  SmallVector<Value> runTimeRanges;
  Value runTimeM, runTimeN;
  StringAttr levelAttr;
  linalg::GenericOp epilogue;
  /// With `directA` and contiguousRowsOfA: A with its M dimensions
  /// collapsed into one, which the micro-kernel reads row by row, and that
  /// dimension's position.
  Value aRows;
  unsigned aRowsPos = 0;
  /// With `copyA`: the task's copy of its A block's rows for the current K
  /// block, and the block's first row.
  Value aCopy, aCopyRow0;
  /// Likewise C and the fused epilogue's output, when their rows are
  /// contiguous (null otherwise), and the position of their collapsed M.
  Value cRows, epilogueRows;
  unsigned cRowsPos = 0;
  /// An operand's indices `fullIndex` of flattened row `row`, as indices
  /// into that operand with its M dimensions collapsed at `pos` (aRows,
  /// cRows, epilogueRows).
  SmallVector<Value> rowIndex(ArrayRef<Value> fullIndex, Value row,
                              unsigned pos) {
    SmallVector<Value> index(fullIndex);
    index.erase(index.begin() + pos, index.begin() + pos + dims.m.size());
    index.insert(index.begin() + pos, row);
    return index;
  }
  /// True in the last K block, where the epilogue applies (set per block).
  Value lastK;
  /// C's value before the contraction, when a fill made it uniform.
  Value initialValue;
  /// True in the first K block (set per block, with initialValue).
  Value firstK;
  memref::GlobalOp packedB;
  DenseMap<int64_t, Value> indexConstants;
  /// The task's MR x NR buffer for a rolled epilogue (rollsEpilogue).
  Value epilogueTile;
  /// Inside a batch-parallel task, or the whole GEMM inside a task of an
  /// enclosing loop (GemmPlan::insideTask): the task loops below are serial.
  bool serialTasks = false;

  /// Whether a tile's columns are all inside N: on a full tile, and on
  /// every edge tile when the tiles divide N and its NC blocks (the edge is
  /// then M's alone, its rows guarded, its vectors read and written whole).
  bool columnsFit(bool fullTile) const { return fullTile || tilesDivideN(); }
  /// Whether the register tiles divide N and its NC blocks exactly (never
  /// known of a run-time N).
  bool tilesDivideN() const {
    return !p.runTimeN && p.n % p.nr == 0 && p.nc % p.nr == 0;
  }
  void storeTile(ArrayRef<Value> accs, ArrayRef<SmallVector<Value>> cIndex,
                 ArrayRef<Value> rows, bool fullTile, bool applyEpilogue);
  Value applyEpilogue(Value acc, ArrayRef<Value> cIndex, bool fullTile);
  /// Moves the insertion point into a new `scf.if` on `row` < M (an edge
  /// tile's rows past M are skipped); the caller guards the insertion point.
  void enterRowInsideM(Value row);
  /// Stores `value`, the vector at C's indices `index` in row `row`, into C
  /// or, with `withEpilogue`, into the epilogue's output; masked on an edge
  /// tile whose columns may pass N.
  void storeVector(Value value, ArrayRef<Value> index, Value row, bool fullTile,
                   bool withEpilogue);
  /// Stores a tile's sums through an epilogue applied by a loop over the
  /// tile's rows (rollsEpilogue), in the last K block.
  void storeTileThroughRolledEpilogue(ArrayRef<Value> accs,
                                      ArrayRef<Value> loopsIn, Value i0,
                                      Value j0, bool fullTile);
};

} // namespace mlir::pb::gemm

#endif // PB_TRANSFORMS_GEMMBUILDER_H
