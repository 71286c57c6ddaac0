//===- AttachTarget.cpp - Attach #pb.target to a module
//--------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "pb/Target/HostClock.h"
#include "pb/Target/TargetRegistry.h"
#include "pb/Transforms/Passes.h"

namespace mlir::pb {
#define GEN_PASS_DEF_PBATTACHTARGETPASS
#include "pb/Transforms/Passes.h.inc"
} // namespace mlir::pb

using namespace mlir;
using namespace mlir::pb;

namespace {
class PBAttachTargetPass
    : public pb::impl::PBAttachTargetPassBase<PBAttachTargetPass> {
public:
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (target.empty()) {
      module.emitError("pb-attach-target: no target given; valid targets: ")
          << getValidTargetNames();
      return signalPassFailure();
    }
    llvm::Expected<const ChipDesc *> chip = resolveTarget(target);
    if (!chip) {
      module.emitError(llvm::toString(chip.takeError()));
      return signalPassFailure();
    }
    auto attr = TargetAttr::get(&getContext(), (*chip)->name);
    if (TargetAttr existing = getTargetAttr(module);
        existing && existing != attr) {
      module.emitError() << "module already targets '" << existing.getName()
                         << "', cannot retarget it to '" << attr.getName()
                         << "'";
      return signalPassFailure();
    }
    module->setAttr(PBDialect::kTargetAttrName, attr);
    // A host target's chip at the clock measured here (HostClock.h).
    const TargetRegistryEntry *named = lookupTargetEntry((*chip)->name);
    if (named && named->chip && named->chip != *chip)
      module->setAttr(kHostClockAttrName,
                      IntegerAttr::get(IntegerType::get(&getContext(), 64),
                                       (*chip)->clockMHz));
  }
};
} // namespace
