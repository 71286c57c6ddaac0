//===- PBDialect.h - The pb dialect -------------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef PB_DIALECT_PBDIALECT_H
#define PB_DIALECT_PBDIALECT_H

#include "pb/Target/TargetDesc.h"

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/Operation.h"

#include "pb/Dialect/PBDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "pb/Dialect/PBAttrs.h.inc"

namespace mlir::pb {

/// The target attribute of the module enclosing `op` (or `op` itself), or a
/// null attribute when there is none.
TargetAttr getTargetAttr(Operation *op);

/// The chip of the module enclosing `op`, or null when the module has no
/// target or it cannot be resolved.
const ChipDesc *getTargetChip(Operation *op);

} // namespace mlir::pb

#endif // PB_DIALECT_PBDIALECT_H
