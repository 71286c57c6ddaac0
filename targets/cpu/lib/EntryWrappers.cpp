//===- EntryWrappers.cpp - Packed-argument wrappers of entries
//-------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "pb/CPU/CPUBackend.h"

#include "mlir/IR/Builders.h"

namespace mlir::pb::cpu {
#define GEN_PASS_DEF_PBCPUENTRYWRAPPERSPASS
#include "pb/CPU/Passes.h.inc"
} // namespace mlir::pb::cpu

using namespace mlir;

namespace {
class PBCPUEntryWrappersPass
    : public pb::cpu::impl::PBCPUEntryWrappersPassBase<PBCPUEntryWrappersPass> {
public:
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<LLVM::LLVMFuncOp> entries;
    for (auto func : module.getOps<LLVM::LLVMFuncOp>()) {
      if (!func.isExternal() && func.isPrivate() &&
          func.getLinkage() == LLVM::Linkage::External) {
        func.setLinkage(LLVM::Linkage::Internal);
        continue;
      }
      if (func.isExternal() || func.getLinkage() != LLVM::Linkage::External ||
          func.getName().starts_with(pb::cpu::kEntryWrapperPrefix) ||
          func.getName().starts_with("_mlir_"))
        continue;
      entries.push_back(func);
    }
    auto ptrType = LLVM::LLVMPointerType::get(&getContext());
    // Code on AMX tile registers (llvm.x86.tile* and llvm.x86.tdp*
    // intrinsics) needs the process's permission first (support/
    // TileRegisters.c): each wrapper asks, once per process.
    bool usesTiles = false;
    module.walk([&](LLVM::CallIntrinsicOp call) {
      StringRef name = call.getIntrin();
      if (name.starts_with("llvm.x86.tile") || name.starts_with("llvm.x86.tdp"))
        usesTiles = true;
    });
    LLVM::LLVMFuncOp requestTiles;
    if (usesTiles && !entries.empty()) {
      OpBuilder builder(module.getBodyRegion());
      builder.setInsertionPointToEnd(module.getBody());
      requestTiles = LLVM::LLVMFuncOp::create(
          builder, module.getLoc(), "__pb_request_tile_registers",
          LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(&getContext()),
                                      {}));
    }
    for (LLVM::LLVMFuncOp func : entries) {
      LLVM::LLVMFunctionType type = func.getFunctionType();
      auto sizeType = IntegerType::get(&getContext(), 64);
      for (auto [index, argType] : llvm::enumerate(type.getParams())) {
        if (argType != ptrType && argType != sizeType) {
          func.emitError() << "entry '" << func.getName() << "' argument "
                           << index << " has type " << argType
                           << "; entries take only buffers and index sizes";
          return signalPassFailure();
        }
      }
      if (!isa<LLVM::LLVMVoidType>(type.getReturnType())) {
        func.emitError() << "entry '" << func.getName()
                         << "' returns a value; results must be out-params";
        return signalPassFailure();
      }
      OpBuilder builder(module.getBodyRegion());
      builder.setInsertionPointToEnd(module.getBody());
      Location loc = func.getLoc();
      auto wrapperType = LLVM::LLVMFunctionType::get(
          LLVM::LLVMVoidType::get(&getContext()), {ptrType, ptrType});
      auto wrapper = LLVM::LLVMFuncOp::create(
          builder, loc, (pb::cpu::kEntryWrapperPrefix + func.getName()).str(),
          wrapperType);
      Block *body = wrapper.addEntryBlock(builder);
      builder.setInsertionPointToStart(body);
      Value args = body->getArgument(0);
      Value sizes = body->getArgument(1);
      if (requestTiles)
        LLVM::CallOp::create(builder, loc, requestTiles, ValueRange());
      // Buffers from `args`, sizes from `sizes`, each in argument order.
      SmallVector<Value> operands;
      int32_t numBuffers = 0, numSizes = 0;
      for (Type param : type.getParams()) {
        bool isSize = param == sizeType;
        Value slot = LLVM::GEPOp::create(
            builder, loc, ptrType, param, isSize ? sizes : args,
            ArrayRef<LLVM::GEPArg>{isSize ? numSizes++ : numBuffers++});
        operands.push_back(LLVM::LoadOp::create(builder, loc, param, slot));
      }
      LLVM::CallOp::create(builder, loc, func, operands);
      LLVM::ReturnOp::create(builder, loc, ValueRange());
    }
  }
};
} // namespace
