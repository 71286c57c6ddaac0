//===- GemmBuilder.cpp - The GEMM code of pb-map-matrix-units ------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Emits the GEMM that pb-map-matrix-units planned (see MapMatrixUnits.cpp
// for the algorithm and GemmBuilder.h for the plan's fields).
//
//===----------------------------------------------------------------------===//

#include "GemmBuilder.h"

#include "pb/Dialect/PBDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::pb;

namespace mlir::pb::gemm {

std::optional<unsigned> contiguousRows(linalg::LinalgOp op, OpOperand *operand,
                                       const GemmDims &dims) {
  if (dims.m.size() < 2)
    return std::nullopt;
  auto type = dyn_cast<MemRefType>(operand->get().getType());
  if (!type || !type.getLayout().isIdentity())
    return std::nullopt;
  AffineMap map = op.getMatchingIndexingMap(operand);
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  std::optional<unsigned> first;
  for (auto [pos, result] : llvm::enumerate(map.getResults())) {
    auto dim = dyn_cast<AffineDimExpr>(result);
    if (dim && dim.getPosition() == dims.m.front()) {
      first = pos;
      break;
    }
  }
  if (!first || *first + dims.m.size() > map.getNumResults())
    return std::nullopt;
  for (auto [i, loop] : llvm::enumerate(dims.m)) {
    auto dim = dyn_cast<AffineDimExpr>(map.getResult(*first + i));
    if (!dim || dim.getPosition() != loop)
      return std::nullopt;
    if (i > 0 && (type.isDynamicDim(*first + i) ||
                  type.getDimSize(*first + i) != ranges[loop]))
      return std::nullopt;
  }
  // No other index may use an M loop.
  for (auto [pos, result] : llvm::enumerate(map.getResults())) {
    if (pos >= *first && pos < *first + dims.m.size())
      continue;
    for (unsigned loop : dims.m)
      if (result.isFunctionOfDim(loop))
        return std::nullopt;
  }
  return first;
}

Value GemmBuilder::collapseDims(Value memref, unsigned first) {
  int64_t rank = cast<MemRefType>(memref.getType()).getRank();
  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0; d < rank;) {
    ReassociationIndices group{d++};
    if (group.front() == first)
      while (d < static_cast<int64_t>(first + dims.m.size()))
        group.push_back(d++);
    groups.push_back(group);
  }
  return memref::CollapseShapeOp::create(b, memref, groups);
}

void GemmBuilder::build() {
  serialTasks = p.insideTask;
  // Extents known only at run time, read once before the GEMM from the
  // operands that the loops index.
  runTimeRanges.assign(ranges.size(), nullptr);
  if (llvm::any_of(ranges, ShapedType::isDynamic)) {
    SmallVector<Range> loopRanges = op.createLoopRanges(b, b.getLoc());
    for (auto [dim, extent] : llvm::enumerate(ranges))
      if (ShapedType::isDynamic(extent))
        runTimeRanges[dim] = getValueOrCreateConstantIndexOp(
            b, b.getLoc(), loopRanges[dim].size);
  }
  if (p.runTimeM) {
    runTimeM = idx(1);
    for (unsigned dim : dims.m)
      runTimeM = b.createOrFold<arith::MulIOp>(runTimeM, range(dim));
  }
  if (p.runTimeN) {
    runTimeN = range(dims.n);
    for (unsigned dim : dims.nOuter)
      runTimeN = b.createOrFold<arith::MulIOp>(runTimeN, range(dim));
  }
  Type f = cast<MemRefType>(op.getDpsInitOperand(0)->get().getType())
               .getElementType();
  int64_t ncPanels = llvm::divideCeil(p.nc, p.nr);
  // With `allK`, B is packed for all of K at once (every window position,
  // every KC block), then every task runs all its K blocks; otherwise B is
  // packed and the tasks run one K block at a time.
  // (A run-time K has no outer K loops, nor `allK` or `packWhole`: K's
  // blocks are counted at run time and B packed one at a time.)
  int64_t pcBlocks = llvm::divideCeil(p.k, p.kc);
  int64_t kBlocks = pcBlocks;
  for (unsigned d : dims.kOuter)
    kBlocks *= ranges[d];
  Value kBlockCount = p.runTimeK ? kcBlocks() : idx(kBlocks);
  auto bpType = MemRefType::get(
      {p.allK || p.packWhole ? kBlocks : 1, ncPanels, p.kc, p.nr}, f);
  // One packed B for the GEMM, or one per batch-parallel or N-parallel task;
  // none when B was packed at compile time.
  Value bp;
  if (packedB)
    bp =
        memref::GetGlobalOp::create(b, packedB.getType(), packedB.getSymName());
  else if (!p.batchParallel && !p.nParallel)
    bp = memref::AllocOp::create(b, bpType, b.getI64IntegerAttr(64));

  if (p.directA) {
    if (std::optional<unsigned> pos = contiguousRowsOfA(op, dims)) {
      aRows = collapseDims(op.getDpsInputOperand(0)->get(), *pos);
      aRowsPos = *pos;
    }
  }
  if (std::optional<unsigned> pos =
          contiguousRows(op, op.getDpsInitOperand(0), dims)) {
    cRowsPos = *pos;
    cRows = collapseDims(op.getDpsInitOperand(0)->get(), cRowsPos);
    // The epilogue's output has C's shape and its loops (identity maps).
    if (epilogue) {
      Value out = epilogue.getDpsInitOperand(0)->get();
      if (cast<MemRefType>(out.getType()).getLayout().isIdentity())
        epilogueRows = collapseDims(out, cRowsPos);
    }
  }

  SmallVector<Value> loops(ranges.size());
  auto jcBlock = [&]() {
    Value jc = loops[dims.n];
    Value nc = minIdx(b.createOrFold<arith::SubIOp>(nExtent(), jc), p.nc);
    Value panels = b.createOrFold<arith::CeilDivSIOp>(nc, idx(p.nr));
    if (packedB) {
      // The NC block's (K blocks x panels x KC x NR) part of the packed B.
      ArrayRef<int64_t> shape = packedB.getType().getShape();
      SmallVector<OpFoldResult> offsets(shape.size(), b.getIndexAttr(0));
      offsets[0] = b.createOrFold<arith::DivUIOp>(jc, idx(p.nc));
      SmallVector<OpFoldResult> sizes{b.getIndexAttr(1)};
      for (int64_t extent : shape.drop_front())
        sizes.push_back(b.getIndexAttr(extent));
      SmallVector<OpFoldResult> strides(shape.size(), b.getIndexAttr(1));
      auto type = memref::SubViewOp::inferRankReducedResultType(
          shape.drop_front(), packedB.getType(), offsets, sizes, strides);
      Value block = memref::SubViewOp::create(b, cast<MemRefType>(type), bp,
                                              offsets, sizes, strides);
      if (p.allK)
        return computeBlocks(block, loops, jc, nc, pcBlocks);
      auto kbLoop = scf::ForOp::create(b, idx(0), kBlockCount, idx(1));
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(kbLoop.getBody());
      return computeBlocks(block, loops, jc, nc, pcBlocks,
                           kbLoop.getInductionVar());
    }
    // Packs panel `jp` of K block `kb` into `bpBlock`.
    auto packKBlock = [&](Value kb, Value jp, Value bpBlock) {
      SmallVector<Value> blockLoops(loops);
      Value pc = setKBlock(blockLoops, kb, pcBlocks);
      Value kc = minIdx(b.createOrFold<arith::SubIOp>(kExtent(), pc), p.kc);
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
    auto kbLoop = scf::ForOp::create(b, idx(0), kBlockCount, idx(1));
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
      auto jcLoop = scf::ForOp::create(b, idx(0), nExtent(), idx(p.nc));
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
      if (!packedB)
        bp = memref::AllocOp::create(b, bpType, b.getI64IntegerAttr(64));
      serialTasks = true;
      batchLoop(dims.batch.size());
      if (!packedB)
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
    Value task = taskLoops(
        {p.runTimeN ? b.createOrFold<arith::CeilDivSIOp>(nExtent(), idx(p.nc))
                    : idx(llvm::divideCeil(p.n, p.nc))})[0];
    loops[dims.n] = b.createOrFold<arith::MulIOp>(task, idx(p.nc));
    if (!packedB)
      bp = memref::AllocOp::create(b, bpType, b.getI64IntegerAttr(64));
    serialTasks = true;
    jcBlock();
    if (!packedB)
      memref::DeallocOp::create(b, bp);
    return;
  }
  batchLoop(0);
  if (!p.batchParallel && !packedB)
    memref::DeallocOp::create(b, bp);
}

Value GemmBuilder::setKBlock(SmallVector<Value> &loops, Value kb,
                             int64_t pcBlocks) {
  if (p.runTimeK) // no outer K loops
    return b.createOrFold<arith::MulIOp>(kb, idx(p.kc));
  Value pcIndex = b.createOrFold<arith::RemUIOp>(kb, idx(pcBlocks));
  Value outer = b.createOrFold<arith::DivUIOp>(kb, idx(pcBlocks));
  if (!dims.kOuter.empty())
    setFlattened(loops, dims.kOuter, outer);
  return b.createOrFold<arith::MulIOp>(pcIndex, idx(p.kc));
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

Value GemmBuilder::widen(Value v) {
  Type acc = cast<MemRefType>(op.getDpsInitOperand(0)->get().getType())
                 .getElementType();
  Type from = getElementTypeOrSelf(v.getType());
  if (from == acc)
    return v;
  Type to = acc;
  if (auto vector = dyn_cast<VectorType>(v.getType()))
    to = vector.clone(acc);
  if (isa<FloatType>(acc))
    return arith::ExtFOp::create(b, to, v);
  return arith::ExtSIOp::create(b, to, v);
}

void GemmBuilder::packB(Value bp, ArrayRef<Value> loopsIn, Value jp, Value jc,
                        Value pc, Value kc) {
  OpOperand *bOperand = op.getDpsInputOperand(1);
  Value bMem = bOperand->get();
  Type f = cast<MemRefType>(bMem.getType()).getElementType();
  auto vecType = VectorType::get({p.lanes}, f);
  Value zero = arith::ConstantOp::create(b, b.getZeroAttr(f));
  OpBuilder::InsertionGuard guard(b);
  bool exact = tilesDivideN();
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
        b.createOrFold<arith::AddIOp>(
            b.createOrFold<arith::MulIOp>(jp, idx(p.nr)), idx(offset)));
  };
  // Packs row kk of the micro-panel, one vector of NR / lanes at a time.
  auto packRow = [&](Value kk) {
    SmallVector<Value> loops(loopsIn);
    setK(loops, b.createOrFold<arith::AddIOp>(pc, kk));
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
      vector::StoreOp::create(b, widen(vec), bp,
                              ValueRange{jp, kk, idx(v * p.lanes)});
    }
  };
  Value kcMain = idx(0);
  if (alongK) {
    kcMain = arith::MulIOp::create(
        b, b.createOrFold<arith::DivUIOp>(kc, idx(p.lanes)), idx(p.lanes));
    // A panel past N's edge (a classifier's 1000 columns) reads row by row,
    // masked.
    if (!exact) {
      Value full = b.createOrFold<arith::CmpIOp>(arith::CmpIPredicate::sle,
                                                 column(p.nr), nExtent());
      kcMain = b.createOrFold<arith::SelectOp>(full, kcMain, idx(0));
    }
    auto kLoop = scf::ForOp::create(b, idx(0), kcMain, idx(p.lanes));
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(kLoop.getBody());
    Value kk = kLoop.getInductionVar();
    SmallVector<Value> loops(loopsIn);
    setK(loops, b.createOrFold<arith::AddIOp>(pc, kk));
    // A loop over the panel's columns of squares, as in packWholeB.
    auto vLoop = scf::ForOp::create(b, idx(0), idx(p.nr), idx(p.lanes));
    b.setInsertionPointToStart(vLoop.getBody());
    Value v0 = vLoop.getInductionVar();
    Value squareColumn = b.createOrFold<arith::AddIOp>(column(0), v0);
    SmallVector<Value> square;
    for (int64_t i = 0; i < p.lanes; ++i) {
      setColumn(loops, b.createOrFold<arith::AddIOp>(squareColumn, idx(i)));
      square.push_back(widen(
          vector::LoadOp::create(b, vecType, bMem, indices(bOperand, loops))));
    }
    transposeSquare(b, square);
    for (int64_t t = 0; t < p.lanes; ++t)
      vector::StoreOp::create(
          b, square[t], bp,
          ValueRange{jp, b.createOrFold<arith::AddIOp>(kk, idx(t)), v0});
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
      value[dim] = b.createOrFold<arith::RemUIOp>(qi, idx(ranges[dim]));
      qi = b.createOrFold<arith::DivUIOp>(qi, idx(ranges[dim]));
    }
    Value kb = idx(0);
    for (unsigned dim : dims.kOuter)
      kb = arith::AddIOp::create(
          b, b.createOrFold<arith::MulIOp>(kb, idx(ranges[dim])), value[dim]);
    Value kInner = idx(0);
    for (unsigned dim : dims.kFlat)
      kInner = arith::AddIOp::create(
          b, b.createOrFold<arith::MulIOp>(kInner, idx(ranges[dim])),
          value[dim]);
    kInner = arith::AddIOp::create(
        b, b.createOrFold<arith::MulIOp>(kInner, idx(ranges[dims.kInner])),
        value[dims.kInner]);
    kb = b.createOrFold<arith::AddIOp>(
        b.createOrFold<arith::MulIOp>(kb, idx(pcBlocks)),
        b.createOrFold<arith::DivUIOp>(kInner, idx(p.kc)));
    return {kb, b.createOrFold<arith::RemUIOp>(kInner, idx(p.kc))};
  };
  Value panelColumn = b.createOrFold<arith::AddIOp>(
      jc, b.createOrFold<arith::MulIOp>(jp, idx(p.nr)));
  OpBuilder::InsertionGuard guard(b);
  int64_t qMain = q / p.lanes * p.lanes;
  if (qMain > 0) {
    auto qLoop = scf::ForOp::create(b, idx(0), idx(qMain), idx(p.lanes));
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(qLoop.getBody());
    Value q0 = qLoop.getInductionVar();
    SmallVector<std::pair<Value, Value>> dest;
    for (int64_t t = 0; t < p.lanes; ++t)
      dest.push_back(destination(b.createOrFold<arith::AddIOp>(q0, idx(t))));
    // One square per iteration of a loop over the panel's NR / lanes
    // columns of squares (rolled: the code is a fraction of the unrolled
    // squares', which S4 and S5 compile for every GEMM).
    auto vLoop = scf::ForOp::create(b, idx(0), idx(p.nr), idx(p.lanes));
    b.setInsertionPointToStart(vLoop.getBody());
    Value v0 = vLoop.getInductionVar();
    Value squareColumn = b.createOrFold<arith::AddIOp>(panelColumn, v0);
    SmallVector<Value> square;
    for (int64_t i = 0; i < p.lanes; ++i)
      square.push_back(widen(vector::LoadOp::create(
          b, vecType, rows,
          ValueRange{b.createOrFold<arith::AddIOp>(squareColumn, idx(i)),
                     q0})));
    transposeSquare(b, square);
    for (int64_t t = 0; t < p.lanes; ++t)
      vector::StoreOp::create(
          b, square[t], bp, ValueRange{dest[t].first, jp, dest[t].second, v0});
  }
  if (qMain == q)
    return;
  // The last Q % lanes elements of each row, one at a time.
  auto qLoop = scf::ForOp::create(b, idx(qMain), idx(q), idx(1));
  b.setInsertionPointToStart(qLoop.getBody());
  Value qi = qLoop.getInductionVar();
  auto [kb, kk] = destination(qi);
  auto iLoop = scf::ForOp::create(b, idx(0), idx(p.nr), idx(1));
  b.setInsertionPointToStart(iLoop.getBody());
  Value i = iLoop.getInductionVar();
  Value value = memref::LoadOp::create(
      b, rows, ValueRange{b.createOrFold<arith::AddIOp>(panelColumn, i), qi});
  memref::StoreOp::create(b, widen(value), bp, ValueRange{kb, jp, kk, i});
}

/// Transposes the square `rows` (lanes vectors of lanes elements, lanes a
/// power of two) in place: log2(lanes) rounds of two-source shuffles, each
/// swapping the off-diagonal s x s blocks of every 2s x 2s block.
void transposeSquare(ImplicitLocOpBuilder &b, SmallVector<Value> &rows) {
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
  // A's packed and copied rows are in C's type (widened as they are made).
  Type fa = cast<MemRefType>(aMem.getType()).getElementType();
  Type f = cast<MemRefType>(op.getDpsInitOperand(0)->get().getType())
               .getElementType();
  Value zero = arith::ConstantOp::create(b, b.getZeroAttr(f));
  Value blocks = p.runTimeM
                     ? b.createOrFold<arith::CeilDivSIOp>(mExtent(), idx(p.mc))
                     : idx(llvm::divideCeil(p.m, p.mc));
  OpBuilder::InsertionGuard guard(b);
  SmallVector<Value> task = taskLoops({blocks, idx(p.groups)});
  Value ic = b.createOrFold<arith::MulIOp>(task[0], idx(p.mc));
  Value firstPanel = b.createOrFold<arith::MulIOp>(task[1], idx(p.groupPanels));
  Value mc = minIdx(b.createOrFold<arith::SubIOp>(mExtent(), ic), p.mc);
  int64_t mcPanels = llvm::divideCeil(p.mc, p.mr);
  auto apType = MemRefType::get({mcPanels, p.kc, p.mr}, f);
  Value ap;
  if (!p.directA)
    ap = memref::AllocOp::create(b, apType, b.getI64IntegerAttr(64));
  aCopy = aCopyRow0 = nullptr;
  if (p.copyA) {
    aCopy = memref::AllocOp::create(
        b, MemRefType::get({mcPanels * p.mr, p.aCopyStride}, f),
        b.getI64IntegerAttr(64));
    aCopyRow0 = ic;
  }
  // The register tile's sums, for an epilogue applied row by row
  // (rollsEpilogue).
  epilogueTile = nullptr;
  if (epilogue && rollsEpilogue(epilogue))
    epilogueTile = memref::AllocOp::create(b, MemRefType::get({p.mr, p.nr}, f),
                                           b.getI64IntegerAttr(64));
  // A linear A's offsets of the K indices of a K block (GemmPlan::aLinear).
  Value kOffsets;
  if (!p.directA && !p.aAlongM && p.aLinear)
    kOffsets = memref::AllocOp::create(
        b, MemRefType::get({p.kc}, b.getIndexType()), b.getI64IntegerAttr(64));
  Value rowPanels = b.createOrFold<arith::CeilDivSIOp>(mc, idx(p.mr));

  // The task's K blocks (all: the outer K loops, then KC blocks of the
  // inner; or the one `kbFixed`, whose B alone `bpAll` holds).
  SmallVector<Value> loops(loopsIn);
  Operation *outermostK = nullptr;
  Value pc, bp;
  if (kbFixed) {
    pc = setKBlock(loops, kbFixed, pcBlocks);
    bp = kBlockOf(bpAll, p.packWhole || packedB ? kbFixed : idx(0));
  } else {
    Value kb = idx(0);
    for (unsigned dim : dims.kOuter) {
      auto loop = scf::ForOp::create(b, idx(0), idx(ranges[dim]), idx(1));
      if (!outermostK)
        outermostK = loop;
      b.setInsertionPointToStart(loop.getBody());
      loops[dim] = loop.getInductionVar();
      kb = arith::AddIOp::create(
          b, b.createOrFold<arith::MulIOp>(kb, idx(ranges[dim])), loops[dim]);
    }
    // One KC block and no outer K loops: no K loop, and the first and the
    // last K block are known to be this one (the code for other blocks is
    // not built).
    Value pcIndex = idx(0);
    if (pcBlocks > 1 || !dims.kOuter.empty() || p.runTimeK) {
      auto pcLoop = scf::ForOp::create(
          b, idx(0), p.runTimeK ? kcBlocks() : idx(pcBlocks), idx(1));
      if (!outermostK)
        outermostK = pcLoop;
      b.setInsertionPointToStart(pcLoop.getBody());
      pcIndex = pcLoop.getInductionVar();
    }
    kb = b.createOrFold<arith::AddIOp>(
        b.createOrFold<arith::MulIOp>(kb, idx(pcBlocks)), pcIndex);
    pc = b.createOrFold<arith::MulIOp>(pcIndex, idx(p.kc));
    bp = kBlockOf(bpAll, kb);
  }
  Value kc = minIdx(b.createOrFold<arith::SubIOp>(kExtent(), pc), p.kc);
  if (initialValue) {
    firstK =
        b.createOrFold<arith::CmpIOp>(arith::CmpIPredicate::eq, pc, idx(0));
    for (unsigned dim : dims.kOuter)
      firstK = arith::AndIOp::create(
          b, firstK,
          b.createOrFold<arith::CmpIOp>(arith::CmpIPredicate::eq, loops[dim],
                                        idx(0)));
  }
  if (epilogue) {
    lastK = b.createOrFold<arith::CmpIOp>(arith::CmpIPredicate::eq,
                                          b.createOrFold<arith::AddIOp>(pc, kc),
                                          kExtent());
    for (unsigned dim : dims.kOuter)
      lastK = arith::AndIOp::create(
          b, lastK,
          b.createOrFold<arith::CmpIOp>(arith::CmpIPredicate::eq, loops[dim],
                                        idx(ranges[dim] - 1)));
  }
  ArrayRef<Value> blockLoops = loops;
  if (p.copyA)
    copyABlock(blockLoops, ic, mc, pc, kc);

  // Pack A: row panels of MR rows, k-major inside a panel; rows past M are
  // zeros. A row's M indices are computed once per row. A linear A is read
  // through a 1-D view, at `sum` plus its coefficients times the loops that
  // `takes` accepts (GemmPlan::aLinear).
  auto addTerms = [&](Value sum, ArrayRef<Value> loops,
                      llvm::function_ref<bool(unsigned)> takes) {
    for (auto [dim, coefficient] : llvm::enumerate(p.aCoefficients))
      if (coefficient && takes(dim))
        sum = arith::AddIOp::create(
            b, sum,
            b.createOrFold<arith::MulIOp>(loops[dim], idx(coefficient)));
    return sum;
  };
  auto isM = [&](unsigned dim) { return llvm::is_contained(dims.m, dim); };
  Value flat;
  if (!p.directA && p.aLinear) {
    SmallVector<ReassociationIndices> all(1);
    for (int64_t d = 0, e = cast<MemRefType>(aMem.getType()).getRank(); d < e;
         ++d)
      all[0].push_back(d);
    flat = memref::CollapseShapeOp::create(b, aMem, all);
  }
  if (p.aAlongM) {
    // Rows past M are zeros (masked loads) when M's panels are not full.
    auto panelType = VectorType::get({p.mr}, fa);
    auto ipLoop = scf::ForOp::create(b, idx(0), rowPanels, idx(1));
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ipLoop.getBody());
    Value ip = ipLoop.getInductionVar();
    Value row0 = b.createOrFold<arith::AddIOp>(
        ic, b.createOrFold<arith::MulIOp>(ip, idx(p.mr)));
    Value base = b.createOrFold<arith::AddIOp>(row0, idx(p.aOffset));
    // One K loop of loads: plain ones for a full panel, masked ones for the
    // partial panel at M's end.
    auto kLoop = [&](Value mask) {
      auto loop = scf::ForOp::create(b, idx(0), kc, idx(1));
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(loop.getBody());
      Value kk = loop.getInductionVar();
      SmallVector<Value> loops(blockLoops);
      setK(loops, b.createOrFold<arith::AddIOp>(pc, kk));
      Value offset =
          addTerms(base, loops, [&](unsigned dim) { return !isM(dim); });
      Value panel;
      if (mask)
        panel = vector::MaskedLoadOp::create(
            b, panelType, flat, offset, mask,
            arith::ConstantOp::create(
                b, panelType,
                DenseElementsAttr::get(panelType, b.getZeroAttr(fa))));
      else
        panel = vector::LoadOp::create(b, panelType, flat, offset);
      vector::StoreOp::create(b, widen(panel), ap, ValueRange{ip, kk, idx(0)});
    };
    if (tilesDivideM()) {
      kLoop(nullptr);
    } else {
      Value rows = b.createOrFold<arith::SubIOp>(mExtent(), row0);
      Value full = b.createOrFold<arith::CmpIOp>(arith::CmpIPredicate::sge,
                                                 rows, idx(p.mr));
      auto ifOp = scf::IfOp::create(b, full, /*withElseRegion=*/true);
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      kLoop(nullptr);
      b.setInsertionPointToStart(ifOp.elseBlock());
      kLoop(vector::CreateMaskOp::create(
          b, VectorType::get({p.mr}, b.getI1Type()), ValueRange{rows}));
    }
  } else if (!p.directA) {
    // A linear A: the K block's offsets into the table, and the offset of
    // the loops that stay fixed in the block (batch, outer K).
    Value blockBase;
    auto isBlockedK = [&](unsigned dim) {
      return dim == dims.kInner || llvm::is_contained(dims.kFlat, dim);
    };
    if (kOffsets) {
      auto fill = scf::ForOp::create(b, idx(0), kc, idx(1));
      {
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPointToStart(fill.getBody());
        Value kk = fill.getInductionVar();
        SmallVector<Value> loops(blockLoops);
        setK(loops, b.createOrFold<arith::AddIOp>(pc, kk));
        memref::StoreOp::create(b, addTerms(idx(0), loops, isBlockedK),
                                kOffsets, ValueRange{kk});
      }
      blockBase = addTerms(idx(p.aOffset), blockLoops, [&](unsigned dim) {
        return !isM(dim) && !isBlockedK(dim);
      });
    }
    auto ipLoop = scf::ForOp::create(b, idx(0), rowPanels, idx(1));
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ipLoop.getBody());
    Value ip = ipLoop.getInductionVar();
    for (int64_t r = 0; r < p.mr; ++r) {
      Value row = arith::AddIOp::create(
          b, ic,
          b.createOrFold<arith::AddIOp>(
              b.createOrFold<arith::MulIOp>(ip, idx(p.mr)), idx(r)));
      auto copyRow = [&](bool inBounds) {
        SmallVector<Value> loops(blockLoops);
        Value rowBase;
        if (inBounds) {
          setRow(loops, row);
          if (kOffsets)
            rowBase = addTerms(blockBase, loops, isM);
        }
        auto kLoop = scf::ForOp::create(b, idx(0), kc, idx(1));
        OpBuilder::InsertionGuard g2(b);
        b.setInsertionPointToStart(kLoop.getBody());
        Value kk = kLoop.getInductionVar();
        Value value = zero;
        if (inBounds && kOffsets) {
          Value offset = arith::AddIOp::create(
              b, rowBase, memref::LoadOp::create(b, kOffsets, ValueRange{kk}));
          value = widen(memref::LoadOp::create(b, flat, ValueRange{offset}));
        } else if (inBounds) {
          setK(loops, b.createOrFold<arith::AddIOp>(pc, kk));
          value =
              widen(memref::LoadOp::create(b, aMem, indices(aOperand, loops)));
        }
        memref::StoreOp::create(b, value, ap, ValueRange{ip, kk, idx(r)});
      };
      if (tilesDivideM()) {
        copyRow(true);
        continue;
      }
      Value inside = b.createOrFold<arith::CmpIOp>(arith::CmpIPredicate::slt,
                                                   row, mExtent());
      auto ifOp = scf::IfOp::create(b, inside, /*withElseRegion=*/true);
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      copyRow(true);
      b.setInsertionPointToStart(ifOp.elseBlock());
      copyRow(false);
    }
  }

  Value colPanels = arith::MinSIOp::create(
      b, b.createOrFold<arith::CeilDivSIOp>(nc, idx(p.nr)),
      b.createOrFold<arith::AddIOp>(firstPanel, idx(p.groupPanels)));
  // The register tiles: NR panels outer, row panels inner (B's micro-panel
  // stays in L1 while A's stream through it), or, with `rowsOuter`, the
  // other way round.
  auto jrLoop = p.rowsOuter
                    ? scf::ForOp::create(b, idx(0), rowPanels, idx(1))
                    : scf::ForOp::create(b, firstPanel, colPanels, idx(1));
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(jrLoop.getBody());
    auto irLoop = p.rowsOuter
                      ? scf::ForOp::create(b, firstPanel, colPanels, idx(1))
                      : scf::ForOp::create(b, idx(0), rowPanels, idx(1));
    b.setInsertionPointToStart(irLoop.getBody());
    Value jp = jrLoop.getInductionVar();
    Value ip = irLoop.getInductionVar();
    if (p.rowsOuter)
      std::swap(ip, jp);
    Value i0 = b.createOrFold<arith::AddIOp>(
        ic, b.createOrFold<arith::MulIOp>(ip, idx(p.mr)));
    Value j0 = b.createOrFold<arith::AddIOp>(
        jc, b.createOrFold<arith::MulIOp>(jp, idx(p.nr)));
    microKernel(ap, bp, blockLoops, i0, j0, ip, jp, pc, kc);
  }
  if (outermostK)
    b.setInsertionPointAfter(outermostK);
  else
    b.setInsertionPointAfter(jrLoop);
  if (!p.directA)
    memref::DeallocOp::create(b, ap);
  if (aCopy)
    memref::DeallocOp::create(b, aCopy);
  if (kOffsets)
    memref::DeallocOp::create(b, kOffsets);
  if (epilogueTile)
    memref::DeallocOp::create(b, epilogueTile);
}

void GemmBuilder::copyABlock(ArrayRef<Value> loopsIn, Value ic, Value mc,
                             Value pc, Value kc) {
  OpOperand *aOperand = op.getDpsInputOperand(0);
  Type f = cast<MemRefType>(aOperand->get().getType()).getElementType();
  auto vecType = VectorType::get({p.lanes}, f);
  OpBuilder::InsertionGuard guard(b);
  auto rowLoop = scf::ForOp::create(b, idx(0), mc, idx(1));
  b.setInsertionPointToStart(rowLoop.getBody());
  Value i = rowLoop.getInductionVar();
  Value row = b.createOrFold<arith::AddIOp>(ic, i);
  SmallVector<Value> loops(loopsIn);
  setRow(loops, row);
  setK(loops, pc);
  SmallVector<Value> first = indices(aOperand, loops);
  if (aRows)
    first = rowIndex(first, row, aRowsPos);
  // A's last index is the blocked K alone (directA), whose extent is A's
  // last dimension: a vector at a time along it, plain loads while the
  // vector ends inside the K block, then the last one masked at the
  // dimension's end. Elements past the K block's end, read when its length
  // is not a multiple of the lanes, land in the copy's padding and are
  // never read.
  Value source = aRows ? aRows : aOperand->get();
  Value kcMain = b.createOrFold<arith::MulIOp>(
      b.createOrFold<arith::DivUIOp>(kc, idx(p.lanes)), idx(p.lanes));
  auto copy = [&](Value from, Value to, bool masked) {
    auto kLoop = scf::ForOp::create(b, from, to, idx(p.lanes));
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(kLoop.getBody());
    Value kk = kLoop.getInductionVar();
    SmallVector<Value> index(first);
    index.back() = b.createOrFold<arith::AddIOp>(index.back(), kk);
    Value v =
        masked ? vector::TransferReadOp::create(
                     b, vecType, source, index,
                     arith::ConstantOp::create(b, b.getZeroAttr(f)),
                     ArrayRef<bool>{false})
                     .getResult()
               : vector::LoadOp::create(b, vecType, source, index).getResult();
    vector::StoreOp::create(b, widen(v), aCopy, ValueRange{i, kk});
  };
  copy(idx(0), kcMain, /*masked=*/false);
  copy(kcMain, kc, /*masked=*/true);
}

void GemmBuilder::microKernel(Value ap, Value bp, ArrayRef<Value> loopsIn,
                              Value i0, Value j0, Value ip, Value jp, Value pc,
                              Value kc) {
  bool exact = tilesDivideM() && tilesDivideN();
  if (exact)
    return microKernelBody(ap, bp, loopsIn, i0, j0, ip, jp, pc, kc, true);
  // Full tiles take the unmasked path; only tiles on M's or N's edge pay for
  // masks and row checks.
  Value rowsFit = b.createOrFold<arith::CmpIOp>(
      arith::CmpIPredicate::sle, b.createOrFold<arith::AddIOp>(i0, idx(p.mr)),
      mExtent());
  Value colsFit = b.createOrFold<arith::CmpIOp>(
      arith::CmpIPredicate::sle, b.createOrFold<arith::AddIOp>(j0, idx(p.nr)),
      nExtent());
  Value full = b.createOrFold<arith::AndIOp>(rowsFit, colsFit);
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
    rows.push_back(b.createOrFold<arith::AddIOp>(i0, idx(r)));
    rowLoops.emplace_back(loopsIn);
    setRow(rowLoops.back(), rows.back());
  }
  auto cIndices = [&](int64_t r, int64_t v) {
    SmallVector<Value> loops(rowLoops[r]);
    setColumn(loops, b.createOrFold<arith::AddIOp>(j0, idx(v * p.lanes)));
    return std::make_pair(indices(cOperand, loops), rows[r]);
  };
  // C as the micro-kernel reads and writes it: through its collapsed rows
  // when they are contiguous (contiguousRows), with the indices for it.
  Value cView = cRows ? cRows : cMem;
  auto cAt = [&](int64_t r, int64_t v) {
    auto [index, row] = cIndices(r, v);
    return cRows ? rowIndex(index, row, cRowsPos) : index;
  };

  // Prefetch the C tile, which the K loop's result is added to: the rows
  // are a row stride apart and missed the caches when the accumulators
  // were loaded from them before the loop (and the stores of a first K
  // block after a fill would miss). Not in a K block that is both the
  // first after a fill and the last before a fused epilogue: it neither
  // reads nor writes C, and prefetching C for writing there pulled a
  // whole C-sized buffer through the caches for nothing (a 1x1
  // convolution of 16 input channels at batch 8).
  if (fullTile) {
    std::optional<OpBuilder::InsertionGuard> guard;
    // The rows prefetched: none when the block is known to leave C
    // untouched (K is one block, between a fill and an epilogue).
    int64_t prefetchedRows = p.mr;
    if (initialValue && epilogue) {
      guard.emplace(b);
      Value untouched = b.createOrFold<arith::AndIOp>(firstK, lastK);
      std::optional<int64_t> known = getConstantIntValue(untouched);
      if (!known) {
        Value touched = arith::XOrIOp::create(
            b, untouched, arith::ConstantOp::create(b, b.getBoolAttr(true)));
        auto ifOp = scf::IfOp::create(b, touched, /*withElseRegion=*/false);
        b.setInsertionPointToStart(ifOp.thenBlock());
      }
      if (known && *known)
        prefetchedRows = 0;
    }
    for (int64_t r = 0; r < prefetchedRows; ++r)
      for (int64_t v = 0; v < nv; ++v)
        memref::PrefetchOp::create(b, cView, cAt(r, v),
                                   /*isWrite=*/true, /*localityHint=*/3,
                                   /*isDataCache=*/true);
  }

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
        row = b.createOrFold<arith::MinSIOp>(
            row, b.createOrFold<arith::SubIOp>(mExtent(), idx(1)));
      if (aCopy) {
        aIndex.push_back(
            {b.createOrFold<arith::SubIOp>(row, aCopyRow0), idx(0)});
        continue;
      }
      setRow(loops, row);
      setK(loops, pc);
      SmallVector<Value> index = indices(aOperand, loops);
      // The M indices become the flattened row (contiguousRowsOfA).
      aIndex.push_back(aRows ? rowIndex(index, row, aRowsPos) : index);
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
        index.back() = b.createOrFold<arith::AddIOp>(index.back(), kk);
        a = memref::LoadOp::create(b,
                                   aCopy   ? aCopy
                                   : aRows ? aRows
                                           : aOperand->get(),
                                   index);
      } else {
        a = memref::LoadOp::create(b, ap, ValueRange{ip, kk, idx(r)});
      }
      Value aVec = vector::BroadcastOp::create(b, vecType, widen(a));
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
        Value row = rows[r];
        SmallVector<Value> index = cAt(r, v);
        Value acc = kLoop.getResult(r * nv + v);
        Value c;
        if (fullTile) {
          c = vector::LoadOp::create(b, vecType, cView, index);
        } else {
          Value inside = b.createOrFold<arith::CmpIOp>(
              arith::CmpIPredicate::slt, row, mExtent());
          auto ifOp = scf::IfOp::create(b, TypeRange{vecType}, inside, true);
          OpBuilder::InsertionGuard g(b);
          b.setInsertionPointToStart(ifOp.thenBlock());
          Value read;
          if (columnsFit(fullTile))
            read = vector::LoadOp::create(b, vecType, cView, index);
          else
            read = vector::TransferReadOp::create(b, vecType, cView, index,
                                                  zero, ArrayRef<bool>{false});
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
  // The first K block after a fill adds the fill's value; the others add
  // what C holds. `firstK` is a constant when K has one block.
  auto addInitialValue = [&]() {
    SmallVector<Value> firstSums(kLoop.getResults());
    if (!matchPattern(initialValue, m_PosZeroFloat())) {
      Value init = vector::BroadcastOp::create(b, vecType, initialValue);
      for (Value &sum : firstSums)
        sum = arith::AddFOp::create(b, init, sum);
    }
    return firstSums;
  };
  std::optional<int64_t> knownFirst =
      initialValue ? getConstantIntValue(firstK) : std::nullopt;
  SmallVector<Value> accs;
  if (!initialValue || (knownFirst && !*knownFirst)) {
    accs = addC();
  } else if (knownFirst) {
    accs = addInitialValue();
  } else {
    SmallVector<Type> types(p.mr * nv, vecType);
    auto ifOp = scf::IfOp::create(b, types, firstK, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    scf::YieldOp::create(b, addInitialValue());
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
  std::optional<int64_t> knownLast =
      epilogue ? getConstantIntValue(lastK) : std::nullopt;
  if (!epilogue || (knownLast && !*knownLast))
    return storeTile(accs, cIndex, rows, fullTile, false);
  auto storeThroughEpilogue = [&]() {
    if (epilogueTile)
      storeTileThroughRolledEpilogue(accs, loopsIn, i0, j0, fullTile);
    else
      storeTile(accs, cIndex, rows, fullTile, true);
  };
  if (knownLast)
    return storeThroughEpilogue();
  auto ifOp = scf::IfOp::create(b, lastK, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  storeThroughEpilogue();
  b.setInsertionPointToStart(ifOp.elseBlock());
  storeTile(accs, cIndex, rows, fullTile, false);
}

/// True when the epilogue's code per element is long: a math function
/// (which S4 expands into a polynomial of about twenty operations) or a
/// division. Applied to each of a register tile's MR x NR / lanes sums in
/// both the full and the edge path, such an epilogue was copied 48 times
/// into each GEMM of efficientnet_b0 (SiLU after batch norm); rolled, the
/// model's S4 input shrank from 36.1k to 24.7k lines.
bool GemmBuilder::rollsEpilogue(linalg::GenericOp epilogue) {
  return llvm::any_of(epilogue.getBlock()->without_terminator(),
                      [](Operation &bodyOp) {
                        return isa<math::MathDialect>(bodyOp.getDialect()) ||
                               isa<arith::DivFOp>(bodyOp);
                      });
}

void GemmBuilder::storeTileThroughRolledEpilogue(ArrayRef<Value> accs,
                                                 ArrayRef<Value> loopsIn,
                                                 Value i0, Value j0,
                                                 bool fullTile) {
  // The sums go to the L1-resident tile buffer; a loop over the tile's rows
  // reads them back and applies the epilogue, one row of NR / lanes
  // vectors per iteration: the epilogue's code appears NR / lanes times
  // instead of MR x NR / lanes, for one store and one load per vector.
  int64_t nv = p.nr / p.lanes;
  OpOperand *cOperand = op.getDpsInitOperand(0);
  auto vecType = VectorType::get(
      {p.lanes}, cast<MemRefType>(epilogueTile.getType()).getElementType());
  for (int64_t r = 0; r < p.mr; ++r)
    for (int64_t v = 0; v < nv; ++v)
      vector::StoreOp::create(b, accs[r * nv + v], epilogueTile,
                              ValueRange{idx(r), idx(v * p.lanes)});
  OpBuilder::InsertionGuard guard(b);
  auto rowLoop = scf::ForOp::create(b, idx(0), idx(p.mr), idx(1));
  b.setInsertionPointToStart(rowLoop.getBody());
  Value r = rowLoop.getInductionVar();
  Value row = b.createOrFold<arith::AddIOp>(i0, r);
  if (!fullTile)
    enterRowInsideM(row);
  SmallVector<Value> rowLoops(loopsIn);
  setRow(rowLoops, row);
  for (int64_t v = 0; v < nv; ++v) {
    SmallVector<Value> loops(rowLoops);
    setColumn(loops, b.createOrFold<arith::AddIOp>(j0, idx(v * p.lanes)));
    SmallVector<Value> index = indices(cOperand, loops);
    Value sum = vector::LoadOp::create(b, vecType, epilogueTile,
                                       ValueRange{r, idx(v * p.lanes)});
    storeVector(applyEpilogue(sum, index, fullTile), index, row, fullTile,
                /*withEpilogue=*/true);
  }
}

void GemmBuilder::storeTile(ArrayRef<Value> accs,
                            ArrayRef<SmallVector<Value>> cIndex,
                            ArrayRef<Value> rows, bool fullTile,
                            bool withEpilogue) {
  int64_t nv = p.nr / p.lanes;
  for (int64_t r = 0; r < p.mr; ++r) {
    OpBuilder::InsertionGuard guard(b);
    if (!fullTile)
      enterRowInsideM(rows[r]);
    for (int64_t v = 0; v < nv; ++v) {
      ArrayRef<Value> index = cIndex[r * nv + v];
      Value value = accs[r * nv + v];
      if (withEpilogue)
        value = applyEpilogue(value, index, fullTile);
      storeVector(value, index, rows[r], fullTile, withEpilogue);
    }
  }
}

void GemmBuilder::enterRowInsideM(Value row) {
  // Rows past M are neither read (epilogue inputs) nor written.
  Value inside =
      b.createOrFold<arith::CmpIOp>(arith::CmpIPredicate::slt, row, mExtent());
  auto ifOp = scf::IfOp::create(b, inside, /*withElseRegion=*/false);
  b.setInsertionPointToStart(ifOp.thenBlock());
}

void GemmBuilder::storeVector(Value value, ArrayRef<Value> index, Value row,
                              bool fullTile, bool withEpilogue) {
  Value memref = withEpilogue ? epilogue.getDpsInitOperand(0)->get()
                              : op.getDpsInitOperand(0)->get();
  // The target through its collapsed rows (contiguousRows), when it has them.
  SmallVector<Value> at(index);
  if (Value targetRows = withEpilogue ? epilogueRows : cRows) {
    memref = targetRows;
    at = rowIndex(index, row, cRowsPos);
  }
  if (columnsFit(fullTile))
    vector::StoreOp::create(b, value, memref, at);
  else
    vector::TransferWriteOp::create(b, value, memref, at,
                                    ArrayRef<bool>{false});
}

Value GemmBuilder::applyEpilogue(Value acc, ArrayRef<Value> cIndex,
                                 bool fullTile) {
  return applyEpilogueToVector(b, b.getLoc(), epilogue,
                               op.getDpsInitOperand(0)->get(), acc, cIndex,
                               p.lanes, columnsFit(fullTile));
}

Value applyEpilogueToVector(OpBuilder &b, Location loc,
                            linalg::GenericOp epilogue, Value cMem, Value acc,
                            ArrayRef<Value> cIndex, int64_t lanes,
                            bool inBounds) {
  // The epilogue's loops are the result's dimensions (identity maps).
  Block *body = epilogue.getBlock();
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
    auto vecType = VectorType::get({lanes}, elementType);
    bool vectorRead = map.getNumResults() > 0 &&
                      map.getDimPosition(map.getNumResults() - 1) == innermost;
    Value value;
    if (!vectorRead) {
      value = vector::BroadcastOp::create(
          b, loc, vecType, memref::LoadOp::create(b, loc, input->get(), index));
    } else if (inBounds) {
      value = vector::LoadOp::create(b, loc, vecType, input->get(), index);
    } else {
      Value pad = arith::ConstantOp::create(b, loc, b.getZeroAttr(elementType));
      value = vector::TransferReadOp::create(b, loc, vecType, input->get(),
                                             index, pad, ArrayRef<bool>{false});
    }
    mapping.map(arg, value);
  }
  for (Operation &scalarOp : body->without_terminator()) {
    for (Value operand : scalarOp.getOperands()) {
      if (mapping.contains(operand))
        continue;
      // A value from outside the body (a constant): splat it.
      mapping.map(
          operand,
          vector::BroadcastOp::create(
              b, loc, VectorType::get({lanes}, operand.getType()), operand));
    }
    Operation *vectorOp = b.clone(scalarOp, mapping);
    for (Value result : vectorOp->getResults())
      result.setType(VectorType::get({lanes}, result.getType()));
  }
  return mapping.lookup(body->getTerminator()->getOperand(0));
}

} // namespace mlir::pb::gemm
