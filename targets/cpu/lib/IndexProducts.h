//===- IndexProducts.h - Products of mixed static/dynamic sizes -*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The strides of a view from its sizes, for pb-cpu-entry-buffers and
// pb-cpu-expand-reshapes. Private to this library.
//
//===----------------------------------------------------------------------===//

#ifndef PB_CPU_INDEXPRODUCTS_H
#define PB_CPU_INDEXPRODUCTS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

namespace mlir::pb::cpu {

/// `x` x `y`: a constant where both are, one of them where the other is 1,
/// else an arith.muli of the two.
inline OpFoldResult multiplyIndices(OpBuilder &b, Location loc, OpFoldResult x,
                                    OpFoldResult y) {
  std::optional<int64_t> cx = getConstantIntValue(x),
                         cy = getConstantIntValue(y);
  if (cx && cy)
    return b.getIndexAttr(*cx * *cy);
  if (cx == 1)
    return y;
  if (cy == 1)
    return x;
  return arith::MulIOp::create(b, loc,
                               getValueOrCreateConstantIndexOp(b, loc, x),
                               getValueOrCreateConstantIndexOp(b, loc, y))
      .getResult();
}

} // namespace mlir::pb::cpu

#endif // PB_CPU_INDEXPRODUCTS_H
