//===- PBDialect.cpp - The pb dialect
//--------------------------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "pb/Dialect/PBDialect.h"
#include "pb/Target/HostClock.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "pb/Target/TargetRegistry.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::pb;

#include "pb/Dialect/PBDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "pb/Dialect/PBAttrs.cpp.inc"

void PBDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "pb/Dialect/PBAttrs.cpp.inc"
      >();
}

LogicalResult PBDialect::verifyOperationAttribute(Operation *op,
                                                  NamedAttribute attr) {
  if (attr.getName() == kLevelAttrName) {
    if (!isa<StringAttr>(attr.getValue()))
      return op->emitError()
             << "'" << kLevelAttrName << "' must name a compute level kind";
    return success();
  }
  if (attr.getName() == kParallelAttrName) {
    if (!isa<UnitAttr>(attr.getValue()) || !isa<affine::AffineForOp>(op))
      return op->emitError() << "'" << kParallelAttrName
                             << "' is a unit attribute of affine.for";
    return success();
  }
  if (attr.getName() == kKernelLaunchAttrName) {
    if (!isa<UnitAttr>(attr.getValue()) || op->getNumRegions() != 0)
      return op->emitError() << "'" << kKernelLaunchAttrName
                             << "' is a unit attribute of a launch "
                                "operation";
    return success();
  }
  if (attr.getName() == kMatrixUnitEpilogueAttrName) {
    if (!isa<UnitAttr>(attr.getValue()) || !isa<linalg::LinalgOp>(op))
      return op->emitError() << "'" << kMatrixUnitEpilogueAttrName
                             << "' is a unit attribute of a linalg op";
    return success();
  }
  if (attr.getName() == kRowKernelAttrName) {
    if (!isa<IntegerAttr>(attr.getValue()) || !isa<linalg::LinalgOp>(op))
      return op->emitError() << "'" << kRowKernelAttrName
                             << "' is an integer attribute of a linalg op";
    return success();
  }
  if (attr.getName() == kMatrixUnitAttrName) {
    if (!isa<StringAttr>(attr.getValue()) || !isa<linalg::LinalgOp>(op))
      return op->emitError() << "'" << kMatrixUnitAttrName
                             << "' is a string attribute of a linalg op";
    return success();
  }
  if (attr.getName() == kScratchpadAttrName) {
    if (!isa<UnitAttr>(attr.getValue()) || !isa<memref::AllocOp>(op))
      return op->emitError() << "'" << kScratchpadAttrName
                             << "' is a unit attribute of memref.alloc";
    return success();
  }
  if (attr.getName() == kKeepLayoutAttrName) {
    if (!isa<UnitAttr>(attr.getValue()) || !isa<linalg::GenericOp>(op))
      return op->emitError() << "'" << kKeepLayoutAttrName
                             << "' is a unit attribute of linalg.generic";
    return success();
  }
  if (attr.getName() == kWorkAttrName) {
    if (!isa<DictionaryAttr>(attr.getValue()))
      return op->emitError()
             << "'" << kWorkAttrName << "' is a dictionary attribute";
    return success();
  }
  if (attr.getName() == kLaunchWorkAttrName) {
    if (!isa<ArrayAttr>(attr.getValue()) || !isa<func::FuncOp>(op))
      return op->emitError() << "'" << kLaunchWorkAttrName
                             << "' is an array attribute of a function";
    return success();
  }
  if (attr.getName() == kKernelAttrName) {
    if (!isa<UnitAttr>(attr.getValue()) || !isa<FunctionOpInterface>(op))
      return op->emitError()
             << "'" << kKernelAttrName << "' is a unit attribute of a function";
    return success();
  }
  if (attr.getName() == kKernelSitesAttrName) {
    if (!isa<DictionaryAttr>(attr.getValue()) || !isa<ModuleOp>(op))
      return op->emitError() << "'" << kKernelSitesAttrName
                             << "' is a dictionary attribute of a module";
    return success();
  }
  if (attr.getName() == kEmulationIRAttrName) {
    // By name: the core does not depend on the GPU dialect.
    if (!isa<StringAttr>(attr.getValue()) ||
        op->getName().getStringRef() != "gpu.module")
      return op->emitError() << "'" << kEmulationIRAttrName
                             << "' is a string attribute of gpu.module";
    return success();
  }
  if (attr.getName() == kHostClockAttrName) {
    auto mhz = dyn_cast<IntegerAttr>(attr.getValue());
    if (!mhz || mhz.getInt() <= 0 || !isa<ModuleOp>(op))
      return op->emitError() << "'" << kHostClockAttrName
                             << "' is a positive integer attribute (MHz) of "
                                "a builtin.module";
    return success();
  }
  if (attr.getName() != kTargetAttrName)
    return op->emitError() << "unknown pb attribute '"
                           << attr.getName().getValue() << "'";
  if (!isa<ModuleOp>(op))
    return op->emitError() << "'" << kTargetAttrName
                           << "' may only be attached to a builtin.module";
  if (!isa<TargetAttr>(attr.getValue()))
    return op->emitError() << "'" << kTargetAttrName
                           << "' must be a #pb.target attribute, got "
                           << attr.getValue();
  return success();
}

LogicalResult TargetAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 StringRef name) {
  if (!lookupTargetEntry(name))
    return emitError() << "unknown target '" << name
                       << "'; valid targets: " << getValidTargetNames();
  return success();
}

const ChipDesc *TargetAttr::getChip() const {
  llvm::Expected<const ChipDesc *> chip = resolveTarget(getName());
  if (!chip) {
    llvm::consumeError(chip.takeError());
    return nullptr;
  }
  return *chip;
}

TargetAttr mlir::pb::getTargetAttr(Operation *op) {
  for (; op; op = op->getParentOp())
    if (auto attr = op->getAttrOfType<TargetAttr>(PBDialect::kTargetAttrName))
      return attr;
  return {};
}

const ChipDesc *mlir::pb::getTargetChip(Operation *op) {
  for (; op; op = op->getParentOp()) {
    auto attr = op->getAttrOfType<TargetAttr>(PBDialect::kTargetAttrName);
    if (!attr)
      continue;
    const ChipDesc *chip = attr.getChip();
    // A host target's chip at the clock it was resolved at.
    if (auto mhz = op->getAttrOfType<IntegerAttr>(kHostClockAttrName);
        chip && mhz)
      return getChipAtClock(*chip, mhz.getInt());
    return chip;
  }
  return nullptr;
}
