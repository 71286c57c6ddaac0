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
// The plan (GemmPlan in GemmBuilder.h) varies this where the operands'
// layouts or sizes call for it: A read in place (directA), packed through a
// table of K offsets (aLinear) or MR rows per load (aAlongM); B packed for all
// K blocks before the tasks (allK), along its own rows when K is its contiguous
// side (packWhole), or at compile time when it is a constant (constantB,
// ConstantPacking.cpp); the NC blocks (nParallel) or the batch loops
// (batchParallel) as the tasks; rows of four vectors for convolutions that
// read their pixels in place. GemmBuilder.cpp emits the code.
//
//===----------------------------------------------------------------------===//

#include "GemmBuilder.h"

#include "pb/Target/TargetDesc.h"
#include "pb/Transforms/Passes.h"

#include "mlir/Analysis/FlatLinearValueConstraints.h"
#include "mlir/Dialect/Affine/LoopUtils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"
#include <cmath>

namespace mlir::pb {
#define GEN_PASS_DEF_PBMAPMATRIXUNITSPASS
#include "pb/Transforms/Passes.h.inc"
} // namespace mlir::pb

using namespace mlir;
using namespace mlir::pb;
using namespace mlir::pb::gemm;

/// The share of the register file the accumulators may take; the rest
/// holds B's vectors and A's broadcast.
static constexpr double kAccumulatorShare = 0.75;
/// The share of a cache level a packed panel may take.
static constexpr double kCacheShare = 0.5;
static constexpr double kL1Share = 0.75;
/// Vector registers across one row of the register tile.
static constexpr int64_t kTileRowVectors = 2;
/// Vector registers across one row of a wide register tile (see its use).
static constexpr int64_t kWideTileRowVectors = 4;
/// Vector registers across one row of a long-row register tile (see its use).
static constexpr int64_t kLongTileRowVectors = 3;
/// Register tiles an M block of an A read in place spans at least (while
/// the cache holds it): each such block reads the whole packed B panel.
static constexpr int64_t kMinDirectTiles = 24;
/// The shortest blocked K loop worth a pass over C; shorter ones take in
/// the K loops around them.
static constexpr int64_t kMinBlockedK = 32;
/// The rows a GEMM whose M is known only at run time (dynamic shapes) is
/// planned for: a sequence of a few hundred tokens. The code runs any M,
/// with the block sizes and task split chosen for this many rows.
static constexpr int64_t kPlannedRunTimeRows = 256;

namespace {
class PBMapMatrixUnitsPass
    : public pb::impl::PBMapMatrixUnitsPassBase<PBMapMatrixUnitsPass> {
public:
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SetVector<memref::GlobalOp> packedSources;
    // The `amx`, `x86vector` (and `llvm`, for VPDPBUSD's intrinsic)
    // dialects only where a chip has units lowered to them: a loaded dialect's
    // LLVM-conversion interface joins every later convert-*-to-llvm that
    // gathers them (convert-gpu-to-rocdl then lowered math.rsqrt to sqrt and a
    // division instead of
    // __ocml_rsqrt_f32). A module pass, so nothing runs on other threads
    // while they load.
    for (auto func : module.getOps<func::FuncOp>())
      if (const ChipDesc *chip = getTargetChip(func))
        for (const MatrixUnitDesc *unit : chip->matrixUnits) {
          if (unit->lowering == MatrixLowering::AMXTileMul)
            getContext().getOrLoadDialect<amx::AMXDialect>();
          if (unit->lowering == MatrixLowering::X86VectorDot)
            getContext().getOrLoadDialect<x86vector::X86VectorDialect>();
          if (unit->lowering == MatrixLowering::AVX512VNNIDot)
            getContext().getOrLoadDialect<LLVM::LLVMDialect>();
        }
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      const ChipDesc *chip = getTargetChip(func);
      if (!chip) {
        func.emitError("pb-map-matrix-units needs a target: run with --target");
        return signalPassFailure();
      }
      // Cooperative units (GPU tensor cores) widen their operands into the
      // accumulator themselves, and a CPU's micro-kernel widens narrow
      // operands as it packs them: mixed-precision contractions are theirs
      // too where the chip states such units.
      bool mixed = hasMixedPrecisionMatrixUnits(*chip);
      SmallVector<linalg::LinalgOp> candidates;
      func.walk([&](linalg::LinalgOp op) {
        if (op.hasPureBufferSemantics() && isMultiplyAccumulate(op, mixed))
          candidates.push_back(op);
      });
      for (linalg::LinalgOp op : candidates)
        mapContraction(op, *chip, symbols, packedSources);
    }
    // Constants that only packed copies read any more.
    for (memref::GlobalOp global : packedSources)
      if (SymbolTable::symbolKnownUseEmpty(global, module))
        symbols.erase(global);
  }

private:
  void mapContraction(linalg::LinalgOp op, const ChipDesc &chip,
                      SymbolTable &symbols,
                      SetVector<memref::GlobalOp> &packedSources);
  bool tagForCooperativeUnit(linalg::LinalgOp op, const GemmDims &dims,
                             const ChipDesc &chip);
};
} // namespace

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
  auto largest = [&](ElementType want) {
    const MatrixUnitDesc *best = nullptr;
    for (const MatrixUnitDesc *unit : chip.matrixUnits) {
      if (!isCooperativeScope(unit->scope, warpgroups) || unit->aType != want ||
          unit->bType != want || unit->cType != ElementType::F32)
        continue;
      if (!best || unit->m * unit->n * unit->k > best->m * best->n * best->k)
        best = unit;
    }
    return best;
  };
  // f32 operands: a unit that multiplies f32 exactly (AMD's f32 MFMA) needs
  // no permission; one that reads them as tf32 needs allow-tf32.
  if (a == ElementType::F32) {
    if (const MatrixUnitDesc *exact = largest(ElementType::F32))
      return exact;
    return allowTF32 ? largest(ElementType::TF32) : nullptr;
  }
  return largest(a);
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
  Operation *prev = op->getPrevNode();
  while (prev && !isa<affine::AffineForOp>(prev) &&
         (isMemoryEffectFree(prev) ||
          (isa<memref::AllocOp>(prev) && prev->getResult(0) != mem)))
    prev = prev->getPrevNode();
  auto outer = dyn_cast_or_null<affine::AffineForOp>(prev);
  affine::AffineStoreOp store = outer ? matchFillNest(outer) : nullptr;
  if (!store || store.getMemRef() != mem)
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

/// Panels per block when `panels` column panels are cut into about
/// kMinParallelBlocks parallel blocks: ceil or floor of panels /
/// kMinParallelBlocks, whichever leaves the most loaded core the fewest
/// panels under a static schedule on 2, 4, ... kMinParallelBlocks cores
/// (the first core takes the first blocks); ties take the larger blocks.
/// 63 panels: 8 blocks of 8, not 9 of 7; 10 panels: 10 blocks of 1, not
/// 5 of 2 (3 + 2 blocks on two cores).
static int64_t tasksOfPanels(int64_t panels) {
  auto load = [&](int64_t per) {
    int64_t blocks = llvm::divideCeilSigned(panels, per), sum = 0;
    for (int64_t cores = 2; cores <= kMinParallelBlocks; cores *= 2)
      sum += std::min(panels, llvm::divideCeilSigned(blocks, cores) * per);
    return sum;
  };
  int64_t larger = llvm::divideCeilSigned(panels, kMinParallelBlocks);
  int64_t smaller = std::max<int64_t>(1, panels / kMinParallelBlocks);
  return load(smaller) < load(larger) ? smaller : larger;
}

/// A's element offset from its base as a linear function of the loops:
/// a coefficient per loop, then a constant. Each index of A's indexing map
/// must be such a function (mods, divisions and symbols would add columns)
/// and every index that varies or is not zero must have a static stride.
static std::optional<SmallVector<int64_t>>
linearOffsetOfA(linalg::LinalgOp op) {
  OpOperand *aOperand = op.getDpsInputOperand(0);
  auto aType = cast<MemRefType>(aOperand->get().getType());
  SmallVector<int64_t> strides;
  int64_t layoutOffset;
  if (failed(aType.getStridesAndOffset(strides, layoutOffset)))
    return std::nullopt;
  AffineMap mapA = op.getMatchingIndexingMap(aOperand);
  std::vector<SmallVector<int64_t, 8>> flattened;
  unsigned numDims = mapA.getNumDims();
  if (failed(getFlattenedAffineExprs(mapA, &flattened)))
    return std::nullopt;
  SmallVector<int64_t> linear(numDims + 1, 0);
  for (auto [r, expr] : llvm::enumerate(flattened)) {
    if (expr.size() != numDims + 1)
      return std::nullopt;
    if (llvm::all_of(expr, [](int64_t c) { return c == 0; }))
      continue;
    if (ShapedType::isDynamic(strides[r]))
      return std::nullopt;
    for (unsigned d = 0; d <= numDims; ++d)
      linear[d] += strides[r] * expr[d];
  }
  return linear;
}

/// Sets GemmPlan::aLinear when A (static, row-major) has an offset linear
/// in the loops, and aAlongM when its rows are then one element apart.
static void setLinearA(linalg::LinalgOp op, const GemmDims &dims,
                       ArrayRef<int64_t> ranges, GemmPlan &p) {
  auto aType = cast<MemRefType>(op.getDpsInputOperand(0)->get().getType());
  if (!aType.hasStaticShape() || !aType.getLayout().isIdentity())
    return;
  std::optional<SmallVector<int64_t>> linear = linearOffsetOfA(op);
  if (!linear)
    return;
  p.aLinear = true;
  p.aCoefficients.assign(linear->begin(), std::prev(linear->end()));
  p.aOffset += linear->back();
  int64_t expected = 1;
  for (unsigned d : llvm::reverse(dims.m)) {
    if (ranges[d] != 1 && p.aCoefficients[d] != expected)
      return;
    expected *= ranges[d];
  }
  p.aAlongM = true;
}

/// The distance in elements between consecutive rows of A (consecutive
/// values of the innermost M loop), when A's offset is linear in the loops
/// and that loop moves it; none otherwise.
static std::optional<int64_t> rowStrideOfA(linalg::LinalgOp op,
                                           const GemmDims &dims) {
  std::optional<SmallVector<int64_t>> linear = linearOffsetOfA(op);
  if (!linear || (*linear)[dims.m.back()] == 0)
    return std::nullopt;
  return (*linear)[dims.m.back()];
}

/// Whether `rows` rows `strideBytes` apart, read along together (a register
/// tile's rows of an A read in place), put more lines into one set of
/// `cache` than it has ways: they then evict each other before their next
/// elements are read. Row-major As 1024 or 2048 floats wide put all 12 rows
/// of a register tile into one set of an 8-way 32 KiB L1 (1024^3 f32
/// matmul: 13.1 ms read in place, 11.2 ms for K = 1040, whose rows spread;
/// 11.7 ms copied). Not when they fit the set: BERT's 128x3072 x 3072x768
/// (the 8 rows of its 8 x 48 tile in one 8-way set) ran 15% slower copied
/// (3.5 -> 4.2 ms), each of its 16 tasks copying all of A, and 512^3 (6
/// rows per set) no faster.
static bool rowsShareCacheSets(int64_t strideBytes, int64_t rows,
                               const MemoryLevelDesc &cache) {
  if (cache.ways <= 0 || cache.lineBytes <= 0)
    return false;
  int64_t sets = cache.capacityBytes / (cache.lineBytes * cache.ways);
  if (sets <= 0)
    return false;
  // The distinct lines the rows start in, per set (rows closer than a line
  // share one).
  llvm::SmallDenseSet<int64_t> lines;
  llvm::SmallDenseMap<int64_t, int64_t> perSet;
  int64_t most = 0;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t line = llvm::divideFloorSigned(r * strideBytes, cache.lineBytes);
    if (lines.insert(line).second)
      most = std::max(most, ++perSet[llvm::mod(line, sets)]);
  }
  return most > cache.ways;
}

/// Whether B is packed whole (see GemmPlan::packWhole): its first index is
/// N, its others every K loop once, contiguous in memory, and N's panels
/// full; not when its last index is the blocked K alone (a row-major N x K
/// B: packB transposes one K block at a time, lanes x lanes along K).
static bool isPackedWhole(linalg::LinalgOp op, const GemmDims &dims,
                          const GemmPlan &p) {
  if (!dims.batch.empty() || !dims.nOuter.empty() ||
      !llvm::isPowerOf2_64(p.lanes) || p.n % p.nr || p.nc % p.nr ||
      !cast<MemRefType>(op.getDpsInputOperand(1)->get().getType())
           .getLayout()
           .isIdentity())
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

/// The constant global whose values are `op`'s B, when B can be packed at
/// compile time (GemmPlan::constantB): B's indices are loops other than the
/// batch loops, and its element type is C's (the packed panels' type).
static memref::GlobalOp constantB(linalg::LinalgOp op, const GemmDims &dims) {
  OpOperand *bOperand = op.getDpsInputOperand(1);
  if (getElementTypeOrSelf(bOperand->get().getType()) !=
      getElementTypeOrSelf(op.getDpsInitOperand(0)->get().getType()))
    return nullptr;
  for (AffineExpr e : op.getMatchingIndexingMap(bOperand).getResults()) {
    auto d = dyn_cast<AffineDimExpr>(e);
    if (!d || llvm::is_contained(dims.batch, d.getPosition()))
      return nullptr;
  }
  return findConstantGlobal(bOperand->get());
}

/// Erases `mem`'s defining op and the views it reads through, as long as
/// nothing else uses them (a packed constant's get_global and reshapes).
static void eraseUnusedViews(Value mem) {
  for (Operation *view = mem.getDefiningOp(); view && view->use_empty();) {
    Operation *source = view->getNumOperands() == 1
                            ? view->getOperand(0).getDefiningOp()
                            : nullptr;
    view->erase();
    view = source;
  }
}

void PBMapMatrixUnitsPass::mapContraction(
    linalg::LinalgOp op, const ChipDesc &chip, SymbolTable &symbols,
    SetVector<memref::GlobalOp> &packedSources) {
  auto skip = [&](const Twine &why) {
    explain(op, "matrix units: " + op->getName().getStringRef() +
                    " left to loop tiling: " + why);
  };
  std::string why;
  FailureOr<GemmDims> classified = classify(op, why);
  if (failed(classified))
    return skip(why);
  // Sizes known only at run time (dynamic shapes): M's loops, N's and the
  // blocked K's may have them, on the vector outer-product micro-kernel
  // (batch and outer K loops, and the other units, not yet).
  SmallVector<int64_t> loopRanges = op.getStaticLoopRanges();
  bool runTimeM = false, runTimeN = false, runTimeK = false;
  for (auto [dim, extent] : llvm::enumerate(loopRanges)) {
    if (!ShapedType::isDynamic(extent))
      continue;
    if (llvm::is_contained(classified->m, dim))
      runTimeM = true;
    else if (dim == classified->n)
      runTimeN = true;
    else if (dim == classified->kInner && classified->kOuter.empty())
      runTimeK = true;
    else
      return skip("a batch or outer K loop has a size known only at run "
                  "time");
  }
  bool runTime = runTimeM || runTimeN || runTimeK;
  if (!runTime && tagForCooperativeUnit(op, *classified, chip))
    return;
  GemmDims dims = *classified;
  auto typeOf = [](Value v) {
    return cast<MemRefType>(v.getType()).getElementType();
  };
  Value aMem = op.getDpsInputOperand(0)->get();
  Value bMem = op.getDpsInputOperand(1)->get();
  Value cMem = op.getDpsInitOperand(0)->get();
  // Views (pb-fuse-attention's blocks of q, k and v) are read as they
  // are, element by element or in vectors along their last dimension: the
  // last stride must be 1; the offset may vary, and so may the other
  // strides where sizes are known only at run time (a block of q, a head of
  // a ? x 12 x 64 tensor).
  for (Value mem : {aMem, bMem, cMem}) {
    auto type = cast<MemRefType>(mem.getType());
    SmallVector<int64_t> strides;
    int64_t offset;
    if (!type.getLayout().isIdentity() &&
        (failed(type.getStridesAndOffset(strides, offset)) ||
         (!runTime && llvm::any_of(strides, ShapedType::isDynamic)) ||
         (!strides.empty() && strides.back() != 1)))
      return skip("an operand is a view with dynamic or non-unit innermost "
                  "strides");
  }
  std::optional<ElementType> at = getTargetElementType(typeOf(aMem));
  std::optional<ElementType> bt = getTargetElementType(typeOf(bMem));
  std::optional<ElementType> ct = getTargetElementType(typeOf(cMem));
  // A unit whose B holds K's pairs or quads per column (AMX's tiles, a
  // vector dot product) where the chip has one for these types and the
  // contraction suits it (TileGemm.cpp), in the chip's order.
  SmallVector<const MatrixUnitDesc *> grouped;
  if (at && bt && ct)
    grouped = findVNNIUnits(chip, *at, *bt, *ct);
  // Without a vector outer-product unit for these types (i8), the last
  // such unit takes contractions smaller than itself too, padded.
  bool noOuterProduct =
      !(at && bt && ct && findThreadScopeUnit(chip, *at, *bt, *ct, 0));
  if (runTime)
    grouped.clear();
  for (const MatrixUnitDesc *tile : grouped) {
    bool onlyUnit = noOuterProduct && tile == grouped.back();
    std::string why = checkTileGemm(op, dims, *tile, chip, onlyUnit);
    if (why.empty()) {
      std::optional<std::pair<affine::AffineForOp, Value>> fill;
      if (aMem != cMem && bMem != cMem)
        fill = findInitialFill(op, cMem);
      StringAttr level =
          StringAttr::get(op->getContext(),
                          stringifyComputeLevelKind(chip.getTaskLevel()->kind));
      memref::GlobalOp packedSource;
      // An epilogue for the dot products' direct stores: the statements
      // between `op` and it (independent of `op`) move above `op`.
      linalg::GenericOp epilogue = findFusableEpilogue(op);
      if (epilogue)
        while (op->getNextNode() != epilogue)
          op->getNextNode()->moveBefore(op);
      std::string plan = buildTileGemm(
          op, dims, *tile, chip, onlyUnit, fill ? fill->second : Value(), level,
          packConstants ? &symbols : nullptr, packedSource, epilogue);
      explain(op, plan);
      if (epilogue) {
        explain(epilogue,
                llvm::formatv("matrix units: epilogue of {0} ops fused into "
                              "the last stores of the dot products",
                              epilogue.getBlock()->getOperations().size() - 1)
                    .str());
        epilogue->erase();
      }
      if (packedSource)
        packedSources.insert(packedSource);
      if (fill) {
        explain(op, "matrix units: C's fill folded into the copy of the "
                    "accumulated tiles to C");
        fill->first->erase();
      }
      op->erase();
      // The views of a packed constant that nothing reads any more.
      if (packedSource)
        eraseUnusedViews(bMem);
      return;
    }
    explain(op, "matrix units: not on " + tile->name + ": " + why);
  }
  // The widest vector FMA that N fills (N = 8 output channels per group of
  // a grouped convolution on a chip with 16- and 8-lane FMAs: the 8-lane
  // one, not a 16-lane tile left to loop tiling).
  // N's and K's extents known only at run time count as
  // kPlannedRunTimeRows (M's below).
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  for (unsigned d : {dims.n, dims.kInner})
    if (ShapedType::isDynamic(ranges[d]))
      ranges[d] = kPlannedRunTimeRows;
  const MatrixUnitDesc *unit =
      at && bt && ct ? findThreadScopeUnit(chip, *at, *bt, *ct, ranges[dims.n])
                     : nullptr;
  if (!unit)
    return skip("the target has no thread-scope vector outer-product unit "
                "for these element types");
  // M's extents known only at run time count as many rows as make M
  // kPlannedRunTimeRows (or one, where its static extents are more).
  int64_t flatM = 1, staticM = 1, runTimeLoops = 0;
  for (unsigned d : dims.m) {
    if (ShapedType::isDynamic(ranges[d]))
      ++runTimeLoops;
    else
      staticM *= ranges[d];
  }
  for (unsigned d : dims.m)
    flatM *=
        ShapedType::isDynamic(ranges[d])
            ? std::max<int64_t>(1, static_cast<int64_t>(std::pow(
                                       double(kPlannedRunTimeRows) / staticM,
                                       1.0 / runTimeLoops)))
            : ranges[d];

  GemmPlan p;
  p.unit = unit;
  p.lanes = unit->n;
  p.m = flatM;
  p.runTimeM = runTimeM;
  p.runTimeN = runTimeN;
  p.runTimeK = runTimeK;
  p.k = ranges[dims.kInner];
  p.nr = kTileRowVectors * p.lanes;
  if (!runTimeN)
    mergeSplitN(op, dims, p.nr);
  p.n = ranges[dims.n];
  for (unsigned d : dims.nOuter)
    p.n *= ranges[d];
  const MemoryLevelDesc *regs = chip.getMemoryLevel(MemoryKind::RegisterFile);
  int64_t elemBytes = typeOf(cMem).getIntOrFloatBitWidth() / 8;
  if (!regs)
    return skip("the target states no register file");
  // The architectural registers: a narrower unit than the chip's vector
  // width (8 lanes on a 16-lane chip) uses as many of them, not more.
  int64_t vectorRegs =
      regs->capacityBytes /
      std::max<int64_t>(p.lanes * elemBytes, chip.vectorWidthBits / 8);
  int64_t accumulators = static_cast<int64_t>(kAccumulatorShare * vectorRegs);
  // An N narrower than the tile's rows of kTileRowVectors vectors but at
  // least one vector wide (16 or 24 output channels on 16 lanes: MobileNet's
  // and EfficientNet's stems and first blocks) gets rows of one vector and
  // twice as many of them.
  int64_t rowVectors = kTileRowVectors;
  if (p.n < p.nr && p.n >= p.lanes && dims.nOuter.empty()) {
    rowVectors = 1;
    p.nr = p.lanes;
  }
  // Rows of kWideTileRowVectors vectors (half as many of them) when A is
  // read in place through a flattened M (a convolution's image, oh, ow):
  // each of the tile's rows then needs its own index into A, live across
  // the K loop, and each row panel of N reads A again. A 3x3 convolution
  // with 64 channels at batch 8 ran 1.3x faster with 6 x 64 tiles than
  // with 12 x 32 (A read once instead of twice; half the broadcasts per
  // FMA, no spilled row pointers). Not when those rows are one contiguous
  // run (contiguousRowsOfA: a 1x1 convolution, x @ W^T over batch and
  // sequence): read through the collapsed M they share one base address,
  // and x @ W^T with 8 x 128 rows ran 1.12x faster on one core as 12 x 2
  // (1024x3072x768: 50.9 -> 45.3 ms, the 2-D form 42.4 ms).
  AffineMap mapA = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
  auto lastA = dyn_cast<AffineDimExpr>(mapA.getResults().back());
  bool aInPlace =
      lastA && lastA.getPosition() == dims.kInner &&
      llvm::none_of(mapA.getResults().drop_back(), [&](AffineExpr e) {
        return e.isFunctionOfDim(dims.kInner);
      });
  // Only while the wide tile keeps at least as many rows as it has vectors
  // across (32 registers of 16 lanes: 6 x 4, not 16 registers: 3 x 4).
  int64_t wideRows = accumulators / kWideTileRowVectors;
  if (aInPlace && p.k >= kMinBlockedK && dims.m.size() > 1 &&
      !contiguousRowsOfA(op, dims) && dims.nOuter.empty() &&
      wideRows >= kWideTileRowVectors &&
      p.n % (kWideTileRowVectors * p.lanes) == 0) {
    rowVectors = kWideTileRowVectors;
    p.nr = rowVectors * p.lanes;
  }
  // Rows of kLongTileRowVectors vectors when N, and the inner N loop that
  // mergeSplitN may have joined to outer ones (a head), is a multiple of
  // them and the tile keeps at least as many rows as it has vectors across:
  // 8 x 48 on 32 registers of 16 lanes loads 3 vectors and 8 broadcasts per
  // 24 FMAs where 12 x 32 loads 2 and 12, and the transformers' M of 128 or
  // 1024 rows has no edge tile of 8 rows. x @ W^T on one core, interleaved:
  // 128x768x768 1.28 -> 1.06 ms, 1024x3072x768 38.8 -> 35.1 ms (MKL 1.12
  // and 32.1 ms). Not where N is not such a multiple: the last panel would
  // compute zeros (64 to 512 channels).
  int64_t longRows = accumulators / kLongTileRowVectors;
  if (rowVectors == kTileRowVectors && longRows >= kLongTileRowVectors &&
      ranges[dims.n] % (kLongTileRowVectors * p.lanes) == 0) {
    rowVectors = kLongTileRowVectors;
    p.nr = rowVectors * p.lanes;
  }
  p.mr = accumulators / rowVectors;
  // The blocking below counts M in register tiles; a long-row tile keeps
  // the blocks of the two-vector tile it replaces (a 197-row linear layer
  // stays N-parallel).
  int64_t blockRows =
      rowVectors == kLongTileRowVectors ? accumulators / kTileRowVectors : p.mr;
  if (p.mr < 1)
    return skip("the register file cannot hold a register tile");
  // At most half the tile's rows (a decode step's x @ W, a batch-1
  // classifier): a matrix-vector product reading B once, in place, instead
  // of packing it and multiplying rows of zeros (Gemv.cpp).
  if (!runTime && p.m * 2 <= p.mr) {
    std::string why = checkGemv(op, dims);
    if (why.empty()) {
      std::optional<std::pair<affine::AffineForOp, Value>> fill;
      if (aMem != cMem && bMem != cMem)
        fill = findInitialFill(op, cMem);
      bool insideTask = op->getParentOfType<scf::ParallelOp>() ||
                        op->getParentOfType<affine::AffineParallelOp>();
      StringAttr level =
          StringAttr::get(op->getContext(),
                          stringifyComputeLevelKind(chip.getTaskLevel()->kind));
      explain(op, buildGemv(op, dims, p.lanes, accumulators,
                            fill ? fill->second : Value(), level, insideTask));
      if (fill) {
        explain(op, "matrix units: C's fill folded into the final stores");
        fill->first->erase();
      }
      op->erase();
      return;
    }
    explain(op, "matrix units: not a matrix-vector product: " + why);
  }
  // Fewer rows than the register tile (a batch-1 classifier, a
  // matrix-vector product) still run on the micro-kernel: the packed rows
  // past M are zeros, and the N groups below spread the columns over the
  // cores. Fewer columns than NR would waste most of every vector.
  if (p.n < p.nr)
    return skip(llvm::formatv("N = {0} is narrower than the register tile's "
                              "{1} columns",
                              p.n, p.nr)
                    .str());

  SmallVector<const MemoryLevelDesc *> caches = chip.getCachesBySize();
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
  // Nor are unit K loops (a 1x1 convolution's window): they add nothing to
  // K, and flattening them would pack A, with that division per element,
  // instead of reading its contiguous rows in place.
  while (!runTimeK && p.k < kMinBlockedK && !dims.kOuter.empty() &&
         ranges[dims.kOuter.back()] > 1) {
    unsigned dim = dims.kOuter.pop_back_val();
    dims.kFlat.insert(dims.kFlat.begin(), dim);
    p.k *= ranges[dim];
  }
  // A is read in place when its rows run along the blocked K with unit
  // stride: its last index is the blocked K loop alone, which no other index
  // uses (see GemmPlan::directA).
  p.directA = dims.kFlat.empty() && aInPlace;
  p.rowsOuter = p.directA;
  if (!p.directA)
    setLinearA(op, dims, ranges, p);
  // K blocks of equal length (768 = 3 x 256, not 272 + 272 + 224).
  p.kc = std::min(
      p.k, alignUp(llvm::divideCeil(p.k, llvm::divideCeil(p.k, p.kc)), 16));
  // Rows of A read in place that evict each other from L1 are copied, per
  // task and K block, to rows one line (or vector) longer than the block.
  // A narrower A than C (bf16 or f16 into f32) is copied too: widened once
  // per task and K block, not at every broadcast of every tile.
  if (p.directA) {
    std::optional<int64_t> stride = rowStrideOfA(op, dims);
    if (typeOf(aMem) != typeOf(cMem) ||
        (stride && rowsShareCacheSets(*stride * elemBytes, p.mr, *caches[0]))) {
      p.copyA = true;
      p.aCopyStride =
          alignUp(p.kc, p.lanes) +
          std::max<int64_t>(p.lanes, caches[0]->lineBytes / elemBytes);
    }
  }
  // NC: the B panel KC x NC in the outermost cache.
  int64_t ncCache = std::max<int64_t>(p.nr, budget(2) / (p.kc * elemBytes));
  p.nc = std::max(p.nr, std::min(ncCache / p.nr * p.nr, alignUp(p.n, p.nr)));
  int64_t ncPanels = llvm::divideCeil(std::min(p.nc, p.n), p.nr);
  // All of K's packed B for the NC block in the per-core cache: allK.
  int64_t kTotal = alignUp(p.k, p.kc);
  for (unsigned d : dims.kOuter)
    kTotal *= ranges[d];
  // A run-time K's B is packed one K block at a time, into a buffer of one
  // block.
  p.allK = !runTimeK && kTotal * ncPanels * p.nr * elemBytes <= budget(1);
  p.packWhole = !runTime && isPackedWhole(op, dims, p);
  memref::GlobalOp bSource =
      packConstants && !runTime ? constantB(op, dims) : nullptr;
  p.constantB = static_cast<bool>(bSource);
  // Inside a task of an enclosing parallel loop, the GEMM is one task.
  p.insideTask = op->getParentOfType<scf::ParallelOp>() ||
                 op->getParentOfType<affine::AffineParallelOp>();
  // M's rows per task when it is split into kMinParallelBlocks blocks.
  int64_t mcParallel =
      p.insideTask ? p.m : llvm::divideCeil(p.m, kMinParallelBlocks);
  if (!p.insideTask && dims.batch.empty() && p.directA && !runTimeK &&
      (!p.allK || mcParallel < kMinDirectTiles * blockRows)) {
    // N-parallel: NC as wide as the per-core cache holds all of K for, and
    // narrow enough for kMinParallelBlocks tasks. Not with a packed A: each
    // task would pack all of it again (DenseNet's 1x1 convolutions over
    // 7x7 pixels ran 10% slower). Also when all of B fits the per-core
    // cache but M's kMinParallelBlocks blocks would be shorter than
    // kMinDirectTiles register tiles: one fork instead of a packing fork and
    // a compute fork, each core's packed columns in its own cache (ResNet-50
    // at batch 1 ran 2% slower with 784-row 1x1 convolutions split along M
    // once a 2 MiB L2 held their filters whole).
    int64_t ncFit = budget(1) / (kTotal * elemBytes) / p.nr * p.nr;
    int64_t ncTasks = tasksOfPanels(llvm::divideCeil(p.n, p.nr)) * p.nr;
    int64_t nc = std::max(p.nr, std::min(ncFit, ncTasks));
    // Packed whole at run time, B's NC blocks are whole panels. Packed one
    // K block at a time (B is N x K, K innermost: torch's x @ W^T; or K x N;
    // a 197x3072x768 linear layer ran 1.3x faster so than as 1 M block x 8
    // N groups per K block) or at compile time, the last one may end past N
    // (masked while packing, or zero-padded).
    // Only while M fits one M block of kMinDirectTiles tiles: every task
    // reads all of A, and taller M blocks split the work as well (x @ W^T
    // with 1024-1576 rows ran 1.1-1.4x faster as M blocks x N groups).
    // There must be NC blocks enough for the cores: half of
    // kMinParallelBlocks here (a 256 x 16 GEMM stays 8 M blocks rather than
    // one task), and two for a B packed whole (a filter that does not fit
    // the per-core cache, in halves; DenseNet's 3x3 convolutions to 32
    // channels, one NC block, ran on one core: 52 of them at batch 1).
    int64_t ncBlocks = llvm::divideCeil(p.n, nc);
    bool others = (p.constantB || !p.packWhole) &&
                  ncBlocks * 2 >= kMinParallelBlocks &&
                  p.m <= kMinDirectTiles * blockRows;
    p.packWhole = p.packWhole && !p.constantB && p.n % nc == 0;
    if ((p.packWhole && ncBlocks >= 2) || others) {
      p.nc = nc;
      ncPanels = p.nc / p.nr;
      p.nParallel = p.allK = true;
    }
  }
  // MC: the A block MC x KC in the next cache. A packed A is split into at
  // least kMinParallelBlocks M blocks: fewer, taller M blocks with more N
  // groups keep B micro-panels in L1 longer, but every group packs its A
  // block again, element by element (BERT-base at batch 1 ran 20% slower
  // that way). An A read in place costs the N groups nothing, while every
  // M block streams the packed B panel again: its M blocks are at least
  // kMinDirectTiles register tiles tall, in equal parts (a 197x3072x768
  // linear layer ran 25% faster as 1 M block x 8 N groups than as 6 x 2),
  // when N has panels enough for even N groups (MobileNetV2's narrow 1x1
  // convolutions at batch 8 ran 2% slower with 3 + 3 + 3 + 1 panels).
  // N-parallel tasks run all of M: every M block reads the packed B again.
  int64_t mcCache = std::max<int64_t>(p.mr, budget(1) / (p.kc * elemBytes));
  int64_t mcWanted = std::min(mcCache, mcParallel);
  int64_t nPanels = llvm::divideCeil(std::min(p.nc, p.n), p.nr);
  if (p.directA && nPanels >= 2 * kMinParallelBlocks) {
    int64_t tall =
        std::min(mcCache, std::max(mcWanted, kMinDirectTiles * blockRows));
    mcWanted = static_cast<int64_t>(
        llvm::divideCeil(p.m, llvm::divideCeil(p.m, tall)));
  }
  p.mc = alignUp(p.nParallel ? mcCache : mcWanted, p.mr);
  p.mc = std::max(p.mr, std::min(p.mc, alignUp(p.m, p.mr)));
  // More M blocks than kMinParallelBlocks (the cache bounds MC): a multiple
  // of kMinParallelBlocks of them, of equal height, so that any power-of-two
  // core count up to it gets the same share (13 blocks on 2 cores left one
  // core idle for a 13th of a 3x3 convolution over 8 x 56 x 56 pixels).
  if (!p.nParallel && llvm::divideCeil(p.m, p.mc) > kMinParallelBlocks) {
    int64_t blocks = alignUp(llvm::divideCeil(p.m, p.mc), kMinParallelBlocks);
    p.mc = alignUp(llvm::divideCeil(p.m, blocks), p.mr);
  }
  // Fewer M blocks than kMinParallelBlocks: split N's panels too.
  int64_t mBlocks = llvm::divideCeil(p.m, p.mc);
  int64_t wantedGroups = p.nParallel || p.insideTask
                             ? 1
                             : llvm::divideCeil(kMinParallelBlocks, mBlocks);
  p.groupPanels = llvm::divideCeil(ncPanels, std::min(ncPanels, wantedGroups));
  p.groups = llvm::divideCeil(ncPanels, p.groupPanels);
  int64_t batchTasks = 1;
  for (unsigned d : dims.batch)
    batchTasks *= ranges[d];
  p.batchParallel = !p.insideTask && batchTasks >= kMinParallelBlocks;

  const ComputeLevelDesc &level = *chip.getTaskLevel();
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
  memref::GlobalOp packedB;
  if (p.constantB) {
    packedB = packConstantB(op, dims, p, bSource, symbols);
    builder.setPackedB(packedB);
    packedSources.insert(bSource);
    explain(op, llvm::formatv("matrix units: B, the constant @{0}, packed at "
                              "compile time into @{1} ({2} bytes of {3})",
                              bSource.getSymName(), packedB.getSymName(),
                              packedB.getType().getNumElements() * elemBytes,
                              bSource.getType().getNumElements() * elemBytes)
                    .str());
  }
  builder.build();
  if (runTime) {
    SmallVector<StringRef> names;
    for (auto [known, name] :
         {std::pair{runTimeM, "M"}, std::pair{runTimeN, "N"},
          std::pair{runTimeK, "K"}})
      if (known)
        names.push_back(name);
    explain(op, llvm::formatv("matrix units: {0} known only at run time: "
                              "blocks planned for the extents below, their "
                              "number and the edges taken at run time",
                              llvm::join(names, ", "))
                    .str());
  }
  if (fill) {
    explain(op, "matrix units: C's fill folded into the first K block, which "
                "stores without reading C");
    fill->first->erase();
  }
  std::string aForm =
      p.copyA && typeOf(aMem) != typeOf(cMem)
          ? llvm::formatv("copied by rows, widened to {0}", typeOf(cMem)).str()
      : p.copyA
          ? llvm::formatv("copied by rows (its rows overflow sets of '{0}')",
                          caches[0]->name)
                .str()
      : p.directA ? "read in place"
      : p.aAlongM ? "packed MR rows per load"
      : p.aLinear ? "packed through a table of K offsets"
                  : "packed";
  explain(op,
          llvm::formatv(
              "matrix units: {0} MxNxK {1}x{2}x{3} -> {4} register tile "
              "{5}x{6} ({7} accumulators of {8} registers), KC={9} "
              "({10}), MC={11} ({12}), NC={13} ({14}), {15} M blocks x "
              "{16} N groups (>= {17} tasks){19}, A {20}, {21}{22}{23}, on "
              "level '{18}'",
              op->getName(), p.m, p.n, p.k, unit->name, p.mr, p.nr,
              p.mr * rowVectors, vectorRegs, p.kc, caches[0]->name, p.mc,
              caches[std::min<size_t>(1, caches.size() - 1)]->name, p.nc,
              caches[std::min<size_t>(p.nParallel ? 1 : 2, caches.size() - 1)]
                  ->name,
              mBlocks, p.groups, kMinParallelBlocks, level.name,
              p.insideTask      ? ", inside a task of the enclosing loop"
              : p.batchParallel ? ", the batch loops as the tasks"
              : p.nParallel     ? ", the NC blocks as the tasks"
                                : "",
              aForm, p.allK ? "all K blocks per task" : "one K block per task",
              p.packWhole ? ", B packed whole along its rows" : "",
              p.rowsOuter ? ", each tile's rows over its N panels" : ""));
  if (epilogue) {
    explain(epilogue,
            llvm::formatv("matrix units: epilogue of {0} ops fused "
                          "into the micro-kernel's final stores{1}",
                          epilogue.getBlock()->getOperations().size() - 1,
                          GemmBuilder::rollsEpilogue(epilogue)
                              ? ", applied by a loop over the tile's rows "
                                "(math functions or divisions)"
                              : ""));
    epilogue->erase();
  }
  op->erase();
  // The views of a packed constant that nothing reads any more, so that the
  // constant itself can go.
  if (p.constantB)
    eraseUnusedViews(bMem);
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
            : llvm::formatv(
                  "no subgroup- or warpgroup-scope unit for {0} x {1} -> {2} "
                  "with an f32 accumulator",
                  at ? stringifyElementType(*at) : "?",
                  bt ? stringifyElementType(*bt) : "?",
                  ct ? stringifyElementType(*ct) : "?")
                  .str());
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
