//===- ConstantPacking.cpp - B packed at compile time ---------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// When a contraction's B is a constant (a frozen model's weights: a
// `memref.global constant` with a dense initial value, read through
// `memref.get_global` and reshapes), pb-map-matrix-units packs it here, at
// compile time, into the layout its micro-kernel reads: a new constant
// global of (N blocks x K blocks x panels x KC x NR) elements, zero past N's
// and K's edges. The generated code then reads B's panels from it and packs
// nothing: a convolution's weights are no longer read and written again at
// every call.
//
//===----------------------------------------------------------------------===//

#include "GemmBuilder.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/MathExtras.h"

#include <cstring>

using namespace mlir;

namespace mlir::pb::gemm {

SmallVector<int64_t> packedBShape(const GemmPlan &p, int64_t kBlocks) {
  return {static_cast<int64_t>(llvm::divideCeil(p.n, p.nc)), kBlocks,
          static_cast<int64_t>(llvm::divideCeil(p.nc, p.nr)), p.kc, p.nr};
}

/// The bytes of a dense constant's elements in row-major order, or none
/// (a splat, sub-byte elements, no initial value).
static std::optional<ArrayRef<char>> denseBytes(memref::GlobalOp global) {
  if (!global.getConstant())
    return std::nullopt;
  std::optional<Attribute> init = global.getInitialValue();
  if (!init)
    return std::nullopt;
  auto type = global.getType();
  if (type.getElementTypeBitWidth() % 8 != 0)
    return std::nullopt;
  size_t bytes = type.getNumElements() * (type.getElementTypeBitWidth() / 8);
  ArrayRef<char> data;
  if (auto dense = dyn_cast<DenseElementsAttr>(*init)) {
    if (dense.isSplat())
      return std::nullopt;
    data = dense.getRawData();
  } else if (auto resource = dyn_cast<DenseResourceElementsAttr>(*init)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return std::nullopt;
    data = blob->getData();
  } else {
    return std::nullopt;
  }
  if (data.size() != bytes)
    return std::nullopt;
  return data;
}

ArrayRef<char> getDenseBytes(memref::GlobalOp global) {
  return *denseBytes(global);
}

memref::GlobalOp findConstantGlobal(Value mem) {
  // Reshapes keep the row-major order of the elements.
  while (Operation *def = mem.getDefiningOp()) {
    if (isa<memref::ExpandShapeOp, memref::CollapseShapeOp, memref::CastOp>(
            def)) {
      mem = def->getOperand(0);
      continue;
    }
    auto get = dyn_cast<memref::GetGlobalOp>(def);
    if (!get)
      return nullptr;
    auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
        get, get.getNameAttr());
    if (!global || !global.getType().getLayout().isIdentity() ||
        !denseBytes(global))
      return nullptr;
    return global;
  }
  return nullptr;
}

memref::GlobalOp packConstantB(linalg::LinalgOp op, const GemmDims &dims,
                               const GemmPlan &p, memref::GlobalOp source,
                               SymbolTable &symbols) {
  OpOperand *bOperand = op.getDpsInputOperand(1);
  auto bType = cast<MemRefType>(bOperand->get().getType());
  AffineMap mapB = op.getMatchingIndexingMap(bOperand);
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  // B's element offset per unit of each loop (row-major, identity layout).
  SmallVector<int64_t> stride(ranges.size(), 0);
  int64_t rowStride = 1;
  for (int r = mapB.getNumResults() - 1; r >= 0; --r) {
    auto dim = cast<AffineDimExpr>(mapB.getResult(r));
    assert(!llvm::is_contained(dims.batch, dim.getPosition()) &&
           "B of a packed constant varies with a batch loop");
    stride[dim.getPosition()] += rowStride;
    rowStride *= bType.getDimSize(r);
  }

  // Row-major flattening of `value` over the loops `flatDims` (outer to
  // inner) into B's offset.
  auto offsetOf = [&](ArrayRef<unsigned> flatDims, int64_t value) {
    int64_t offset = 0;
    for (unsigned d : llvm::reverse(flatDims)) {
      offset += (value % ranges[d]) * stride[d];
      value /= ranges[d];
    }
    return offset;
  };
  int64_t pcBlocks = llvm::divideCeil(p.k, p.kc);
  int64_t kBlocks = pcBlocks;
  for (unsigned d : dims.kOuter)
    kBlocks *= ranges[d];
  SmallVector<int64_t> shape = packedBShape(p, kBlocks);
  int64_t ncPanels = shape[2];
  // B's offset of each packed K row (kb, kk), -1 past K's edge.
  SmallVector<int64_t> kOffset(kBlocks * p.kc, -1);
  SmallVector<unsigned> kDims(dims.kFlat);
  kDims.push_back(dims.kInner);
  for (int64_t kb = 0; kb < kBlocks; ++kb) {
    int64_t outer = offsetOf(dims.kOuter, kb / pcBlocks);
    for (int64_t kk = 0; kk < p.kc; ++kk) {
      int64_t k = kb % pcBlocks * p.kc + kk;
      if (k < p.k)
        kOffset[kb * p.kc + kk] = outer + offsetOf(kDims, k);
    }
  }
  // B's offset of each packed column, -1 past N's edge.
  SmallVector<unsigned> nDims(dims.nOuter);
  nDims.push_back(dims.n);
  int64_t columns = shape[0] * p.nc;
  SmallVector<int64_t> nOffset(columns, -1);
  for (int64_t column = 0; column < std::min(columns, p.n); ++column)
    nOffset[column] = offsetOf(nDims, column);

  ArrayRef<char> data = *denseBytes(source);
  size_t elemBytes = bType.getElementTypeBitWidth() / 8;
  int64_t elements = 1;
  for (int64_t extent : shape)
    elements *= extent;
  std::vector<char> packed(elements * elemBytes, 0);
  char *out = packed.data();
  for (int64_t jb = 0; jb < shape[0]; ++jb)
    for (int64_t kb = 0; kb < kBlocks; ++kb)
      for (int64_t jp = 0; jp < ncPanels; ++jp)
        for (int64_t kk = 0; kk < p.kc; ++kk) {
          int64_t kOff = kOffset[kb * p.kc + kk];
          for (int64_t jj = 0; jj < p.nr; ++jj, out += elemBytes) {
            int64_t column = jb * p.nc + jp * p.nr + jj;
            if (kOff < 0 || jp * p.nr + jj >= p.nc || nOffset[column] < 0)
              continue;
            std::memcpy(out, data.data() + (kOff + nOffset[column]) * elemBytes,
                        elemBytes);
          }
        }

  return createPackedGlobal(source, "_packed", shape, bType.getElementType(),
                            packed, symbols);
}

memref::GlobalOp createPackedGlobal(memref::GlobalOp source, StringRef suffix,
                                    ArrayRef<int64_t> shape, Type element,
                                    ArrayRef<char> bytes,
                                    SymbolTable &symbols) {
  OpBuilder builder(source);
  auto global = memref::GlobalOp::create(
      builder, source.getLoc(), (source.getSymName() + suffix).str(),
      builder.getStringAttr("private"), MemRefType::get(shape, element),
      DenseElementsAttr::getFromRawBuffer(RankedTensorType::get(shape, element),
                                          bytes),
      /*constant=*/true, builder.getI64IntegerAttr(64));
  symbols.insert(global);
  return global;
}

} // namespace mlir::pb::gemm
