//===- EmitTileIR.cpp - Contractions as CUDA Tile IR kernels --------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// pb-nvidia-emit-tile-ir (S4, codegen=tile-ir): the contractions S3 tagged
// for matrix units become tile kernels. Each tagged op's operands are
// viewed as tensor views with the operands' own strides, cut into tiles by
// partition views; a tile block computes one M x N (x batch) tile of C with
// a loop over K tiles of `tileir.mmaf`. Its tile extents come from the
// chip's TileIRPath; what tileiras does with them (threads, shared memory,
// pipelining, tensor-core instructions) is its own.
//
//===----------------------------------------------------------------------===//

#include "TileIRKernel.h"

#include "pb/NVIDIA/NVIDIABackend.h"

#include "pb/Dialect/PBDialect.h"
#include "pb/TileIR/TileIR.h"
#include "pb/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <limits>

namespace mlir::pb::nvidia {
#define GEN_PASS_DEF_PBNVIDIAEMITTILEIRPASS
#include "pb/NVIDIA/Passes.h.inc"
} // namespace mlir::pb::nvidia

using namespace mlir;
using namespace mlir::pb;
using namespace mlir::pb::nvidia;

namespace {

/// The contraction's plan: loops of the batch, M, N and K dimensions and
/// the tile extents.
struct Plan {
  std::optional<unsigned> batchLoop;
  unsigned mLoop, nLoop, kLoop;
  int64_t batch = 1, m, n, k;
  int64_t tm, tn, tk;
  int64_t grid[3];
};

} // namespace

/// For each result of the projected permutation `map` (a buffer's indexing
/// map), the tile dim of the loop it names; failure for other maps or
/// loops with no tile dim.
static FailureOr<SmallVector<int64_t>>
getTileDims(AffineMap map, const DenseMap<unsigned, int64_t> &tileDimOfLoop) {
  SmallVector<int64_t> dims;
  for (AffineExpr result : map.getResults()) {
    auto dim = dyn_cast<AffineDimExpr>(result);
    if (!dim)
      return failure();
    auto it = tileDimOfLoop.find(dim.getPosition());
    if (it == tileDimOfLoop.end())
      return failure();
    if (llvm::is_contained(dims, it->second))
      return failure();
    dims.push_back(it->second);
  }
  return dims;
}

/// Checks that the tagged `epilogue` of a kernel writing C (`cMem`, whose
/// dimensions run along the tile dims `cTileDims`) can run on its tile,
/// after turning erf into upstream's polynomial: each operation has a tile
/// form, each other operand is an f16/bf16/f32 entry argument or temporary
/// indexed by C's loops, the output a permutation of C. Appends those
/// operands (inputs, then the output) and their tile dims; `why` otherwise.
static bool analyzeEpilogue(linalg::GenericOp epilogue, Value cMem,
                            ArrayRef<int64_t> cTileDims, func::FuncOp func,
                            SmallVectorImpl<Value> &buffers,
                            SmallVectorImpl<SmallVector<int64_t>> &dims,
                            std::string &why) {
  approximateErf(epilogue);
  if (!canTranslateBody(epilogue.getBlock(), why))
    return false;
  DenseMap<unsigned, int64_t> tileDimOfLoop;
  for (OpOperand *input : epilogue.getDpsInputOperands())
    if (input->get() == cMem) {
      AffineMap map = epilogue.getMatchingIndexingMap(input);
      for (unsigned r = 0; r < map.getNumResults(); ++r)
        tileDimOfLoop[map.getDimPosition(r)] = cTileDims[r];
    }
  for (OpOperand &operand : epilogue->getOpOperands()) {
    if (operand.get() == cMem && epilogue.isDpsInput(&operand))
      continue;
    FailureOr<SmallVector<int64_t>> d =
        getTileDims(epilogue.getMatchingIndexingMap(&operand), tileDimOfLoop);
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (failed(d) || !type) {
      why = "an epilogue operand indexed other than by C's loops";
      return false;
    }
    if (!isa<Float16Type, BFloat16Type, Float32Type>(type.getElementType())) {
      why = "an epilogue operand of a type other than f16, bf16 or f32";
      return false;
    }
    if (epilogue.isDpsInit(&operand) && d->size() != cTileDims.size()) {
      why = "an epilogue output that is not a permutation of C";
      return false;
    }
    if (failed(getStrides(type)) || !getPlanBase(operand.get(), func)) {
      why = "an epilogue buffer that is not a whole entry argument or "
            "temporary (or a reshaped view of one) with static strides";
      return false;
    }
    buffers.push_back(operand.get());
    dims.push_back(*d);
  }
  return true;
}

/// The f32 accumulator elements a tile block may hold (TileIRPath), and
/// the largest M tile: M twice N where both are large (tm^2 / 2 <= budget).
static int64_t getAccumulatorBudget(const TileIRPathDesc &path) {
  return path.accumulatorRegistersPerThread * path.threadsPerTileBlock;
}
static int64_t getMTileCap(const TileIRPathDesc &path) {
  return static_cast<int64_t>(llvm::bit_floor(static_cast<uint64_t>(
      std::sqrt(2.0 * static_cast<double>(getAccumulatorBudget(path))))));
}

/// The plan of `op` on `chip`'s Tile IR path, or failure with `why`.
static FailureOr<Plan> planContraction(linalg::LinalgOp op,
                                       const ChipDesc &chip,
                                       const TileIRPathDesc &path,
                                       const MatrixUnitDesc *unit,
                                       std::string &why) {
  if (!linalg::isaContractionOpInterface(op) || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1) {
    why = "not a two-operand contraction";
    return failure();
  }
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->m.size() != 1 || dims->n.size() != 1 ||
      dims->k.size() != 1 || dims->batch.size() > 1) {
    why = "not one M, N and K dimension (and at most one batch)";
    return failure();
  }
  Type a = getElementTypeOrSelf(op.getDpsInputOperand(0)->get().getType());
  Type bType = getElementTypeOrSelf(op.getDpsInputOperand(1)->get().getType());
  Type c = getElementTypeOrSelf(op.getDpsInitOperand(0)->get().getType());
  // f32 operands run on tf32 units where S3 chose one (allow-tf32).
  bool tf32 = isa<Float32Type>(a) && isa<Float32Type>(c) && unit &&
              unit->aType == ElementType::TF32;
  if (a != bType ||
      !(tf32 || (isa<Float16Type, BFloat16Type>(a) &&
                 (isa<Float32Type>(c) ||
                  (isa<Float16Type>(a) && isa<Float16Type>(c)))))) {
    why = "operand types other than f16 or bf16 with f32 (or f16) results, "
          "or f32 on tf32 units";
    return failure();
  }
  Plan plan;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic)) {
    why = "dynamic sizes";
    return failure();
  }
  if (!dims->batch.empty()) {
    plan.batchLoop = dims->batch.front();
    plan.batch = ranges[*plan.batchLoop];
  }
  plan.mLoop = dims->m.front();
  plan.nLoop = dims->n.front();
  plan.kLoop = dims->k.front();
  plan.m = ranges[plan.mLoop];
  plan.n = ranges[plan.nLoop];
  plan.k = ranges[plan.kLoop];

  // M x N within the accumulator budget of a tile block, M twice N where
  // both are large (tm^2 / 2 <= budget); extents of at least 16 (an MMA's
  // M and K).
  int64_t budget = getAccumulatorBudget(path);
  int64_t tmCap = getMTileCap(path);
  int64_t tmMax = std::max<int64_t>(16, powerOf2Ceil(plan.m));
  int64_t tnMax = std::max<int64_t>(16, powerOf2Ceil(plan.n));
  plan.tm = std::max<int64_t>(16, std::min(tmMax, tmCap));
  plan.tn = std::min(tnMax, std::max<int64_t>(16, budget / plan.tm));
  // Halved (the larger extent first) while the grid leaves SMs idle, M
  // not below the M of the chip's warpgroup unit for these types (a
  // smaller tile leaves tileiras only warp-level MMAs), nor below 32.
  int64_t sms = getGridUnits(chip);
  int64_t tmFloor = 32, tnFloor = 32;
  if (unit)
    for (const MatrixUnitDesc *other : chip.matrixUnits)
      if (other->scope == MatrixScope::WarpgroupScope &&
          other->aType == unit->aType && other->cType == unit->cType)
        tmFloor = std::max<int64_t>(tmFloor, other->m);
  tmFloor = std::min(tmFloor, plan.tm);
  auto blocks = [&]() -> int64_t {
    return static_cast<int64_t>(llvm::divideCeil(plan.m, plan.tm) *
                                llvm::divideCeil(plan.n, plan.tn)) *
           plan.batch;
  };
  while (blocks() < sms && (plan.tm > tmFloor || plan.tn > tnFloor)) {
    if ((plan.tm >= plan.tn || plan.tn <= tnFloor) && plan.tm > tmFloor)
      plan.tm /= 2;
    else
      plan.tn /= 2;
  }
  // K: the operand row bytes (at least 16, an MMA's K; no more than K
  // needs); a last K tile past K reads zeros (the views' padding).
  int64_t elementBytes = a.getIntOrFloatBitWidth() / 8;
  plan.tk = std::max<int64_t>(
      16, std::min(path.operandRowBytes / elementBytes, powerOf2Ceil(plan.k)));
  plan.grid[0] = static_cast<int64_t>(llvm::divideCeil(plan.m, plan.tm));
  plan.grid[1] = static_cast<int64_t>(llvm::divideCeil(plan.n, plan.tn));
  plan.grid[2] = plan.batch;
  return plan;
}

namespace {
class PBNVIDIAEmitTileIRPass
    : public nvidia::impl::PBNVIDIAEmitTileIRPassBase<PBNVIDIAEmitTileIRPass> {
public:
  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    const ChipDesc *chip = getTargetChip(module);
    if (!chip || !chip->tileIR) {
      module.emitError("pb-nvidia-emit-tile-ir: the target has no Tile IR "
                       "path (TileIRPath in its .td)");
      return signalPassFailure();
    }
    unsigned counter = 0;
    for (auto func : llvm::to_vector(module.getOps<func::FuncOp>())) {
      SmallVector<linalg::LinalgOp> tagged;
      func.walk([&](linalg::LinalgOp op) {
        if (op->hasAttr(PBDialect::kMatrixUnitAttrName))
          tagged.push_back(op);
      });
      for (linalg::LinalgOp op : tagged) {
        LogicalResult result =
            isa<linalg::Conv2DNhwcHwcfOp>(op)
                ? emitConvolution(module, func,
                                  cast<linalg::Conv2DNhwcHwcfOp>(op), *chip,
                                  counter)
                : emitKernel(module, func, op, *chip, counter);
        if (failed(result))
          return signalPassFailure();
      }
      // Row kernels (pb-group-row-kernels), each id's ops in order.
      llvm::MapVector<int64_t, SmallVector<Operation *>> rowKernels;
      func.walk([&](linalg::LinalgOp op) {
        if (auto id =
                op->getAttrOfType<IntegerAttr>(PBDialect::kRowKernelAttrName))
          rowKernels[id.getInt()].push_back(op);
      });
      for (auto &[id, ops] : rowKernels)
        emitRowKernel(module, func, ops, *chip, counter);
    }
  }

private:
  LogicalResult emitKernel(mlir::ModuleOp module, func::FuncOp func,
                           linalg::LinalgOp op, const ChipDesc &chip,
                           unsigned &counter);
  LogicalResult emitConvolution(mlir::ModuleOp module, func::FuncOp func,
                                linalg::Conv2DNhwcHwcfOp op,
                                const ChipDesc &chip, unsigned &counter);
};
} // namespace

LogicalResult PBNVIDIAEmitTileIRPass::emitKernel(mlir::ModuleOp module,
                                                 func::FuncOp func,
                                                 linalg::LinalgOp op,
                                                 const ChipDesc &chip,
                                                 unsigned &counter) {
  std::string why;
  const MatrixUnitDesc *unit = nullptr;
  if (auto name = op->getAttrOfType<StringAttr>(PBDialect::kMatrixUnitAttrName))
    for (const MatrixUnitDesc *candidate : chip.matrixUnits)
      if (candidate->name == name.getValue())
        unit = candidate;
  FailureOr<Plan> planned = planContraction(op, chip, *chip.tileIR, unit, why);
  auto refuse = [&](const std::string &reason) {
    explain(op, "tile-ir: not a Tile IR kernel (" + reason +
                    "): left to the PTX path");
    return success();
  };
  if (failed(planned))
    return refuse(why);
  Plan plan = *planned;

  // Tile dims: batch (if any), M, N, K.
  DenseMap<unsigned, int64_t> tileDimOfLoop;
  TileGeometry geometry;
  auto addDim = [&](std::optional<unsigned> loop, int64_t extent,
                    int64_t tile) {
    int64_t dim = geometry.extent.size();
    if (loop)
      tileDimOfLoop[*loop] = dim;
    geometry.extent.push_back(extent);
    geometry.tile.push_back(tile);
    return dim;
  };
  int64_t batchDim =
      plan.batchLoop ? addDim(plan.batchLoop, plan.batch, 1) : -1;
  int64_t mDim = addDim(plan.mLoop, plan.m, plan.tm);
  int64_t nDim = addDim(plan.nLoop, plan.n, plan.tn);
  int64_t kDim = addDim(plan.kLoop, plan.k, plan.tk);
  SmallVector<int64_t> cDims = {mDim, nDim};
  if (batchDim >= 0)
    cDims.insert(cDims.begin(), batchDim);

  // The buffers: A, B, C, then the epilogue's other inputs and its output.
  SmallVector<Value> buffers;
  SmallVector<AffineMap> maps;
  for (OpOperand &operand : op->getOpOperands()) {
    buffers.push_back(operand.get());
    maps.push_back(op.getMatchingIndexingMap(&operand));
  }
  SmallVector<FailureOr<SmallVector<int64_t>>> tileDims;
  for (AffineMap map : maps)
    tileDims.push_back(getTileDims(map, tileDimOfLoop));
  SmallVector<int64_t> want[3] = {{mDim, kDim}, {kDim, nDim}, {mDim, nDim}};
  for (int i = 0; i < 3; ++i) {
    if (batchDim >= 0)
      want[i].insert(want[i].begin(), batchDim);
    SmallVector<int64_t> have, wanted = want[i];
    if (succeeded(tileDims[i]))
      have = *tileDims[i];
    llvm::sort(have);
    llvm::sort(wanted);
    if (have != wanted)
      return refuse("operands indexed other than by the batch, M, N and K "
                    "loops");
  }

  // The epilogue S3 tagged, when each of its operations has a tile form.
  linalg::GenericOp epilogue = findFusableEpilogue(op, /*permuted=*/true);
  if (epilogue && !epilogue->hasAttr(PBDialect::kMatrixUnitEpilogueAttrName))
    epilogue = nullptr;
  Value cMem = op.getDpsInitOperand(0)->get();
  if (epilogue) {
    std::string reason;
    SmallVector<Value> epilogueBuffers;
    SmallVector<SmallVector<int64_t>> epilogueDims;
    if (analyzeEpilogue(epilogue, cMem, *tileDims[2], func, epilogueBuffers,
                        epilogueDims, reason)) {
      buffers.append(epilogueBuffers);
      for (SmallVector<int64_t> &d : epilogueDims)
        tileDims.push_back(std::move(d));
    } else {
      explain(epilogue, "tile-ir: epilogue not fused (" + reason +
                            "): it runs as loops after the kernel");
      epilogue = nullptr;
    }
  }
  for (Value buffer : buffers) {
    auto type = dyn_cast<MemRefType>(buffer.getType());
    if (!type || failed(getStrides(type)) || !getPlanBase(buffer, func))
      return refuse("a buffer that is not a whole entry argument or "
                    "temporary (or a reshaped view of one) with static "
                    "strides");
  }

  // The epilogue now runs in the kernel: what S2 placed between the two
  // must come before it.
  if (epilogue)
    while (op->getNextNode() != epilogue)
      op->getNextNode()->moveBefore(op);
  SmallVector<Operation *> fills = gpucommon::findRemovableZeroFills(
      op, epilogue ? epilogue.getOperation() : nullptr,
      /*entryArguments=*/true);
  // The kernel's arguments: each buffer once; C only where it is read (its
  // values added) or written (no epilogue).
  bool usesC = fills.empty() || !epilogue;
  // Views of a buffer view its base pointer with their own shape and
  // strides.
  SmallVector<Value> kernelBuffers;
  for (auto [i, buffer] : llvm::enumerate(buffers)) {
    Value base = getPlanBase(buffer, func);
    if ((i != 2 || usesC) && !llvm::is_contained(kernelBuffers, base))
      kernelBuffers.push_back(base);
  }

  // The kernel.
  std::string name = llvm::formatv("{0}_tile{1}", func.getName(), counter++);
  OpBuilder moduleBuilder(module.getContext());
  moduleBuilder.setInsertionPointToEnd(module.getBody());
  Location loc = op.getLoc();
  auto tileModule = tir::ModuleOp::create(moduleBuilder, loc, name);
  OpBuilder b = OpBuilder::atBlockBegin(&tileModule.getBody().front());
  SmallVector<Type> argTypes;
  for (Value buffer : kernelBuffers)
    argTypes.push_back(tir::TileType::get(
        b.getContext(), {},
        tir::PointerType::get(b.getContext(),
                              getElementTypeOrSelf(buffer.getType()))));
  auto entry = tir::EntryOp::create(
      b, loc, name, b.getFunctionType(argTypes, {}), ArrayAttr(), ArrayAttr());
  Block *body = b.createBlock(&entry.getBody(), {}, argTypes,
                              SmallVector<Location>(argTypes.size(), loc));
  KernelBuilder kb(b, loc, geometry);
  auto access = [&](unsigned i) {
    Access result;
    result.pointer = body->getArgument(
        llvm::find(kernelBuffers, getPlanBase(buffers[i], func)) -
        kernelBuffers.begin());
    result.type = cast<MemRefType>(buffers[i].getType());
    result.tileDimOfDim = *tileDims[i];
    return result;
  };
  auto strides = [&](unsigned i) {
    return *getStrides(cast<MemRefType>(buffers[i].getType()));
  };

  Value token = tir::MakeTokenOp::create(b, loc);
  Type i32Tile = kb.tileType({}, b.getI32Type());
  auto ids = tir::GetTileBlockIdOp::create(b, loc, i32Tile, i32Tile, i32Tile);
  geometry.index.resize(geometry.extent.size());
  geometry.index[mDim] = ids.getX();
  geometry.index[nDim] = ids.getY();
  if (batchDim >= 0)
    geometry.index[batchDim] = ids.getZ();

  SmallVector<int64_t> accShape;
  for (int64_t dim : cDims)
    accShape.push_back(geometry.tile[dim]);
  Type f32 = b.getF32Type();
  Value zero = kb.splat(accShape, b.getF32Type(), 0.0);
  Value lower = kb.constantI32(0), step = kb.constantI32(1),
        upper = kb.constantI32(
            static_cast<int64_t>(llvm::divideCeil(plan.k, plan.tk)));
  // Operand tiles in the order mmaf takes them ([batch,] M x K, K x N),
  // through views made once; K's last tile reads zeros past K.
  std::optional<tir::PaddingValue> kPadding;
  if (plan.k % plan.tk)
    kPadding = tir::PaddingValue::zero;
  Value aView = kb.partitionView(access(0), want[0], strides(0), kPadding);
  Value bView = kb.partitionView(access(1), want[1], strides(1), kPadding);
  Type aElement = getElementTypeOrSelf(buffers[0].getType());
  bool tf32 =
      unit && unit->aType == ElementType::TF32 && isa<Float32Type>(aElement);
  auto loop = tir::ForOp::create(b, loc, lower, upper, step, ValueRange{zero});
  {
    OpBuilder::InsertionGuard guard(b);
    Block &loopBody = loop.getBody().front();
    b.setInsertionPointToStart(&loopBody);
    geometry.index[kDim] = loop.getInductionVar();
    auto operandTile = [&](Value view, ArrayRef<int64_t> order) {
      auto viewType = cast<tir::PartitionViewType>(view.getType());
      Value tile =
          tir::LoadViewTkoOp::create(b, loc, viewType.getTileType(),
                                     tir::TokenType::get(b.getContext()), view,
                                     kb.indexOf(order), token)
              .getResult();
      // f32 operands of tf32 units, rounded to tf32 as the unit reads them.
      return tf32 ? kb.convert(tile, b.getTF32Type()) : tile;
    };
    Value lhs = operandTile(aView, want[0]);
    Value rhs = operandTile(bView, want[1]);
    Value acc = tir::MmaFOp::create(b, loc, zero.getType(), lhs, rhs,
                                    loop.getRegionIterArgs()[0]);
    tir::ContinueOp::create(b, loc, ValueRange{acc});
  }
  Value acc = loop.getResult(0);
  Type cType = getElementTypeOrSelf(cMem.getType());
  if (fills.empty()) {
    // C's values join the product (in f32).
    Value old = kb.load(access(2), strides(2), token);
    acc = tir::AddFOp::create(b, loc, acc.getType(), acc, kb.convert(old, f32));
  }
  Value result = kb.convert(acc, cType);
  unsigned outIndex = 2;
  if (epilogue) {
    IRMapping mapping;
    Block *epilogueBody = epilogue.getBlock();
    unsigned next = 3;
    for (OpOperand *input : epilogue.getDpsInputOperands()) {
      BlockArgument arg = epilogueBody->getArgument(input->getOperandNumber());
      if (input->get() == cMem) {
        mapping.map(arg, result);
        continue;
      }
      unsigned i = next++;
      Access in = access(i);
      Value tile = kb.load(in, strides(i), token);
      mapping.map(arg, kb.expand(tile, KernelBuilder::sortedDims(in), cDims));
    }
    for (Operation &scalar : epilogueBody->without_terminator())
      mapping.map(scalar.getResult(0),
                  translateScalarOp(kb, &scalar, accShape, mapping));
    result = mapping.lookup(epilogueBody->getTerminator()->getOperand(0));
    outIndex = next;
  }
  kb.store(result, access(outIndex), strides(outIndex), token);
  tir::ReturnOp::create(b, loc);

  // The launch, with its work for the estimate.
  OpBuilder host(op);
  auto launch = tir::LaunchOp::create(
      host, loc,
      SymbolRefAttr::get(b.getContext(), name,
                         {FlatSymbolRefAttr::get(b.getContext(), name)}),
      host.getDenseI64ArrayAttr({plan.grid[0], plan.grid[1], plan.grid[2]}),
      kernelBuffers);
  launch->setAttr(PBDialect::kKernelLaunchAttrName, host.getUnitAttr());
  SmallVector<Operation *> statements = {op};
  if (epilogue)
    statements.push_back(epilogue);
  Work work = countWork(statements);
  work.vectorFlops = epilogue ? countWork({epilogue.getOperation()}).vectorFlops
                              : decltype(work.vectorFlops)();
  if (std::optional<ElementType> unitType =
          getTargetElementType(getElementTypeOrSelf(buffers[0].getType())))
    work.addFlops(/*matrix=*/true, *unitType,
                  2.0 * plan.batch * plan.m * plan.n * plan.k);
  launch->setAttr(PBDialect::kWorkAttrName, work.toAttr(b.getContext()));

  explain(op,
          llvm::formatv(
              "tile-ir: kernel @{0}: batch {1}, MxNxK {2}x{3}x{4}; "
              "tiles {5}x{6}x{7}, grid [{8}, {9}, {10}]{11}{12}",
              name, plan.batch, plan.m, plan.n, plan.k, plan.tm, plan.tn,
              plan.tk, plan.grid[0], plan.grid[1], plan.grid[2],
              fills.empty() ? "; C added"
                            : "; accumulators start at 0 (C's "
                              "zero fill removed)",
              epilogue ? llvm::formatv(
                             "; epilogue of {0} ops fused",
                             epilogue.getBlock()->getOperations().size() - 1)
                             .str()
                       : std::string()));
  for (Operation *fill : fills)
    fill->erase();
  if (epilogue)
    epilogue->erase();
  op->erase();
  return success();
}

/// A channels-last convolution (NHWC input, HWCF filter: what S1 makes of
/// every 2-d convolution) as an implicit GEMM without gathers: for each
/// filter offset (kh, kw) the input windows are a tensor view of the input
/// whose base pointer is advanced by (kh * dh * W + kw * dw) * C elements
/// and whose strides step by the convolution's strides, so a tile of
/// (1, oh, ow, c) of it is a tile of the im2col matrix's rows; the filter
/// slice at (kh, kw) is a C x F view. A tile block computes (oh, ow, f)
/// = (TH, a power of two covering OW, TF) of one image; the loops run over
/// (filter offset, C tile) pairs.
LogicalResult PBNVIDIAEmitTileIRPass::emitConvolution(
    mlir::ModuleOp module, func::FuncOp func, linalg::Conv2DNhwcHwcfOp op,
    const ChipDesc &chip, unsigned &counter) {
  auto refuse = [&](const std::string &reason) {
    explain(op, "tile-ir: not a Tile IR kernel (" + reason +
                    "): left to the PTX path");
    return success();
  };
  const TileIRPathDesc &path = *chip.tileIR;
  Value input = op.getDpsInputOperand(0)->get();
  Value filter = op.getDpsInputOperand(1)->get();
  Value output = op.getDpsInitOperand(0)->get();
  auto inType = dyn_cast<MemRefType>(input.getType());
  auto filterType = dyn_cast<MemRefType>(filter.getType());
  auto outType = dyn_cast<MemRefType>(output.getType());
  if (!inType || !filterType || !outType)
    return refuse("tensors");
  Type a = inType.getElementType(), c = outType.getElementType();
  if (a != filterType.getElementType() || !isa<Float16Type, BFloat16Type>(a) ||
      !(isa<Float32Type>(c) || (isa<Float16Type>(a) && isa<Float16Type>(c))))
    return refuse("operand types other than f16 or bf16 with f32 (or f16) "
                  "results");
  for (Value buffer : {input, filter, output}) {
    auto type = cast<MemRefType>(buffer.getType());
    if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
        !isPlanBuffer(buffer, func))
      return refuse("a buffer that is not a whole entry argument or "
                    "temporary with the identity layout");
  }
  ArrayRef<int64_t> in = inType.getShape(), w = filterType.getShape(),
                    out = outType.getShape();
  int64_t n = in[0], h = in[1], wIn = in[2], channels = in[3];
  if (inType.getNumElements() > std::numeric_limits<int32_t>::max() ||
      filterType.getNumElements() > std::numeric_limits<int32_t>::max())
    return refuse("buffers of more than 2^31 elements (i32 offsets)");
  int64_t kh = w[0], kw = w[1], features = w[3];
  int64_t oh = out[1], ow = out[2];
  SmallVector<int64_t> strides =
      llvm::to_vector(op.getStrides().getValues<int64_t>());
  SmallVector<int64_t> dilations =
      llvm::to_vector(op.getDilations().getValues<int64_t>());

  // Tiles: OW whole (a power of two), TH rows of outputs so that TH x OW
  // is the M tile; F and C as the contraction's N and K.
  int64_t budget = getAccumulatorBudget(path);
  int64_t tmCap = getMTileCap(path);
  int64_t tw = std::max<int64_t>(1, powerOf2Ceil(ow));
  if (tw > tmCap)
    return refuse(llvm::formatv("output rows of {0} pixels exceed a tile "
                                "of {1}",
                                ow, tmCap)
                      .str());
  int64_t th = std::min(std::max<int64_t>(1, tmCap / tw), powerOf2Ceil(oh));
  if (th * tw < 16)
    return refuse("fewer than 16 output pixels per tile");
  int64_t tf = std::min(std::max<int64_t>(16, powerOf2Ceil(features)),
                        std::max<int64_t>(16, budget / (th * tw)));
  int64_t sms = getGridUnits(chip);
  auto blocks = [&]() -> int64_t {
    return static_cast<int64_t>(llvm::divideCeil(oh, th) *
                                llvm::divideCeil(features, tf)) *
           n;
  };
  while (blocks() < sms && (tf > 32 || th * tw > 64)) {
    if (tf > 32)
      tf /= 2;
    else
      th /= 2;
  }
  int64_t elementBytes = a.getIntOrFloatBitWidth() / 8;
  int64_t tc = std::max<int64_t>(
      16, std::min(path.convolutionOperandRowBytes / elementBytes,
                   powerOf2Ceil(channels)));
  int64_t grid[3] = {static_cast<int64_t>(llvm::divideCeil(oh, th)),
                     static_cast<int64_t>(llvm::divideCeil(features, tf)), n};
  // The epilogue S3 tagged (bias, batch norm, ReLU, a residual) on the
  // output tile, whose dims are the output's: image, row, column, feature.
  linalg::GenericOp epilogue = findFusableEpilogue(op, /*permuted=*/true);
  if (epilogue && !epilogue->hasAttr(PBDialect::kMatrixUnitEpilogueAttrName))
    epilogue = nullptr;
  SmallVector<Value> epilogueBuffers;
  SmallVector<SmallVector<int64_t>> epilogueDims;
  if (epilogue) {
    std::string reason;
    if (!analyzeEpilogue(epilogue, output, {0, 1, 2, 3}, func, epilogueBuffers,
                         epilogueDims, reason)) {
      explain(epilogue, "tile-ir: epilogue not fused (" + reason +
                            "): it runs as loops after the kernel");
      epilogue = nullptr;
      epilogueBuffers.clear();
      epilogueDims.clear();
    }
  }
  if (epilogue)
    while (op->getNextNode() != epilogue)
      op->getNextNode()->moveBefore(op);
  SmallVector<Operation *> fills = gpucommon::findRemovableZeroFills(
      op, epilogue ? epilogue.getOperation() : nullptr,
      /*entryArguments=*/true);
  // C is read (its values added) or written (no epilogue), else not passed.
  bool usesC = fills.empty() || !epilogue;

  std::string name = llvm::formatv("{0}_tile{1}", func.getName(), counter++);
  OpBuilder moduleBuilder(module.getContext());
  moduleBuilder.setInsertionPointToEnd(module.getBody());
  Location loc = op.getLoc();
  auto tileModule = tir::ModuleOp::create(moduleBuilder, loc, name);
  OpBuilder b = OpBuilder::atBlockBegin(&tileModule.getBody().front());
  MLIRContext *context = b.getContext();
  SmallVector<Value> buffers = {input, filter};
  if (usesC)
    buffers.push_back(output);
  for (Value buffer : epilogueBuffers)
    if (!llvm::is_contained(buffers, buffer))
      buffers.push_back(buffer);
  SmallVector<Type> argTypes;
  for (Value buffer : buffers)
    argTypes.push_back(tir::TileType::get(
        context, {},
        tir::PointerType::get(context,
                              getElementTypeOrSelf(buffer.getType()))));
  auto entry = tir::EntryOp::create(
      b, loc, name, b.getFunctionType(argTypes, {}), ArrayAttr(), ArrayAttr());
  Block *body = b.createBlock(&entry.getBody(), {}, argTypes,
                              SmallVector<Location>(argTypes.size(), loc));
  TileGeometry geometry;
  KernelBuilder kb(b, loc, geometry);
  auto tileType = [&](ArrayRef<int64_t> shape, Type element) {
    return kb.tileType(shape, element);
  };
  auto i64Constant = [&](int64_t v) {
    return tir::ConstantOp::create(
        b, loc, tileType({}, b.getI64Type()),
        DenseElementsAttr::get(RankedTensorType::get({}, b.getI64Type()),
                               b.getI64IntegerAttr(v)));
  };
  // A partition view of `shape`/`viewStrides` at `base` + `offset` elements.
  auto view = [&](Value base, int64_t offset, ArrayRef<int64_t> shape,
                  ArrayRef<int64_t> viewStrides, ArrayRef<int64_t> tile,
                  Type element, bool pad) -> Value {
    if (offset)
      base = tir::OffsetOp::create(b, loc, base.getType(), base,
                                   i64Constant(offset));
    SmallVector<int64_t> positive;
    for (auto [extent, stride] : llvm::zip(shape, viewStrides))
      positive.push_back(extent == 1 ? 1 : stride);
    auto viewType = tir::TensorViewType::get(context, shape, element, positive);
    Value tensor = tir::MakeTensorViewOp::create(b, loc, viewType, base);
    std::optional<tir::PaddingValue> padding;
    if (pad)
      padding = tir::PaddingValue::zero;
    auto partition = tir::PartitionViewType::get(
        context, tile, viewType,
        llvm::to_vector(llvm::seq<int64_t>(0, shape.size())), padding);
    return tir::MakePartitionViewOp::create(b, loc, partition, tensor);
  };
  auto load = [&](Value partition, ValueRange index, Value token) {
    auto type = cast<tir::PartitionViewType>(partition.getType());
    return tir::LoadViewTkoOp::create(b, loc, type.getTileType(),
                                      tir::TokenType::get(context), partition,
                                      index, token)
        .getResult();
  };

  Value token = tir::MakeTokenOp::create(b, loc);
  Type i32Tile = tileType({}, b.getI32Type());
  auto ids = tir::GetTileBlockIdOp::create(b, loc, i32Tile, i32Tile, i32Tile);
  Value zeroIndex = kb.constantI32(0);
  int64_t rows = th * tw;
  Value acc = kb.splat({rows, tf}, b.getF32Type(), 0.0);
  Value lower = kb.constantI32(0), step = kb.constantI32(1),
        upper = kb.constantI32(
            static_cast<int64_t>(llvm::divideCeil(channels, tc)));
  bool padInput = channels % tc || ow % tw;
  // One loop over (filter offset, C tile) pairs: iteration t * CB + cb
  // reads C tile cb at filter offset t = (i, j) through views whose bases
  // are advanced by the offset's elements (one load of each operand per
  // iteration, as for a matmul: views of all offsets made up front kept
  // their addresses live across the loop and spilled).
  int64_t cTiles = static_cast<int64_t>(llvm::divideCeil(channels, tc));
  int64_t taps = kh * kw;
  upper = kb.constantI32(taps * cTiles);
  auto i32 = [&](int64_t v) { return kb.constantI32(v); };
  auto loop = tir::ForOp::create(b, loc, lower, upper, step, ValueRange{acc});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&loop.getBody().front());
    Value iv = loop.getInductionVar();
    Value cb = iv, aOffset, bOffset;
    if (taps > 1) {
      auto binary = [&](auto tag, Value x, Value y) -> Value {
        using OpTy = decltype(tag);
        return OpTy::create(b, loc, i32Tile, x, y);
      };
      Value tap = binary(tir::DivIOp(), iv, i32(cTiles));
      cb = binary(tir::RemIOp(), iv, i32(cTiles));
      Value row = binary(tir::DivIOp(), tap, i32(kw));
      Value column = binary(tir::RemIOp(), tap, i32(kw));
      aOffset =
          binary(tir::AddIOp(),
                 binary(tir::MulIOp(), row, i32(dilations[0] * wIn * channels)),
                 binary(tir::MulIOp(), column, i32(dilations[1] * channels)));
      bOffset = binary(tir::MulIOp(), tap, i32(channels * features));
    }
    auto advanced = [&](Value base, Value offset) {
      return offset
                 ? tir::OffsetOp::create(b, loc, base.getType(), base, offset)
                       .getResult()
                 : base;
    };
    Value windows =
        view(advanced(body->getArgument(0), aOffset), 0, {n, oh, ow, channels},
             {h * wIn * channels, strides[0] * wIn * channels,
              strides[1] * channels, 1},
             {1, th, tw, tc}, a, padInput);
    Value weights =
        view(advanced(body->getArgument(1), bOffset), 0, {channels, features},
             {features, 1}, {tc, tf}, a, channels % tc != 0);
    Value patch = load(windows, {ids.getZ(), ids.getX(), zeroIndex, cb}, token);
    Value lhs = tir::ReshapeOp::create(b, loc, tileType({rows, tc}, a), patch);
    Value rhs = load(weights, {cb, ids.getY()}, token);
    Value product = tir::MmaFOp::create(b, loc, acc.getType(), lhs, rhs,
                                        loop.getRegionIterArgs()[0]);
    tir::ContinueOp::create(b, loc, ValueRange{product});
  }
  acc = loop.getResult(0);
  auto argumentOf = [&](Value buffer) {
    return body->getArgument(llvm::find(buffers, buffer) - buffers.begin());
  };
  SmallVector<Value> outIndex = {ids.getZ(), ids.getX(), zeroIndex, ids.getY()};
  if (fills.empty()) {
    Value outView = view(argumentOf(output), 0, {n, oh, ow, features},
                         {oh * ow * features, ow * features, features, 1},
                         {1, th, tw, tf}, c, false);
    Value old = tir::ReshapeOp::create(b, loc, tileType({rows, tf}, c),
                                       load(outView, outIndex, token));
    acc = tir::AddFOp::create(b, loc, acc.getType(), acc,
                              kb.convert(old, b.getF32Type()));
  }
  SmallVector<int64_t> outShape = {1, th, tw, tf};
  Value result =
      tir::ReshapeOp::create(b, loc, tileType(outShape, c), kb.convert(acc, c));
  // The output tile's dims for the epilogue's loads and the store.
  geometry.extent = {n, oh, ow, features};
  geometry.tile = outShape;
  geometry.index = outIndex;
  auto access = [&](Value buffer, ArrayRef<int64_t> dims) {
    Access result;
    result.pointer = argumentOf(buffer);
    result.type = cast<MemRefType>(buffer.getType());
    result.tileDimOfDim.assign(dims.begin(), dims.end());
    return result;
  };
  Value outBuffer = output;
  SmallVector<int64_t> outDims = {0, 1, 2, 3};
  if (epilogue) {
    IRMapping mapping;
    Block *epilogueBody = epilogue.getBlock();
    unsigned next = 0;
    for (OpOperand *operand : epilogue.getDpsInputOperands()) {
      BlockArgument arg =
          epilogueBody->getArgument(operand->getOperandNumber());
      if (operand->get() == output) {
        mapping.map(arg, result);
        continue;
      }
      Access in = access(epilogueBuffers[next], epilogueDims[next]);
      ++next;
      Value tile = kb.load(in, *getStrides(in.type), token);
      mapping.map(arg,
                  kb.expand(tile, KernelBuilder::sortedDims(in), {0, 1, 2, 3}));
    }
    for (Operation &scalar : epilogueBody->without_terminator())
      mapping.map(scalar.getResult(0),
                  translateScalarOp(kb, &scalar, outShape, mapping));
    result = mapping.lookup(epilogueBody->getTerminator()->getOperand(0));
    outBuffer = epilogueBuffers[next];
    outDims = epilogueDims[next];
  }
  Access written = access(outBuffer, outDims);
  kb.store(result, written, *getStrides(written.type), token);
  tir::ReturnOp::create(b, loc);

  OpBuilder host(op);
  auto launch = tir::LaunchOp::create(
      host, loc,
      SymbolRefAttr::get(context, name,
                         {FlatSymbolRefAttr::get(context, name)}),
      host.getDenseI64ArrayAttr({grid[0], grid[1], grid[2]}),
      // An epilogue's reshaped views pass their buffers' base pointers.
      llvm::map_to_vector(buffers,
                          [&](Value v) { return getPlanBase(v, func); }));
  launch->setAttr(PBDialect::kKernelLaunchAttrName, host.getUnitAttr());
  SmallVector<Operation *> statements = {op};
  if (epilogue)
    statements.push_back(epilogue);
  Work work = countWork(statements);
  work.vectorFlops = epilogue ? countWork({epilogue.getOperation()}).vectorFlops
                              : decltype(work.vectorFlops)();
  if (std::optional<ElementType> unitType = getTargetElementType(a))
    work.addFlops(/*matrix=*/true, *unitType,
                  2.0 * n * oh * ow * features * kh * kw * channels);
  launch->setAttr(PBDialect::kWorkAttrName, work.toAttr(context));
  explain(op,
          llvm::formatv(
              "tile-ir: kernel @{0}: convolution {1}x{2} over {3}x{4}x{5} "
              "-> {6}x{7}x{8} (batch {9}) as an implicit GEMM; tiles "
              "{10}x{11} pixels x {12} features x {13} channels, grid "
              "[{14}, {15}, {16}]{17}{18}",
              name, kh, kw, h, wIn, channels, oh, ow, features, n, th, tw, tf,
              tc, grid[0], grid[1], grid[2],
              fills.empty() ? "; C added"
                            : "; accumulators start at 0 (C's zero fill "
                              "removed)",
              epilogue ? llvm::formatv(
                             "; epilogue of {0} ops fused",
                             epilogue.getBlock()->getOperations().size() - 1)
                             .str()
                       : std::string()));
  for (Operation *fill : fills)
    fill->erase();
  if (epilogue)
    epilogue->erase();
  op->erase();
  return success();
}
