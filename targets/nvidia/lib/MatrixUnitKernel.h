//===- MatrixUnitKernel.h - Tensor-core kernels of tagged ops ---*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What pb-nvidia-lower-matrix-units shares between its two kernel forms:
// warp-level mma.sync (LowerMatrixUnits.cpp) and warpgroup-level wgmma
// (WarpgroupMma.cpp). Both copy operand tiles into multi-buffered dynamic
// shared memory with cp.async, keep f32 accumulators in registers in the
// m16n8 C-fragment layout (wgmma's D repeats it per warp), and store them
// through C's indexing map or the fused epilogue. Private to this library.
//
//===----------------------------------------------------------------------===//

#ifndef PB_TARGETS_NVIDIA_LIB_MATRIXUNITKERNEL_H
#define PB_TARGETS_NVIDIA_LIB_MATRIXUNITKERNEL_H

#include "pb/NVIDIA/NVIDIABackend.h"
#include "pb/Target/TargetDesc.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::pb::nvidia {

/// Which shared tile a fragment read addresses, and how.
enum class Frag { A, BKMajor, BNMajor };

struct MmaPlan {
  const MatrixUnitDesc *unit = nullptr;
  Type elem, accType, cElem;
  int64_t elemBytes = 0;
  bool ldmatrix = false;
  /// wgmma: warpgroups read both operands from 128-byte-swizzled tiles
  /// through matrix descriptors.
  bool warpgroup = false;
  // Problem: flat batch, M (flattened M loops), N, K.
  int64_t batch = 1, m = 0, n = 0, k = 0;
  /// Loop positions by role, in C's order (batch, M) and B's order (K);
  /// the flat M and K indices split over them (outermost first).
  SmallVector<unsigned> batchDims, mDims, kDims;
  unsigned nDim = 0;
  SmallVector<int64_t> ranges;
  /// B indexed (k, n): its shared tile's rows are K.
  bool bKMajor = true;
  // Tiles: block, warp (warpsN warps per block row), units per warp.
  int64_t bm = 0, bn = 0, bk = 0, wm = 0, wn = 0, mi = 0, ni = 0;
  int64_t warpsN = 0;
  int64_t stages = 0, warpSize = 0, threads = 0;
  int64_t tilesM = 0, tilesN = 0, blocks = 0;
  // Copies: elements per copy (1: element by element), shared strides.
  int64_t vecA = 0, vecB = 0, maxVec = 0, ldA = 0, ldB = 0;
  /// Bytes of all A stages, of one B stage, of the whole dynamic shared
  /// memory (with `alignBytes` of slack when the kernel aligns its base).
  int64_t bytesA = 0, bytesB = 0, sharedBytes = 0, alignBytes = 0;
  /// wgmma: bytes of a swizzled tile row (the swizzle span). A (k, n)-indexed
  /// B is kept as BN / (swizzleBytes / elemBytes) column blocks of BK rows.
  int64_t swizzleBytes = 0;
  /// Rows of one stage of B's shared tile.
  int64_t sharedRowsB = 0;
  int64_t rowsB() const { return bKMajor ? bk : bn; }
  int64_t colsB() const { return bKMajor ? bn : bk; }
  /// Blocks of the grid at the current block tile.
  int64_t countBlocks() const {
    return batch * static_cast<int64_t>(llvm::divideCeil(m, bm) *
                                        llvm::divideCeil(n, bn));
  }
};

/// The m16n8 accumulator fragment of both unit families: lane l holds
/// (row g + 8 i, col 2 t + j) for i, j in {0, 1}, g = l / 4, t = l % 4.
inline constexpr int64_t kFragM = 16, kFragN = 8;

/// Completes a plan whose block tile and per-stage bytes (`bytesA`, `bytesB`,
/// plus `alignBytes` of slack) are set: the grid, and as many stages (2 to
/// `maxStages`) as the chip's shared memory holds; failure with the limit
/// in `why`.
LogicalResult finishPlan(MmaPlan &p, const LaunchLimits &limits,
                         int64_t maxStages, std::string &why);

/// The wgmma plan for `op`, or failure with the reason in `why`; `p`
/// arrives with the problem (roles, sizes, types) filled in.
LogicalResult planWarpgroupKernel(MmaPlan &p, const ChipDesc &chip,
                                  const LaunchLimits &limits, std::string &why);

class KernelBuilder {
public:
  /// With `zeroInit`, the accumulators start from 0 instead of C's values
  /// (C was only zero-filled before: the fill is gone).
  KernelBuilder(linalg::LinalgOp op, const MmaPlan &plan,
                linalg::GenericOp epilogue, bool zeroInit = false)
      : op(op), p(plan), b(op.getLoc(), op), epilogue(epilogue),
        zeroInit(zeroInit) {}
  void build();

private:
  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, x, y); }
  Value add(Value x, int64_t y) { return y ? add(x, idx(y)) : x; }
  Value mul(Value x, int64_t y) { return arith::MulIOp::create(b, x, idx(y)); }
  Value lt(Value x, int64_t y) {
    return arith::CmpIOp::create(b, arith::CmpIPredicate::ult, x, idx(y));
  }
  Value minU(Value x, int64_t y) {
    return arith::MinUIOp::create(b, x, idx(y));
  }
  /// Splits `flat` over the loops `dims` (outermost first) into `values`.
  void delinearize(Value flat, ArrayRef<unsigned> dims,
                   SmallVectorImpl<Value> &values);
  /// The indices of `operand` at flat M index `row`, flat K index `k` and N
  /// index `col` (each may be null when the operand does not use it), by
  /// its indexing map: a convolution's input reads (n, oh * s + kh, ...).
  SmallVector<Value> indicesOf(OpOperand *operand, Value row, Value k,
                               Value col);
  /// Copies one operand's K tile `kt` into `stage`; appends the tokens of
  /// the unconditional asynchronous copies to `tokens`.
  void copyTile(Value stage, Value kt, bool isA,
                SmallVectorImpl<Value> &tokens);
  /// Where element (row, col) of an operand's tile is stored in its shared
  /// tile: there, or for wgmma in its swizzled place (16-byte chunk XOR row
  /// % 8, the 128-byte swizzle that the descriptors name; a (k, n)-indexed
  /// B in column blocks of one swizzled row each).
  std::pair<Value, Value> sharedIndex(bool isA, Value row, Value col);
  /// Copies both operands' K tile `kt` and commits them as one group.
  Value issueStage(Value stage, Value kt);
  Value loadFragment(Frag frag, Value stage, Value row, Value col);
  /// One K tile on mma.sync: fragments from shared memory, MI x NI units.
  SmallVector<Value> computeStage(Value stage, ValueRange accs);
  /// acc + a x b on the unit: nvgpu.mma.sync, or for bf16 (which upstream's
  /// nvgpu lowering does not type) nvvm.mma.sync on the fragments' 32-bit
  /// registers.
  Value mma(Value a, Value b, Value acc);
  /// One K tile on wgmma: descriptors of both tiles, one instruction per
  /// unit K step, waited for before the stage can be refilled. `acc` is
  /// the warpgroup accumulator (an LLVM struct of f32).
  Value computeStageWarpgroup(Value stage, Value acc);
  /// The wgmma matrix descriptor of the swizzled tile at shared byte
  /// address `address` (index) with the given leading-dimension offset.
  Value descriptor(Value address, int64_t leadingBytes);
  /// The accumulator fragments as wgmma's D struct, and back.
  Value packAccumulators(ValueRange accs);
  SmallVector<Value> unpackAccumulators(Value acc);
  /// Stores `value` (C's type) at C's element (row, col), through the
  /// epilogue when there is one (into the epilogue's output).
  void storeResult(Value value, Value row, Value col);
  /// The (row, col) of C for accumulator element (i, j) of tile (mi, ni).
  std::pair<Value, Value> cCoord(int64_t mi, int64_t ni, int64_t i, int64_t j);

  linalg::LinalgOp op;
  const MmaPlan &p;
  ImplicitLocOpBuilder b;
  linalg::GenericOp epilogue;
  bool zeroInit;
  Value aMem, bMem, cMem, aTile, bTile;
  Value tid, lane, warp, warpRow, warpCol, m0, n0;
  /// wgmma: shared byte address (index) of the first A and B stages.
  Value aAddress, bAddress;
  SmallVector<Value> batchIdx;
};

} // namespace mlir::pb::nvidia

#endif // PB_TARGETS_NVIDIA_LIB_MATRIXUNITKERNEL_H
