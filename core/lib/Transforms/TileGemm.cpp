//===- TileGemm.cpp - Contractions on VNNI matrix units (AMX, VDPBF16PS) --===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The GEMM code of pb-map-matrix-units for a thread-scope unit whose
// operands live in tile registers of their own (OperandLayout
// TileRegisters, lowered as `amx` ops: the .td's AMXTileMul). Such a unit
// multiplies an MU x KU tile of A by a KU x NU tile of B, whose rows hold
// K's consecutive pairs (quads for 8-bit types) per column, into an MU x NU
// accumulator tile; tiles are loaded from memory rows with a stride.
//
//   pack A -> Ap[batch][Mp][Kp]            (zeros past M and K; a generic)
//                                          (K: a convolution's (kh, kw, c))
//   pack B -> Bp[batch][Kp/V][Np][V]       (V = 4 bytes / element: rows
//                                          interleaved, or 32-bit groups
//                                          transposed, in registers; else
//                                          a generic; a constant B at
//                                          compile time)
//   parallel (batch, M blocks of MC, N blocks of NC):
//     for kc in [0, Kp) step KC:           KC: most or all of K
//       for j in the N block step NT x NU:
//         for i in the M block step MT x MU:
//           MT x NT accumulator tiles: zero (first K block) or from Cp
//           KC / KU steps, unrolled: MT A tiles, NT B tiles, MT x NT muls
//           accumulator tiles -> Cp[batch][Mp][Np]
//   C = Cp (+ C, or + C's fill, which then no longer runs)  (a generic)
//
// MT x NT is the largest accumulator block that the unit's operand
// registers hold with MT tiles of A and NT of B beside it (8 registers:
// 2 x 2). The accumulators never cross a block boundary (the K steps of a
// KC block are unrolled, the first block is peeled), so that no tile value
// is a block argument: LLVM configures the tile registers per function from
// the shapes of straight-line tile code. The packing and the final copy are
// linalg generics: S3's fusion, tiling, parallel marking and vectorization
// treat them like any other nest (the final copy fuses with an epilogue).
// A vector dot-product unit (OperandLayout RegistersBroadcastGroups,
// lowered as `x86vector.avx512.dot`: AVX512-BF16's VDPBF16PS) takes the same
// packing, tasks and final copy; in each KC block an MT x NT block of
// accumulator vectors (rows x vectors of 16 columns) is carried through a
// loop over K's pairs, A's pair broadcast as one 32-bit lane times B's
// packed row of 16 pairs (emitDotBlock; MT x NT from chooseBlocks).
//
// KC comes from the per-core cache (A's and B's sub-panels of a KC block,
// up to kMaxUnrolledSteps steps), MC from the same cache (A's block), and
// the blocks are split until there are kMinParallelBlocks tasks. A KC block
// spanning all of K keeps the accumulators in their tiles from the first
// product to the last: with KC from the innermost cache (256 of 2048), the
// accumulators went to memory and back 8 times and a 2048^3 GEMM ran at
// 430 GFLOP/s instead of 1090 on two Sapphire Rapids cores. B's sub-panel
// (KC x NT tiles) stays in that cache while A's rows pass it.
//
//===----------------------------------------------------------------------===//

#include "GemmBuilder.h"

#include "pb/Dialect/PBDialect.h"
#include "pb/Target/TargetDesc.h"
#include "pb/Transforms/Passes.h"

#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <cstring>
#include <numeric>

using namespace mlir;
using namespace mlir::pb;
using namespace mlir::pb::gemm;

/// The share of a cache that A's and B's sub-panels of a KC block may take
/// (the per-core cache for tiles, the innermost for dot products), and A's
/// block MC x KC (the per-core cache).
static constexpr double kCacheShare = 0.5;
/// The most K steps of a KC block, all unrolled (code size): 64 x 8 tile
/// ops.
static constexpr int64_t kMaxUnrolledSteps = 64;

SmallVector<const MatrixUnitDesc *>
mlir::pb::gemm::findVNNIUnits(const ChipDesc &chip, ElementType a,
                              ElementType b, ElementType c) {
  SmallVector<const MatrixUnitDesc *> units;
  for (const MatrixUnitDesc *unit : chip.matrixUnits)
    if (unit->scope == MatrixScope::ThreadScope &&
        ((unit->layout == OperandLayout::TileRegisters &&
          unit->lowering == MatrixLowering::AMXTileMul) ||
         (unit->layout == OperandLayout::RegistersBroadcastGroups &&
          (unit->lowering == MatrixLowering::X86VectorDot ||
           unit->lowering == MatrixLowering::AVX512VNNIDot))) &&
        unit->aType == a && unit->bType == b && unit->cType == c)
      units.push_back(unit);
  return units;
}

namespace {
/// Emits the tile GEMM of one contraction (see the file comment).
class TileGemmBuilder {
public:
  TileGemmBuilder(linalg::LinalgOp op, const GemmDims &dims,
                  const MatrixUnitDesc &unit, const ChipDesc &chip)
      : op(op), dims(dims), unit(unit), chip(chip), b(op.getLoc(), op),
        ranges(op.getStaticLoopRanges()) {}

  /// Why `op` cannot run on the unit, or "" when it can. With
  /// `onlyUnit` (the chip has no other unit for these types) contractions
  /// smaller than the unit in M, N or K run on it too, padded.
  std::string check(bool onlyUnit);
  /// Emits the tile GEMM before `op`; `fill` is C's uniform value before it
  /// (the caller erases the fill), or null. With `symbols`, a constant B is
  /// packed at compile time into a new global (`packedSource` is then set
  /// to the original). `epilogue` (findFusableEpilogue's, moved next to
  /// `op`) is applied in the dot-product micro-kernels' last stores where
  /// they store C directly (storesDirectly); else it is set to null and
  /// stays.
  std::string build(Value fill, StringAttr level, SymbolTable *symbols,
                    memref::GlobalOp &packedSource,
                    linalg::GenericOp &epilogue);

private:
  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, v); }
  /// `base` + `offset`.
  Value at(Value base, int64_t offset) {
    return offset ? b.createOrFold<arith::AddIOp>(base, idx(offset)) : base;
  }
  /// The indices (batch..., row, col) of a packed operand or of Cp.
  static SmallVector<Value> index(Value row, Value col, ArrayRef<Value> batch) {
    SmallVector<Value> indices(batch);
    indices.push_back(row);
    indices.push_back(col);
    return indices;
  }
  /// A parallel loop on `level` over the batch loops and `extents`; the
  /// insertion point moves into its body (the caller guards it). Returns
  /// its induction variables.
  SmallVector<Value> taskLoop(ArrayRef<int64_t> extents, StringAttr level) {
    SmallVector<Value> uppers;
    for (int64_t s : batchSizes)
      uppers.push_back(idx(s));
    for (int64_t s : extents)
      uppers.push_back(idx(s));
    SmallVector<Value> lowers(uppers.size(), idx(0)),
        steps(uppers.size(), idx(1));
    auto par = scf::ParallelOp::create(b, lowers, uppers, steps);
    par->setAttr(PBDialect::kLevelAttrName, level);
    b.setInsertionPointToStart(par.getBody());
    return llvm::to_vector(par.getInductionVars());
  }
  /// `mem`'s leading region of `sizes` (a view), then its dimensions
  /// `splits` maps split into the extents it maps them to (the M loops, the
  /// K loops).
  using Split = std::pair<unsigned, ArrayRef<int64_t>>;
  Value region(Value mem, ArrayRef<int64_t> sizes, ArrayRef<Split> splits);
  /// A generic over loops of `domain` sizes that stores `input` (read
  /// through `inputMap`) into `output` (identity map), combined by `body`.
  void
  copyGeneric(ArrayRef<int64_t> domain, Value input, AffineMap inputMap,
              Value output, AffineMap outputMap,
              function_ref<Value(OpBuilder &, Location, Value, Value)> body);
  /// `map` of the contraction's loops with each loop replaced by `exprs`.
  AffineMap remap(AffineMap map, ArrayRef<AffineExpr> exprs, unsigned numDims) {
    return map.replaceDimsAndSymbols(exprs, {}, numDims, 0);
  }
  /// Whether the unit is a vector dot product (X86VectorDot) rather than
  /// tile registers.
  bool isDot() const {
    return unit.lowering == MatrixLowering::X86VectorDot || isVNNI();
  }
  /// Whether the dot product is VPDPBUSD's u8 x s8: A's signed codes are
  /// offset by 128 and the sums corrected by 128 x B's column sums.
  bool isVNNI() const { return unit.lowering == MatrixLowering::AVX512VNNIDot; }
  /// The accumulator block MT x NT (in units): for tiles, the most
  /// accumulators that fit beside their rows of A and columns of B; for a
  /// dot product, the block of least estimated time over the padded M and N.
  void chooseBlocks();
  /// One KC block of the dot-product micro-kernels of a task: MT rows x NT
  /// vectors of accumulators in registers over a loop of K's groups, each
  /// step MT broadcasts of a group of A, NT vectors of B's packed rows and
  /// MT x NT dot products. With `storeC` the sums go to C itself
  /// (storeDirectly), else to the accumulated buffer `cp`.
  void emitDotBlock(Value ap, Value bp, Value cp, ArrayRef<Value> aBatchIvs,
                    ArrayRef<Value> bBatchIvs, ArrayRef<Value> batchIvs,
                    Value kc, Value i0, Value i1, Value j0, Value j1,
                    bool first, bool storeC);
  /// Whether the dot products can store C's elements themselves (and apply
  /// `epilogue`, when not null, on the way), instead of an accumulated
  /// buffer and a copy to C: K is one block (with several, the buffer
  /// carries the sums between them and storing C from the last one measured
  /// no faster), C's innermost index is N alone with unit stride, and the
  /// epilogue's maps are projected permutations.
  bool storesDirectly(Value cMem, linalg::GenericOp epilogue);
  /// The MT x NT vectors of sums at (i, j) into C: minus
  /// 128 x B's column sums (VPDPBUSD), plus C's fill or its old value, then
  /// through the epilogue into its output, or into C; rows past M skipped,
  /// columns past N masked.
  void storeDirectly(ArrayRef<Value> sums, Value i, Value j,
                     ArrayRef<Value> bBatchIvs, ArrayRef<Value> batchIvs);
  /// What storeDirectly needs: C, B's column sums (or null) and the
  /// epilogue (or null).
  struct {
    bool enabled = false;
    Value cMem, sums;
    linalg::GenericOp epilogue;
  } direct;
  /// C's elements from the dot products' sums `sum` (a scalar or a vector),
  /// for the copy to C and for storeDirectly alike: minus 128 x
  /// `columnSum` (VPDPBUSD; null otherwise), plus C's fill, or C's value
  /// before (read by `old`, only then) where the contraction has none; as
  /// they are after a zero fill.
  Value finishSum(OpBuilder &nb, Location loc, Value sum, Value columnSum,
                  function_ref<Value()> old);
  /// C's uniform value before the contraction, or null (C's old values
  /// count then); zeroFill: that value is zero.
  Value cFill;
  bool zeroFill = false;
  /// One KC block of the micro-kernels of a task (`aBatchIvs`,
  /// `bBatchIvs`: the batch indices of A's and B's packed rows, those of the
  /// batch loops that index them; `batchIvs`: all, C's).
  void emitKBlock(Value ap, Value bp, Value cp, ArrayRef<Value> aBatchIvs,
                  ArrayRef<Value> bBatchIvs, ArrayRef<Value> batchIvs, Value kc,
                  Value i0, Value i1, Value j0, Value j1, bool first);
  /// Packs B into `bRows`, its (batch..., K / V, Np x V) view, with vector
  /// loads of V of its rows along N, interleaved by a shuffle and stored as
  /// one row of `bRows`, in tasks over (batch..., K / V) on `level`. Only
  /// where B's innermost index is the N loop alone and V is 2 or 4; returns
  /// false (and emits nothing) otherwise.
  bool packBRows(Value bMem, Value bRows, StringAttr level);
  /// Packs B into `bRows` where B's innermost index is the K loop alone
  /// (x @ W^T, k^T of attention scores): B read as 32-bit groups of V
  /// elements along K, lanes x lanes of them transposed in registers, in
  /// tasks over (batch..., blocks of `lanes` groups). Only where N and
  /// K / V are multiples of the lanes; returns false otherwise.
  bool packBTransposed(Value bMem, Value bRows, StringAttr level);
  /// Whether the tiles read A itself: its indices are the batch loops, M
  /// (one loop) and K (one loop of extent > 1) in that order, its layout is
  /// the identity, M and K need no padding (Mp = M, Kp = K), and its rows
  /// do not crowd one set of the innermost cache (`l1` bytes): a tile's 16
  /// rows K x 2 bytes apart (K = 2048: 4 KiB) that start in fewer than
  /// 16 / (ways / 2) distinct sets evict each other.
  bool readsAInPlace(int64_t l1);
  /// The constant global whose values are B, when its indices are plain
  /// loops; else null.
  memref::GlobalOp constantB();
  /// A new constant global of B packed as the tiles read it, (B's batch
  /// indices...) x (Kp / V) x (Np x V), zero past K and N. For VPDPBUSD,
  /// also B's column sums, (B's batch indices...) x Np of i32, into
  /// `constantSums`.
  memref::GlobalOp packConstantB(memref::GlobalOp source, SymbolTable &symbols);
  /// B's column sums, computed at compile time with its packing.
  memref::GlobalOp constantSums;

  linalg::LinalgOp op;
  const GemmDims &dims;
  const MatrixUnitDesc &unit;
  const ChipDesc &chip;
  ImplicitLocOpBuilder b;
  SmallVector<int64_t> ranges;
  // Sizes: the flattened M, N and K, their padded extents, the batch
  // extents, the K elements per 32-bit VNNI group, the accumulator block
  // MT x NT (in tiles) and the KC, MC and NC blocks.
  int64_t m = 1, n = 0, k = 0, mp = 0, np = 0, kp = 0, vnni = 0, mt = 0, nt = 0,
          kc = 0, mc = 0, nc = 0;
  /// Elements past the padded extents that keep the rows of Ap, of Bp's
  /// (K / V, Np x V) view and of Cp one cache line off a multiple of the
  /// cache's set span: 16 tile rows 4 KiB apart (Kp = 2048 bf16) map to one
  /// L1 set and evict each other.
  int64_t padA = 0, padB = 0, padC = 0;
  SmallVector<int64_t> batchSizes;
  /// The positions in dims.batch of the batch loops that index A, and B: a
  /// projection split into heads by a fused transpose has a head loop that
  /// indexes B and C only (A's packed rows are then shared by the heads).
  SmallVector<unsigned> aBatch, bBatch;
  /// The extents of the batch loops at `which` (positions in dims.batch),
  /// then `tail`.
  SmallVector<int64_t> batchShape(ArrayRef<unsigned> which,
                                  ArrayRef<int64_t> tail) const {
    SmallVector<int64_t> shape;
    for (unsigned i : which)
      shape.push_back(batchSizes[i]);
    shape.append(tail.begin(), tail.end());
    return shape;
  }
  static SmallVector<Value> pick(ArrayRef<Value> ivs,
                                 ArrayRef<unsigned> which) {
    SmallVector<Value> picked;
    for (unsigned i : which)
      picked.push_back(ivs[i]);
    return picked;
  }
  /// The K loops, flattened row-major in this order into the GEMM's K (a
  /// convolution's kh, kw, c: the outer ones, then A's innermost), and
  /// their extents.
  SmallVector<unsigned> kLoops;
  SmallVector<int64_t> kSizes;
  /// Sets `exprs`' K loops from `flat`, an expression of the flattened K.
  void setKExprs(SmallVector<AffineExpr> &exprs, AffineExpr flat) {
    int64_t inner = 1;
    for (int i = kLoops.size() - 1; i >= 0; --i) {
      AffineExpr e = inner == 1 ? flat : flat.floorDiv(inner);
      exprs[kLoops[i]] = i == 0 ? e : e % kSizes[i];
      inner *= kSizes[i];
    }
  }
};
} // namespace

std::string TileGemmBuilder::check(bool onlyUnit) {
  for (Value v : op->getOperands()) {
    auto type = dyn_cast<MemRefType>(v.getType());
    if (!type || !type.hasStaticShape())
      return "an operand has a dynamic shape";
  }
  if (!dims.nOuter.empty() || !dims.kFlat.empty())
    return "N or K is flattened over several loops";
  // Its packing and tasks would be parallel loops nested in the enclosing
  // one's tasks (pb-fuse-attention's blocks).
  if (op->getParentOfType<scf::ParallelOp>() ||
      op->getParentOfType<affine::AffineParallelOp>())
    return "inside a task of an enclosing parallel loop";
  for (unsigned d : dims.m)
    m *= ranges[d];
  n = ranges[dims.n];
  kLoops.assign(dims.kOuter.begin(), dims.kOuter.end());
  kLoops.push_back(dims.kInner);
  k = 1;
  for (unsigned d : kLoops) {
    kSizes.push_back(ranges[d]);
    k *= ranges[d];
  }
  int64_t elemBits = cast<MemRefType>(op.getDpsInputOperand(0)->get().getType())
                         .getElementTypeBitWidth();
  vnni = 32 / elemBits;
  if (onlyUnit) {
    // Padded: tiles of zeros past M, N and K still beat scalar code.
  } else if (isDot()) {
    if (n < unit.n)
      return llvm::formatv("N ({0}) is narrower than the unit's {1} columns", n,
                           unit.n)
          .str();
  } else if (m < unit.m || n < unit.n || k < unit.k / 2)
    return llvm::formatv("M x N x K {0}x{1}x{2} is smaller than the unit's "
                         "{3}x{4}x{5} tile (in M or N) or half of it (in K)",
                         m, n, k, unit.m, unit.n, unit.k)
        .str();
  // A K that is no multiple of V is padded to one where no other unit takes
  // these types (int8): Kp's groups past K are zeros in packed A and B (A
  // is then packed: readsAInPlace wants Kp = K). Where the chip has a
  // vector FMA for them (bf16), its micro-kernel reads such a K as it is,
  // without the padded copy of A (an RGB stem's K = 147: 1.7 ms on the FMA
  // path against 2.2 ms padded onto VDPBF16PS in resnet50 at batch 1).
  if (k % vnni != 0 && !onlyUnit)
    return llvm::formatv("K ({0}) is not a multiple of the {1} elements that "
                         "share a 32-bit lane of B's tile (padded only where "
                         "no other unit takes these types)",
                         k, vnni)
        .str();
  if (unit.operandRegisters < 3)
    return "the unit states fewer than 3 operand registers";
  return "";
}

Value TileGemmBuilder::region(Value mem, ArrayRef<int64_t> sizes,
                              ArrayRef<Split> splits) {
  auto type = cast<MemRefType>(mem.getType());
  SmallVector<OpFoldResult> offsets(sizes.size(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizeAttrs, strides(sizes.size(), b.getIndexAttr(1));
  for (int64_t s : sizes)
    sizeAttrs.push_back(b.getIndexAttr(s));
  auto viewType = cast<MemRefType>(
      memref::SubViewOp::inferResultType(type, offsets, sizeAttrs, strides));
  Value view =
      memref::SubViewOp::create(b, viewType, mem, offsets, sizeAttrs, strides);
  if (llvm::all_of(splits,
                   [](auto &entry) { return entry.second.size() <= 1; }))
    return view;
  SmallVector<ReassociationIndices> reassociation;
  SmallVector<int64_t> shape;
  for (unsigned i = 0; i < sizes.size(); ++i) {
    ReassociationIndices group;
    const Split *split = llvm::find_if(
        splits, [&](const Split &candidate) { return candidate.first == i; });
    if (split != splits.end()) {
      for (int64_t s : split->second) {
        group.push_back(shape.size());
        shape.push_back(s);
      }
    } else {
      group.push_back(shape.size());
      shape.push_back(sizes[i]);
    }
    reassociation.push_back(group);
  }
  FailureOr<MemRefType> expanded = memref::ExpandShapeOp::computeExpandedType(
      viewType, shape, reassociation);
  assert(succeeded(expanded) && "a row-major region splits");
  return memref::ExpandShapeOp::create(b, *expanded, view, reassociation);
}

void TileGemmBuilder::copyGeneric(
    ArrayRef<int64_t> domain, Value input, AffineMap inputMap, Value output,
    AffineMap outputMap,
    function_ref<Value(OpBuilder &, Location, Value, Value)> body) {
  SmallVector<utils::IteratorType> iterators(domain.size(),
                                             utils::IteratorType::parallel);
  linalg::GenericOp::create(
      b, TypeRange(), ValueRange{input}, ValueRange{output},
      ArrayRef<AffineMap>{inputMap, outputMap}, iterators,
      [&](OpBuilder &nb, Location loc, ValueRange args) {
        linalg::YieldOp::create(nb, loc, body(nb, loc, args[0], args[1]));
      });
}

void TileGemmBuilder::emitKBlock(Value ap, Value bp, Value cp,
                                 ArrayRef<Value> aBatchIvs,
                                 ArrayRef<Value> bBatchIvs,
                                 ArrayRef<Value> batchIvs, Value kc0, Value i0,
                                 Value i1, Value j0, Value j1, bool first) {
  Type aElem = cast<MemRefType>(ap.getType()).getElementType();
  Type cElem = cast<MemRefType>(cp.getType()).getElementType();
  auto aTile = amx::TileType::get({unit.m, unit.k}, aElem);
  auto bTile = amx::TileType::get({unit.k / vnni, unit.n * vnni}, aElem);
  auto cTile = amx::TileType::get({unit.m, unit.n}, cElem);
  auto jLoop = scf::ForOp::create(b, j0, j1, idx(nt * unit.n));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(jLoop.getBody());
  auto iLoop = scf::ForOp::create(b, i0, i1, idx(mt * unit.m));
  b.setInsertionPointToStart(iLoop.getBody());
  Value i = iLoop.getInductionVar(), j = jLoop.getInductionVar();
  SmallVector<Value> acc(mt * nt);
  for (int64_t r = 0; r < mt; ++r)
    for (int64_t c = 0; c < nt; ++c)
      acc[r * nt + c] =
          first ? amx::TileZeroOp::create(b, cTile).getResult()
                : amx::TileLoadOp::create(
                      b, cTile, cp,
                      index(at(i, r * unit.m), at(j, c * unit.n), batchIvs))
                      .getResult();
  for (int64_t s = 0; s < kc / unit.k; ++s) {
    Value kk = at(kc0, s * unit.k);
    Value kRow = b.createOrFold<arith::DivUIOp>(kk, idx(vnni));
    SmallVector<Value> as, bs;
    for (int64_t r = 0; r < mt; ++r)
      as.push_back(amx::TileLoadOp::create(
          b, aTile, ap, index(at(i, r * unit.m), kk, aBatchIvs)));
    for (int64_t c = 0; c < nt; ++c) {
      Value col = b.createOrFold<arith::MulIOp>(at(j, c * unit.n), idx(vnni));
      bs.push_back(
          amx::TileLoadOp::create(b, bTile, bp, index(kRow, col, bBatchIvs)));
    }
    for (int64_t r = 0; r < mt; ++r)
      for (int64_t c = 0; c < nt; ++c)
        acc[r * nt + c] =
            isa<FloatType>(aElem)
                ? amx::TileMulFOp::create(b, cTile, as[r], bs[c],
                                          acc[r * nt + c])
                      .getResult()
                // Signed operands, as linalg's i8 contractions extend them.
                : amx::TileMulIOp::create(b, cTile, as[r], bs[c],
                                          acc[r * nt + c])
                      .getResult();
  }
  for (int64_t r = 0; r < mt; ++r)
    for (int64_t c = 0; c < nt; ++c)
      amx::TileStoreOp::create(
          b, cp, index(at(i, r * unit.m), at(j, c * unit.n), batchIvs),
          acc[r * nt + c]);
}

void TileGemmBuilder::chooseBlocks() {
  int64_t regs = unit.operandRegisters;
  if (!isDot()) {
    for (int64_t r = 1; r < regs; ++r)
      for (int64_t c = 1; c < regs; ++c)
        if (r * c + r + c <= regs && r * c > mt * nt) {
          mt = r;
          nt = c;
        }
    return;
  }
  // Dot products (and loads) issued per cycle: the chip's vector peak for
  // the operand type over one unit's operations per cycle, in quarters (a
  // host chip's peaks follow its measured clock and round to whole
  // GFLOP/s: the rate per cycle must not move with them); 1 where it
  // states none.
  double perCycle = 1;
  if (chip.costModel && chip.clockMHz > 0)
    if (int64_t peak = chip.costModel->getPeakGFLOPs(unit.aType, "vector"))
      perCycle = std::max(
          1.0, std::round(4.0 * peak * 1000.0 /
                          (chip.clockMHz * 2.0 * unit.m * unit.n * unit.k)) /
                   4.0);
  // A step of the K loop takes the longest of its MT x NT dot products, its
  // MT + NT loads, and the unit's latency (each accumulator's chain): the
  // block's time is the steps of all blocks over the padded M x N. The
  // registers hold the accumulators, NT vectors of B and a broadcast of A.
  double best = 0;
  for (int64_t c = 1; c < regs; ++c)
    for (int64_t r = 1; r * c + c + 1 <= regs; ++r) {
      double step = std::max(
          {r * c / perCycle, (r + c) / perCycle, double(unit.latencyCycles)});
      double time = double(llvm::divideCeil(m, r)) *
                    double(llvm::divideCeil(n, c * unit.n)) * step;
      if (!mt || time < best || (time == best && r * c > mt * nt)) {
        best = time;
        mt = r;
        nt = c;
      }
    }
}

void TileGemmBuilder::emitDotBlock(Value ap, Value bp, Value cp,
                                   ArrayRef<Value> aBatchIvs,
                                   ArrayRef<Value> bBatchIvs,
                                   ArrayRef<Value> batchIvs, Value kc0,
                                   Value i0, Value i1, Value j0, Value j1,
                                   bool first, bool storeC) {
  Type aElem = cast<MemRefType>(ap.getType()).getElementType();
  Type cElem = cast<MemRefType>(op.getDpsInitOperand(0)->get().getType())
                   .getElementType();
  int64_t lanes = unit.n;
  auto accType = VectorType::get({lanes}, cElem);
  auto groupsType = VectorType::get({lanes * vnni}, aElem);
  auto groupType = VectorType::get({vnni}, aElem);
  auto wordType = VectorType::get({1}, b.getI32Type());
  auto wordsType = VectorType::get({lanes}, b.getI32Type());
  auto jLoop = scf::ForOp::create(b, j0, j1, idx(nt * lanes));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(jLoop.getBody());
  auto iLoop = scf::ForOp::create(b, i0, i1, idx(mt));
  b.setInsertionPointToStart(iLoop.getBody());
  Value i = iLoop.getInductionVar(), j = jLoop.getInductionVar();
  SmallVector<Value> acc;
  Value zeroAcc;
  if (first)
    zeroAcc = arith::ConstantOp::create(b, accType, b.getZeroAttr(accType));
  for (int64_t r = 0; r < mt; ++r)
    for (int64_t c = 0; c < nt; ++c)
      acc.push_back(first ? zeroAcc
                          : vector::LoadOp::create(
                                b, accType, cp,
                                index(at(i, r), at(j, c * lanes), batchIvs))
                                .getResult());
  auto kLoop = scf::ForOp::create(b, kc0, at(kc0, kc), idx(vnni), acc);
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(kLoop.getBody());
    Value kk = kLoop.getInductionVar();
    Value kRow = b.createOrFold<arith::DivUIOp>(kk, idx(vnni));
    // A's group (K's consecutive pair) of row r in every 32-bit lane.
    SmallVector<Value> as, bs;
    for (int64_t r = 0; r < mt; ++r) {
      Value group = vector::LoadOp::create(b, groupType, ap,
                                           index(at(i, r), kk, aBatchIvs));
      Value word = vector::ExtractOp::create(
          b, vector::BitCastOp::create(b, wordType, group), int64_t(0));
      if (isVNNI()) // s8 -> u8: + 128 in each byte.
        word = arith::XOrIOp::create(
            b, word,
            arith::ConstantIntOp::create(b, b.getI32Type(), 0x80808080));
      as.push_back(vector::BitCastOp::create(
          b, groupsType, vector::BroadcastOp::create(b, wordsType, word)));
    }
    for (int64_t c = 0; c < nt; ++c) {
      Value col = b.createOrFold<arith::MulIOp>(at(j, c * lanes), idx(vnni));
      bs.push_back(vector::LoadOp::create(b, groupsType, bp,
                                          index(kRow, col, bBatchIvs)));
    }
    SmallVector<Value> next(kLoop.getRegionIterArgs());
    for (int64_t r = 0; r < mt; ++r)
      for (int64_t c = 0; c < nt; ++c)
        next[r * nt + c] =
            isVNNI() ? LLVM::CallIntrinsicOp::create(
                           b, accType, b.getStringAttr(unit.intrinsic),
                           ValueRange{next[r * nt + c], as[r], bs[c]})
                           .getResult(0)
                     : x86vector::DotBF16Op::create(
                           b, accType, next[r * nt + c], as[r], bs[c])
                           .getResult();
    scf::YieldOp::create(b, next);
  }
  auto storeToBuffer = [&] {
    for (int64_t r = 0; r < mt; ++r)
      for (int64_t c = 0; c < nt; ++c)
        vector::StoreOp::create(b, kLoop.getResult(r * nt + c), cp,
                                index(at(i, r), at(j, c * lanes), batchIvs));
  };
  if (!storeC)
    return storeToBuffer();
  storeDirectly(SmallVector<Value>(kLoop.getResults()), i, j, bBatchIvs,
                batchIvs);
}

bool TileGemmBuilder::storesDirectly(Value cMem, linalg::GenericOp epilogue) {
  auto onUnitStride = [](Value mem) {
    auto type = dyn_cast<MemRefType>(mem.getType());
    SmallVector<int64_t> strides;
    int64_t offset;
    return type && type.getRank() > 0 &&
           succeeded(type.getStridesAndOffset(strides, offset)) &&
           strides.back() == 1;
  };
  AffineMap cMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  auto last = dyn_cast<AffineDimExpr>(cMap.getResult(cMap.getNumResults() - 1));
  if (!isDot() || kp != kc || !onUnitStride(cMem) || !last ||
      last.getPosition() != dims.n ||
      llvm::any_of(cMap.getResults().drop_back(),
                   [&](AffineExpr e) { return e.isFunctionOfDim(dims.n); }))
    return false;
  if (!epilogue)
    return true;
  return onUnitStride(epilogue.getDpsInitOperand(0)->get()) &&
         llvm::all_of(epilogue.getIndexingMapsArray(), [](AffineMap map) {
           return map.isProjectedPermutation();
         });
}

void TileGemmBuilder::storeDirectly(ArrayRef<Value> sums, Value i, Value j,
                                    ArrayRef<Value> bBatchIvs,
                                    ArrayRef<Value> batchIvs) {
  int64_t lanes = unit.n;
  AffineMap cMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  auto accType = cast<VectorType>(sums.front().getType());
  // Every vector lies within N where the blocks tile it exactly.
  bool inBounds = np == n;
  for (int64_t r = 0; r < mt; ++r) {
    OpBuilder::InsertionGuard guard(b);
    Value row = at(i, r);
    if (mp != m) {
      auto rowIf = scf::IfOp::create(
          b, arith::CmpIOp::create(b, arith::CmpIPredicate::ult, row, idx(m)),
          /*withElseRegion=*/false);
      b.setInsertionPointToStart(rowIf.thenBlock());
    }
    // The contraction's loops at this row: the batch loops, then the M
    // loops unflattened from the row (the last M loop varies fastest).
    SmallVector<Value> loops(op.getNumLoops(), idx(0));
    for (auto [pos, d] : llvm::enumerate(dims.batch))
      loops[d] = batchIvs[pos];
    Value rest = row;
    for (int64_t mi = dims.m.size() - 1; mi >= 0; --mi) {
      unsigned d = dims.m[mi];
      if (mi == 0) {
        loops[d] = rest;
        break;
      }
      loops[d] = b.createOrFold<arith::RemUIOp>(rest, idx(ranges[d]));
      rest = b.createOrFold<arith::DivUIOp>(rest, idx(ranges[d]));
    }
    for (int64_t c = 0; c < nt; ++c) {
      Value col = at(j, c * lanes);
      loops[dims.n] = col;
      SmallVector<Value> cIndex = applyIndexingMap(b, b.getLoc(), cMap, loops);
      Value columnSums;
      if (direct.sums) {
        SmallVector<Value> sumsIndex(bBatchIvs);
        sumsIndex.push_back(col);
        columnSums = vector::LoadOp::create(b, accType, direct.sums, sumsIndex);
      }
      Value value = finishSum(b, b.getLoc(), sums[r * nt + c], columnSums, [&] {
        Value pad = arith::ConstantOp::create(
            b, b.getZeroAttr(accType.getElementType()));
        return vector::TransferReadOp::create(b, accType, direct.cMem, cIndex,
                                              pad, ArrayRef<bool>{inBounds})
            .getResult();
      });
      Value target = direct.cMem;
      if (direct.epilogue) {
        value =
            applyEpilogueToVector(b, b.getLoc(), direct.epilogue, direct.cMem,
                                  value, cIndex, lanes, inBounds);
        target = direct.epilogue.getDpsInitOperand(0)->get();
      }
      vector::TransferWriteOp::create(b, value, target, cIndex,
                                      ArrayRef<bool>{inBounds});
    }
  }
}

Value TileGemmBuilder::finishSum(OpBuilder &nb, Location loc, Value sum,
                                 Value columnSum, function_ref<Value()> old) {
  Type type = sum.getType();
  if (columnSum)
    sum = arith::SubIOp::create(
        nb, loc, sum,
        arith::MulIOp::create(nb, loc, columnSum,
                              createScalarOrSplatConstant(nb, loc, type, 128)));
  if (zeroFill)
    return sum;
  Value base =
      !cFill ? old()
      : isa<VectorType>(type)
          ? vector::BroadcastOp::create(nb, loc, type, cFill).getResult()
          : cFill;
  if (isa<FloatType>(getElementTypeOrSelf(type)))
    return arith::AddFOp::create(nb, loc, sum, base);
  return arith::AddIOp::create(nb, loc, sum, base);
}

bool TileGemmBuilder::packBRows(Value bMem, Value bRows, StringAttr level) {
  OpOperand *bOperand = op.getDpsInputOperand(1);
  AffineMap mapB = op.getMatchingIndexingMap(bOperand);
  auto last = dyn_cast<AffineDimExpr>(mapB.getResult(mapB.getNumResults() - 1));
  if ((vnni != 2 && vnni != 4) || k % vnni != 0 || !last ||
      last.getPosition() != dims.n || bBatch.size() != batchSizes.size() ||
      llvm::any_of(dims.kOuter, [&](unsigned d) { return ranges[d] != 1; }))
    return false;
  for (AffineExpr e : mapB.getResults().drop_back())
    if (e.isFunctionOfDim(dims.n))
      return false;
  // The vector: as many lanes as the chip's vector holds, half of them per
  // row.
  Type elem = cast<MemRefType>(bMem.getType()).getElementType();
  int64_t lanes = std::max<int64_t>(2, chip.vectorWidthBits /
                                           elem.getIntOrFloatBitWidth() / vnni);
  auto rowType = VectorType::get({lanes}, elem);
  SmallVector<int64_t> interleave;
  for (int64_t i = 0; i < lanes; ++i)
    interleave.append({i, i + lanes});
  unsigned nb = batchSizes.size();
  OpBuilder::InsertionGuard guard(b);
  SmallVector<Value> ivs = taskLoop({k / vnni}, level);
  auto columns = scf::ForOp::create(b, idx(0), idx(n), idx(lanes));
  b.setInsertionPointToStart(columns.getBody());
  Value column = columns.getInductionVar();
  bool inBounds = n % lanes == 0;
  Value zero = arith::ConstantOp::create(b, elem, b.getZeroAttr(elem));
  SmallVector<Value> rows;
  for (int64_t r = 0; r < vnni; ++r) {
    SmallVector<Value> loops(op.getNumLoops(), idx(0));
    for (auto [i, d] : llvm::enumerate(dims.batch))
      loops[d] = ivs[i];
    Value kRow = b.createOrFold<arith::MulIOp>(ivs[nb], idx(vnni));
    loops[dims.kInner] = r ? b.createOrFold<arith::AddIOp>(kRow, idx(r)) : kRow;
    loops[dims.n] = column;
    SmallVector<Value> index = applyIndexingMap(b, b.getLoc(), mapB, loops);
    rows.push_back(vector::TransferReadOp::create(b, rowType, bMem, index, zero,
                                                  ArrayRef<bool>{inBounds}));
  }
  // Rows 0 and 1 (and 2 and 3) interleaved element by element; four rows
  // then as pairs of those: each column's V elements side by side.
  Value pairs = vector::ShuffleOp::create(b, rows[0], rows[1], interleave);
  if (vnni == 4) {
    Value high = vector::ShuffleOp::create(b, rows[2], rows[3], interleave);
    SmallVector<int64_t> quads;
    for (int64_t i = 0; i < lanes; ++i)
      quads.append(
          {2 * i, 2 * i + 1, 2 * lanes + 2 * i, 2 * lanes + 2 * i + 1});
    pairs = vector::ShuffleOp::create(b, pairs, high, quads);
  }
  SmallVector<Value> out(ivs.begin(), ivs.begin() + nb + 1);
  out.push_back(b.createOrFold<arith::MulIOp>(column, idx(vnni)));
  // Np, a multiple of the accumulator block's columns, and the padding past
  // it normally hold the last vector's lanes past N.
  vector::TransferWriteOp::create(
      b, pairs, bRows, out,
      ArrayRef<bool>{static_cast<int64_t>(llvm::alignTo(n, lanes)) <=
                     np + padB});
  return true;
}

bool TileGemmBuilder::packBTransposed(Value bMem, Value bRows,
                                      StringAttr level) {
  OpOperand *bOperand = op.getDpsInputOperand(1);
  AffineMap mapB = op.getMatchingIndexingMap(bOperand);
  auto last = dyn_cast<AffineDimExpr>(mapB.getResult(mapB.getNumResults() - 1));
  int64_t lanes = chip.vectorWidthBits / 32;
  if (!last || last.getPosition() != dims.kInner || lanes < 2 ||
      bBatch.size() != batchSizes.size() || n % lanes != 0 || k % vnni != 0 ||
      (k / vnni) % lanes != 0 ||
      llvm::any_of(dims.kOuter, [&](unsigned d) { return ranges[d] != 1; }))
    return false;
  for (AffineExpr e : mapB.getResults().drop_back())
    if (e.isFunctionOfDim(dims.kInner))
      return false;
  Type elem = cast<MemRefType>(bMem.getType()).getElementType();
  auto groupsType = VectorType::get({lanes * vnni}, elem);
  auto wordsType = VectorType::get({lanes}, b.getI32Type());
  unsigned nb = batchSizes.size();
  OpBuilder::InsertionGuard guard(b);
  SmallVector<Value> ivs = taskLoop({k / vnni / lanes}, level);
  Value group0 = b.createOrFold<arith::MulIOp>(ivs[nb], idx(lanes));
  auto columns = scf::ForOp::create(b, idx(0), idx(n), idx(lanes));
  b.setInsertionPointToStart(columns.getBody());
  Value column0 = columns.getInductionVar();
  Value zero = arith::ConstantOp::create(b, elem, b.getZeroAttr(elem));
  // Row r of the square: B's column n0 + r, K groups [g0, g0 + lanes).
  SmallVector<Value> square;
  for (int64_t r = 0; r < lanes; ++r) {
    SmallVector<Value> loops(op.getNumLoops(), idx(0));
    for (auto [i, d] : llvm::enumerate(dims.batch))
      loops[d] = ivs[i];
    loops[dims.kInner] = b.createOrFold<arith::MulIOp>(group0, idx(vnni));
    loops[dims.n] = b.createOrFold<arith::AddIOp>(column0, idx(r));
    SmallVector<Value> index = applyIndexingMap(b, b.getLoc(), mapB, loops);
    Value groups = vector::TransferReadOp::create(b, groupsType, bMem, index,
                                                  zero, ArrayRef<bool>{true});
    square.push_back(vector::BitCastOp::create(b, wordsType, groups));
  }
  transposeSquare(b, square);
  // Row j: K group g0 + j of the columns [n0, n0 + lanes), a row of Bp.
  for (int64_t j = 0; j < lanes; ++j) {
    SmallVector<Value> out(ivs.begin(), ivs.begin() + nb);
    out.push_back(b.createOrFold<arith::AddIOp>(group0, idx(j)));
    out.push_back(b.createOrFold<arith::MulIOp>(column0, idx(vnni)));
    vector::TransferWriteOp::create(
        b, vector::BitCastOp::create(b, groupsType, square[j]), bRows, out,
        ArrayRef<bool>{true});
  }
  return true;
}

bool TileGemmBuilder::readsAInPlace(int64_t l1) {
  OpOperand *aOperand = op.getDpsInputOperand(0);
  auto aType = cast<MemRefType>(aOperand->get().getType());
  if (!aType.getLayout().isIdentity() || mp != m || kp != k ||
      dims.m.size() != 1 ||
      llvm::any_of(dims.kOuter, [&](unsigned d) { return ranges[d] != 1; }))
    return false;
  SmallVector<unsigned> expected;
  for (unsigned i : aBatch)
    expected.push_back(dims.batch[i]);
  expected.append({dims.m.front(), dims.kInner});
  std::optional<SmallVector<unsigned>> plain =
      getPlainDims(op.getMatchingIndexingMap(aOperand));
  if (!plain || *plain != expected)
    return false;
  const MemoryLevelDesc *cache = nullptr;
  for (const MemoryLevelDesc &level : chip.memoryLevels)
    if (level.kind == MemoryKind::Cache) {
      cache = &level;
      break;
    }
  int64_t ways = cache && cache->ways > 0 ? cache->ways : 8;
  int64_t setSpan = l1 / ways;
  int64_t rowBytes = k * aType.getElementTypeBitWidth() / 8;
  // The rows read together (a tile's, or a dot-product block's) start at
  // setSpan / gcd(rowBytes, setSpan) distinct offsets of a set span, each
  // in a set of its own.
  int64_t rows = isDot() ? mt : unit.m;
  int64_t positions =
      std::min<int64_t>(rows, setSpan / std::gcd(rowBytes, setSpan));
  return rows / positions <= ways / 2;
}

memref::GlobalOp TileGemmBuilder::constantB() {
  OpOperand *bOperand = op.getDpsInputOperand(1);
  for (AffineExpr e : op.getMatchingIndexingMap(bOperand).getResults())
    if (!isa<AffineDimExpr>(e))
      return nullptr;
  return findConstantGlobal(bOperand->get());
}

memref::GlobalOp TileGemmBuilder::packConstantB(memref::GlobalOp source,
                                                SymbolTable &symbols) {
  OpOperand *bOperand = op.getDpsInputOperand(1);
  auto bType = cast<MemRefType>(bOperand->get().getType());
  AffineMap mapB = op.getMatchingIndexingMap(bOperand);
  // B's element offset per unit of each loop (row-major, identity layout;
  // the unit K loops outside kInner add nothing).
  SmallVector<int64_t> stride(op.getNumLoops(), 0);
  int64_t rowStride = 1;
  for (int r = mapB.getNumResults() - 1; r >= 0; --r) {
    stride[cast<AffineDimExpr>(mapB.getResult(r)).getPosition()] += rowStride;
    rowStride *= bType.getDimSize(r);
  }
  ArrayRef<char> data = getDenseBytes(source);
  size_t elemBytes = bType.getElementTypeBitWidth() / 8;
  // (B's batch indices..., Kp / V, (Np + pad) x V).
  SmallVector<int64_t> shape =
      batchShape(bBatch, {kp / vnni, (np + padB) * vnni});
  int64_t batches = 1, matrix = shape[shape.size() - 2] * shape.back();
  for (unsigned i : bBatch)
    batches *= batchSizes[i];
  std::vector<char> packed(batches * matrix * elemBytes, 0);
  // VPDPBUSD's column sums (isVNNI: B's elements are one byte).
  std::vector<int32_t> sums(isVNNI() ? batches * np : 0, 0);
  for (int64_t bi = 0; bi < batches; ++bi) {
    int64_t bOffset = 0;
    for (int64_t j = bBatch.size() - 1, rest = bi; j >= 0; --j) {
      bOffset += (rest % batchSizes[bBatch[j]]) * stride[dims.batch[bBatch[j]]];
      rest /= batchSizes[bBatch[j]];
    }
    for (int64_t kk = 0; kk < k; ++kk) {
      int64_t kOffset = bOffset;
      for (int64_t i = kLoops.size() - 1, rest = kk; i >= 0; --i) {
        kOffset += (rest % kSizes[i]) * stride[kLoops[i]];
        rest /= kSizes[i];
      }
      for (int64_t nn = 0; nn < n; ++nn) {
        int64_t from = kOffset + nn * stride[dims.n];
        int64_t to =
            bi * matrix + (kk / vnni) * shape.back() + nn * vnni + kk % vnni;
        std::memcpy(packed.data() + to * elemBytes,
                    data.data() + from * elemBytes, elemBytes);
        if (isVNNI())
          sums[bi * np + nn] += static_cast<int8_t>(data[from]);
      }
    }
  }
  if (isVNNI()) {
    ArrayRef<char> bytes(reinterpret_cast<const char *>(sums.data()),
                         sums.size() * sizeof(int32_t));
    constantSums = createPackedGlobal(
        source, "_column_sums", batchShape(bBatch, {np}),
        IntegerType::get(b.getContext(), 32), bytes, symbols);
  }
  return createPackedGlobal(source, "_tiles", shape, bType.getElementType(),
                            packed, symbols);
}

std::string TileGemmBuilder::build(Value fill, StringAttr level,
                                   SymbolTable *symbols,
                                   memref::GlobalOp &packedSource,
                                   linalg::GenericOp &epilogue) {
  MLIRContext *ctx = b.getContext();
  Value aMem = op.getDpsInputOperand(0)->get();
  Value bMem = op.getDpsInputOperand(1)->get();
  Value cMem = op.getDpsInitOperand(0)->get();
  Type aElem = cast<MemRefType>(aMem.getType()).getElementType();
  Type cElem = cast<MemRefType>(cMem.getType()).getElementType();
  unsigned numLoops = op.getNumLoops();
  for (unsigned d : dims.batch)
    batchSizes.push_back(ranges[d]);
  unsigned nb = batchSizes.size();
  for (auto [i, d] : llvm::enumerate(dims.batch)) {
    if (op.getMatchingIndexingMap(op.getDpsInputOperand(0)).isFunctionOfDim(d))
      aBatch.push_back(i);
    if (op.getMatchingIndexingMap(op.getDpsInputOperand(1)).isFunctionOfDim(d))
      bBatch.push_back(i);
  }
  unsigned naB = aBatch.size(), nbB = bBatch.size();
  int64_t batches = 1;
  for (int64_t s : batchSizes)
    batches *= s;

  int64_t elemBytes = llvm::divideCeil(
      cast<MemRefType>(aMem.getType()).getElementTypeBitWidth(), 8);

  // KC: for tiles, A's MT tile rows and B's NT tile columns of the KC block
  // in the per-core cache, a divisor of Kp in steps of the unit's K; for a
  // dot product, B's sub-panel (KC x NT vectors) and A's rows in the
  // innermost cache, where B's sub-panel stays while A's row blocks pass it
  // (all of K where one row block is all of M: nothing passes it).
  SmallVector<const MemoryLevelDesc *> caches;
  for (const MemoryLevelDesc &level : chip.memoryLevels)
    if (level.kind == MemoryKind::Cache)
      caches.push_back(&level);
  int64_t l1 = caches.empty() ? 32768 : caches[0]->capacityBytes;
  int64_t line = caches.empty() ? 64 : caches[0]->lineBytes;
  int64_t l2 = caches.size() < 2 ? l1 * 16 : caches[1]->capacityBytes;
  chooseBlocks();
  int64_t mBlock = mt * unit.m, nBlock = nt * unit.n;
  mp = llvm::alignTo(m, mBlock);
  np = llvm::alignTo(n, nBlock);
  int64_t cBytes = llvm::divideCeil(
      cast<MemRefType>(cMem.getType()).getElementTypeBitWidth(), 8);
  padA = line / elemBytes;
  padB = line / (vnni * elemBytes);
  padC = line / cBytes;
  int64_t steps = llvm::divideCeil(k, unit.k);
  int64_t maxSteps =
      isDot()
          ? (mp == mBlock ? steps
                          : std::clamp<int64_t>(
                                int64_t(kCacheShare * l1) /
                                    ((mBlock + nBlock) * unit.k * elemBytes),
                                1, steps))
          : std::clamp<int64_t>(int64_t(kCacheShare * l2) /
                                    ((mBlock + nBlock) * unit.k * elemBytes),
                                1, kMaxUnrolledSteps);
  // K blocks of equal length, Kp their sum: less than one step of the unit
  // past K per block (a divisor of K's steps would be 1 for a prime count:
  // KC = 32 for the 79 steps of K = 2500). A dot product's blocks, which
  // are loops, take a few more blocks where that divides K's steps (A then
  // needs no padding along K and may be read in place).
  int64_t kBlocks = llvm::divideCeil(steps, maxSteps);
  if (isDot())
    for (int64_t more = kBlocks; more <= 2 * kBlocks && more <= steps; ++more)
      if (steps % more == 0) {
        kBlocks = more;
        break;
      }
  kc = llvm::divideCeil(steps, kBlocks) * unit.k;
  kp = kBlocks * kc;
  // MC: A's block MC x KC in the next cache; then M and N blocks split
  // until there are enough tasks for the cores.
  int64_t mTiles = mp / mBlock, nTiles = np / nBlock;
  int64_t mcTiles = std::clamp<int64_t>(
      int64_t(kCacheShare * l2) / (mBlock * kc * elemBytes), 1, mTiles);
  int64_t ncTiles = nTiles;
  auto tasks = [&] {
    return batches * llvm::divideCeil(mTiles, mcTiles) *
           llvm::divideCeil(nTiles, ncTiles);
  };
  while (tasks() < kMinParallelBlocks && (mcTiles > 1 || ncTiles > 1)) {
    if (ncTiles >= mcTiles)
      ncTiles = llvm::divideCeil(ncTiles, 2);
    else
      mcTiles = llvm::divideCeil(mcTiles, 2);
  }
  mc = mcTiles * mBlock;
  nc = ncTiles * nBlock;

  // The packed operands and the accumulated C.
  auto shapeWith = [&](ArrayRef<int64_t> tail) {
    SmallVector<int64_t> shape(batchSizes);
    shape.append(tail.begin(), tail.end());
    return shape;
  };
  auto alloc = [&](ArrayRef<int64_t> shape, Type elem) {
    return memref::AllocOp::create(b, MemRefType::get(shape, elem),
                                   b.getI64IntegerAttr(64))
        .getResult();
  };
  // The micro-kernels store C themselves where they can (storesDirectly):
  // no accumulated buffer then.
  zeroFill = fill && (matchPattern(fill, m_AnyZeroFloat()) ||
                      matchPattern(fill, m_Zero()));
  cFill = zeroFill ? Value() : fill;
  if (!storesDirectly(cMem, epilogue))
    epilogue = nullptr;
  else
    direct = {true, cMem, Value(), epilogue};
  Value cp =
      direct.enabled ? Value() : alloc(shapeWith({mp, np + padC}), cElem);
  Value zero = arith::ConstantOp::create(b, aElem, b.getZeroAttr(aElem));
  auto identity = [&](unsigned count) {
    return AffineMap::getMultiDimIdentityMap(count, ctx);
  };
  auto pass = [](OpBuilder &, Location, Value in, Value) { return in; };

  // A read in place where its rows are the tiles' rows (see readsAInPlace);
  // else packed over (batch..., m..., k).
  SmallVector<int64_t> mSizes;
  for (unsigned d : dims.m)
    mSizes.push_back(ranges[d]);
  bool directA = readsAInPlace(l1);
  Value ap = directA ? aMem : alloc(batchShape(aBatch, {mp, kp + padA}), aElem);
  if (!directA && (mp != m || kp != k))
    linalg::FillOp::create(b, ValueRange{zero}, ValueRange{ap});
  if (!directA) {
    unsigned count = naB + dims.m.size() + kLoops.size();
    SmallVector<AffineExpr> exprs(numLoops, getAffineConstantExpr(0, ctx));
    for (auto [i, j] : llvm::enumerate(aBatch))
      exprs[dims.batch[j]] = getAffineDimExpr(i, ctx);
    for (auto [i, d] : llvm::enumerate(dims.m))
      exprs[d] = getAffineDimExpr(naB + i, ctx);
    for (auto [i, d] : llvm::enumerate(kLoops))
      exprs[d] = getAffineDimExpr(naB + dims.m.size() + i, ctx);
    SmallVector<int64_t> domain = batchShape(aBatch, mSizes);
    domain.append(kSizes);
    copyGeneric(domain, aMem,
                remap(op.getMatchingIndexingMap(op.getDpsInputOperand(0)),
                      exprs, count),
                region(ap, batchShape(aBatch, {m, k}),
                       {Split(naB, mSizes), Split(naB + 1, kSizes)}),
                identity(count), pass);
  }
  // Pack B over (batch..., k / V, n, V), or read it packed at compile time.
  memref::GlobalOp bSource = symbols ? constantB() : nullptr;
  Value bp, bRows;
  if (bSource) {
    memref::GlobalOp packed = packConstantB(bSource, *symbols);
    bRows =
        memref::GetGlobalOp::create(b, packed.getType(), packed.getSymName());
    packedSource = bSource;
  } else {
    bp = alloc(batchShape(bBatch, {kp / vnni, np + padB, vnni}), aElem);
    if (np != n || kp != k)
      linalg::FillOp::create(b, ValueRange{zero}, ValueRange{bp});
    // B's tiles read rows of Np x V elements: its (K / V, Np x V) view.
    SmallVector<ReassociationIndices> collapse;
    for (unsigned i = 0; i < nbB + 1; ++i)
      collapse.push_back({int64_t(i)});
    collapse.push_back({int64_t(nbB + 1), int64_t(nbB + 2)});
    bRows = memref::CollapseShapeOp::create(b, bp, collapse);
    // V of B's rows at a time, interleaved in registers, where its rows
    // run along N; squares of K groups x columns transposed in registers
    // where they run along K; else a generic over (batch..., k / V, n, V).
    if (!packBRows(bMem, bRows, level) &&
        !packBTransposed(bMem, bRows, level)) {
      unsigned count = nbB + 3;
      SmallVector<AffineExpr> exprs(numLoops, getAffineConstantExpr(0, ctx));
      for (auto [i, j] : llvm::enumerate(bBatch))
        exprs[dims.batch[j]] = getAffineDimExpr(i, ctx);
      setKExprs(exprs, getAffineDimExpr(nbB, ctx) * vnni +
                           getAffineDimExpr(nbB + 2, ctx));
      exprs[dims.n] = getAffineDimExpr(nbB + 1, ctx);
      AffineMap mapB = op.getMatchingIndexingMap(op.getDpsInputOperand(1));
      SmallVector<int64_t> domain = batchShape(bBatch, {k / vnni, n, vnni});
      if (k >= vnni)
        copyGeneric(domain, bMem, remap(mapB, exprs, count),
                    region(bp, domain, {}), identity(count), pass);
      // K's last, partial group: its rows into the first lanes of the
      // packed row k / V (the fill left the rest zero).
      if (int64_t rest = k % vnni) {
        setKExprs(exprs, getAffineConstantExpr(k / vnni * vnni, ctx) +
                             getAffineDimExpr(nbB + 2, ctx));
        SmallVector<int64_t> tail = batchShape(bBatch, {1, n, rest});
        auto bpType = cast<MemRefType>(bp.getType());
        SmallVector<OpFoldResult> offsets(bpType.getRank(), b.getIndexAttr(0));
        offsets[nbB] = b.getIndexAttr(k / vnni);
        SmallVector<OpFoldResult> sizes,
            strides(bpType.getRank(), b.getIndexAttr(1));
        for (int64_t extent : tail)
          sizes.push_back(b.getIndexAttr(extent));
        Value last = memref::SubViewOp::create(b, bp, offsets, sizes, strides);
        copyGeneric(tail, bMem, remap(mapB, exprs, count), last,
                    identity(count), pass);
      }
    }
  }

  // VPDPBUSD sums (A + 128) x B: B's column sums (over its packed rows,
  // zeros past K and N; a constant B's from the compiler), 128 x each,
  // come off in the copy to C.
  Value bSums;
  if (constantSums) {
    // Summed at compile time with B's packing.
    bSums = memref::GetGlobalOp::create(b, constantSums.getType(),
                                        constantSums.getSymName());
  } else if (isVNNI()) {
    Type i32 = b.getI32Type();
    bSums = alloc(batchShape(bBatch, {np}), i32);
    linalg::FillOp::create(b,
                           ValueRange{arith::ConstantIntOp::create(b, i32, 0)},
                           ValueRange{bSums});
    // Over B's packed (..., Kp / V, Np, V) in its order, (batch..., Kp / V,
    // np, V): each packed row adds to every column's sum (a column's sum
    // down its K groups would read one group per row, Np x V bytes apart).
    Value packed = bp;
    if (!packed) {
      SmallVector<ReassociationIndices> expand;
      for (unsigned i = 0; i < nbB + 1; ++i)
        expand.push_back({int64_t(i)});
      expand.push_back({int64_t(nbB + 1), int64_t(nbB + 2)});
      packed = memref::ExpandShapeOp::create(
          b, batchShape(bBatch, {kp / vnni, np + padB, vnni}), bRows, expand);
    }
    Value source =
        region(packed, batchShape(bBatch, {kp / vnni, np, vnni}), {});
    unsigned count = nbB + 3;
    SmallVector<AffineExpr> in, out;
    for (unsigned i = 0; i < nbB; ++i) {
      in.push_back(getAffineDimExpr(i, ctx));
      out.push_back(getAffineDimExpr(i, ctx));
    }
    in.push_back(getAffineDimExpr(nbB, ctx));
    in.push_back(getAffineDimExpr(nbB + 1, ctx));
    in.push_back(getAffineDimExpr(nbB + 2, ctx));
    out.push_back(getAffineDimExpr(nbB + 1, ctx));
    SmallVector<utils::IteratorType> iterators(nbB,
                                               utils::IteratorType::parallel);
    iterators.append({utils::IteratorType::reduction,
                      utils::IteratorType::parallel,
                      utils::IteratorType::reduction});
    linalg::GenericOp::create(
        b, TypeRange(), ValueRange{source}, ValueRange{bSums},
        ArrayRef<AffineMap>{AffineMap::get(count, 0, in, ctx),
                            AffineMap::get(count, 0, out, ctx)},
        iterators, [&](OpBuilder &nb2, Location loc, ValueRange args) {
          Value wide = arith::ExtSIOp::create(nb2, loc, i32, args[0]);
          linalg::YieldOp::create(
              nb2, loc,
              ValueRange{
                  arith::AddIOp::create(nb2, loc, wide, args[1]).getResult()});
        });
  }

  direct.sums = bSums;

  // The tasks: (batch..., M blocks, N blocks).
  {
    OpBuilder::InsertionGuard guard(b);
    SmallVector<Value> ivs = taskLoop(
        {llvm::divideCeilSigned(mp, mc), llvm::divideCeilSigned(np, nc)},
        level);
    SmallVector<Value> batchIvs(ivs.begin(), ivs.begin() + nb);
    SmallVector<Value> aBatchIvs = pick(batchIvs, aBatch);
    SmallVector<Value> bBatchIvs = pick(batchIvs, bBatch);
    Value i0 = arith::MulIOp::create(b, ivs[nb], idx(mc));
    Value i1 = arith::MinSIOp::create(b, arith::AddIOp::create(b, i0, idx(mc)),
                                      idx(mp));
    Value j0 = arith::MulIOp::create(b, ivs[nb + 1], idx(nc));
    Value j1 = arith::MinSIOp::create(b, arith::AddIOp::create(b, j0, idx(nc)),
                                      idx(np));
    auto emitBlock = [&](Value kc0, bool first) {
      if (isDot())
        emitDotBlock(ap, bRows, cp, aBatchIvs, bBatchIvs, batchIvs, kc0, i0, i1,
                     j0, j1, first, direct.enabled);
      else
        emitKBlock(ap, bRows, cp, aBatchIvs, bBatchIvs, batchIvs, kc0, i0, i1,
                   j0, j1, first);
    };
    emitBlock(idx(0), /*first=*/true);
    if (kp > kc) {
      auto kLoop = scf::ForOp::create(b, idx(kc), idx(kp), idx(kc));
      b.setInsertionPointToStart(kLoop.getBody());
      emitBlock(kLoop.getInductionVar(), /*first=*/false);
    }
  }

  // C from the accumulated tiles, over (batch..., m..., n), unless the
  // micro-kernels stored it.
  if (!direct.enabled) {
    unsigned count = nb + dims.m.size() + 1;
    SmallVector<AffineExpr> exprs(numLoops, getAffineConstantExpr(0, ctx));
    for (auto [i, d] : llvm::enumerate(dims.batch))
      exprs[d] = getAffineDimExpr(i, ctx);
    for (auto [i, d] : llvm::enumerate(dims.m))
      exprs[d] = getAffineDimExpr(nb + i, ctx);
    exprs[dims.n] = getAffineDimExpr(count - 1, ctx);
    SmallVector<int64_t> domain(batchSizes);
    domain.append(mSizes);
    domain.push_back(n);
    Value cRegion = region(cp, shapeWith({m, n}), {Split(nb, mSizes)});
    AffineMap cMap =
        remap(op.getMatchingIndexingMap(op.getDpsInitOperand(0)), exprs, count);
    if (!bSums) {
      copyGeneric(domain, cRegion, identity(count), cMem, cMap,
                  [&](OpBuilder &nb2, Location loc, Value sum, Value old) {
                    return finishSum(nb2, loc, sum, Value(),
                                     [&] { return old; });
                  });
    } else {
      // sum - 128 x B's column sum (B's batch loops, n).
      SmallVector<AffineExpr> sumsExprs;
      for (unsigned i : bBatch)
        sumsExprs.push_back(getAffineDimExpr(i, ctx));
      sumsExprs.push_back(getAffineDimExpr(count - 1, ctx));
      SmallVector<utils::IteratorType> iterators(count,
                                                 utils::IteratorType::parallel);
      linalg::GenericOp::create(
          b, TypeRange(),
          ValueRange{cRegion, region(bSums, batchShape(bBatch, {n}), {})},
          ValueRange{cMem},
          ArrayRef<AffineMap>{identity(count),
                              AffineMap::get(count, 0, sumsExprs, ctx), cMap},
          iterators, [&](OpBuilder &nb2, Location loc, ValueRange args) {
            linalg::YieldOp::create(
                nb2, loc,
                finishSum(nb2, loc, args[0], args[1], [&] { return args[2]; }));
          });
    }
  }
  if (!directA)
    memref::DeallocOp::create(b, ap);
  if (bp)
    memref::DeallocOp::create(b, bp);
  if (bSums && !constantSums)
    memref::DeallocOp::create(b, bSums);
  if (cp)
    memref::DeallocOp::create(b, cp);
  std::string cForm =
      !direct.enabled
          ? llvm::formatv("C through a {0}x{1} buffer", mp, np).str()
      : direct.epilogue ? std::string("C stored by the micro-kernels (K is one "
                                      "block) through the epilogue")
                        : std::string("C stored by the micro-kernels (K is one "
                                      "block)");
  return llvm::formatv("matrix units: {0} MxNxK {1}x{2}x{3} -> {4} {15}, "
                       "{5}x{6} accumulator {15} of {7}x{8} per block, "
                       "KC={9}, MC={10}, NC={11}, {12} tasks; A {16}, B "
                       "{13} (in {14}-element groups along K), {17}",
                       op->getName(), m, n, k, unit.name, mt, nt, unit.m,
                       unit.n, kc, mc, nc, tasks(),
                       bSource ? "packed at compile time" : "packed", vnni,
                       isDot() ? "vectors" : "tiles",
                       directA ? "read in place" : "packed", cForm)
      .str();
}

std::string mlir::pb::gemm::checkTileGemm(linalg::LinalgOp op,
                                          const GemmDims &dims,
                                          const MatrixUnitDesc &unit,
                                          const ChipDesc &chip, bool onlyUnit) {
  return TileGemmBuilder(op, dims, unit, chip).check(onlyUnit);
}

std::string mlir::pb::gemm::buildTileGemm(
    linalg::LinalgOp op, const GemmDims &dims, const MatrixUnitDesc &unit,
    const ChipDesc &chip, bool onlyUnit, Value fill, StringAttr level,
    SymbolTable *symbols, memref::GlobalOp &packedSource,
    linalg::GenericOp &epilogue) {
  TileGemmBuilder builder(op, dims, unit, chip);
  [[maybe_unused]] std::string why = builder.check(onlyUnit);
  assert(why.empty() && "checkTileGemm first");
  return builder.build(fill, level, symbols, packedSource, epilogue);
}
