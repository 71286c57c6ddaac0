//===- DumpStage.cpp - Write the module of a stage to a file
//---------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "pb/Transforms/Passes.h"

#include "pb/Support/OutputFile.h"

#include "mlir/IR/Verifier.h"

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
    if (llvm::Error error =
            pb::writeOutputFile(file, [&](llvm::raw_ostream &os) {
              getOperation()->print(os);
              os << "\n";
            })) {
      getOperation().emitError("pb-dump-stage: ")
          << llvm::toString(std::move(error));
      return signalPassFailure();
    }
  }
};
} // namespace
