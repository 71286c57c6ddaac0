//===- InPlace.h - Results that update an argument in place -----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The result attribute `pb.in_place` (an integer: the position of a tensor
// argument of the same type) says that the result is the new value of that
// argument, and that the caller passes the argument's buffer to receive it:
// a KV cache that a decoding step updates. The code writes the result into
// the argument's buffer (in place where bufferization can, else copied there
// at the end) and leaves the result's own out-parameter unwritten; the
// artifact's metadata lists the pairs ("in_place": [{"output": r, "input":
// n}]) and the runtimes pass the argument's buffer as the output
// (docs/DynamicShapes.md).
//
//===----------------------------------------------------------------------===//

#ifndef PB_TRANSFORMS_INPLACE_H
#define PB_TRANSFORMS_INPLACE_H

#include "llvm/ADT/StringRef.h"

namespace mlir::pb {

inline constexpr llvm::StringLiteral kInPlaceAttrName = "pb.in_place";

} // namespace mlir::pb

#endif // PB_TRANSFORMS_INPLACE_H
