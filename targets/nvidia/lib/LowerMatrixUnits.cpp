//===- LowerMatrixUnits.cpp - Tagged contractions onto mma.sync -----------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// S4 for the contractions that S3 tagged `pb.matrix_unit`. The unit's
// lowering in the chip table picks the kernel: NVGPUMmaSync units get the
// warp-level kernel below, NVGPUWarpgroupMma units the warpgroup kernel of
// WarpgroupMma.cpp (same copies, pipeline and stores; a warpgroup unit that
// cannot take the op falls back to the warp-level units of its types).
// The warp-level kernel is one gpu.launch:
//
//   block b -> (batch, tm, tn): C[m0:+BM, n0:+BN], warps WARPS_M x WARPS_N
//   shared (dynamic): A [S][BM][BK+padA], B [S][BK][BN+padB] (B indexed
//                     (k, n)) or [S][BN][BK+padB] (B indexed (n, k))
//   accumulators (f32 fragments in registers) = C
//   prologue: copy K tiles 0 .. S-2 (cp.async, zero-filled outside)
//   for kt in K tiles:
//     wait until tile kt has landed; barrier
//     copy K tile kt+S-1 into the stage freed by tile kt-1
//     per unit K step: ldmatrix (16-bit types) or ld.shared (tf32)
//                      fragments, then MI x NI mma.sync per warp
//   C = accumulators (converted to C's type), or the epilogue S3 tagged
//       applied to them, into the epilogue's output
//
// M, K and N are flat: the M loops (a convolution's n, oh, ow) and the K
// loops (kh, kw, c in B's order) are recovered by division, and every
// operand is addressed through its indexing map (implicit GEMM).
// Operands are read with cp.async of the chip's widest vector where the
// contiguous extent allows, else element by element (still zero-filled).
// The padding of each shared tile is the one of 1..4 x 16 bytes with the
// fewest bank conflicts for its fragment reads, simulated with the banks
// of the chip's scratchpad level.
//
//===----------------------------------------------------------------------===//

#include "MatrixUnitKernel.h"

#include "pb/Dialect/PBDialect.h"
#include "pb/Target/TargetRegistry.h"
#include "pb/Transforms/Passes.h"
#include "pb/Transforms/Roofline.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Utils/GPUUtils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::pb::nvidia {
#define GEN_PASS_DEF_PBNVIDIALOWERMATRIXUNITSPASS
#include "pb/NVIDIA/Passes.h.inc"
} // namespace mlir::pb::nvidia

using namespace mlir;
using namespace mlir::pb;
using namespace mlir::pb::nvidia;

/// Warps of a block, as rows x columns of the block tile. Eight warps keep
/// two blocks per SM within the register file at the largest tile.
static constexpr int64_t kWarpsM = 2, kWarpsN = 4;
/// Largest block tile side; warp tiles are then 64 x 32.
static constexpr int64_t kMaxBlockTile = 128;
/// K tile = this many unit K steps (64 bytes of a row for every type).
static constexpr int64_t kUnitStepsPerTile = 2;
/// Pipeline depth cap: more stages add shared memory, not overlap.
static constexpr int64_t kMaxStages = 3;
/// Padding candidates, in units of the widest copy.
static constexpr int64_t kMaxPadUnits = 4;

/// The (row, column) of a shared tile that a lane (d0) reads for fragment
/// register `reg`, relative to the fragment's origin, as one map used both
/// to simulate bank conflicts and to generate the reads. For ldmatrix, `reg`
/// is ignored: the lane supplies one row address of 8 consecutive 16-bit
/// elements.
static AffineMap fragMap(Frag frag, bool ldmatrix, int64_t reg,
                         MLIRContext *ctx) {
  AffineExpr lane = getAffineDimExpr(0, ctx);
  auto map = [&](AffineExpr row, AffineExpr col) {
    return AffineMap::get(1, 0, {row, col}, ctx);
  };
  AffineExpr zero = getAffineConstantExpr(0, ctx);
  if (ldmatrix) {
    switch (frag) {
    case Frag::A: // x4: matrices (rows 0-7|8-15) x (cols 0-7|8-15)
      return map(lane % 16, lane.floorDiv(16) * 8);
    case Frag::BKMajor: // x2, transposed: k rows 0-15 of one n column block
      return map(lane % 16, zero);
    case Frag::BNMajor: // x2: n rows 0-7, k columns 0-7 | 8-15
      return map(lane % 8, (lane.floorDiv(8) % 2) * 8);
    }
  }
  // tf32 m16n8k8: a_i = (g + 8 (i%2), t + 4 (i/2)); b_i = (k t + 4i, n g).
  AffineExpr g = lane.floorDiv(4), t = lane % 4;
  switch (frag) {
  case Frag::A:
    return map(g + 8 * (reg % 2), t + 4 * (reg / 2));
  case Frag::BKMajor:
    return map(t + 4 * reg, g);
  case Frag::BNMajor:
    return map(g, t + 4 * reg);
  }
  llvm_unreachable("fragment kind");
}

/// Worst bank-conflict degree over the shared accesses of one fragment read
/// with row stride `ld` (elements): ldmatrix phases of 8 lanes reading 16
/// bytes each, or 32 lanes reading one element each.
static int64_t conflictDegree(Frag frag, const MmaPlan &p, int64_t ld,
                              const MemoryLevelDesc &shared) {
  int64_t width = shared.bankWidthBytes, banks = shared.banks;
  auto degree = [&](ArrayRef<int64_t> addresses, int64_t bytes) {
    DenseMap<int64_t, llvm::SmallDenseSet<int64_t>> words;
    for (int64_t address : addresses)
      for (int64_t w = address / width;
           w < (address + bytes + width - 1) / width; ++w)
        words[w % banks].insert(w);
    int64_t worst = 1;
    for (auto &entry : words)
      worst = std::max<int64_t>(worst, entry.second.size());
    return worst;
  };
  int64_t total = 0;
  if (p.ldmatrix) {
    int64_t phases = frag == Frag::A ? 4 : 2;
    for (int64_t phase = 0; phase < phases; ++phase) {
      SmallVector<int64_t> addresses;
      AffineMap map = fragMap(frag, true, 0, p.elem.getContext());
      for (int64_t lane = phase * 8; lane < phase * 8 + 8; ++lane) {
        SmallVector<int64_t> c = map.compose(ArrayRef<int64_t>{lane});
        addresses.push_back((c[0] * ld + c[1]) * p.elemBytes);
      }
      total += degree(addresses, 16);
    }
    return total;
  }
  int64_t regs = frag == Frag::A ? 4 : 2;
  for (int64_t reg = 0; reg < regs; ++reg) {
    SmallVector<int64_t> addresses;
    AffineMap map = fragMap(frag, false, reg, p.elem.getContext());
    for (int64_t lane = 0; lane < p.warpSize; ++lane) {
      SmallVector<int64_t> c = map.compose(ArrayRef<int64_t>{lane});
      addresses.push_back((c[0] * ld + c[1]) * p.elemBytes);
    }
    total += degree(addresses, p.elemBytes);
  }
  return total;
}

/// The row stride of a shared tile of `cols` columns: the padding (a whole
/// number of widest copies) with the fewest conflicts, the smallest on ties.
static int64_t chooseStride(Frag frag, const MmaPlan &p, int64_t cols,
                            const MemoryLevelDesc &shared) {
  int64_t best = 0, bestDegree = 0;
  for (int64_t units = 1; units <= kMaxPadUnits; ++units) {
    int64_t ld = cols + units * p.maxVec;
    int64_t degree = conflictDegree(frag, p, ld, shared);
    if (!best || degree < bestDegree) {
      best = ld;
      bestDegree = degree;
    }
  }
  return best;
}

/// Elements per copy along a contiguous extent: the widest power of two
/// up to the chip's vector width that divides it, if it is at least 4
/// bytes (cp.async's smallest); otherwise 1 (element-wise copies).
static int64_t copyWidth(int64_t extent, const MmaPlan &p) {
  for (int64_t vec = p.maxVec; vec * p.elemBytes >= 4; vec /= 2)
    if (extent % vec == 0)
      return vec;
  return 1;
}

static int64_t tileSide(int64_t extent, int64_t minimum) {
  return std::clamp<int64_t>(llvm::PowerOf2Ceil(extent), minimum,
                             kMaxBlockTile);
}

void KernelBuilder::delinearize(Value flat, ArrayRef<unsigned> dims,
                                SmallVectorImpl<Value> &values) {
  for (unsigned d : llvm::reverse(dims.drop_front())) {
    values[d] = arith::RemUIOp::create(b, flat, idx(p.ranges[d]));
    flat = arith::DivUIOp::create(b, flat, idx(p.ranges[d]));
  }
  values[dims.front()] = flat;
}

SmallVector<Value> KernelBuilder::indicesOf(OpOperand *operand, Value row,
                                            Value k, Value col) {
  SmallVector<Value> loops(p.ranges.size());
  for (auto [d, v] : llvm::zip(p.batchDims, batchIdx))
    loops[d] = v;
  if (row)
    delinearize(row, p.mDims, loops);
  if (k)
    delinearize(k, p.kDims, loops);
  loops[p.nDim] = col;
  for (Value &v : loops)
    if (!v)
      v = idx(0);
  return applyIndexingMap(b, b.getLoc(), op.getMatchingIndexingMap(operand),
                          loops);
}

void KernelBuilder::copyTile(Value stage, Value kt, bool isA,
                             SmallVectorImpl<Value> &tokens) {
  int64_t rows = isA ? p.bm : p.rowsB(), cols = isA ? p.bk : p.colsB();
  int64_t vec = isA ? p.vecA : p.vecB;
  Value mem = isA ? aMem : bMem, tile = isA ? aTile : bTile;
  // Origin and extents of this tile in the operand's (row, col) space.
  Value k0 = mul(kt, p.bk);
  Value row0, col0;
  int64_t rowExtent, colExtent;
  if (isA) {
    row0 = m0, col0 = k0, rowExtent = p.m, colExtent = p.k;
  } else if (p.bKMajor) {
    row0 = k0, col0 = n0, rowExtent = p.k, colExtent = p.n;
  } else {
    row0 = n0, col0 = k0, rowExtent = p.n, colExtent = p.k;
  }
  OpOperand *operand = op.getDpsInputOperand(isA ? 0 : 1);
  int64_t perRow = cols / vec, chunks = rows * perRow;
  auto tokenType = nvgpu::DeviceAsyncTokenType::get(b.getContext());
  for (int64_t first = 0; first < chunks; first += p.threads) {
    Value chunk = add(tid, first);
    auto copyChunk = [&]() -> Value {
      Value r = arith::DivUIOp::create(b, chunk, idx(perRow));
      Value c = mul(arith::RemUIOp::create(b, chunk, idx(perRow)), vec);
      Value row = add(row0, r), col = add(col0, c);
      Value inside =
          arith::AndIOp::create(b, lt(row, rowExtent), lt(col, colExtent));
      // Clamped into the operand, so that the address is valid even when
      // nothing is read from it.
      Value r0 = minU(row, rowExtent - 1), c0 = minU(col, colExtent - vec);
      SmallVector<Value> src = isA ? indicesOf(operand, r0, c0, nullptr)
                               : p.bKMajor
                                   ? indicesOf(operand, nullptr, r0, c0)
                                   : indicesOf(operand, nullptr, c0, r0);
      auto [sharedRow, sharedCol] = sharedIndex(isA, r, c);
      SmallVector<Value> dst = {stage, sharedRow, sharedCol};
      if (vec > 1) {
        Value count = arith::SelectOp::create(b, inside, idx(vec), idx(0));
        UnitAttr bypass = vec * p.elemBytes == 16 ? b.getUnitAttr() : nullptr;
        return nvgpu::DeviceAsyncCopyOp::create(b, tokenType, tile, dst, mem,
                                                src, b.getIndexAttr(vec), count,
                                                bypass);
      }
      Value v = memref::LoadOp::create(b, mem, src);
      Value zero = arith::ConstantOp::create(b, b.getZeroAttr(p.elem));
      memref::StoreOp::create(b, arith::SelectOp::create(b, inside, v, zero),
                              tile, dst);
      return nullptr;
    };
    if (first + p.threads <= chunks) {
      if (Value token = copyChunk())
        tokens.push_back(token);
      continue;
    }
    auto guard = scf::IfOp::create(b, lt(chunk, chunks));
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(guard.thenBlock());
    copyChunk();
  }
}

std::pair<Value, Value> KernelBuilder::sharedIndex(bool isA, Value row,
                                                   Value col) {
  if (!p.swizzleBytes)
    return {row, col};
  // A (k, n)-indexed B: column block col / rowElems holds rows 0 .. BK-1.
  int64_t rowElems = p.swizzleBytes / p.elemBytes;
  if (!isA && p.bKMajor) {
    row = add(mul(arith::DivUIOp::create(b, col, idx(rowElems)), p.bk), row);
    col = arith::RemUIOp::create(b, col, idx(rowElems));
  }
  // Elements per 16-byte chunk; a copy never crosses one (copies are at
  // most the chip's 16-byte vector, aligned to their width).
  int64_t chunk = 16 / p.elemBytes;
  int64_t chunksPerRow = p.swizzleBytes / 16;
  Value swizzled =
      arith::XOrIOp::create(b, arith::DivUIOp::create(b, col, idx(chunk)),
                            arith::RemUIOp::create(b, row, idx(chunksPerRow)));
  return {row, add(mul(swizzled, chunk),
                   arith::RemUIOp::create(b, col, idx(chunk)))};
}

Value KernelBuilder::issueStage(Value stage, Value kt) {
  SmallVector<Value> tokens;
  copyTile(stage, kt, /*isA=*/true, tokens);
  copyTile(stage, kt, /*isA=*/false, tokens);
  return nvgpu::DeviceAsyncCreateGroupOp::create(
      b, nvgpu::DeviceAsyncTokenType::get(b.getContext()), tokens);
}

Value KernelBuilder::loadFragment(Frag frag, Value stage, Value row,
                                  Value col) {
  Value tile = frag == Frag::A ? aTile : bTile;
  // The element of the tile that this lane reads for register `reg`.
  auto element = [&](int64_t reg) -> SmallVector<Value> {
    AffineMap map = fragMap(frag, p.ldmatrix, reg, b.getContext());
    Value r = affine::AffineApplyOp::create(b, map.getSubMap({0}), lane);
    Value c = affine::AffineApplyOp::create(b, map.getSubMap({1}), lane);
    return {stage, add(row, r), add(col, c)};
  };
  if (p.ldmatrix) {
    int64_t tiles = frag == Frag::A ? 4 : 2;
    auto type = VectorType::get({tiles, 2}, p.elem);
    return nvgpu::LdMatrixOp::create(b, type, tile, element(0),
                                     /*transpose=*/frag == Frag::BKMajor,
                                     tiles);
  }
  // tf32: each lane reads its elements.
  int64_t regs = frag == Frag::A ? 4 : 2;
  SmallVector<Value> values;
  for (int64_t reg = 0; reg < regs; ++reg)
    values.push_back(memref::LoadOp::create(b, tile, element(reg)));
  return vector::FromElementsOp::create(b, VectorType::get({regs, 1}, p.elem),
                                        values);
}

SmallVector<Value> KernelBuilder::computeStage(Value stage, ValueRange accs) {
  SmallVector<Value> result(accs);
  const MatrixUnitDesc &u = *p.unit;
  for (int64_t kk = 0; kk < p.bk; kk += u.k) {
    SmallVector<Value> aFrags, bFrags;
    for (int64_t i = 0; i < p.mi; ++i)
      aFrags.push_back(
          loadFragment(Frag::A, stage, add(warpRow, i * u.m), idx(kk)));
    for (int64_t j = 0; j < p.ni; ++j) {
      Value col = add(warpCol, j * u.n);
      bFrags.push_back(p.bKMajor
                           ? loadFragment(Frag::BKMajor, stage, idx(kk), col)
                           : loadFragment(Frag::BNMajor, stage, col, idx(kk)));
    }
    for (int64_t i = 0; i < p.mi; ++i)
      for (int64_t j = 0; j < p.ni; ++j) {
        Value &acc = result[i * p.ni + j];
        acc = mma(aFrags[i], bFrags[j], acc);
      }
  }
  return result;
}

Value KernelBuilder::mma(Value a, Value bFrag, Value acc) {
  const MatrixUnitDesc &u = *p.unit;
  if (!p.elem.isBF16())
    return nvgpu::MmaSyncOp::create(b, a, bFrag, acc,
                                    ArrayRef<int64_t>{u.m, u.n, u.k},
                                    /*tf32Enabled=*/!p.ldmatrix);
  // Each row of a fragment (2 x bf16) is one 32-bit register.
  auto registers = [&](Value fragment) {
    auto type = cast<VectorType>(fragment.getType());
    SmallVector<Value> regs;
    for (int64_t r = 0; r < type.getDimSize(0); ++r) {
      Value row = vector::ExtractOp::create(b, fragment, ArrayRef<int64_t>{r});
      regs.push_back(LLVM::BitcastOp::create(b, b.getI32Type(), row));
    }
    return regs;
  };
  SmallVector<Value> c;
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 2; ++j)
      c.push_back(vector::ExtractOp::create(b, acc, ArrayRef<int64_t>{i, j}));
  Type f32 = b.getF32Type();
  auto resultType = LLVM::LLVMStructType::getLiteral(b.getContext(),
                                                     SmallVector<Type>(4, f32));
  Value d = NVVM::MmaOp::create(
      b, resultType, registers(a), registers(bFrag), c,
      ArrayRef<int64_t>{u.m, u.n, u.k}, std::nullopt, std::nullopt,
      std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16, NVVM::MMATypes::bf16},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  SmallVector<Value> values;
  for (int64_t i = 0; i < 4; ++i)
    values.push_back(LLVM::ExtractValueOp::create(b, d, i));
  return vector::FromElementsOp::create(b, acc.getType(), values);
}

void KernelBuilder::storeResult(Value value, Value row, Value col) {
  SmallVector<Value> index =
      indicesOf(op.getDpsInitOperand(0), row, nullptr, col);
  if (!epilogue) {
    memref::StoreOp::create(b, value, cMem, index);
    return;
  }
  gpucommon::storeThroughEpilogue(b, epilogue, cMem, index, value);
}

std::pair<Value, Value> KernelBuilder::cCoord(int64_t mi, int64_t ni, int64_t i,
                                              int64_t j) {
  Value g = arith::DivUIOp::create(b, lane, idx(4));
  Value t = arith::RemUIOp::create(b, lane, idx(4));
  Value row = add(add(m0, warpRow), add(g, mi * kFragM + 8 * i));
  Value col = add(add(n0, warpCol), add(mul(t, 2), ni * kFragN + j));
  return {row, col};
}

void KernelBuilder::build() {
  aMem = op.getDpsInputOperand(0)->get();
  bMem = op.getDpsInputOperand(1)->get();
  cMem = op.getDpsInitOperand(0)->get();
  MLIRContext *ctx = b.getContext();
  auto launch = gpu::LaunchOp::create(
      b, idx(p.blocks), idx(1), idx(1), idx(p.threads), idx(1), idx(1),
      arith::ConstantOp::create(b, b.getI32IntegerAttr(p.sharedBytes)));
  b.setInsertionPointToStart(&launch.getBody().front());
  gpu::TerminatorOp::create(b);
  b.setInsertionPointToStart(&launch.getBody().front());

  // Block and warp coordinates; N tiles vary fastest.
  Value block = launch.getBlockIds().x;
  tid = launch.getThreadIds().x;
  Value tn = arith::RemUIOp::create(b, block, idx(p.tilesN));
  Value rest = arith::DivUIOp::create(b, block, idx(p.tilesN));
  Value tm = arith::RemUIOp::create(b, rest, idx(p.tilesM));
  Value flatBatch = arith::DivUIOp::create(b, rest, idx(p.tilesM));
  for (unsigned d : llvm::reverse(p.batchDims)) {
    batchIdx.push_back(arith::RemUIOp::create(b, flatBatch, idx(p.ranges[d])));
    flatBatch = arith::DivUIOp::create(b, flatBatch, idx(p.ranges[d]));
  }
  std::reverse(batchIdx.begin(), batchIdx.end());
  m0 = mul(tm, p.bm);
  n0 = mul(tn, p.bn);
  warp = arith::DivUIOp::create(b, tid, idx(p.warpSize));
  lane = arith::RemUIOp::create(b, tid, idx(p.warpSize));
  warpRow = mul(arith::DivUIOp::create(b, warp, idx(p.warpsN)), p.wm);
  warpCol = mul(arith::RemUIOp::create(b, warp, idx(p.warpsN)), p.wn);

  // Shared tiles, views of the dynamic shared memory.
  auto space = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  Value smem = gpu::DynamicSharedMemoryOp::create(
      b, MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                         MemRefLayoutAttrInterface(), space));
  auto aType = MemRefType::get({p.stages, p.bm, p.ldA}, p.elem,
                               MemRefLayoutAttrInterface(), space);
  auto bType = MemRefType::get({p.stages, p.sharedRowsB, p.ldB}, p.elem,
                               MemRefLayoutAttrInterface(), space);
  // wgmma's swizzle is a function of address bits: its tiles start at an
  // address aligned to the swizzle pattern (the plan reserved the slack).
  Value base = idx(0);
  if (p.alignBytes) {
    Value address =
        memref::ExtractAlignedPointerAsIndexOp::create(b, smem).getResult();
    Value misalignment =
        arith::RemUIOp::create(b, address, idx(p.alignBytes)).getResult();
    base = arith::RemUIOp::create(
        b, arith::SubIOp::create(b, idx(p.alignBytes), misalignment),
        idx(p.alignBytes));
    aAddress = add(address, base);
    bAddress = add(aAddress, p.bytesA);
  }
  aTile = memref::ViewOp::create(b, aType, smem, base, ValueRange{});
  bTile =
      memref::ViewOp::create(b, bType, smem, add(base, p.bytesA), ValueRange{});

  // Accumulators start from C (or from 0 when C was only zero-filled).
  auto accType = VectorType::get({2, 2}, p.accType);
  bool fullTiles = p.m % p.bm == 0 && p.n % p.bn == 0;
  SmallVector<Value> accs;
  for (int64_t i = 0; i < p.mi; ++i)
    for (int64_t j = 0; j < p.ni; ++j) {
      if (zeroInit) {
        accs.push_back(arith::ConstantOp::create(
            b, DenseElementsAttr::get(accType, b.getZeroAttr(p.accType))));
        continue;
      }
      SmallVector<Value> values;
      for (int64_t r = 0; r < 2; ++r)
        for (int64_t c = 0; c < 2; ++c) {
          auto [row, col] = cCoord(i, j, r, c);
          auto load = [&]() -> Value {
            Value v = memref::LoadOp::create(
                b, cMem, indicesOf(op.getDpsInitOperand(0), row, nullptr, col));
            return p.cElem == p.accType
                       ? v
                       : arith::ExtFOp::create(b, p.accType, v).getResult();
          };
          if (fullTiles) {
            values.push_back(load());
            continue;
          }
          Value inside = arith::AndIOp::create(b, lt(row, p.m), lt(col, p.n));
          auto ifOp = scf::IfOp::create(b, TypeRange{p.accType}, inside,
                                        /*withElseRegion=*/true);
          {
            OpBuilder::InsertionGuard g(b);
            b.setInsertionPointToStart(ifOp.thenBlock());
            scf::YieldOp::create(b, load());
            b.setInsertionPointToStart(ifOp.elseBlock());
            scf::YieldOp::create(
                b, arith::ConstantOp::create(b, b.getZeroAttr(p.accType))
                       .getResult());
          }
          values.push_back(ifOp.getResult(0));
        }
      accs.push_back(vector::FromElementsOp::create(b, accType, values));
    }

  // Prologue: tiles 0 .. S-2, one group each.
  int64_t kTiles = llvm::divideCeil(p.k, p.bk);
  Value token;
  for (int64_t s = 0; s + 1 < p.stages; ++s)
    token = issueStage(idx(s), idx(s));
  SmallVector<Value> iterArgs(accs);
  if (p.warpgroup)
    iterArgs = {packAccumulators(accs)};
  auto loop = scf::ForOp::create(b, idx(0), idx(kTiles), idx(1), iterArgs);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Value kt = loop.getInductionVar();
    // Tile kt is in the oldest of the S-1 outstanding groups.
    nvgpu::DeviceAsyncWaitOp::create(b, token,
                                     b.getI32IntegerAttr(p.stages - 2));
    // wgmma reads shared memory through the async proxy: this thread's
    // writes (cp.async and stores) are ordered before it by a proxy fence,
    // everyone's by the barrier.
    if (p.warpgroup)
      NVVM::FenceProxyOp::create(
          b, NVVM::ProxyKind::async_shared,
          NVVM::SharedSpaceAttr::get(b.getContext(),
                                     NVVM::SharedSpace::shared_cta));
    gpu::BarrierOp::create(b);
    Value next = add(kt, p.stages - 1);
    issueStage(arith::RemUIOp::create(b, next, idx(p.stages)), next);
    Value stage = arith::RemUIOp::create(b, kt, idx(p.stages));
    if (p.warpgroup)
      scf::YieldOp::create(
          b, computeStageWarpgroup(stage, loop.getRegionIterArgs().front()));
    else
      scf::YieldOp::create(b, computeStage(stage, loop.getRegionIterArgs()));
  }
  // No copy may be in flight when the block exits.
  nvgpu::DeviceAsyncWaitOp::create(b, token, b.getI32IntegerAttr(0));

  // Store the accumulators.
  SmallVector<Value> results(loop.getResults());
  if (p.warpgroup)
    results = unpackAccumulators(results.front());
  for (int64_t i = 0; i < p.mi; ++i)
    for (int64_t j = 0; j < p.ni; ++j) {
      Value acc = results[i * p.ni + j];
      for (int64_t r = 0; r < 2; ++r)
        for (int64_t c = 0; c < 2; ++c) {
          auto [row, col] = cCoord(i, j, r, c);
          auto store = [&]() {
            Value v =
                vector::ExtractOp::create(b, acc, ArrayRef<int64_t>{r, c});
            if (p.cElem != p.accType)
              v = arith::TruncFOp::create(b, p.cElem, v);
            storeResult(v, row, col);
          };
          if (fullTiles) {
            store();
            continue;
          }
          Value inside = arith::AndIOp::create(b, lt(row, p.m), lt(col, p.n));
          auto ifOp = scf::IfOp::create(b, inside);
          OpBuilder::InsertionGuard g(b);
          b.setInsertionPointToStart(ifOp.thenBlock());
          store();
        }
    }

  // Views and constants the kernel reads move inside, so that its arguments
  // are the entry's buffers (the launch plan's terms).
  nvidia::sinkIntoLaunch(launch);
}

/// The plan for `op` on `unit`, or failure with the reason in `why`.
static FailureOr<MmaPlan>
planKernel(linalg::LinalgOp op, const MatrixUnitDesc &unit,
           const ChipDesc &chip, const nvidia::LaunchLimits &limits,
           const MemoryLevelDesc &shared, std::string &why) {
  MmaPlan p;
  p.unit = &unit;
  if (!chip.hasFeature("cp-async")) {
    why = "the chip has no asynchronous copies";
    return failure();
  }
  Value aMem = op.getDpsInputOperand(0)->get();
  Value cMem = op.getDpsInitOperand(0)->get();
  p.elem = cast<MemRefType>(aMem.getType()).getElementType();
  p.cElem = cast<MemRefType>(cMem.getType()).getElementType();
  p.accType = Float32Type::get(op.getContext());
  p.elemBytes = p.elem.getIntOrFloatBitWidth() / 8;
  // f32 operands run on tf32 units (S3 tags them only with allow-tf32).
  std::optional<ElementType> type = getTargetElementType(p.elem);
  if (!type || !(*type == unit.aType || (*type == ElementType::F32 &&
                                         unit.aType == ElementType::TF32))) {
    why = "the unit does not match the operands' element type";
    return failure();
  }

  // Loop roles from the indexing maps (checked by S3): C is (batch, M...,
  // N) with plain loop indices, B (batch, K..., N) or (batch, N, K...), A
  // any function of the batch, M and K loops whose innermost index is the
  // last K loop of B's order.
  AffineMap mapA = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
  AffineMap mapB = op.getMatchingIndexingMap(op.getDpsInputOperand(1));
  AffineMap mapC = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  p.ranges = op.getStaticLoopRanges();
  std::optional<SmallVector<unsigned>> cDims = getPlainDims(mapC),
                                       bDims = getPlainDims(mapB);
  if (!cDims || !bDims || cDims->size() < 2 || bDims->size() < 2) {
    why = "operands not indexed as S3 tags them";
    return failure();
  }
  p.nDim = cDims->back();
  for (unsigned d : ArrayRef<unsigned>(*cDims).drop_back())
    (llvm::is_contained(*bDims, d) ? p.batchDims : p.mDims).push_back(d);
  for (unsigned d : *bDims)
    if (!llvm::is_contained(*cDims, d))
      p.kDims.push_back(d);
  p.bKMajor = bDims->back() == p.nDim;
  auto lastA =
      dyn_cast<AffineDimExpr>(mapA.getResult(mapA.getNumResults() - 1));
  if (p.mDims.empty() || p.kDims.empty() || !lastA ||
      lastA.getPosition() != p.kDims.back()) {
    why = "operands not indexed as S3 tags them";
    return failure();
  }
  auto product = [&](ArrayRef<unsigned> dims) {
    int64_t result = 1;
    for (unsigned d : dims)
      result *= p.ranges[d];
    return result;
  };
  p.batch = product(p.batchDims);
  p.m = product(p.mDims);
  p.k = product(p.kDims);
  p.n = p.ranges[p.nDim];
  int64_t kLast = p.ranges[p.kDims.back()];
  p.warpSize = limits.warpSize;
  p.maxVec = std::max<int64_t>(1, chip.vectorWidthBits / 8 / p.elemBytes);
  // A chunk of copies must not cross a run of the innermost K loop (the
  // contiguous dimension of A, and of an n-major B).
  p.vecA = copyWidth(kLast, p);
  p.vecB = copyWidth(p.bKMajor ? p.n : kLast, p);

  switch (unit.lowering) {
  case MatrixLowering::NVGPUWarpgroupMma:
    if (failed(planWarpgroupKernel(p, chip, limits, why)))
      return failure();
    return p;
  case MatrixLowering::NVGPUMmaSync:
    break;
  default:
    why = "the unit's lowering (" + unit.loweringOp.str() +
          ") is not one this pass emits";
    return failure();
  }
  if (unit.m != kFragM || unit.n != kFragN || (unit.k != 16 && unit.k != 8)) {
    why = "the unit's shape has no fragment layout here";
    return failure();
  }
  p.ldmatrix = p.elemBytes == 2;

  // Tiles: the block tile covers small problems in one block side.
  p.warpsN = kWarpsN;
  p.threads = kWarpsM * kWarpsN * p.warpSize;
  if (p.threads > limits.maxThreadsPerBlock) {
    why = "the chip's blocks hold fewer warps than the kernel uses";
    return failure();
  }
  int64_t minM = kWarpsM * unit.m, minN = kWarpsN * unit.n;
  p.bm = tileSide(p.m, minM);
  p.bn = tileSide(p.n, minN);
  // Fewer blocks than SMs leaves SMs idle: halve the larger tile side
  // until every SM has a block, keeping 2 x 2 units per warp (fragments
  // reused twice).
  int64_t sms =
      chip.computeLevels.empty() ? 0 : chip.computeLevels.front().physicalUnits;
  int64_t floorM = std::min(p.bm, 2 * minM), floorN = std::min(p.bn, 2 * minN);
  while (p.countBlocks() < sms && (p.bm > floorM || p.bn > floorN)) {
    if (p.bn > floorN && (p.bn >= p.bm || p.bm <= floorM))
      p.bn /= 2;
    else
      p.bm /= 2;
  }
  p.bk = kUnitStepsPerTile * unit.k;
  p.wm = p.bm / kWarpsM;
  p.wn = p.bn / kWarpsN;
  p.mi = p.wm / unit.m;
  p.ni = p.wn / unit.n;

  // Shared tiles.
  p.ldA = chooseStride(Frag::A, p, p.bk, shared);
  p.ldB = chooseStride(p.bKMajor ? Frag::BKMajor : Frag::BNMajor, p, p.colsB(),
                       shared);
  p.bytesA = p.bm * p.ldA * p.elemBytes;
  p.sharedRowsB = p.rowsB();
  p.bytesB = p.rowsB() * p.ldB * p.elemBytes;
  if (failed(finishPlan(p, limits, kMaxStages, why)))
    return failure();
  return p;
}

LogicalResult mlir::pb::nvidia::finishPlan(MmaPlan &p,
                                           const LaunchLimits &limits,
                                           int64_t maxStages,
                                           std::string &why) {
  p.tilesM = llvm::divideCeil(p.m, p.bm);
  p.tilesN = llvm::divideCeil(p.n, p.bn);
  p.blocks = p.countBlocks();
  if (p.blocks > limits.maxBlocksPerGrid) {
    why = "more blocks than the chip's grid holds";
    return failure();
  }
  int64_t stageBytes = p.bytesA + p.bytesB;
  p.stages = std::min(maxStages,
                      (limits.sharedBytesPerBlock - p.alignBytes) / stageBytes);
  if (p.stages < 2) {
    why = "two stages of tiles exceed the chip's shared memory";
    return failure();
  }
  // Stage views are laid out A stages, then B stages.
  p.bytesA *= p.stages;
  p.sharedBytes = p.bytesA + p.bytesB * p.stages + p.alignBytes;
  return success();
}

namespace {
class PBNVIDIALowerMatrixUnitsPass
    : public pb::nvidia::impl::PBNVIDIALowerMatrixUnitsPassBase<
          PBNVIDIALowerMatrixUnitsPass> {
public:
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<linalg::LinalgOp> tagged;
    func.walk([&](linalg::LinalgOp op) {
      if (op->hasAttr(PBDialect::kMatrixUnitAttrName))
        tagged.push_back(op);
    });
    if (tagged.empty())
      return;
    const ChipDesc *chip = getTargetChip(func);
    if (!chip) {
      func.emitError("pb-nvidia-lower-matrix-units needs a target");
      return signalPassFailure();
    }
    FailureOr<nvidia::LaunchLimits> limits =
        nvidia::getLaunchLimits(func, *chip);
    if (failed(limits))
      return signalPassFailure();
    const MemoryLevelDesc *shared =
        chip->getMemoryLevel(MemoryKind::Scratchpad);
    for (linalg::LinalgOp op : tagged) {
      const MatrixUnitDesc *unit = gpucommon::takeTaggedUnit(op, *chip);
      if (!unit)
        return signalPassFailure();
      // A warpgroup unit that cannot take this op (its operand layouts or
      // sizes) leaves it to the chip's warp-level units of the same types.
      SmallVector<const MatrixUnitDesc *> candidates = {unit};
      if (unit->scope == MatrixScope::WarpgroupScope)
        for (const MatrixUnitDesc *other : chip->matrixUnits)
          if (other->scope == MatrixScope::SubgroupScope &&
              other->aType == unit->aType && other->bType == unit->bType &&
              other->cType == unit->cType)
            candidates.push_back(other);
      FailureOr<MmaPlan> plan = failure();
      for (const MatrixUnitDesc *candidate : candidates) {
        std::string why;
        plan = planKernel(op, *candidate, *chip, *limits, *shared, why);
        if (succeeded(plan))
          break;
        // Without a plan, the generic mapping runs it (as loops): slower,
        // still correct.
        explain(op, "matrix units: " + candidate->name + " not used: " + why);
      }
      if (failed(plan))
        continue;
      const MmaPlan &p = *plan;
      unit = p.unit;
      double iterations = 1;
      for (int64_t range : op.getStaticLoopRanges())
        iterations *= static_cast<double>(range);
      gpucommon::MatrixKernelParts parts =
          gpucommon::prepareMatrixKernel(op, unit->aType, iterations);
      KernelBuilder(op, p, parts.epilogue, /*zeroInit=*/!parts.fills.empty())
          .build();
      std::string tiling =
          p.warpgroup
              ? llvm::formatv("{0} warpgroups of {1}x{2}", p.threads / 128,
                              p.bm * 128 / p.threads, p.bn)
                    .str()
              : llvm::formatv("warp tile {0}x{1} ({2}x{3} units)", p.wm, p.wn,
                              p.mi, p.ni)
                    .str();
      std::string layout =
          p.warpgroup
              ? llvm::formatv("{0}-byte swizzled rows", p.swizzleBytes).str()
              : llvm::formatv("row strides {0}, {1}", p.ldA, p.ldB).str();
      explain(op,
              llvm::formatv(
                  "matrix units: {0} on {1}: batch {2}, MxNxK {3}x{4}x{5}; "
                  "block tile {6}x{7}x{8} ({9} blocks of {10} threads), {11}, "
                  "{12} stages in {13} B of shared memory ({14}; B {15}); "
                  "copies of {16} and {17} elements ({18})",
                  op->getName(), unit->name, p.batch, p.m, p.n, p.k, p.bm, p.bn,
                  p.bk, p.blocks, p.threads, tiling, p.stages, p.sharedBytes,
                  layout, p.bKMajor ? "k-major" : "n-major", p.vecA, p.vecB,
                  p.warpgroup  ? "matrix descriptors"
                  : p.ldmatrix ? "ldmatrix fragments"
                               : "ld.shared fragments"));
      gpucommon::finishMatrixKernel(op, parts, unit->name);
    }
    // Epilogues of ops left to the loop mapping are ordinary generics.
    func.walk([](linalg::GenericOp generic) {
      generic->removeAttr(PBDialect::kMatrixUnitEpilogueAttrName);
    });
  }
};
} // namespace
