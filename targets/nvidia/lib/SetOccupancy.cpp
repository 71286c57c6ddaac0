//===- SetOccupancy.cpp - Register budget of the kernels ------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Every kernel states that one block per SM is enough (`nvvm.minctasm = 1`,
// PTX `.minnctapersm 1`). Without it, ptxas budgets registers for several
// resident blocks: a 1024-thread kernel of the loop mapping was held to 32
// registers and spilled 48 bytes (test/nvidia/sm80/matmul.mlir); with it,
// the same kernel uses 48 registers and no local memory. Kernels of a few
// hundred threads are unaffected (their budget is already the 255-register
// maximum).
//
//===----------------------------------------------------------------------===//

#include "pb/NVIDIA/NVIDIABackend.h"

namespace mlir::pb::nvidia {
#define GEN_PASS_DEF_PBNVIDIASETOCCUPANCYPASS
#include "pb/NVIDIA/Passes.h.inc"
} // namespace mlir::pb::nvidia

using namespace mlir;

namespace {
class PBNVIDIASetOccupancyPass
    : public pb::nvidia::impl::PBNVIDIASetOccupancyPassBase<
          PBNVIDIASetOccupancyPass> {
public:
  void runOnOperation() override {
    Builder b(&getContext());
    getOperation().walk([&](gpu::GPUFuncOp func) {
      if (func.isKernel() && !func->hasAttr(kMinBlocksAttr))
        func->setAttr(kMinBlocksAttr, b.getI32IntegerAttr(1));
    });
  }

private:
  static constexpr llvm::StringLiteral kMinBlocksAttr = "nvvm.minctasm";
};
} // namespace
