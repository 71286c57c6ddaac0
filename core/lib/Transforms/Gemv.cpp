//===- Gemv.cpp - Matrix-vector products of pb-map-matrix-units -----------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A contraction with fewer rows than half the register tile (a decode
// step's x @ W at one token, a batch-1 classifier) has nothing to reuse
// across rows of A: the Goto/BLIS code would pack B (one more pass over the
// largest operand) and fill the tile's rows past M with zeros, multiplying
// them too. Here B is read once, in place, as it lies in memory:
//   - B's rows along N (K x N, x @ W): K split into the tasks, each
//     reading its rows of B whole, every element of A's rows broadcast
//     against them, into its own M x N sums, added into C after the tasks
//     (a short K, or inside a task: panels of columns, M x V sums in
//     registers);
//   - B's rows along K (N x K, x @ W^T, a tied embedding as the output
//     projection): each task takes groups of B's rows, vectors of A's rows
//     against vectors of B's rows along K, one vector of partial sums per
//     (row of A, row of B), reduced across its lanes at the end.
// Both are bound by the bandwidth of reading B once.
//
//===----------------------------------------------------------------------===//

#include "GemmBuilder.h"

#include "pb/Dialect/PBDialect.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::pb;
using namespace mlir::pb::gemm;

/// Rows of B (along K) whose dot products one task step runs at once: each
/// is one more stream of B that the hardware prefetchers must follow.
static constexpr int64_t kGemvRowStreams = 8;
/// The fewest rows of B along N per task that split K among the tasks.
static constexpr int64_t kGemvMinRowsPerTask = 16;

/// A map result's loop, or -1 for a constant; none for other expressions.
static std::optional<int64_t> plainResult(AffineExpr e) {
  if (auto d = dyn_cast<AffineDimExpr>(e))
    return d.getPosition();
  if (isa<AffineConstantExpr>(e))
    return -1;
  return std::nullopt;
}

static bool innermostIs(AffineMap map, unsigned dim) {
  auto d = dyn_cast<AffineDimExpr>(map.getResults().back());
  return d && d.getPosition() == dim;
}

std::string gemm::checkGemv(linalg::LinalgOp op, const GemmDims &dims) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return "a size known only at run time";
  // Loops of one iteration (a [1, 1, 768] x [768, N] read as a batched
  // product) play no role.
  for (ArrayRef<unsigned> loops :
       {ArrayRef<unsigned>(dims.batch), ArrayRef<unsigned>(dims.kOuter),
        ArrayRef<unsigned>(dims.nOuter), ArrayRef<unsigned>(dims.kFlat)})
    for (unsigned d : loops)
      if (ranges[d] != 1)
        return "batch, split N or outer K loops";
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type || !type.getElementType().isF32())
      return "an operand is not an f32 buffer";
    for (AffineExpr e : op.getMatchingIndexingMap(&operand).getResults())
      if (!plainResult(e))
        return "an operand's index is not a loop or a constant";
  }
  AffineMap mapA = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
  AffineMap mapB = op.getMatchingIndexingMap(op.getDpsInputOperand(1));
  if (innermostIs(mapB, dims.n))
    return "";
  if (innermostIs(mapB, dims.kInner) && innermostIs(mapA, dims.kInner))
    return "";
  return "neither N nor K (with A along K) is B's innermost dimension";
}

namespace {
class GemvBuilder {
public:
  GemvBuilder(linalg::LinalgOp op, const GemmDims &dims, int64_t lanes,
              int64_t accumulators, Value fill, StringAttr level,
              bool insideTask)
      : op(op), dims(dims), b(op.getLoc(), op), lanes(lanes),
        accumulators(accumulators), fill(fill), level(level),
        insideTask(insideTask) {
    ranges = op.getStaticLoopRanges();
    n = ranges[dims.n];
    k = ranges[dims.kInner];
    m = 1;
    for (unsigned d : dims.m)
      m *= ranges[d];
    aMem = op.getDpsInputOperand(0)->get();
    bMem = op.getDpsInputOperand(1)->get();
    cMem = op.getDpsInitOperand(0)->get();
    mapA = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
    mapB = op.getMatchingIndexingMap(op.getDpsInputOperand(1));
    mapC = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
    element = cast<MemRefType>(cMem.getType()).getElementType();
    vecType = VectorType::get({lanes}, element);
    kMajor = !innermostIs(mapB, dims.n);
  }

  std::string build() {
    if (kMajor)
      return buildAlongK();
    // A long K split among the tasks, each streaming whole rows of B (see
    // buildAlongNSplitK); a short one, or inside a task, by panels.
    if (!insideTask && k >= kGemvMinRowsPerTask * kMinParallelBlocks)
      return buildAlongNSplitK();
    return buildAlongN();
  }

private:
  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, v); }

  /// Every loop at 0 (the loops of one iteration keep it).
  SmallVector<Value> unitLoops() {
    return SmallVector<Value>(ranges.size(), idx(0));
  }

  /// The loop values of row `row` of the flattened M (outer loops first).
  void setRow(SmallVector<Value> &loops, int64_t row) {
    for (unsigned d : llvm::reverse(dims.m)) {
      loops[d] = idx(row % ranges[d]);
      row /= ranges[d];
    }
  }

  SmallVector<Value> indices(AffineMap map, ArrayRef<Value> loops) {
    SmallVector<Value> result;
    for (AffineExpr e : map.getResults()) {
      int64_t loop = *plainResult(e);
      result.push_back(loop < 0 ? idx(cast<AffineConstantExpr>(e).getValue())
                                : loops[loop]);
    }
    return result;
  }

  Value zeros() {
    return arith::ConstantOp::create(
        b, vecType, DenseElementsAttr::get(vecType, b.getZeroAttr(element)));
  }

  Value mask(int64_t active) {
    return vector::ConstantMaskOp::create(
        b, VectorType::get({lanes}, b.getI1Type()),
        b.getDenseI64ArrayAttr({active}));
  }

  Value load(Value mem, ArrayRef<Value> index, int64_t active) {
    if (active == lanes)
      return vector::LoadOp::create(b, vecType, mem, index);
    return vector::MaskedLoadOp::create(b, vecType, mem, index, mask(active),
                                        zeros());
  }

  /// The parallel tasks `count` (a sequential loop inside a task of an
  /// enclosing loop); returns the task index, the builder inside.
  Value tasks(int64_t count) {
    if (insideTask) {
      auto loop = scf::ForOp::create(b, idx(0), idx(count), idx(1));
      b.setInsertionPointToStart(loop.getBody());
      return loop.getInductionVar();
    }
    auto par = scf::ParallelOp::create(
        b, ValueRange{idx(0)}, ValueRange{idx(count)}, ValueRange{idx(1)});
    par->setAttr(PBDialect::kLevelAttrName, level);
    b.setInsertionPointToStart(par.getBody());
    return par.getInductionVars()[0];
  }

  /// C's element (or `lanes` of them) at `index` plus `sum`: the fill or
  /// C's old value.
  Value addInitial(Value sum, ArrayRef<Value> index, int64_t active,
                   bool vector) {
    if (fill)
      return arith::AddFOp::create(
          b, sum,
          vector ? Value(vector::BroadcastOp::create(b, vecType, fill)) : fill);
    Value old = vector ? load(cMem, index, active)
                       : Value(memref::LoadOp::create(b, cMem, index));
    return arith::AddFOp::create(b, sum, old);
  }

  /// B's rows along N: `vectors` vectors of columns from column `n0`, the
  /// last with `lastLanes` lanes.
  void panel(Value n0, int64_t vectors, int64_t lastLanes) {
    SmallVector<Value> inits(m * vectors, zeros());
    auto kLoop = scf::ForOp::create(b, idx(0), idx(k), idx(1), inits);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(kLoop.getBody());
      SmallVector<Value> loops = unitLoops();
      loops[dims.kInner] = kLoop.getInductionVar();
      SmallVector<Value> bs;
      for (int64_t j = 0; j < vectors; ++j) {
        loops[dims.n] = arith::AddIOp::create(b, n0, idx(j * lanes));
        bs.push_back(load(bMem, indices(mapB, loops),
                          j == vectors - 1 ? lastLanes : lanes));
      }
      SmallVector<Value> sums;
      for (int64_t row = 0; row < m; ++row) {
        setRow(loops, row);
        Value a = memref::LoadOp::create(b, aMem, indices(mapA, loops));
        Value splat = vector::BroadcastOp::create(b, vecType, a);
        for (int64_t j = 0; j < vectors; ++j)
          sums.push_back(vector::FMAOp::create(
              b, splat, bs[j], kLoop.getRegionIterArgs()[row * vectors + j]));
      }
      scf::YieldOp::create(b, sums);
    }
    SmallVector<Value> loops = unitLoops();
    for (int64_t row = 0; row < m; ++row) {
      setRow(loops, row);
      for (int64_t j = 0; j < vectors; ++j) {
        int64_t active = j == vectors - 1 ? lastLanes : lanes;
        loops[dims.n] = arith::AddIOp::create(b, n0, idx(j * lanes));
        SmallVector<Value> index = indices(mapC, loops);
        Value sum = addInitial(kLoop.getResult(row * vectors + j), index,
                               active, /*vector=*/true);
        if (active == lanes)
          vector::StoreOp::create(b, sum, cMem, index);
        else
          vector::MaskedStoreOp::create(b, cMem, index, mask(active), sum);
      }
    }
  }

  std::string buildAlongN() {
    // Panels of V vectors: as many sums as the registers hold, but narrow
    // enough for kMinParallelBlocks tasks (inside a task, one core runs
    // them all).
    int64_t v = std::min<int64_t>(accumulators / m, llvm::divideCeil(n, lanes));
    if (!insideTask)
      v = std::min(v, n / (lanes * kMinParallelBlocks));
    v = std::max<int64_t>(1, v);
    int64_t width = v * lanes;
    int64_t full = n / width, tail = n % width;
    if (full > 0) {
      OpBuilder::InsertionGuard guard(b);
      Value task = tasks(full);
      panel(arith::MulIOp::create(b, task, idx(width)), v, lanes);
    }
    if (tail > 0) {
      int64_t vectors = llvm::divideCeil(tail, lanes);
      int64_t last = tail - (vectors - 1) * lanes;
      panel(idx(full * width), vectors, last);
    }
    return llvm::formatv(
        "matrix units: {0} MxNxK {1}x{2}x{3} as a "
        "matrix-vector product, B read in place along N: {4} "
        "tasks of {5} columns ({6} sums in registers){7}",
        op->getName(), m, n, k, full, width, m * v,
        tail ? llvm::formatv(", {0} more columns after them", tail).str()
             : std::string());
  }

  /// B's rows along N, K split into the tasks: each task reads its rows of
  /// B whole, in order, adding a[m, k] x B[k, :] into its own partial sums
  /// (M x N, in the per-core cache); the sums of the tasks are added into C
  /// after them. Panels of columns read every row of B in segments, each in
  /// another page, where the hardware prefetchers start over: a 4096 x 8192
  /// B ran at 19 GB/s so against 29 for the same product along K.
  std::string buildAlongNSplitK() {
    int64_t chunk = llvm::divideCeil(k, kMinParallelBlocks);
    int64_t tasksCount = llvm::divideCeil(k, chunk);
    int64_t full = n / lanes, last = n % lanes;
    int64_t vectorsPerRow = full + (last ? 1 : 0);
    int64_t padded = vectorsPerRow * lanes;
    auto partialType = MemRefType::get({tasksCount, m, padded}, element);
    auto partial =
        memref::AllocOp::create(b, partialType, b.getI64IntegerAttr(64));
    SmallVector<Value> loops = unitLoops();
    {
      OpBuilder::InsertionGuard guard(b);
      Value task = tasks(tasksCount);
      Value k0 = arith::MulIOp::create(b, task, idx(chunk));
      Value k1 = arith::MinSIOp::create(
          b, arith::AddIOp::create(b, k0, idx(chunk)), idx(k));
      // The task's sums start at zero.
      auto zeroLoop = scf::ForOp::create(b, idx(0), idx(padded), idx(lanes));
      {
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPointToStart(zeroLoop.getBody());
        for (int64_t row = 0; row < m; ++row)
          vector::StoreOp::create(
              b, zeros(), partial,
              ValueRange{task, idx(row), zeroLoop.getInductionVar()});
      }
      auto kLoop = scf::ForOp::create(b, k0, k1, idx(1));
      b.setInsertionPointToStart(kLoop.getBody());
      loops[dims.kInner] = kLoop.getInductionVar();
      SmallVector<Value> splats;
      for (int64_t row = 0; row < m; ++row) {
        setRow(loops, row);
        Value a = memref::LoadOp::create(b, aMem, indices(mapA, loops));
        splats.push_back(vector::BroadcastOp::create(b, vecType, a));
      }
      auto accumulate = [&](Value column, int64_t active) {
        loops[dims.n] = column;
        Value bv = load(bMem, indices(mapB, loops), active);
        for (int64_t row = 0; row < m; ++row) {
          SmallVector<Value> at{task, idx(row), column};
          Value sum = vector::LoadOp::create(b, vecType, partial, at);
          vector::StoreOp::create(
              b, vector::FMAOp::create(b, splats[row], bv, sum), partial, at);
        }
      };
      if (full > 0) {
        auto nLoop =
            scf::ForOp::create(b, idx(0), idx(full * lanes), idx(lanes));
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPointToStart(nLoop.getBody());
        accumulate(nLoop.getInductionVar(), lanes);
      }
      if (last > 0)
        accumulate(idx(full * lanes), last);
    }
    // C = its fill (or old value) + the tasks' sums, a vector at a time.
    {
      OpBuilder::InsertionGuard guard(b);
      Value vector = tasks(vectorsPerRow);
      Value column = arith::MulIOp::create(b, vector, idx(lanes));
      auto store = [&](int64_t active) {
        for (int64_t row = 0; row < m; ++row) {
          Value sum = zeros();
          for (int64_t t = 0; t < tasksCount; ++t)
            sum = arith::AddFOp::create(
                b, sum,
                vector::LoadOp::create(b, vecType, partial,
                                       ValueRange{idx(t), idx(row), column}));
          SmallVector<Value> cLoops = unitLoops();
          setRow(cLoops, row);
          cLoops[dims.n] = column;
          SmallVector<Value> index = indices(mapC, cLoops);
          sum = addInitial(sum, index, active, /*vector=*/true);
          if (active == lanes)
            vector::StoreOp::create(b, sum, cMem, index);
          else
            vector::MaskedStoreOp::create(b, cMem, index, mask(active), sum);
        }
      };
      if (last == 0) {
        store(lanes);
      } else {
        // The last vector is masked.
        Value isLast = arith::CmpIOp::create(b, arith::CmpIPredicate::eq,
                                             vector, idx(vectorsPerRow - 1));
        auto ifOp = scf::IfOp::create(b, isLast, /*withElseRegion=*/true);
        b.setInsertionPointToStart(&ifOp.getThenRegion().front());
        store(last);
        b.setInsertionPointToStart(&ifOp.getElseRegion().front());
        store(lanes);
      }
    }
    memref::DeallocOp::create(b, partial);
    return llvm::formatv("matrix units: {0} MxNxK {1}x{2}x{3} as a "
                         "matrix-vector product, B read in place along N: K "
                         "split into {4} tasks of {5} whole rows of B, each "
                         "with its own {1}x{6} sums, added into C after them",
                         op->getName(), m, n, k, tasksCount, chunk, padded);
  }

  /// B's rows along K: the dot products of every row of A with `rows` rows
  /// of B from row `n0`.
  void group(Value n0, int64_t rows) {
    int64_t full = k / lanes, last = k % lanes;
    SmallVector<Value> loops = unitLoops();
    auto step = [&](Value k0, int64_t active, ValueRange accs) {
      loops[dims.kInner] = k0;
      SmallVector<Value> as;
      for (int64_t row = 0; row < m; ++row) {
        setRow(loops, row);
        as.push_back(load(aMem, indices(mapA, loops), active));
      }
      SmallVector<Value> sums(m * rows);
      for (int64_t r = 0; r < rows; ++r) {
        loops[dims.n] = r == 0 ? n0 : arith::AddIOp::create(b, n0, idx(r));
        Value bv = load(bMem, indices(mapB, loops), active);
        for (int64_t row = 0; row < m; ++row)
          sums[row * rows + r] =
              vector::FMAOp::create(b, as[row], bv, accs[row * rows + r]);
      }
      return sums;
    };
    SmallVector<Value> accs(m * rows, zeros());
    if (full > 0) {
      auto kLoop =
          scf::ForOp::create(b, idx(0), idx(full * lanes), idx(lanes), accs);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(kLoop.getBody());
        scf::YieldOp::create(
            b, step(kLoop.getInductionVar(), lanes, kLoop.getRegionIterArgs()));
      }
      accs = llvm::to_vector_of<Value>(kLoop.getResults());
    }
    if (last > 0)
      accs = step(idx(full * lanes), last, accs);
    for (int64_t row = 0; row < m; ++row) {
      setRow(loops, row);
      for (int64_t r = 0; r < rows; ++r) {
        loops[dims.n] = r == 0 ? n0 : arith::AddIOp::create(b, n0, idx(r));
        SmallVector<Value> index = indices(mapC, loops);
        Value sum = vector::ReductionOp::create(b, vector::CombiningKind::ADD,
                                                accs[row * rows + r],
                                                arith::FastMathFlags::reassoc);
        memref::StoreOp::create(b, addInitial(sum, index, 1, /*vector=*/false),
                                cMem, index);
      }
    }
  }

  std::string buildAlongK() {
    int64_t rows =
        std::max<int64_t>(1, std::min({accumulators / m, kGemvRowStreams, n}));
    int64_t full = n / rows, tail = n % rows;
    if (full > 0) {
      OpBuilder::InsertionGuard guard(b);
      Value task = tasks(full);
      group(arith::MulIOp::create(b, task, idx(rows)), rows);
    }
    if (tail > 0)
      group(idx(full * rows), tail);
    return llvm::formatv(
        "matrix units: {0} MxNxK {1}x{2}x{3} as a "
        "matrix-vector product, B read in place along K: {4} "
        "tasks of {5} dot products of {6} lanes{7}",
        op->getName(), m, n, k, full, rows * m, lanes,
        tail ? llvm::formatv(", {0} more rows of B after them", tail).str()
             : std::string());
  }

  linalg::LinalgOp op;
  const GemmDims &dims;
  ImplicitLocOpBuilder b;
  int64_t lanes, accumulators;
  Value fill;
  StringAttr level;
  bool insideTask;
  SmallVector<int64_t> ranges;
  int64_t m, n, k;
  Value aMem, bMem, cMem;
  AffineMap mapA, mapB, mapC;
  Type element;
  VectorType vecType;
  bool kMajor;
};
} // namespace

std::string gemm::buildGemv(linalg::LinalgOp op, const GemmDims &dims,
                            int64_t lanes, int64_t accumulators, Value fill,
                            StringAttr level, bool insideTask) {
  return GemvBuilder(op, dims, lanes, accumulators, fill, level, insideTask)
      .build();
}
