//===- BF16MemoryAsI16.cpp - Masked bf16 vector accesses as i16 ones -----===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// LLVM's x86 back end has no bf16 vector type short of AVX512-BF16: it
// scalarizes a masked load, masked store, gather or scatter of bf16 lanes
// and rebuilds the vector through f32, rounding each lane back with a call
// to compiler-rt's __truncsfbf2, which nothing need define where a CPU
// artifact is loaded; an insertelement of a bf16 lane (a transfer_read
// unrolled lane by lane) takes the same path. The same access of i16 lanes
// moves the same bits.
//
//===----------------------------------------------------------------------===//

#include "pb/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"

namespace mlir::pb {
#define GEN_PASS_DEF_PBBF16MEMORYASI16PASS
#include "pb/Transforms/Passes.h.inc"
} // namespace mlir::pb

using namespace mlir;

/// `type` with i16 for bf16 when it is bf16 or a vector of bf16, else null.
static Type asI16(Type type) {
  auto i16 = IntegerType::get(type.getContext(), 16);
  if (type.isBF16())
    return i16;
  auto vector = dyn_cast<VectorType>(type);
  if (!vector || !vector.getElementType().isBF16())
    return nullptr;
  return vector.clone(i16);
}

namespace {
class PBBF16MemoryAsI16Pass
    : public pb::impl::PBBF16MemoryAsI16PassBase<PBBF16MemoryAsI16Pass> {
public:
  void runOnOperation() override {
    SmallVector<Operation *> accesses;
    getOperation()->walk([&](Operation *op) {
      if (!isa<LLVM::MaskedLoadOp, LLVM::MaskedStoreOp, LLVM::masked_gather,
               LLVM::masked_scatter, LLVM::InsertElementOp,
               LLVM::ExtractElementOp>(op))
        return;
      if (llvm::any_of(op->getOperandTypes(), asI16) ||
          llvm::any_of(op->getResultTypes(), asI16))
        accesses.push_back(op);
    });
    OpBuilder b(&getContext());
    for (Operation *op : accesses) {
      b.setInsertionPoint(op);
      for (OpOperand &operand : op->getOpOperands())
        if (Type i16 = asI16(operand.get().getType()))
          operand.set(
              LLVM::BitcastOp::create(b, op->getLoc(), i16, operand.get()));
      b.setInsertionPointAfter(op);
      for (OpResult result : op->getResults()) {
        Type i16 = asI16(result.getType());
        if (!i16)
          continue;
        Type bf16 = result.getType();
        result.setType(i16);
        auto back = LLVM::BitcastOp::create(b, op->getLoc(), bf16, result);
        result.replaceAllUsesExcept(back.getResult(), back);
      }
    }
  }
};
} // namespace
