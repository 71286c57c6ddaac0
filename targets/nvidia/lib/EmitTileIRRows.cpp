//===- EmitTileIRRows.cpp - Row kernels as CUDA Tile IR kernels ----------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// pb-nvidia-emit-tile-ir's row kernels: the linalg ops S2 grouped
// (pb-group-row-kernels: a softmax, a layernorm) become one tile kernel. A
// tile block holds TM whole rows: every value of the kernel is a 2-d tile,
// TM x R (R the row rounded up to a power of two) for values along the
// rows, TM x 1 for one value per row, 1 x R for one value per column, and
// the ops' bodies run on those tiles, broadcast to the op's shape. A
// reduction folds its tile along the row (`tileir.reduce`), the padding
// past the row's end masked to the fold's identity, and joins the
// accumulator's value (its fill's constant, or what the buffer held).
// Values pass from op to op in registers: only the buffers the kernel reads
// first are loaded, and only those read after it (entry arguments, or
// temporaries with users outside the kernel) are stored, once, at the end.
// Memory operations are ordered one after another by their tokens (an
// op may write in place what an earlier one read).
//
// The grid is (tiles of the last outer loop, the other outer loops
// flattened); TM is the largest power of two such that two tiles of TM x R
// f32 values fit the registers of a tile block (the Tile IR path's
// accumulator budget), halved while the grid has fewer tiles than the
// chip has SMs.
//
//===----------------------------------------------------------------------===//

#include "TileIRKernel.h"

#include "pb/Dialect/PBDialect.h"
#include "pb/Target/TileIRPath.h"
#include "pb/Transforms/Passes.h"
#include "pb/Transforms/Roofline.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/FormatVariadic.h"

#include <limits>

using namespace mlir;
using namespace mlir::pb;
using namespace mlir::pb::nvidia;

namespace {

/// One buffer operand of the kernel's ops: the operand (the plan buffer or
/// a reshaped view of it), the plan buffer, and per buffer dimension the
/// kernel dimension it runs along (-1: a unit dimension indexed by 0).
struct RowAccess {
  Value memref, base;
  SmallVector<int64_t> dims;
};

} // namespace

/// Whether `base` (a plan buffer) is used other than by `ops` and its
/// deallocation, directly or through views.
static bool isUsedOutside(Value base,
                          const llvm::SmallPtrSetImpl<Operation *> &ops) {
  if (isa<BlockArgument>(base))
    return true; // an entry argument: the caller's
  SmallVector<Value> worklist = {base};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (Operation *user : v.getUsers()) {
      if (ops.contains(user) || isa<memref::DeallocOp>(user))
        continue;
      if (isa<memref::ExpandShapeOp, memref::CollapseShapeOp, memref::CastOp>(
              user)) {
        worklist.push_back(user->getResult(0));
        continue;
      }
      return true;
    }
  }
  return false;
}

/// The float value a fill writes.
static double getFillValue(linalg::FillOp fill) {
  auto constant = fill.getInputs()[0].getDefiningOp<arith::ConstantOp>();
  return cast<FloatAttr>(constant.getValue()).getValueAsDouble();
}

void nvidia::emitRowKernel(mlir::ModuleOp module, func::FuncOp func,
                           ArrayRef<Operation *> opsIn, const ChipDesc &chip,
                           unsigned &counter) {
  auto refuse = [&](const std::string &why) {
    explain(opsIn.front(), "tile-ir: row kernel not emitted (" + why +
                               "): its ops run as loops (the PTX path)");
    for (Operation *op : opsIn)
      op->removeAttr(PBDialect::kRowKernelAttrName);
  };
  std::string why;
  FailureOr<RowKernel> analyzed = analyzeRowKernel(opsIn, why);
  if (failed(analyzed))
    return refuse(why);
  RowKernel kernel = *analyzed;
  int64_t p = kernel.outer.size();
  const int64_t lastOuter = p - 1, rowDim = p;
  llvm::SmallPtrSet<Operation *, 8> kernelOps(kernel.ops.begin(),
                                              kernel.ops.end());

  // The bodies: tile forms for every operation, results from the body.
  for (Operation *op : kernel.ops) {
    auto generic = dyn_cast<linalg::GenericOp>(op);
    if (!generic)
      continue;
    approximateErf(generic);
    if (!canTranslateBody(generic.getBlock(), why))
      return refuse(why);
    for (Value yielded : generic.getBlock()->getTerminator()->getOperands())
      if (yielded.getParentBlock() != generic.getBlock())
        return refuse("a body that yields a value from outside it");
  }

  // The accesses: every operand of the generic ops, the fills' outputs
  // (along the dimensions the kernel's reductions give their buffers).
  DenseMap<Value, SmallVector<int64_t>> dimsOf;
  for (Operation *op : kernel.ops)
    if (auto generic = dyn_cast<linalg::GenericOp>(op))
      for (OpOperand &operand : generic->getOpOperands()) {
        SmallVector<int64_t> dims = *getRowKernelDims(generic, operand, kernel);
        auto [it, inserted] = dimsOf.try_emplace(operand.get(), dims);
        if (!inserted && it->second != dims)
          return refuse("a buffer accessed along different dimensions");
      }
  auto accessOf = [&](Value memref) {
    RowAccess access;
    access.memref = memref;
    access.base = getPlanBase(memref, func);
    access.dims = dimsOf.lookup(memref);
    return access;
  };
  // Views of one buffer that reach the same elements of each tile (they
  // differ in unit dimensions only: a reshape adding a batch of one) are
  // one value of the kernel: `canonical` maps each to the first.
  auto layoutOf = [&](const RowAccess &access) {
    SmallVector<std::pair<int64_t, int64_t>> layout;
    auto type = cast<MemRefType>(access.memref.getType());
    SmallVector<int64_t> strides = *getStrides(type);
    for (auto [i, dim] : llvm::enumerate(access.dims))
      if (dim >= 0 && type.getDimSize(i) != 1)
        layout.push_back({dim, strides[i]});
    llvm::sort(layout);
    return layout;
  };
  DenseMap<Value, Value> canonical;
  llvm::SetVector<Value> written;
  DenseMap<Value, SmallVector<Value>> accessesOfBase;
  for (Operation *op : kernel.ops) {
    SmallVector<Value> operands = llvm::to_vector(op->getOperands());
    if (auto fill = dyn_cast<linalg::FillOp>(op))
      operands = {fill.getOutputs()[0]};
    for (Value memref : operands) {
      if (!isa<MemRefType>(memref.getType()))
        continue;
      RowAccess access = accessOf(memref);
      auto type = cast<MemRefType>(memref.getType());
      if (!access.base || failed(getStrides(type)))
        return refuse("a buffer that is not a whole entry argument or "
                      "temporary, or a reshaped view of one, with static "
                      "strides");
      if (type.getRank() == 0)
        return refuse("a rank-0 buffer");
      SmallVector<Value> &same = accessesOfBase[access.base];
      if (!canonical.count(memref)) {
        canonical[memref] = memref;
        for (Value other : same)
          if (layoutOf(accessOf(other)) == layoutOf(access)) {
            canonical[memref] = canonical[other];
            break;
          }
      }
      same.push_back(memref);
    }
    if (auto dps = dyn_cast<DestinationStyleOpInterface>(op))
      for (Value out : dps.getDpsInits())
        written.insert(out);
  }
  for (Value out : written) {
    Value base = getPlanBase(out, func);
    for (Value other : accessesOfBase[base])
      if (canonical[other] != canonical[out])
        return refuse("a buffer written and accessed through different "
                      "views");
  }
  // Between the first and the last op, nothing else may touch the
  // kernel's buffers (the kernel runs in the last op's place).
  Operation *first = kernel.ops.front(), *last = kernel.ops.back();
  if (llvm::any_of(kernel.ops, [&](Operation *op) {
        return op->getBlock() != first->getBlock();
      }))
    return refuse("ops in different blocks");
  SmallVector<Operation *> deallocs;
  for (Operation *op = first->getNextNode(); op != last;
       op = op->getNextNode()) {
    if (kernelOps.contains(op) || isa<memref::AllocOp>(op) ||
        isMemoryEffectFree(op))
      continue;
    if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
      if (accessesOfBase.count(dealloc.getMemref()))
        deallocs.push_back(op);
      continue;
    }
    bool touches = false;
    op->walk([&](Operation *inner) {
      for (Value v : inner->getOperands())
        if (isa<MemRefType>(v.getType()))
          if (Value base = getPlanBase(v, func);
              !base || accessesOfBase.count(base))
            touches = true;
    });
    if (touches)
      return refuse("an operation between the kernel's ops touches its "
                    "buffers");
  }

  // The tile shape and the grid.
  const TileIRPathDesc &path = *chip.tileIR;
  int64_t budget = getTileBlockRegisters(path);
  int64_t rpad = powerOf2Ceil(kernel.row);
  if (rpad > getRowKernelMaxElements(path))
    return refuse(llvm::formatv("rows of {0} elements: two exceed the tile "
                                "block's {1} registers",
                                rpad, budget)
                      .str());
  int64_t others = 1;
  for (int64_t extent : ArrayRef(kernel.outer).drop_back())
    others *= extent;
  if (others > std::numeric_limits<uint16_t>::max())
    return refuse("more than 65535 tile blocks along the grid's y");
  int64_t tm = std::min<int64_t>(
      static_cast<int64_t>(llvm::bit_floor(static_cast<uint64_t>(
          std::max<int64_t>(1, getRowKernelMaxElements(path) / rpad)))),
      powerOf2Ceil(kernel.outer.back()));
  int64_t units = getGridUnits(chip);
  while (tm > 1 &&
         static_cast<int64_t>(llvm::divideCeil(kernel.outer.back(), tm)) *
                 others <
             units)
    tm /= 2;
  int64_t grid[3] = {
      static_cast<int64_t>(llvm::divideCeil(kernel.outer.back(), tm)), others,
      1};
  bool padRows = kernel.outer.back() % tm != 0;
  bool padRow = rpad != kernel.row;

  // The kernel.
  std::string name = llvm::formatv("{0}_tile{1}", func.getName(), counter++);
  OpBuilder moduleBuilder(module.getContext());
  moduleBuilder.setInsertionPointToEnd(module.getBody());
  Location loc = first->getLoc();
  auto tileModule = tir::ModuleOp::create(moduleBuilder, loc, name);
  OpBuilder b = OpBuilder::atBlockBegin(&tileModule.getBody().front());
  auto entry = tir::EntryOp::create(b, loc, name, b.getFunctionType({}, {}),
                                    ArrayAttr(), ArrayAttr());
  Block *body = b.createBlock(&entry.getBody());
  TileGeometry geometry;
  KernelBuilder kb(b, loc, geometry);
  MLIRContext *ctx = b.getContext();
  Type i32 = b.getI32Type();
  Type tokenType = tir::TokenType::get(ctx);

  // Arguments: each plan buffer once, in order of first access.
  SmallVector<Value> kernelBuffers;
  auto pointerOf = [&](Value base) -> Value {
    auto it = llvm::find(kernelBuffers, base);
    if (it != kernelBuffers.end())
      return body->getArgument(it - kernelBuffers.begin());
    kernelBuffers.push_back(base);
    return body->addArgument(
        kb.tileType({}, tir::PointerType::get(
                            ctx, getElementTypeOrSelf(base.getType()))),
        loc);
  };

  Value token = tir::MakeTokenOp::create(b, loc);
  auto ids = tir::GetTileBlockIdOp::create(
      b, loc, kb.tileType({}, i32), kb.tileType({}, i32), kb.tileType({}, i32));
  Value zeroIndex = kb.constantI32(0);
  // Each kernel dimension's tile index: the last outer one is x, the
  // others y's digits, the row 0.
  SmallVector<Value> index(p + 1, zeroIndex);
  index[lastOuter] = ids.getX();
  Value rest = ids.getY();
  for (int64_t d = lastOuter - 1; d >= 0; --d) {
    if (kernel.outer[d] == 1)
      continue;
    Value extent = kb.constantI32(kernel.outer[d]);
    index[d] = tir::RemIOp::create(b, loc, rest.getType(), rest, extent);
    rest = tir::DivIOp::create(b, loc, rest.getType(), rest, extent);
  }
  auto shape2d = [&](const RowAccess &access) -> SmallVector<int64_t> {
    return {llvm::is_contained(access.dims, lastOuter) ? tm : 1,
            llvm::is_contained(access.dims, rowDim) ? rpad : 1};
  };
  // The partition view of an access: the tensor view is the operand's
  // memref at the plan buffer's base; the tile takes the buffer's
  // dimensions sorted by kernel dimension (unit ones first), so that the
  // last two are the rows and the row.
  auto view = [&](const RowAccess &access, SmallVector<int64_t> &tileShape,
                  SmallVector<Value> &tileIndex) {
    auto type = cast<MemRefType>(access.memref.getType());
    SmallVector<int64_t> strides = *getStrides(type), viewStrides;
    for (auto [extent, stride] : llvm::zip(type.getShape(), strides))
      viewStrides.push_back(extent == 1 ? 1 : stride);
    auto viewType = tir::TensorViewType::get(
        ctx, type.getShape(), type.getElementType(), viewStrides);
    Value tensorView =
        tir::MakeTensorViewOp::create(b, loc, viewType, pointerOf(access.base));
    SmallVector<int64_t> order = llvm::to_vector(
        llvm::seq<int64_t>(0, static_cast<int64_t>(access.dims.size())));
    llvm::stable_sort(order, [&](int64_t x, int64_t y) {
      return access.dims[x] < access.dims[y];
    });
    bool padded = false;
    tileShape.clear();
    tileIndex.clear();
    for (int64_t i : order) {
      int64_t dim = access.dims[i];
      tileShape.push_back(dim == lastOuter ? tm : dim == rowDim ? rpad : 1);
      tileIndex.push_back(dim < 0 ? zeroIndex : index[dim]);
      padded |= (dim == lastOuter && padRows) || (dim == rowDim && padRow);
    }
    std::optional<tir::PaddingValue> padding;
    if (padded)
      padding = tir::PaddingValue::zero;
    auto partitionType =
        tir::PartitionViewType::get(ctx, tileShape, viewType, order, padding);
    return tir::MakePartitionViewOp::create(b, loc, partitionType, tensorView)
        .getResult();
  };
  unsigned numLoads = 0, numStores = 0;
  auto load = [&](const RowAccess &access) -> Value {
    SmallVector<int64_t> tileShape;
    SmallVector<Value> tileIndex;
    Value partition = view(access, tileShape, tileIndex);
    Type element = getElementTypeOrSelf(access.memref.getType());
    auto op =
        tir::LoadViewTkoOp::create(b, loc, kb.tileType(tileShape, element),
                                   tokenType, partition, tileIndex, token);
    token = op.getResultToken();
    ++numLoads;
    return tir::ReshapeOp::create(b, loc, kb.tileType(shape2d(access), element),
                                  op.getResult());
  };
  auto store = [&](const RowAccess &access, Value value) {
    SmallVector<int64_t> tileShape;
    SmallVector<Value> tileIndex;
    Value partition = view(access, tileShape, tileIndex);
    Type element = getElementTypeOrSelf(access.memref.getType());
    Value tile =
        tir::ReshapeOp::create(b, loc, kb.tileType(tileShape, element), value);
    token = tir::StoreViewTkoOp::create(b, loc, tokenType, tile, partition,
                                        tileIndex, token)
                .getResultToken();
    ++numStores;
  };
  // The buffers' values as the kernel has them so far (2-d tiles).
  DenseMap<Value, Value> current;
  auto read = [&](Value memref) {
    Value &value = current[canonical[memref]];
    if (!value)
      value = load(accessOf(memref));
    return value;
  };
  auto broadcastTo = [&](Value tile, ArrayRef<int64_t> shape) -> Value {
    auto type = cast<tir::TileType>(tile.getType());
    if (type.getShape() == shape)
      return tile;
    return tir::BroadcastOp::create(
        b, loc, kb.tileType(shape, type.getElementType()), tile);
  };
  // The row's mask: true up to its end (built once, where needed).
  Value mask;
  auto getMask = [&]() {
    if (mask)
      return mask;
    Type i1 = b.getI1Type();
    Value iota = tir::IotaOp::create(b, loc, kb.tileType({rpad}, i32));
    Value end = tir::ConstantOp::create(
        b, loc, kb.tileType({rpad}, i32),
        DenseElementsAttr::get(RankedTensorType::get({rpad}, i32),
                               b.getI32IntegerAttr(kernel.row)));
    Value inRow =
        tir::CmpIOp::create(b, loc, kb.tileType({rpad}, i1),
                            tir::ComparisonPredicate::less_than, iota, end);
    Value row =
        tir::ReshapeOp::create(b, loc, kb.tileType({1, rpad}, i1), inRow);
    mask = tir::BroadcastOp::create(b, loc, kb.tileType({tm, rpad}, i1), row);
    return mask;
  };

  for (Operation *op : kernel.ops) {
    if (auto fill = dyn_cast<linalg::FillOp>(op)) {
      Value out = fill.getOutputs()[0];
      auto element = cast<FloatType>(getElementTypeOrSelf(out.getType()));
      current[canonical[out]] =
          kb.splat(shape2d(accessOf(out)), element, getFillValue(fill));
      continue;
    }
    auto generic = cast<linalg::GenericOp>(op);
    Block *scalarBody = generic.getBlock();
    bool fullRow = isFullRowOp(generic, kernel);
    SmallVector<int64_t> shape = {tm, fullRow ? rpad : 1};
    std::optional<RowReduction> reduction = getRowReduction(generic);
    IRMapping mapping;
    for (OpOperand &operand : generic->getOpOperands()) {
      BlockArgument arg = scalarBody->getArgument(operand.getOperandNumber());
      if (generic.isDpsInit(&operand) && (reduction || arg.use_empty()))
        continue;
      mapping.map(arg, broadcastTo(read(operand.get()), shape));
    }
    for (Operation &scalar : scalarBody->without_terminator())
      if (!reduction || &scalar != reduction->combiner)
        mapping.map(scalar.getResult(0),
                    translateScalarOp(kb, &scalar, shape, mapping));
    if (!reduction) {
      for (auto [out, yielded] :
           llvm::zip(generic.getDpsInits(),
                     scalarBody->getTerminator()->getOperands()))
        current[canonical[out]] = mapping.lookup(yielded);
      continue;
    }
    // The fold along the row, the padding past its end masked to the
    // identity, joined to the accumulator's value.
    Value value = mapping.lookup(reduction->value);
    auto element =
        cast<FloatType>(cast<tir::TileType>(value.getType()).getElementType());
    double identity = 0;
    switch (reduction->kind) {
    case RowReduction::Kind::Add:
      identity = 0;
      break;
    case RowReduction::Kind::Mul:
      identity = 1;
      break;
    case RowReduction::Kind::Max:
      identity = -std::numeric_limits<double>::infinity();
      break;
    case RowReduction::Kind::Min:
      identity = std::numeric_limits<double>::infinity();
      break;
    }
    if (padRow)
      value = tir::SelectOp::create(b, loc, value.getType(), getMask(), value,
                                    kb.splat(shape, element, identity));
    // maximumf and minimumf propagate NaN, maxnumf and minnumf do not (the
    // latter's fills are NaN: their identity).
    bool propagateNaN =
        isa<arith::MaximumFOp, arith::MinimumFOp>(reduction->combiner);
    auto combine = [&](OpBuilder &builder, Value x, Value y) -> Value {
      switch (reduction->kind) {
      case RowReduction::Kind::Add:
        return tir::AddFOp::create(builder, loc, x.getType(), x, y);
      case RowReduction::Kind::Mul:
        return tir::MulFOp::create(builder, loc, x.getType(), x, y);
      case RowReduction::Kind::Max:
        return tir::MaxFOp::create(builder, loc, x.getType(), x, y,
                                   propagateNaN);
      case RowReduction::Kind::Min:
        return tir::MinFOp::create(builder, loc, x.getType(), x, y,
                                   propagateNaN);
      }
      llvm_unreachable("a reduction kind");
    };
    auto reduce = tir::ReduceOp::create(
        b, loc, TypeRange{kb.tileType({tm}, element)}, ValueRange{value},
        b.getI32IntegerAttr(1),
        b.getArrayAttr({FloatAttr::get(element, identity)}));
    {
      OpBuilder::InsertionGuard guard(b);
      Type scalar = kb.tileType({}, element);
      Block *combiner =
          b.createBlock(&reduce.getBody(), {}, {scalar, scalar}, {loc, loc});
      tir::YieldOp::create(b, loc,
                           ValueRange{combine(b, combiner->getArgument(0),
                                              combiner->getArgument(1))});
    }
    Value folded = tir::ReshapeOp::create(b, loc, kb.tileType({tm, 1}, element),
                                          reduce.getResult(0));
    Value out = generic.getDpsInitOperand(0)->get();
    Value accumulator = broadcastTo(read(out), {tm, 1});
    current[canonical[out]] = combine(b, accumulator, folded);
  }

  // The results the rest of the program reads, stored once (each buffer
  // through one of its views).
  llvm::SmallPtrSet<Value, 8> stored;
  for (Value out : written) {
    Value base = getPlanBase(out, func);
    if (isUsedOutside(base, kernelOps) && stored.insert(base).second)
      store(accessOf(out), current[canonical[out]]);
  }
  tir::ReturnOp::create(b, loc);
  SmallVector<Type> argTypes(body->getArgumentTypes());
  entry.setFunctionType(b.getFunctionType(argTypes, {}));

  // The launch, in the last op's place, the deallocations of the kernel's
  // buffers after it.
  OpBuilder host(last->getContext());
  host.setInsertionPointAfter(last);
  auto launch = tir::LaunchOp::create(
      host, loc,
      SymbolRefAttr::get(ctx, name, {FlatSymbolRefAttr::get(ctx, name)}),
      host.getDenseI64ArrayAttr({grid[0], grid[1], grid[2]}), kernelBuffers);
  launch->setAttr(PBDialect::kKernelLaunchAttrName, host.getUnitAttr());
  launch->setAttr(PBDialect::kWorkAttrName, countWork(kernel.ops).toAttr(ctx));
  for (Operation *dealloc : deallocs)
    dealloc->moveAfter(launch);

  std::string outer;
  llvm::raw_string_ostream os(outer);
  llvm::interleave(kernel.outer, os, "x");
  explain(first,
          llvm::formatv("tile-ir: row kernel @{0}: {1} ops over {2} rows of "
                        "{3}; tiles {4}x{5}, grid [{6}, {7}, 1]; {8} loads, "
                        "{9} stores",
                        name, kernel.ops.size(), outer, kernel.row, tm, rpad,
                        grid[0], grid[1], numLoads, numStores)
              .str());
  for (Operation *op : llvm::reverse(kernel.ops))
    op->erase();
}
