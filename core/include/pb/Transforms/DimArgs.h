//===- DimArgs.h - Which size argument holds a dynamic dimension -*- C++
//-*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// An entry's dynamic dimensions arrive as its `index` arguments (its sizes).
// The argument and result attribute `pb.dim_args` (array<i64>, one element
// per dimension) names, for each dynamic dimension, the position of the size
// argument that holds it, and is -1 for each static dimension
// (docs/DynamicShapes.md). Bufferization keeps it on the arguments, and the
// out-parameters of results inherit their results'.
//
//===----------------------------------------------------------------------===//

#ifndef PB_TRANSFORMS_DIMARGS_H
#define PB_TRANSFORMS_DIMARGS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include <string>

namespace mlir::pb {

inline constexpr llvm::StringLiteral kDimArgsAttrName = "pb.dim_args";

/// Why `attr` (null when absent) does not describe the dynamic dimensions of
/// `type`, an argument or result of `func`, or "" when it does: one element
/// per dimension, -1 exactly at the static ones, and at the dynamic ones the
/// position of an `index` argument of `func`. Types without dynamic
/// dimensions need no attribute.
std::string checkDimArgs(FunctionOpInterface func, Type type, Attribute attr);

/// The `index` argument of `arg`'s function that holds dimension `dim` of
/// `arg`, or null when `arg` has no such `pb.dim_args` (not checked: see
/// checkDimArgs).
Value getDimArg(BlockArgument arg, int64_t dim);

} // namespace mlir::pb

#endif // PB_TRANSFORMS_DIMARGS_H
