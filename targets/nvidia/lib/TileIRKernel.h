//===- TileIRKernel.h - What the Tile IR kernels share -----------*- C++
//-*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What pb-nvidia-emit-tile-ir's kernel forms share: contractions and
// convolutions (EmitTileIR.cpp) and row kernels (EmitTileIRRows.cpp). A
// KernelBuilder builds one kernel's body; the scalar operations of a linalg
// body become tile operations (translateScalarOp). Private to this library.
//
//===----------------------------------------------------------------------===//

#ifndef PB_TARGETS_NVIDIA_LIB_TILEIRKERNEL_H
#define PB_TARGETS_NVIDIA_LIB_TILEIRKERNEL_H

#include "pb/Target/TargetDesc.h"
#include "pb/TileIR/TileIR.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/Support/MathExtras.h"

#include <optional>
#include <string>

namespace mlir::pb::nvidia {

namespace tir = mlir::pb::tileir;

/// The tile a kernel computes: its dimensions ("tile dims": batch, M, N,
/// then K for the operands), their extents in the problem and in a tile,
/// and the index of a tile along each (the block ids; K's loop variable).
struct TileGeometry {
  SmallVector<int64_t> extent, tile;
  SmallVector<Value> index;
};

/// How tiles of one buffer are read or written: for each of the buffer's
/// dimensions the tile dim it runs along.
struct Access {
  Value pointer;
  MemRefType type;
  SmallVector<int64_t> tileDimOfDim;
};

inline int64_t powerOf2Ceil(int64_t x) {
  return static_cast<int64_t>(llvm::PowerOf2Ceil(static_cast<uint64_t>(x)));
}

/// The buffer's static strides (offset 0), or failure.
FailureOr<SmallVector<int64_t>> getStrides(MemRefType type);

/// Builds one kernel's body.
class KernelBuilder {
public:
  KernelBuilder(OpBuilder &b, Location loc, TileGeometry &geometry)
      : b(b), loc(loc), geometry(geometry) {}

  tir::TileType tileType(ArrayRef<int64_t> shape, Type element) {
    return tir::TileType::get(b.getContext(), shape, element);
  }
  Value constantI32(int64_t v) {
    return tir::ConstantOp::create(
        b, loc, tileType({}, b.getI32Type()),
        DenseElementsAttr::get(RankedTensorType::get({}, b.getI32Type()),
                               b.getI32IntegerAttr(static_cast<int32_t>(v))));
  }
  Value splat(ArrayRef<int64_t> shape, FloatType type, double value) {
    return tir::ConstantOp::create(
        b, loc, tileType(shape, type),
        DenseElementsAttr::get(RankedTensorType::get(shape, type),
                               FloatAttr::get(type, value)));
  }

  /// The partition view of `access` over `dims` (tile dims in the order
  /// the tile takes them) and the tile type it loads.
  Value partitionView(const Access &access, ArrayRef<int64_t> dims,
                      ArrayRef<int64_t> strides,
                      std::optional<tir::PaddingValue> padding = {}) {
    SmallVector<int64_t> shape, viewStrides, tile;
    for (int64_t dim : dims) {
      unsigned d =
          llvm::find(access.tileDimOfDim, dim) - access.tileDimOfDim.begin();
      int64_t extent = access.type.getDimSize(d);
      shape.push_back(extent);
      // An extent of 1 is only ever indexed at 0: any positive stride.
      viewStrides.push_back(extent == 1 ? 1 : strides[d]);
      tile.push_back(geometry.tile[dim]);
    }
    auto viewType = tir::TensorViewType::get(
        b.getContext(), shape, access.type.getElementType(), viewStrides);
    Value view =
        tir::MakeTensorViewOp::create(b, loc, viewType, access.pointer);
    SmallVector<int64_t> dimMap = llvm::to_vector(
        llvm::seq<int64_t>(0, static_cast<int64_t>(dims.size())));
    auto partitionType = tir::PartitionViewType::get(b.getContext(), tile,
                                                     viewType, dimMap, padding);
    return tir::MakePartitionViewOp::create(b, loc, partitionType, view);
  }

  SmallVector<Value> indexOf(ArrayRef<int64_t> dims) {
    SmallVector<Value> index;
    for (int64_t dim : dims)
      index.push_back(geometry.index[dim]);
    return index;
  }

  /// The buffer's dims sorted by tile dim (the order of the loaded tile).
  static SmallVector<int64_t> sortedDims(const Access &access) {
    SmallVector<int64_t> dims = access.tileDimOfDim;
    llvm::sort(dims);
    return dims;
  }

  Value load(const Access &access, ArrayRef<int64_t> strides, Value token) {
    SmallVector<int64_t> dims = sortedDims(access);
    Value view = partitionView(access, dims, strides);
    auto viewType = cast<tir::PartitionViewType>(view.getType());
    auto op = tir::LoadViewTkoOp::create(b, loc, viewType.getTileType(),
                                         tir::TokenType::get(b.getContext()),
                                         view, indexOf(dims), token);
    return op.getResult();
  }

  /// `value` (a tile over the buffer's sorted dims) broadcast to the
  /// output tile over `outDims` (a superset).
  Value expand(Value value, ArrayRef<int64_t> dims, ArrayRef<int64_t> outDims) {
    if (dims.size() == outDims.size())
      return value;
    auto type = cast<tir::TileType>(value.getType());
    SmallVector<int64_t> withOnes, full;
    for (int64_t dim : outDims) {
      withOnes.push_back(llvm::is_contained(dims, dim) ? geometry.tile[dim]
                                                       : 1);
      full.push_back(geometry.tile[dim]);
    }
    Value reshaped = tir::ReshapeOp::create(
        b, loc, tileType(withOnes, type.getElementType()), value);
    return tir::BroadcastOp::create(
        b, loc, tileType(full, type.getElementType()), reshaped);
  }

  Value convert(Value value, Type element) {
    auto type = cast<tir::TileType>(value.getType());
    if (type.getElementType() == element)
      return value;
    return tir::FToFOp::create(b, loc, tileType(type.getShape(), element),
                               value);
  }

  void store(Value value, const Access &access, ArrayRef<int64_t> strides,
             Value token) {
    SmallVector<int64_t> dims = sortedDims(access);
    Value view = partitionView(access, dims, strides);
    tir::StoreViewTkoOp::create(b, loc, tir::TokenType::get(b.getContext()),
                                value, view, indexOf(dims), token);
  }

  OpBuilder &b;
  Location loc;
  TileGeometry &geometry;
};

/// The tile comparison of an arith.cmpf predicate and whether it is
/// ordered (none for ord, uno and the constant ones).
std::optional<std::pair<tir::ComparisonPredicate, bool>>
getComparison(arith::CmpFPredicate predicate);

/// Turns erf in `op`'s body into upstream's polynomial (the one S4's
/// pb-approximate-math gives the PTX path), made of operations with tile
/// forms.
void approximateErf(Operation *op);

/// Whether every operation of `body` (a linalg op's) has a tile
/// counterpart (translateScalarOp), with f16, bf16 or f32 values; `why`
/// otherwise.
bool canTranslateBody(Block *body, std::string &why);

/// The tile operation computing `op` on tiles of `shape` (operands mapped;
/// float constants from outside the body become splats).
Value translateScalarOp(KernelBuilder &kb, Operation *op,
                        ArrayRef<int64_t> shape, IRMapping &mapping);

/// Whether `value` is a buffer the launch plan passes: an entry argument or
/// an allocation of the entry.
bool isPlanBuffer(Value value, func::FuncOp func);

/// The plan buffer `value` is or views through reshapes and casts (its
/// elements at the same offsets from the same base: a kernel takes the base
/// pointer and views it with `value`'s own shape and strides), or null.
Value getPlanBase(Value value, func::FuncOp func);

/// The chip's SMs (the grid level's units): tiles are halved while a grid
/// has fewer.
int64_t getGridUnits(const ChipDesc &chip);

/// Emits the row kernel made of `ops` (pb-group-row-kernels' tagged ops of
/// one id, in order) as one tile kernel launched in their place; where it
/// cannot, leaves them as they are (loops later) and says why under
/// --pb-explain.
void emitRowKernel(mlir::ModuleOp module, func::FuncOp func,
                   ArrayRef<Operation *> ops, const ChipDesc &chip,
                   unsigned &counter);

} // namespace mlir::pb::nvidia

#endif // PB_TARGETS_NVIDIA_LIB_TILEIRKERNEL_H
