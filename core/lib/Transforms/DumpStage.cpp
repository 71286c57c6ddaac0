//===- DumpStage.cpp - Write the module of a stage to a file
//---------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "pb/Transforms/Passes.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/ToolOutputFile.h"

namespace mlir::pb {
#define GEN_PASS_DEF_PBDUMPSTAGEPASS
#include "pb/Transforms/Passes.h.inc"
} // namespace mlir::pb

using namespace mlir;

namespace {
class PBDumpStagePass : public pb::impl::PBDumpStagePassBase<PBDumpStagePass> {
public:
  using Base::Base;

  void runOnOperation() override {
    std::string error;
    std::unique_ptr<llvm::ToolOutputFile> out = openOutputFile(file, &error);
    if (!out) {
      getOperation().emitError("pb-dump-stage: ") << error;
      return signalPassFailure();
    }
    getOperation()->print(out->os());
    out->os() << "\n";
    out->keep();
  }
};
} // namespace
