//===- AlignVectorAccesses.cpp - Wide loads and stores in kernels ---------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// S3 vectorizes contiguous accesses (vector<4xf32>), but an LLVM vector load
// carries only its element's alignment unless told more, and the NVPTX back
// end splits a vector load that may be misaligned into scalar ones: four
// `ld.global.b32` instead of one `ld.global.v4.b32`. This pass proves, per
// access, the alignment of its address and states it on the operation:
//
//  * the base: a kernel argument is aligned to the chip's vector width (the
//    runtime's contract, `buffer_alignment` in the artifact's metadata: the
//    executors copy misaligned inputs first), and so is the launch's dynamic
//    shared memory; a view of it at a byte shift keeps what the shift keeps;
//  * the offset: the element offset (the layout's offset plus index x
//    stride per dimension) has a known divisor, computed over the integer
//    operations that make the indices: constants, loop induction variables
//    (divisor of the lower bound and of the step), sums, products,
//    remainders by constants, exact divisions; thread and block ids count
//    as 1.
//
// A one-dimensional, in-bounds, unmasked `vector.transfer_read/write` along
// the innermost, unit-stride dimension becomes a `vector.load/store` with
// `alignment` = the largest power of two dividing both (at most the vector's
// bytes). Accesses whose alignment is no more than an element's are left as
// they are.
//
//===----------------------------------------------------------------------===//

#include "pb/GPU/GPUCommon.h"

#include "pb/Dialect/PBDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"

#include <numeric>

namespace mlir::pb::gpucommon {
#define GEN_PASS_DEF_PBGPUALIGNVECTORACCESSESPASS
#include "pb/GPU/Passes.h.inc"
} // namespace mlir::pb::gpucommon

using namespace mlir;

/// Divisors are kept as their common part with 2^30 (only small powers of
/// two matter for alignment; dropping other factors is conservative, and
/// products of two stay far from overflow). 2^30 also stands for a value
/// that is 0.
static constexpr int64_t kZeroDivisor = int64_t(1) << 30;

static int64_t gcd(int64_t a, int64_t b) { return std::gcd(a, b); }

static int64_t clampDivisor(int64_t d) {
  return d <= 0 ? 1 : std::gcd(d, kZeroDivisor);
}

/// A positive integer that divides every value `value` takes (1 when
/// nothing is known).
static int64_t getKnownDivisor(Value value, unsigned depth = 0) {
  if (depth > 16)
    return 1;
  APInt constant;
  if (matchPattern(value, m_ConstantInt(&constant))) {
    int64_t c = constant.getSExtValue();
    return c == 0 ? kZeroDivisor
                  : clampDivisor(c == INT64_MIN ? 1 : std::abs(c));
  }
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
    if (loop && loop.getInductionVar() == arg)
      return gcd(getKnownDivisor(loop.getLowerBound(), depth + 1),
                 getKnownDivisor(loop.getStep(), depth + 1));
    return 1;
  }
  Operation *op = value.getDefiningOp();
  auto operand = [&](unsigned i) {
    return getKnownDivisor(op->getOperand(i), depth + 1);
  };
  if (isa<arith::AddIOp, arith::SubIOp, arith::SelectOp, arith::MaxSIOp,
          arith::MinSIOp, arith::MaxUIOp, arith::MinUIOp>(op)) {
    unsigned first = isa<arith::SelectOp>(op) ? 1 : 0;
    return gcd(operand(first), operand(first + 1));
  }
  if (isa<arith::MulIOp>(op))
    return clampDivisor(operand(0) * operand(1));
  if (isa<arith::ShLIOp>(op)) {
    APInt shift;
    if (matchPattern(op->getOperand(1), m_ConstantInt(&shift)) &&
        shift.getZExtValue() < 32)
      return clampDivisor(operand(0) << shift.getZExtValue());
    return 1;
  }
  if (isa<arith::RemUIOp, arith::RemSIOp>(op)) {
    APInt divisor;
    if (matchPattern(op->getOperand(1), m_ConstantInt(&divisor)) &&
        divisor.getSExtValue() > 0)
      return gcd(operand(0), divisor.getSExtValue());
    return 1;
  }
  if (isa<arith::DivUIOp, arith::DivSIOp>(op)) {
    APInt divisor;
    int64_t numerator = operand(0);
    if (matchPattern(op->getOperand(1), m_ConstantInt(&divisor)) &&
        divisor.getSExtValue() > 0 && numerator % divisor.getSExtValue() == 0)
      return clampDivisor(numerator / divisor.getSExtValue());
    return 1;
  }
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp,
          arith::ExtUIOp>(op))
    return operand(0);
  return 1;
}

/// Bytes the base address of `memref` is known to be aligned to.
static int64_t getBaseAlignment(Value memref, int64_t vectorBytes) {
  if (auto arg = dyn_cast<BlockArgument>(memref))
    return isa<gpu::GPUFuncOp>(arg.getOwner()->getParentOp()) ? vectorBytes : 1;
  if (auto view = memref.getDefiningOp<memref::ViewOp>()) {
    if (!view.getSource().getDefiningOp<gpu::DynamicSharedMemoryOp>())
      return 1;
    return gcd(vectorBytes, getKnownDivisor(view.getByteShift()));
  }
  return 1;
}

/// The alignment in bytes of the access `op` makes to `memref` at
/// `indices`, or 0 when it cannot be stated.
static int64_t getAccessAlignment(Value memref, ValueRange indices,
                                  int64_t vectorBytes) {
  auto type = dyn_cast<MemRefType>(memref.getType());
  if (!type)
    return 0;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) ||
      ShapedType::isDynamic(offset) || strides.empty() || strides.back() != 1 ||
      llvm::any_of(strides, ShapedType::isDynamic))
    return 0;
  int64_t elementBytes = type.getElementTypeBitWidth() / 8;
  if (elementBytes == 0 || type.getElementTypeBitWidth() % 8)
    return 0;
  int64_t divisor = offset == 0 ? kZeroDivisor : clampDivisor(std::abs(offset));
  for (auto [index, stride] : llvm::zip(indices, strides))
    divisor = gcd(divisor, clampDivisor(getKnownDivisor(index) *
                                        clampDivisor(std::abs(stride))));
  int64_t bytes = gcd(getBaseAlignment(memref, vectorBytes),
                      clampDivisor(divisor * elementBytes));
  // The largest power of two dividing it, at most the vector's bytes.
  return std::min<int64_t>(bytes & -bytes, vectorBytes);
}

/// Whether `transfer` reads or writes `vector<N x T>` at consecutive
/// elements of the innermost dimension, in bounds and unmasked.
static bool isContiguous(VectorTransferOpInterface transfer) {
  VectorType type = transfer.getVectorType();
  return type.getRank() == 1 && !type.isScalable() && !transfer.getMask() &&
         transfer.getPermutationMap().isMinorIdentity() &&
         transfer.isDimInBounds(0) && isa<MemRefType>(transfer.getShapedType());
}

namespace {
class PBGPUAlignVectorAccessesPass
    : public pb::gpucommon::impl::PBGPUAlignVectorAccessesPassBase<
          PBGPUAlignVectorAccessesPass> {
public:
  void runOnOperation() override {
    const pb::ChipDesc *chip = pb::getTargetChip(getOperation());
    if (!chip)
      return;
    int64_t widthBytes = chip->vectorWidthBits / 8;
    SmallVector<VectorTransferOpInterface> transfers;
    getOperation().walk([&](VectorTransferOpInterface transfer) {
      if (isContiguous(transfer))
        transfers.push_back(transfer);
    });
    for (VectorTransferOpInterface transfer : transfers) {
      VectorType type = transfer.getVectorType();
      int64_t elementBytes = type.getElementTypeBitWidth() / 8;
      int64_t vectorBytes =
          std::min(widthBytes,
                   elementBytes * static_cast<int64_t>(type.getNumElements()));
      int64_t align = getAccessAlignment(transfer.getBase(),
                                         transfer.getIndices(), vectorBytes);
      if (align <= elementBytes)
        continue;
      OpBuilder b(transfer);
      auto alignment = llvm::MaybeAlign(align);
      if (auto read = dyn_cast<vector::TransferReadOp>(*transfer)) {
        Value load = vector::LoadOp::create(b, read.getLoc(), type,
                                            read.getBase(), read.getIndices(),
                                            /*nontemporal=*/false, alignment);
        read.replaceAllUsesWith(load);
        read.erase();
      } else {
        auto write = cast<vector::TransferWriteOp>(*transfer);
        vector::StoreOp::create(b, write.getLoc(), write.getVector(),
                                write.getBase(), write.getIndices(),
                                /*nontemporal=*/false, alignment);
        write.erase();
      }
    }
  }
};
} // namespace
