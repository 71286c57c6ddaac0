//===- WarpgroupMma.cpp - Tagged contractions onto wgmma ------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The warpgroup form of pb-nvidia-lower-matrix-units, for units the chip
// table lowers as NVGPUWarpgroupMma (sm_90a's wgmma.mma_async):
//
//   block b -> (batch, tm, tn): C[m0:+BM, n0:+BN], BM = G x unit M (G
//              warpgroups of the unit's subgroups), BN = unit N
//   shared (dynamic, base aligned to 1024 bytes): A [S][BM][BK], and B
//              [S][BN][BK] (B indexed (n, k), K-major) or, for 16-bit types,
//              [S][BN/64 x BK][64] (B indexed (k, n): column blocks of 64
//              n, MN-major, read transposed); rows of 128 bytes (BK = 128 /
//              element bytes) whose 16-byte chunk c lies at c XOR (row % 8):
//              the canonical layouts of wgmma's 128-byte swizzle
//   for kt in K tiles (cp.async pipeline as for mma.sync):
//     wait for tile kt; fence.proxy.async (wgmma reads through the async
//     proxy); barrier; prefetch tile kt+S-1
//     wgmma.fence; per unit K step one wgmma.mma_async on descriptors of
//     the warpgroup's A rows and of B (start address + 32 bytes per step);
//     wgmma.commit_group; wgmma.wait_group 0 (the stage is then free)
//   C = accumulators (wgmma's D: per warp the m16n8 C fragment repeated
//       over N), stored as the mma.sync kernel stores them.
//
// Descriptor (PTX ISA, "Matrix Descriptor Format"): bits 0-13 start address
// >> 4, 16-29 leading-dimension byte offset (LBO) >> 4, 32-45 stride-
// dimension byte offset (SBO) >> 4, 62-63 swizzle mode (1: 128 bytes); base
// offset 0 (atoms start at 1024-byte boundaries). K-major: SBO 1024 (eight
// 128-byte rows, one swizzle atom), LBO unused (16 by convention), a unit K
// step is +K x element bytes. MN-major (the transposed B): SBO 1024 (eight
// K rows), LBO the distance between 64-column blocks (BK x 128 bytes), a
// unit K step is +K rows x 128 bytes.
//
//===----------------------------------------------------------------------===//

#include "MatrixUnitKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::pb;
using namespace mlir::pb::nvidia;

/// Bytes of a swizzled tile row: wgmma's widest swizzle mode.
static constexpr int64_t kSwizzleBytes = 128;
/// Rows of one swizzle atom (the XOR pattern repeats every 8 rows).
static constexpr int64_t kAtomRows = 8;
/// Descriptor field values (PTX ISA, "Matrix Descriptor Format").
static constexpr uint64_t kSwizzle128BMode = 1;
static constexpr uint64_t kUnusedLeadingOffset = 16;
/// Warpgroups per block at the largest tile.
static constexpr int64_t kMaxWarpgroups = 2;
/// Pipeline depth cap: three 32 KiB stages keep two blocks per SM within
/// the largest scratchpads; more add shared memory, not overlap.
static constexpr int64_t kMaxStages = 3;

LogicalResult mlir::pb::nvidia::planWarpgroupKernel(MmaPlan &p,
                                                    const ChipDesc &chip,
                                                    const LaunchLimits &limits,
                                                    std::string &why) {
  const MatrixUnitDesc &unit = *p.unit;
  for (StringRef feature : unit.requiredFeatures)
    if (!chip.hasFeature(feature)) {
      why = ("the chip lacks the unit's feature '" + feature + "'").str();
      return failure();
    }
  int64_t warps = unit.scopeSubgroups;
  // Each warp of the warpgroup holds 16 rows of D, the m16n8 C fragment
  // repeated over N.
  if (warps * kFragM != unit.m || unit.n % kFragN) {
    why = "the unit's shape has no accumulator layout here";
    return failure();
  }
  // wgmma transposes (reads MN-major) 16-bit operands only.
  if (p.bKMajor && p.elemBytes != 2) {
    why = "B is indexed (k, n) and wgmma reads 32-bit operands K-major only";
    return failure();
  }
  // Problems narrower than one unit would mostly multiply zero fill.
  if (p.m < unit.m || p.n < unit.n) {
    why = llvm::formatv("M x N {0}x{1} is smaller than one unit ({2}x{3})", p.m,
                        p.n, unit.m, unit.n)
              .str();
    return failure();
  }
  p.warpgroup = true;
  p.swizzleBytes = kSwizzleBytes;
  p.bk = kSwizzleBytes / p.elemBytes;
  if (p.bk % unit.k) {
    why = "the unit's K step does not divide a swizzled row";
    return failure();
  }
  p.bn = unit.n;
  int64_t groups = kMaxWarpgroups;
  // Fewer blocks than SMs leaves SMs idle: one warpgroup per block then.
  int64_t sms =
      chip.computeLevels.empty() ? 0 : chip.computeLevels.front().physicalUnits;
  p.bm = groups * unit.m;
  if (p.countBlocks() < sms || p.m <= unit.m) {
    groups = 1;
    p.bm = unit.m;
  }
  p.threads = groups * warps * p.warpSize;
  if (p.threads > limits.maxThreadsPerBlock) {
    why = "the chip's blocks hold fewer warps than the kernel uses";
    return failure();
  }
  p.warpsN = 1;
  p.wm = kFragM;
  p.wn = p.bn;
  p.mi = 1;
  p.ni = p.bn / kFragN;

  // Unpadded swizzled rows; the kernel aligns the base to one atom.
  p.ldA = p.ldB = p.bk;
  p.alignBytes = kAtomRows * kSwizzleBytes;
  p.bytesA = p.bm * kSwizzleBytes;
  p.bytesB = p.bn * kSwizzleBytes;
  // A (k, n)-indexed B: BN / (elements per swizzled row) column blocks of
  // BK rows each.
  int64_t rowElems = kSwizzleBytes / p.elemBytes;
  if (p.bKMajor && p.bn % rowElems) {
    why = "the unit's N is not a whole number of swizzled column blocks";
    return failure();
  }
  p.sharedRowsB = p.bKMajor ? p.bn / rowElems * p.bk : p.bn;
  return finishPlan(p, limits, kMaxStages, why);
}

Value KernelBuilder::descriptor(Value address, int64_t leadingBytes) {
  auto i64 = [&](uint64_t v) {
    return arith::ConstantOp::create(b, b.getI64IntegerAttr(v)).getResult();
  };
  Value a = arith::IndexCastUIOp::create(b, b.getI64Type(), address);
  Value start = arith::ShRUIOp::create(
      b, arith::AndIOp::create(b, a, i64(0x3FFFF)), i64(4));
  uint64_t fields = (uint64_t(leadingBytes) >> 4) << 16 |
                    (uint64_t(kAtomRows * kSwizzleBytes) >> 4) << 32 |
                    kSwizzle128BMode << 62;
  return arith::OrIOp::create(b, start, i64(fields));
}

Value KernelBuilder::packAccumulators(ValueRange accs) {
  MLIRContext *ctx = b.getContext();
  auto type = LLVM::LLVMStructType::getLiteral(
      ctx, SmallVector<Type>(accs.size() * 4, p.accType));
  Value d = LLVM::UndefOp::create(b, type);
  for (auto [j, acc] : llvm::enumerate(accs))
    for (int64_t r = 0; r < 4; ++r) {
      Value v =
          vector::ExtractOp::create(b, acc, ArrayRef<int64_t>{r / 2, r % 2});
      d = LLVM::InsertValueOp::create(b, d, v,
                                      ArrayRef<int64_t>{int64_t(j * 4 + r)});
    }
  return d;
}

SmallVector<Value> KernelBuilder::unpackAccumulators(Value acc) {
  auto type = VectorType::get({2, 2}, p.accType);
  SmallVector<Value> accs;
  for (int64_t j = 0; j < p.ni; ++j) {
    SmallVector<Value> values;
    for (int64_t r = 0; r < 4; ++r)
      values.push_back(LLVM::ExtractValueOp::create(b, acc, j * 4 + r));
    accs.push_back(vector::FromElementsOp::create(b, type, values));
  }
  return accs;
}

Value KernelBuilder::computeStageWarpgroup(Value stage, Value acc) {
  const MatrixUnitDesc &u = *p.unit;
  auto wgmmaType = [&]() {
    if (p.elem.isF16())
      return NVVM::WGMMATypes::f16;
    if (p.elem.isBF16())
      return NVVM::WGMMATypes::bf16;
    return NVVM::WGMMATypes::tf32;
  }();
  // This warpgroup's A rows and the whole B tile of the stage.
  Value group = arith::DivUIOp::create(b, warp, idx(u.scopeSubgroups));
  int64_t stageBytesA = p.bm * p.swizzleBytes;
  int64_t stageBytesB = p.bn * p.swizzleBytes;
  Value aStart = add(add(aAddress, mul(stage, stageBytesA)),
                     mul(group, u.m * p.swizzleBytes));
  Value bStart = add(bAddress, mul(stage, stageBytesB));
  Value descA = descriptor(aStart, kUnusedLeadingOffset);
  Value descB = descriptor(bStart, p.bKMajor ? p.bk * p.swizzleBytes
                                             : kUnusedLeadingOffset);
  // A unit K step is u.k elements further along a K-major tile's rows, u.k
  // rows further down an MN-major one; the start address counts 16 bytes.
  auto offset = [&](bool kMajor, int64_t step) -> Value {
    int64_t bytes =
        kMajor ? step * u.k * p.elemBytes : step * u.k * p.swizzleBytes;
    return arith::ConstantOp::create(b, b.getI64IntegerAttr(bytes / 16));
  };
  NVVM::WgmmaFenceAlignedOp::create(b);
  for (int64_t step = 0; step < p.bk / u.k; ++step) {
    acc = NVVM::WgmmaMmaAsyncOp::create(
        b, acc.getType(), acc,
        arith::AddIOp::create(b, descA, offset(/*kMajor=*/true, step)),
        arith::AddIOp::create(b, descB, offset(!p.bKMajor, step)),
        NVVM::MMAShapeAttr::get(b.getContext(), u.m, u.n, u.k), wgmmaType,
        wgmmaType, NVVM::WGMMATypes::f32, NVVM::WGMMAScaleOut::one,
        NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one,
        // row A and col B: K-major (imm-trans 0); row B: MN-major.
        NVVM::MMALayout::row,
        p.bKMajor ? NVVM::MMALayout::row : NVVM::MMALayout::col,
        /*satfinite=*/nullptr);
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b);
  NVVM::WgmmaWaitGroupSyncOp::create(b, 0);
  return acc;
}
