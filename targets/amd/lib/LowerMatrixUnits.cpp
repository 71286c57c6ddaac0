//===- LowerMatrixUnits.cpp - Contractions onto MFMA kernels --------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A contraction S3 tagged with one of the chip's MFMA units becomes one
// gpu.launch: block tiles of (2 x MI units) x (2 x NI units) over four
// wavefronts, K tiles of 32 elements staged in LDS, `amdgpu.mfma` on f32
// accumulators held in registers across the K loop, the tagged epilogue
// applied in the stores. Several M loops and K loops are flattened into
// one M and one K, and A may be indexed by affine functions of them: a
// channels-last convolution is an implicit GEMM (M = n x oh x ow, K = kh x
// kw x c), its window rows gathered while the K tiles are copied.
//
// Register layouts (AMD's matrix instruction calculator for the
// single-block MFMA shapes, wave64): with G = 64 / M lane groups and
// P = K / G elements per lane, lane l holds A[l % M][(l / M) * P + i] and
// B[(l / N) * P + i][l % N] for i < P, and accumulator element j is
// D[(j / 4) * 4G + (l / N) * 4 + j % 4][l % N]. The emulator computes MFMA
// with the same layouts (targets/gpu/emulator/lib/MatrixOps.cpp); no AMD
// GPU has run these kernels (docs/AMD.md).
//
//===----------------------------------------------------------------------===//

#include "pb/AMD/AMDBackend.h"

#include "pb/Dialect/PBDialect.h"
#include "pb/GPU/GPUCommon.h"
#include "pb/Transforms/Passes.h"
#include "pb/Transforms/Roofline.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::pb::amd {
#define GEN_PASS_DEF_PBAMDLOWERMATRIXUNITSPASS
#include "pb/AMD/Passes.h.inc"
} // namespace mlir::pb::amd

using namespace mlir;
using namespace mlir::pb;

/// Wavefronts per block along M and N; K elements per LDS tile.
static constexpr int64_t kWavesM = 2, kWavesN = 2, kTileK = 32;
/// LDS row padding in elements (8 bytes of 16-bit elements, 16 of f32):
/// rows of kTileK + 4 elements spread the lanes that read one row each over
/// the banks.
static constexpr int64_t kPad = 4;

namespace {
/// How one tagged contraction maps onto the kernel.
struct MfmaPlan {
  const MatrixUnitDesc *unit = nullptr;
  /// Loop positions: N; the M loops (outermost first, flattened into one
  /// M), the K loops (in B's order, flattened into one K) and the batch
  /// loops.
  unsigned nLoop = 0;
  SmallVector<unsigned> mLoops, kLoops, batchLoops;
  SmallVector<int64_t> ranges;
  int64_t m = 1, n = 0, k = 1, batch = 1;
  /// B indexed (..., n, k) rather than (..., k, n).
  bool bNK = false;
  /// Units per wave along M and N.
  int64_t mi = 2, ni = 2;
  int64_t bm = 0, bn = 0, tilesM = 0, tilesN = 0, blocks = 0;
  int64_t threads = 0, waveSize = 0;
  /// Elements per vector copy (the chip's vector width) of A's and B's rows
  /// (1 when a row's extent or layout does not allow it).
  int64_t vecA = 1, vecB = 1;
  int64_t sharedBytes = 0;
  Type elem, cElem;
};
} // namespace

/// The loop of `map`'s result `i`, or -1 when it is no plain loop index.
static int getLoop(AffineMap map, unsigned i) {
  auto dim = dyn_cast<AffineDimExpr>(map.getResult(i));
  return dim ? int(dim.getPosition()) : -1;
}

/// Whether the innermost dimension of `type` is contiguous (unit stride).
static bool hasUnitInnerStride(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return false;
  return !strides.empty() && strides.back() == 1;
}

/// The plan for `op` on `unit`, or failure with the reason in `why`.
static FailureOr<MfmaPlan> planKernel(linalg::LinalgOp op,
                                      const MatrixUnitDesc &unit,
                                      const gpucommon::LaunchLimits &limits,
                                      const ChipDesc &chip, std::string &why) {
  MfmaPlan p;
  p.unit = &unit;
  p.waveSize = limits.warpSize;
  if (unit.m != unit.n || p.waveSize % unit.m || (unit.k * unit.m) % 64 ||
      p.waveSize != 64) {
    why = "the unit's shape is not one of the single-block wave64 shapes";
    return failure();
  }
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      !op.hasPureBufferSemantics()) {
    why = "not a contraction of two buffers into one";
    return failure();
  }
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  AffineMap aMap = maps[0], bMap = maps[1], cMap = maps[2];
  for (AffineMap map : {bMap, cMap})
    for (unsigned i = 0; i < map.getNumResults(); ++i)
      if (getLoop(map, i) < 0) {
        why = "B or C is not indexed by plain loop indices";
        return failure();
      }
  unsigned aRank = aMap.getNumResults(), bRank = bMap.getNumResults(),
           cRank = cMap.getNumResults();
  if (cRank < 2 || aRank < 2 || bRank < 2) {
    why = "C, A or B has fewer than two dimensions";
    return failure();
  }
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<unsigned> bLoops, cLoops;
  for (unsigned i = 0; i < bRank; ++i)
    bLoops.push_back(getLoop(bMap, i));
  for (unsigned i = 0; i < cRank; ++i)
    cLoops.push_back(getLoop(cMap, i));
  p.nLoop = cLoops.back();
  // K: the reduction loops in B's order; B is (batch..., K..., N) or
  // (batch..., N, K...).
  for (unsigned loop : bLoops)
    if (iterators[loop] == utils::IteratorType::reduction)
      p.kLoops.push_back(loop);
  if (p.kLoops.empty() || p.kLoops.size() != op.getNumReductionLoops()) {
    why = "a reduction loop does not index B";
    return failure();
  }
  unsigned numBatch = bRank - p.kLoops.size() - 1;
  ArrayRef<unsigned> bRest = ArrayRef<unsigned>(bLoops).drop_front(numBatch);
  if (bRest.back() == p.nLoop && bRest.drop_back() == ArrayRef(p.kLoops)) {
    p.bNK = false;
  } else if (bRest.front() == p.nLoop &&
             bRest.drop_front() == ArrayRef(p.kLoops)) {
    p.bNK = true;
  } else {
    why = "B is not indexed (batch..., K..., N) or (batch..., N, K...)";
    return failure();
  }
  // Batch: B's leading loops, which C and A start with too; M: C's loops
  // between them and N.
  p.batchLoops.assign(bLoops.begin(), bLoops.begin() + numBatch);
  if (cRank < numBatch + 2 || ArrayRef<unsigned>(cLoops).take_front(numBatch) !=
                                  ArrayRef(p.batchLoops)) {
    why = "C is not indexed (batch..., M..., N)";
    return failure();
  }
  p.mLoops.assign(cLoops.begin() + numBatch, cLoops.end() - 1);
  // A: the batch loops, then any affine function of the M and K loops whose
  // innermost is B's innermost K loop (a convolution's oh * s + kh: an
  // implicit GEMM).
  for (unsigned i = 0; i < numBatch; ++i)
    if (getLoop(aMap, i) != int(p.batchLoops[i])) {
      why = "A is not indexed by the batch loops first";
      return failure();
    }
  if (getLoop(aMap, aRank - 1) != int(p.kLoops.back())) {
    why = "A's innermost dimension is not the innermost K loop";
    return failure();
  }
  if (aMap.isFunctionOfDim(p.nLoop)) {
    why = "A depends on the N loop";
    return failure();
  }
  p.ranges = op.getStaticLoopRanges();
  if (llvm::any_of(p.ranges, ShapedType::isDynamic)) {
    why = "dynamic sizes";
    return failure();
  }
  p.n = p.ranges[p.nLoop];
  for (unsigned loop : p.mLoops)
    p.m *= p.ranges[loop];
  for (unsigned loop : p.kLoops)
    p.k *= p.ranges[loop];
  for (unsigned loop : p.batchLoops)
    p.batch *= p.ranges[loop];
  // The body: C += A * B, operands possibly widened to C's type first.
  Block &body = op->getRegion(0).front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  Operation *mul = nullptr;
  if (add)
    for (Value v : add->getOperands())
      if (auto m = v.getDefiningOp<arith::MulFOp>())
        mul = m;
  if (!add || !mul ||
      !llvm::is_contained(add->getOperands(), body.getArgument(2))) {
    why = "the body is not C += A * B";
    return failure();
  }
  for (Value v : mul->getOperands()) {
    if (auto ext = v.getDefiningOp<arith::ExtFOp>())
      v = ext.getIn();
    auto arg = dyn_cast<BlockArgument>(v);
    if (!arg || arg.getOwner() != &body || arg.getArgNumber() > 1) {
      why = "the body is not C += A * B";
      return failure();
    }
  }
  auto aType = cast<MemRefType>(op.getDpsInputOperand(0)->get().getType());
  auto bType = cast<MemRefType>(op.getDpsInputOperand(1)->get().getType());
  auto cType = cast<MemRefType>(op.getDpsInitOperand(0)->get().getType());
  p.elem = aType.getElementType();
  p.cElem = cType.getElementType();
  std::optional<ElementType> a = getTargetElementType(p.elem);
  std::optional<ElementType> b = getTargetElementType(bType.getElementType());
  if (!a || !b || *a != unit.aType || *b != unit.bType ||
      !(p.elem.isF16() || p.elem.isBF16() || p.elem.isF32())) {
    why = "A and B are not of the unit's element types (f16, bf16, f32)";
    return failure();
  }
  if (!p.cElem.isF32() && p.cElem != p.elem) {
    why = "C is neither f32 nor of A's type";
    return failure();
  }
  // Tiles: 2 x 2 wavefronts of MI x NI units, fewer units per wavefront
  // (along the larger of M and N first) while there are fewer blocks than
  // the chip has compute units.
  if (p.m <= unit.m)
    p.mi = 1;
  if (p.n <= unit.n)
    p.ni = 1;
  const ComputeLevelDesc *grid = chip.getComputeLevel(ComputeLevelKind::Grid);
  int64_t units = grid ? grid->physicalUnits : 0;
  auto countBlocks = [&] {
    p.bm = kWavesM * p.mi * unit.m;
    p.bn = kWavesN * p.ni * unit.n;
    p.tilesM = llvm::divideCeil(p.m, p.bm);
    p.tilesN = llvm::divideCeil(p.n, p.bn);
    p.blocks = p.batch * p.tilesM * p.tilesN;
  };
  countBlocks();
  while (p.blocks < units && (p.mi > 1 || p.ni > 1)) {
    if (p.mi > 1 && (p.m >= p.n || p.ni == 1))
      p.mi = 1;
    else
      p.ni = 1;
    countBlocks();
  }
  p.threads = kWavesM * kWavesN * p.waveSize;
  if (limits.maxBlocksPerGrid && p.blocks > limits.maxBlocksPerGrid) {
    why = "more blocks than the grid allows";
    return failure();
  }
  // Copies of the chip's widest vector access (GFX942.td: 128 bits).
  int64_t elementBytes = p.elem.getIntOrFloatBitWidth() / 8;
  int64_t vec = std::max<int64_t>(chip.vectorWidthBits / 8 / elementBytes, 1);
  // A chunk of `vec` elements along K stays within one run of the
  // innermost K loop.
  int64_t innerK = p.ranges[p.kLoops.back()];
  if (innerK % vec == 0 && hasUnitInnerStride(aType))
    p.vecA = vec;
  if ((p.bNK ? innerK : p.n) % vec == 0 && hasUnitInnerStride(bType))
    p.vecB = vec;
  p.sharedBytes = (p.bm + p.bn) * (kTileK + kPad) * elementBytes;
  const MemoryLevelDesc *lds = chip.getMemoryLevel(MemoryKind::Scratchpad);
  if (!lds || p.sharedBytes > lds->capacityBytes) {
    why = "the tiles do not fit the chip's LDS";
    return failure();
  }
  return p;
}

namespace {
/// Builds the kernel of one plan in place of its op.
class KernelBuilder {
public:
  KernelBuilder(linalg::LinalgOp op, const MfmaPlan &p,
                linalg::GenericOp epilogue, bool zeroInit)
      : op(op), p(p), epilogue(epilogue), zeroInit(zeroInit),
        b(op.getLoc(), op) {}
  void build();

private:
  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, v); }
  Value add(Value x, int64_t v) {
    return v ? arith::AddIOp::create(b, x, idx(v)).getResult() : x;
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, x, y); }
  Value mul(Value x, int64_t v) {
    return v == 1 ? x : arith::MulIOp::create(b, x, idx(v)).getResult();
  }
  Value div(Value x, int64_t v) { return arith::DivUIOp::create(b, x, idx(v)); }
  Value rem(Value x, int64_t v) { return arith::RemUIOp::create(b, x, idx(v)); }
  Value lt(Value x, int64_t v) {
    return arith::CmpIOp::create(b, arith::CmpIPredicate::ult, x, idx(v));
  }
  Value ifThenElse(Value cond, function_ref<Value()> then,
                   function_ref<Value()> otherwise, Type type);
  /// The operand's indices for loop values `loops` (its map's results).
  SmallVector<Value> indicesOf(unsigned operand, ArrayRef<Value> loops);
  /// The loops' values at flat row (M), column (N) and K indices.
  SmallVector<Value> loopValues(std::optional<Value> row,
                                std::optional<Value> column,
                                std::optional<Value> k);
  /// Copies K tile `k0` of A (rows m0..) or B into its LDS tile.
  void copyTile(bool isA, Value k0);
  void copyTileB(Value k0);

  linalg::LinalgOp op;
  const MfmaPlan &p;
  /// The elementwise epilogue applied in the stores (C itself is then not
  /// stored), or null.
  linalg::GenericOp epilogue;
  /// Accumulators start at 0 (C's zero fills were removed), not from C.
  bool zeroInit;
  ImplicitLocOpBuilder b;
  Value tid, m0, n0, aTile, bTile;
  SmallVector<Value> batchIdx;
};
} // namespace

Value KernelBuilder::ifThenElse(Value cond, function_ref<Value()> then,
                                function_ref<Value()> otherwise, Type type) {
  auto ifOp = scf::IfOp::create(b, type, cond, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  scf::YieldOp::create(b, then());
  b.setInsertionPointToStart(ifOp.elseBlock());
  scf::YieldOp::create(b, otherwise());
  return ifOp.getResult(0);
}

SmallVector<Value> KernelBuilder::indicesOf(unsigned operand,
                                            ArrayRef<Value> loops) {
  AffineMap map = op.getIndexingMapsArray()[operand];
  SmallVector<Value> indices;
  SmallVector<Value> operands;
  for (unsigned i = 0; i < map.getNumResults(); ++i) {
    int loop = getLoop(map, i);
    if (loop >= 0) {
      indices.push_back(loops[loop]);
      continue;
    }
    // An affine function of the loops (A of an implicit GEMM); loops it
    // does not use are 0.
    if (operands.empty())
      for (Value v : loops)
        operands.push_back(v ? v : idx(0));
    indices.push_back(affine::AffineApplyOp::create(
        b, AffineMap::get(map.getNumDims(), 0, map.getResult(i)), operands));
  }
  return indices;
}

SmallVector<Value> KernelBuilder::loopValues(std::optional<Value> row,
                                             std::optional<Value> column,
                                             std::optional<Value> k) {
  SmallVector<Value> loops(p.ranges.size(), Value());
  for (auto [j, loop] : llvm::enumerate(p.batchLoops))
    loops[loop] = batchIdx[j];
  // A flat index into the loops it flattens, innermost fastest.
  auto split = [&](ArrayRef<unsigned> which, Value flat) {
    for (unsigned i = which.size(); i-- > 0;) {
      int64_t extent = p.ranges[which[i]];
      loops[which[i]] = i ? rem(flat, extent) : flat;
      if (i)
        flat = div(flat, extent);
    }
  };
  if (row)
    split(p.mLoops, *row);
  if (column)
    loops[p.nLoop] = *column;
  if (k)
    split(p.kLoops, *k);
  return loops;
}

/// A: rows m0 .. m0 + bm, columns k0 .. k0 + kTileK into aTile[row][k];
/// B: into bTile[n][k] (K contiguous), read along its own innermost
/// dimension.
void KernelBuilder::copyTile(bool isA, Value k0) {
  // The tile's rows run along M (A) or N (B); its innermost global
  // dimension is K, except for a B indexed (k, n).
  bool alongK = isA || p.bNK;
  int64_t rows = isA ? p.bm : p.bn;
  int64_t rowExtent = isA ? p.m : p.n;
  int64_t vec = isA ? p.vecA : p.vecB;
  // Chunks of `vec` elements along the global innermost dimension.
  int64_t inner = alongK ? kTileK : rows, outer = alongK ? rows : kTileK;
  int64_t chunks = outer * inner / vec;
  Value base = isA ? m0 : n0;
  Value tile = isA ? aTile : bTile;
  unsigned operand = isA ? 0 : 1;
  auto vecType = VectorType::get({vec}, p.elem);
  Value zero = arith::ConstantOp::create(b, b.getZeroAttr(p.elem));
  for (int64_t first = 0; first < chunks; first += p.threads) {
    Value chunk = add(tid, first);
    auto guard = scf::IfOp::create(b, lt(chunk, chunks));
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(guard.thenBlock());
    Value o = div(chunk, inner / vec);
    Value i = mul(rem(chunk, inner / vec), vec);
    // (row, k) of the tile for the chunk's first element.
    Value row = alongK ? o : i;
    Value kk = alongK ? i : o;
    Value gRow = add(base, row), gK = add(k0, kk);
    auto loadAt = [&](Value r, Value k) {
      return indicesOf(operand, isA ? loopValues(r, std::nullopt, k)
                                    : loopValues(std::nullopt, r, k));
    };
    // In bounds: the row (or, along M/N, the first element) and the
    // chunk's K range.
    Value values;
    if (vec > 1) {
      Value lastInner = add(alongK ? gK : gRow, vec - 1);
      Value inside = arith::AndIOp::create(
          b, lt(alongK ? gRow : gK, alongK ? rowExtent : p.k),
          lt(lastInner, alongK ? p.k : rowExtent));
      values = ifThenElse(
          inside,
          [&] {
            return vector::LoadOp::create(b, vecType, op->getOperand(operand),
                                          loadAt(gRow, gK));
          },
          [&] {
            return arith::ConstantOp::create(
                b, vecType,
                DenseElementsAttr::get(vecType, b.getZeroAttr(p.elem)));
          },
          vecType);
    }
    for (int64_t e = 0; e < vec; ++e) {
      Value r = alongK ? row : add(row, e);
      Value k = alongK ? add(kk, e) : kk;
      Value v;
      if (vec > 1) {
        v = vector::ExtractOp::create(b, values, ArrayRef<int64_t>{e});
      } else {
        Value gr = add(base, r), gk = add(k0, k);
        Value inside = arith::AndIOp::create(b, lt(gr, rowExtent), lt(gk, p.k));
        v = ifThenElse(
            inside,
            [&] {
              return memref::LoadOp::create(b, op->getOperand(operand),
                                            loadAt(gr, gk));
            },
            [&] { return zero; }, p.elem);
      }
      if (alongK && vec > 1)
        continue;
      memref::StoreOp::create(b, v, tile, ValueRange{r, k});
    }
    if (alongK && vec > 1)
      vector::StoreOp::create(b, values, tile, ValueRange{row, kk});
  }
}

void KernelBuilder::build() {
  const MatrixUnitDesc &unit = *p.unit;
  MLIRContext *ctx = b.getContext();
  auto launch = gpu::LaunchOp::create(
      b, idx(p.blocks), idx(1), idx(1), idx(p.threads), idx(1), idx(1),
      arith::ConstantOp::create(b, b.getI32IntegerAttr(p.sharedBytes)));
  b.setInsertionPointToStart(&launch.getBody().front());
  gpu::TerminatorOp::create(b);
  b.setInsertionPointToStart(&launch.getBody().front());

  // Block coordinates, N tiles fastest; wave and lane.
  Value block = launch.getBlockIds().x;
  tid = launch.getThreadIds().x;
  Value tn = rem(block, p.tilesN);
  Value rest = div(block, p.tilesN);
  Value tm = rem(rest, p.tilesM);
  Value flatBatch = div(rest, p.tilesM);
  for (unsigned loop : llvm::reverse(p.batchLoops)) {
    batchIdx.push_back(rem(flatBatch, p.ranges[loop]));
    flatBatch = div(flatBatch, p.ranges[loop]);
  }
  std::reverse(batchIdx.begin(), batchIdx.end());
  m0 = mul(tm, p.bm);
  n0 = mul(tn, p.bn);
  Value wave = div(tid, p.waveSize);
  Value lane = rem(tid, p.waveSize);
  Value waveRow = mul(div(wave, kWavesN), p.mi * unit.m);
  Value waveCol = mul(rem(wave, kWavesN), p.ni * unit.n);

  // LDS tiles: views of the dynamic shared memory, K contiguous.
  auto space = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  Value lds = gpu::DynamicSharedMemoryOp::create(
      b, MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                         MemRefLayoutAttrInterface(), space));
  int64_t row = kTileK + kPad;
  aTile = memref::ViewOp::create(
      b,
      MemRefType::get({p.bm, row}, p.elem, MemRefLayoutAttrInterface(), space),
      lds, idx(0), ValueRange{});
  bTile = memref::ViewOp::create(
      b,
      MemRefType::get({p.bn, row}, p.elem, MemRefLayoutAttrInterface(), space),
      lds, idx(p.bm * row * (p.elem.getIntOrFloatBitWidth() / 8)),
      ValueRange{});

  // Lane coordinates in the unit's layouts.
  int64_t groups = 64 / unit.m;
  int64_t perLane = unit.k / groups;
  int64_t accPerLane = unit.m * unit.n / 64;
  Value laneRow = rem(lane, unit.m);
  Value laneGroup = div(lane, unit.m);
  Value laneK = mul(laneGroup, perLane);
  auto accType = VectorType::get({accPerLane}, b.getF32Type());
  // One element per lane (the f32 unit) is a scalar operand.
  Type fragType = perLane == 1 ? p.elem : VectorType::get({perLane}, p.elem);
  auto loadFragment = [&](Value tile, Value row, Value k) -> Value {
    if (perLane == 1)
      return memref::LoadOp::create(b, tile, ValueRange{row, k});
    return vector::LoadOp::create(b, cast<VectorType>(fragType), tile,
                                  ValueRange{row, k});
  };
  // The (row, column) of C that accumulator element j of unit (i, jn)
  // holds.
  auto cCoord = [&](int64_t i, int64_t jn, int64_t j) {
    Value r = add(add(add(m0, waveRow), i * unit.m),
                  add(mul(laneGroup, 4), (j / 4) * 4 * groups + j % 4));
    Value c = add(add(add(n0, waveCol), jn * unit.n), laneRow);
    return std::pair(r, c);
  };
  auto cIndices = [&](Value r, Value c) {
    return indicesOf(2, loopValues(r, c, std::nullopt));
  };
  Value cMem = op.getDpsInitOperand(0)->get();

  // Accumulators start from C, or at 0 when C's zero fills were removed.
  SmallVector<Value> accs;
  Value zeroF32 = arith::ConstantOp::create(b, b.getF32FloatAttr(0));
  for (int64_t i = 0; i < p.mi; ++i)
    for (int64_t jn = 0; jn < p.ni; ++jn) {
      Value acc = arith::ConstantOp::create(
          b, accType, DenseElementsAttr::get(accType, b.getF32FloatAttr(0)));
      for (int64_t j = 0; j < accPerLane && !zeroInit; ++j) {
        auto [r, c] = cCoord(i, jn, j);
        Value inside = arith::AndIOp::create(b, lt(r, p.m), lt(c, p.n));
        Value v = ifThenElse(
            inside,
            [&]() -> Value {
              Value x = memref::LoadOp::create(b, cMem, cIndices(r, c));
              return p.cElem.isF32()
                         ? x
                         : arith::ExtFOp::create(b, b.getF32Type(), x)
                               .getResult();
            },
            [&] { return zeroF32; }, b.getF32Type());
        acc = vector::InsertOp::create(b, v, acc, ArrayRef<int64_t>{j});
      }
      accs.push_back(acc);
    }

  // K loop over LDS tiles.
  auto loop = scf::ForOp::create(b, idx(0), idx(p.k), idx(kTileK), accs);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Value k0 = loop.getInductionVar();
    // The previous tile's reads end before the copies overwrite it.
    gpu::BarrierOp::create(b);
    copyTile(/*isA=*/true, k0);
    copyTile(/*isA=*/false, k0);
    gpu::BarrierOp::create(b);
    SmallVector<Value> current(loop.getRegionIterArgs());
    for (int64_t ks = 0; ks < kTileK / unit.k; ++ks) {
      Value k = add(laneK, ks * unit.k);
      SmallVector<Value> aFrag, bFrag;
      for (int64_t i = 0; i < p.mi; ++i)
        aFrag.push_back(
            loadFragment(aTile, add(add(waveRow, i * unit.m), laneRow), k));
      for (int64_t jn = 0; jn < p.ni; ++jn)
        bFrag.push_back(
            loadFragment(bTile, add(add(waveCol, jn * unit.n), laneRow), k));
      for (int64_t i = 0; i < p.mi; ++i)
        for (int64_t jn = 0; jn < p.ni; ++jn) {
          Value &acc = current[i * p.ni + jn];
          acc = amdgpu::MFMAOp::create(
              b, accType, b.getI32IntegerAttr(unit.m),
              b.getI32IntegerAttr(unit.n), b.getI32IntegerAttr(unit.k),
              b.getI32IntegerAttr(1), aFrag[i], bFrag[jn], acc);
        }
    }
    scf::YieldOp::create(b, current);
  }

  // Store the accumulators, guarded at partial tiles.
  for (int64_t i = 0; i < p.mi; ++i)
    for (int64_t jn = 0; jn < p.ni; ++jn) {
      Value acc = loop.getResult(i * p.ni + jn);
      for (int64_t j = 0; j < accPerLane; ++j) {
        auto [r, c] = cCoord(i, jn, j);
        Value inside = arith::AndIOp::create(b, lt(r, p.m), lt(c, p.n));
        auto ifOp = scf::IfOp::create(b, inside);
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPointToStart(ifOp.thenBlock());
        Value v = vector::ExtractOp::create(b, acc, ArrayRef<int64_t>{j});
        if (!p.cElem.isF32())
          v = arith::TruncFOp::create(b, p.cElem, v);
        if (epilogue)
          gpucommon::storeThroughEpilogue(b, epilogue, cMem, cIndices(r, c), v);
        else
          memref::StoreOp::create(b, v, cMem, cIndices(r, c));
      }
    }
  gpucommon::sinkIntoLaunch(launch);
}

namespace {
class PBAMDLowerMatrixUnitsPass
    : public pb::amd::impl::PBAMDLowerMatrixUnitsPassBase<
          PBAMDLowerMatrixUnitsPass> {
public:
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<linalg::LinalgOp> tagged;
    func.walk([&](linalg::LinalgOp op) {
      if (op->hasAttr(PBDialect::kMatrixUnitAttrName))
        tagged.push_back(op);
    });
    // Epilogues of ops left to the loop mapping are ordinary generics.
    auto untagEpilogues = llvm::scope_exit([&] {
      func.walk([](linalg::GenericOp generic) {
        generic->removeAttr(PBDialect::kMatrixUnitEpilogueAttrName);
      });
    });
    if (tagged.empty())
      return;
    const ChipDesc *chip = getTargetChip(func);
    if (!chip) {
      func.emitError("pb-amd-lower-matrix-units needs a target");
      return signalPassFailure();
    }
    FailureOr<gpucommon::LaunchLimits> limits =
        gpucommon::getLaunchLimits(func, *chip);
    if (failed(limits))
      return signalPassFailure();
    for (linalg::LinalgOp op : tagged) {
      const MatrixUnitDesc *unit = gpucommon::takeTaggedUnit(op, *chip);
      if (!unit)
        return signalPassFailure();
      std::string why;
      FailureOr<MfmaPlan> plan = planKernel(op, *unit, *limits, *chip, why);
      if (failed(plan)) {
        // The generic mapping runs it as loops: slower, still correct.
        explain(op, "matrix units: " + unit->name + " not used: " + why);
        continue;
      }
      const MfmaPlan &p = *plan;
      gpucommon::MatrixKernelParts parts = gpucommon::prepareMatrixKernel(
          op, unit->aType, double(p.batch) * p.m * p.n * p.k);
      KernelBuilder(op, p, parts.epilogue, /*zeroInit=*/!parts.fills.empty())
          .build();
      explain(op, llvm::formatv(
                      "matrix units: {0} on {1}: batch {2}, MxNxK {3}x{4}x{5}; "
                      "block tile {6}x{7}x{8} ({9} blocks of {10} work-items, "
                      "{11}x{12} units per wavefront), {13} B of LDS, copies "
                      "of {14} and {15} elements",
                      op->getName(), unit->name, p.batch, p.m, p.n, p.k, p.bm,
                      p.bn, kTileK, p.blocks, p.threads, p.mi, p.ni,
                      p.sharedBytes, p.vecA, p.vecB));
      gpucommon::finishMatrixKernel(op, parts, unit->name);
    }
  }
};
} // namespace
