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
      for (auto [index, argType] : llvm::enumerate(type.getParams())) {
        if (argType != ptrType) {
          func.emitError() << "entry '" << func.getName() << "' argument "
                           << index << " has type " << argType
                           << "; entries take only statically shaped tensors";
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
          LLVM::LLVMVoidType::get(&getContext()), {ptrType});
      auto wrapper = LLVM::LLVMFuncOp::create(
          builder, loc, (pb::cpu::kEntryWrapperPrefix + func.getName()).str(),
          wrapperType);
      Block *body = wrapper.addEntryBlock(builder);
      builder.setInsertionPointToStart(body);
      Value args = body->getArgument(0);
      if (requestTiles)
        LLVM::CallOp::create(builder, loc, requestTiles, ValueRange());
      SmallVector<Value> operands;
      for (unsigned i = 0, e = type.getNumParams(); i < e; ++i) {
        Value slot = LLVM::GEPOp::create(builder, loc, ptrType, ptrType, args,
                                         ArrayRef<LLVM::GEPArg>{int32_t(i)});
        operands.push_back(LLVM::LoadOp::create(builder, loc, ptrType, slot));
      }
      LLVM::CallOp::create(builder, loc, func, operands);
      LLVM::ReturnOp::create(builder, loc, ValueRange());
    }
  }
};
} // namespace
