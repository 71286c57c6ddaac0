//===- Prepare.cpp - Turning a kernel into Code ---------------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// prepareKernel turns a gpu.func into `Code`: every operation an `Instr`
// whose operands and results are slots of the thread's frame, with what the
// operation needs at run time (element kinds, lanes, static positions,
// predicates) read from its attributes once. An operation the emulator does
// not implement is an error here, before anything runs.
//
//===----------------------------------------------------------------------===//

#include "EmulatorInternal.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSwitch.h"

#include <cmath>
#include <cstring>

using namespace mlir;
using namespace mlir::pb::emulator;
using EValue = mlir::pb::emulator::Value;

//===----------------------------------------------------------------------===//
// Preparation
//===----------------------------------------------------------------------===//

namespace {
struct Preparer {
  const Globals &globals;
  Kernel &kernel;
  llvm::DenseMap<mlir::Value, unsigned> slots;
  unsigned numSlots = 0;

  unsigned define(mlir::Value value) {
    unsigned slot = numSlots++;
    slots[value] = slot;
    return slot;
  }
  llvm::Error error(Operation *op, const llvm::Twine &what) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << what << ": '" << op->getName() << "' at " << op->getLoc();
    return llvm::createStringError(llvm::inconvertibleErrorCode(), text);
  }
  llvm::Error prepareBlock(Block &block, Code &code);
  llvm::Error prepareOp(Operation *op, Instr &instr);
};
} // namespace

/// Element kind and lane count of a value's type (scalars, vectors, LLVM
/// structs of one element type).
static std::optional<std::pair<EK, unsigned>> describeType(Type type) {
  if (auto vector = dyn_cast<VectorType>(type)) {
    std::optional<EK> kind = getElementKind(vector.getElementType());
    if (!kind || vector.isScalable())
      return std::nullopt;
    return std::make_pair(*kind, unsigned(vector.getNumElements()));
  }
  if (auto structType = dyn_cast<LLVM::LLVMStructType>(type)) {
    ArrayRef<Type> body = structType.getBody();
    if (body.empty())
      return std::nullopt;
    std::optional<EK> kind = getElementKind(body.front());
    if (!kind || llvm::any_of(body, [&](Type t) { return t != body.front(); }))
      return std::nullopt;
    return std::make_pair(*kind, unsigned(body.size()));
  }
  if (isa<gpu::AsyncTokenType, nvgpu::DeviceAsyncTokenType>(type))
    return std::make_pair(EK::I64, 1u);
  std::optional<EK> kind = getElementKind(type);
  if (!kind)
    return std::nullopt;
  return std::make_pair(*kind, 1u);
}

static bool isMemRef(Type type) { return isa<MemRefType>(type); }

llvm::Error Preparer::prepareBlock(Block &block, Code &code) {
  for (BlockArgument argument : block.getArguments())
    code.arguments.push_back(define(argument));
  for (Operation &op : block) {
    if (isa<scf::YieldOp, scf::ConditionOp, gpu::ReturnOp, gpu::YieldOp>(op)) {
      for (mlir::Value operand : op.getOperands())
        code.yields.push_back(slots.lookup(operand));
      continue;
    }
    Instr instr;
    instr.op = &op;
    for (mlir::Value operand : op.getOperands()) {
      auto it = slots.find(operand);
      if (it == slots.end())
        return error(&op, "an operand defined outside the kernel");
      instr.operands.push_back(it->second);
    }
    if (op.getNumOperands()) {
      Type type = getElementTypeOrSelf(op.getOperand(0).getType());
      if (auto described = describeType(op.getOperand(0).getType()))
        instr.kind = described->first;
      else if (std::optional<EK> kind = getElementKind(type))
        instr.kind = *kind;
    }
    if (op.getNumResults()) {
      Type type = op.getResult(0).getType();
      if (auto described = describeType(type)) {
        instr.resultKind = described->first;
        instr.lanes = described->second;
      } else if (!isMemRef(type)) {
        return error(&op, "a result type the emulator does not hold");
      }
    }
    if (llvm::Error failure = prepareOp(&op, instr))
      return failure;
    for (mlir::Value result : op.getResults())
      instr.results.push_back(define(result));
    code.instrs.push_back(std::move(instr));
  }
  return llvm::Error::success();
}

/// Lanes of an attribute of kind `kind`.
static bool getAttrLanes(Attribute attr, EK kind, unsigned lanes,
                         SmallVectorImpl<uint64_t> &out) {
  auto bitsOf = [&](Attribute element) -> std::optional<uint64_t> {
    if (auto integer = dyn_cast<IntegerAttr>(element))
      return truncate(integer.getValue().getZExtValue(), kind);
    if (auto real = dyn_cast<FloatAttr>(element))
      return real.getValue().bitcastToAPInt().getZExtValue();
    if (auto boolean = dyn_cast<BoolAttr>(element))
      return boolean.getValue() ? 1 : 0;
    return std::nullopt;
  };
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    if (dense.isSplat()) {
      std::optional<uint64_t> bits = bitsOf(dense.getSplatValue<Attribute>());
      if (!bits)
        return false;
      out.assign(lanes, *bits);
      return true;
    }
    for (Attribute element : dense.getValues<Attribute>()) {
      std::optional<uint64_t> bits = bitsOf(element);
      if (!bits)
        return false;
      out.push_back(*bits);
    }
    return out.size() == lanes;
  }
  std::optional<uint64_t> bits = bitsOf(attr);
  if (!bits)
    return false;
  out.assign(lanes, *bits);
  return true;
}

llvm::Error Preparer::prepareOp(Operation *op, Instr &instr) {
  auto set = [&](OpCode code) {
    instr.code = code;
    return llvm::Error::success();
  };
  auto regions = [&]() -> llvm::Error {
    for (Region &region : op->getRegions()) {
      Code &code = instr.regions.emplace_back();
      if (region.empty())
        continue;
      if (!region.hasOneBlock())
        return error(op, "a region of several blocks");
      if (llvm::Error failure = prepareBlock(region.front(), code))
        return failure;
    }
    return llvm::Error::success();
  };

  if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
    if (!getAttrLanes(constant.getValue(), instr.resultKind, instr.lanes,
                      instr.constant))
      return error(op, "a constant the emulator cannot read");
    return set(OpCode::Constant);
  }
  if (isa<ub::PoisonOp, LLVM::UndefOp, LLVM::PoisonOp, LLVM::ZeroOp>(op))
    return set(OpCode::Zero);
  if (auto cmp = dyn_cast<arith::CmpIOp>(op)) {
    instr.aux = int64_t(cmp.getPredicate());
    return set(OpCode::CmpI);
  }
  if (auto cmp = dyn_cast<arith::CmpFOp>(op)) {
    instr.aux = int64_t(cmp.getPredicate());
    return set(OpCode::CmpF);
  }
  if (auto select = dyn_cast<arith::SelectOp>(op)) {
    // The condition may be a scalar for vector values.
    instr.kind = instr.resultKind;
    instr.aux = isa<VectorType>(select.getCondition().getType());
    return set(OpCode::Select);
  }

  OpCode simple =
      llvm::StringSwitch<OpCode>(op->getName().getStringRef())
          .Case("arith.addi", OpCode::AddI)
          .Case("arith.subi", OpCode::SubI)
          .Case("arith.muli", OpCode::MulI)
          .Case("arith.divui", OpCode::DivUI)
          .Case("arith.divsi", OpCode::DivSI)
          .Case("arith.remui", OpCode::RemUI)
          .Case("arith.remsi", OpCode::RemSI)
          .Case("arith.ceildivsi", OpCode::CeilDivSI)
          .Case("arith.ceildivui", OpCode::CeilDivUI)
          .Case("arith.floordivsi", OpCode::FloorDivSI)
          .Case("arith.minui", OpCode::MinUI)
          .Case("arith.minsi", OpCode::MinSI)
          .Case("arith.maxui", OpCode::MaxUI)
          .Case("arith.maxsi", OpCode::MaxSI)
          .Case("arith.andi", OpCode::AndI)
          .Case("arith.ori", OpCode::OrI)
          .Case("arith.xori", OpCode::XOrI)
          .Case("arith.shli", OpCode::ShLI)
          .Case("arith.shrui", OpCode::ShRUI)
          .Case("arith.shrsi", OpCode::ShRSI)
          .Case("arith.addf", OpCode::AddF)
          .Case("arith.subf", OpCode::SubF)
          .Case("arith.mulf", OpCode::MulF)
          .Case("arith.divf", OpCode::DivF)
          .Case("arith.remf", OpCode::RemF)
          .Case("arith.maximumf", OpCode::MaximumF)
          .Case("arith.minimumf", OpCode::MinimumF)
          .Case("arith.maxnumf", OpCode::MaxNumF)
          .Case("arith.minnumf", OpCode::MinNumF)
          .Case("arith.negf", OpCode::NegF)
          .Case("math.fma", OpCode::Fma)
          .Case("vector.fma", OpCode::Fma)
          .Case("math.exp", OpCode::Exp)
          .Case("math.exp2", OpCode::Exp2)
          .Case("math.log", OpCode::Log)
          .Case("math.log2", OpCode::Log2)
          .Case("math.log1p", OpCode::Log1p)
          .Case("math.sqrt", OpCode::Sqrt)
          .Case("math.rsqrt", OpCode::Rsqrt)
          .Case("math.tanh", OpCode::Tanh)
          .Case("math.erf", OpCode::Erf)
          .Case("math.floor", OpCode::Floor)
          .Case("math.ceil", OpCode::Ceil)
          .Case("math.absf", OpCode::AbsF)
          .Case("math.absi", OpCode::AbsI)
          .Case("math.powf", OpCode::PowF)
          .Case("math.sin", OpCode::Sin)
          .Case("math.cos", OpCode::Cos)
          .Case("math.round", OpCode::Round)
          .Case("math.roundeven", OpCode::RoundEven)
          .Case("math.trunc", OpCode::Trunc)
          .Case("math.copysign", OpCode::CopySign)
          .Case("math.expm1", OpCode::Expm1)
          .Case("arith.extf", OpCode::ExtF)
          .Case("arith.truncf", OpCode::TruncF)
          .Case("arith.extsi", OpCode::ExtSI)
          .Case("arith.extui", OpCode::ExtUI)
          .Case("arith.trunci", OpCode::TruncI)
          .Case("arith.sitofp", OpCode::SIToFP)
          .Case("arith.uitofp", OpCode::UIToFP)
          .Case("arith.fptosi", OpCode::FPToSI)
          .Case("arith.fptoui", OpCode::FPToUI)
          .Case("arith.index_cast", OpCode::IndexCast)
          .Case("arith.index_castui", OpCode::IndexCastUI)
          .Case("arith.bitcast", OpCode::Bitcast)
          .Case("llvm.bitcast", OpCode::Bitcast)
          .Case("vector.bitcast", OpCode::Bitcast)
          .Case("vector.shape_cast", OpCode::ShapeCast)
          .Case("vector.from_elements", OpCode::FromElements)
          .Case("memref.load", OpCode::Load)
          .Case("memref.store", OpCode::Store)
          .Case("memref.dealloc", OpCode::Dealloc)
          .Case("memref.extract_aligned_pointer_as_index",
                OpCode::ExtractPointer)
          .Case("gpu.lane_id", OpCode::LaneId)
          .Case("gpu.dynamic_shared_memory", OpCode::DynamicShared)
          .Case("gpu.barrier", OpCode::Barrier)
          .Case("nvgpu.device_async_create_group", OpCode::AsyncCreateGroup)
          .Case("nvvm.wgmma.fence.aligned", OpCode::NoOp)
          .Case("nvvm.wgmma.commit.group.sync.aligned", OpCode::WgmmaCommit)
          .Case("memref.assume_alignment", OpCode::NoOp)
          .Default(OpCode::Unsupported);
  if (simple != OpCode::Unsupported) {
    if (simple == OpCode::Bitcast && op->getNumOperands() == 1) {
      auto from = describeType(op->getOperand(0).getType());
      if (!from || getBits(from->first) * from->second !=
                       getBits(instr.resultKind) * instr.lanes)
        return error(op, "a bitcast between types of different sizes");
      instr.aux = from->second;
    }
    if (simple == OpCode::Load || simple == OpCode::Store) {
      unsigned memrefIndex = simple == OpCode::Load ? 0 : 1;
      auto type = cast<MemRefType>(op->getOperand(memrefIndex).getType());
      std::optional<EK> kind = getElementKind(type.getElementType());
      if (!kind)
        return error(op, "a memref element type the emulator does not hold");
      instr.kind = *kind;
      instr.aux = memrefIndex;
    }
    if (simple == OpCode::ExtractPointer || simple == OpCode::Dealloc)
      instr.kind = EK::Index;
    return set(simple);
  }

  if (auto id = dyn_cast<gpu::ThreadIdOp>(op)) {
    instr.aux = int64_t(id.getDimension());
    return set(OpCode::ThreadId);
  }
  if (auto id = dyn_cast<gpu::BlockIdOp>(op)) {
    instr.aux = int64_t(id.getDimension());
    return set(OpCode::BlockId);
  }
  if (auto dim = dyn_cast<gpu::BlockDimOp>(op)) {
    instr.aux = int64_t(dim.getDimension());
    return set(OpCode::BlockDim);
  }
  if (auto dim = dyn_cast<gpu::GridDimOp>(op)) {
    instr.aux = int64_t(dim.getDimension());
    return set(OpCode::GridDim);
  }
  if (auto reduce = dyn_cast<gpu::AllReduceOp>(op)) {
    if (!reduce.getOp() || !reduce.getBody().empty())
      return error(op, "an all_reduce with a region body");
    std::optional<Combine> how =
        getCombine(gpu::stringifyAllReduceOperation(*reduce.getOp()));
    if (!how)
      return error(op, "an unknown all_reduce operation");
    instr.aux = int64_t(*how);
    return set(OpCode::AllReduce);
  }
  if (auto shuffle = dyn_cast<gpu::ShuffleOp>(op)) {
    instr.aux = int64_t(shuffle.getMode());
    return set(OpCode::Shuffle);
  }
  if (auto reduction = dyn_cast<vector::ReductionOp>(op)) {
    std::optional<Combine> how =
        getCombine(vector::stringifyCombiningKind(reduction.getKind()));
    if (!how)
      return error(op, "an unknown reduction kind");
    instr.aux = int64_t(*how);
    return set(OpCode::Reduction);
  }
  if (auto broadcast = dyn_cast<vector::BroadcastOp>(op)) {
    auto from = describeType(broadcast.getSource().getType());
    if (!from || instr.lanes % from->second)
      return error(op, "a broadcast the emulator cannot repeat");
    instr.aux = from->second; // the source's lanes, repeated
    return set(OpCode::Broadcast);
  }
  // Static positions of vector.extract/insert and llvm.extractvalue/
  // insertvalue, as a flat lane offset and a lane count.
  auto flatPosition =
      [&](Type aggregate,
          ArrayRef<int64_t> position) -> std::optional<int64_t> {
    if (auto vector = dyn_cast<VectorType>(aggregate)) {
      int64_t offset = 0;
      ArrayRef<int64_t> shape = vector.getShape();
      for (auto [i, p] : llvm::enumerate(position)) {
        int64_t stride = 1;
        for (int64_t d : shape.drop_front(i + 1))
          stride *= d;
        offset += p * stride;
      }
      return offset;
    }
    if (isa<LLVM::LLVMStructType>(aggregate) && position.size() == 1)
      return position[0];
    return std::nullopt;
  };
  if (auto extract = dyn_cast<vector::ExtractOp>(op)) {
    if (!extract.getDynamicPosition().empty())
      return error(op, "a dynamic extract position");
    std::optional<int64_t> offset = flatPosition(extract.getSource().getType(),
                                                 extract.getStaticPosition());
    if (!offset)
      return error(op, "an extract position the emulator cannot read");
    instr.aux = *offset;
    return set(OpCode::Extract);
  }
  if (auto insert = dyn_cast<vector::InsertOp>(op)) {
    if (!insert.getDynamicPosition().empty())
      return error(op, "a dynamic insert position");
    std::optional<int64_t> offset =
        flatPosition(insert.getDest().getType(), insert.getStaticPosition());
    if (!offset)
      return error(op, "an insert position the emulator cannot read");
    instr.aux = *offset;
    // Operands: value, destination.
    return set(OpCode::Insert);
  }
  if (auto extract = dyn_cast<LLVM::ExtractValueOp>(op)) {
    std::optional<int64_t> offset =
        flatPosition(extract.getContainer().getType(), extract.getPosition());
    if (!offset)
      return error(op, "an extractvalue position the emulator cannot read");
    instr.aux = *offset;
    return set(OpCode::Extract);
  }
  if (auto insert = dyn_cast<LLVM::InsertValueOp>(op)) {
    std::optional<int64_t> offset =
        flatPosition(insert.getContainer().getType(), insert.getPosition());
    if (!offset)
      return error(op, "an insertvalue position the emulator cannot read");
    instr.aux = *offset;
    // Operands: container, value; make them value, destination.
    std::swap(instr.operands[0], instr.operands[1]);
    return set(OpCode::Insert);
  }
  if (auto load = dyn_cast<vector::LoadOp>(op)) {
    if (load.getVectorType().getRank() != 1)
      return error(op, "a vector load of several dimensions");
    instr.aux = load.getAlignment().value_or(0);
    return set(OpCode::VectorLoad);
  }
  if (auto store = dyn_cast<vector::StoreOp>(op)) {
    if (store.getVectorType().getRank() != 1)
      return error(op, "a vector store of several dimensions");
    instr.aux = store.getAlignment().value_or(0);
    instr.kind = *getElementKind(store.getVectorType().getElementType());
    return set(OpCode::VectorStore);
  }
  if (auto transfer = dyn_cast<vector::TransferReadOp>(op)) {
    if (transfer.getMask() || transfer.getVectorType().getRank() != 1 ||
        !isa<MemRefType>(transfer.getBase().getType()))
      return error(op, "a masked or multi-dimensional transfer");
    AffineMap map = transfer.getPermutationMap();
    // aux: 1 a run along the innermost dimension, 0 a broadcast.
    if (map.isMinorIdentity())
      instr.aux = 1;
    else if (map.getNumResults() == 1 &&
             map.getResult(0).isSymbolicOrConstant())
      instr.aux = 0;
    else
      return error(op, "a transfer with a permutation");
    instr.aux2 = transfer.getInBoundsValues()[0];
    instr.kind = instr.resultKind;
    return set(OpCode::TransferRead);
  }
  if (auto transfer = dyn_cast<vector::TransferWriteOp>(op)) {
    if (transfer.getMask() || transfer.getVectorType().getRank() != 1 ||
        !isa<MemRefType>(transfer.getBase().getType()) ||
        !transfer.getPermutationMap().isMinorIdentity())
      return error(op, "a masked, permuted or multi-dimensional transfer");
    instr.aux2 = transfer.getInBoundsValues()[0];
    return set(OpCode::TransferWrite);
  }
  if (auto view = dyn_cast<memref::ViewOp>(op)) {
    auto type = view.getType();
    if (!type.getLayout().isIdentity())
      return error(op, "a view with a layout");
    return set(OpCode::View);
  }
  if (isa<memref::SubViewOp>(op))
    return set(OpCode::SubView);
  if (isa<memref::AllocaOp, memref::AllocOp>(op)) {
    auto type = cast<MemRefType>(op->getResult(0).getType());
    if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
        isa_and_nonnull<gpu::AddressSpaceAttr>(type.getMemorySpace()))
      return error(op, "an allocation that is not private and static");
    return set(OpCode::Alloca);
  }
  if (isa<memref::CollapseShapeOp, memref::ExpandShapeOp, memref::CastOp,
          memref::ReinterpretCastOp>(op)) {
    auto type = cast<MemRefType>(op->getResult(0).getType());
    if (!type.hasStaticShape())
      return error(op, "a reshape to a dynamic shape");
    return set(OpCode::Reshape);
  }
  if (auto get = dyn_cast<memref::GetGlobalOp>(op)) {
    auto it = globals.find(get.getName());
    if (it == globals.end())
      return error(op, "a global the module does not define");
    instr.aux = kernel.globals.size();
    kernel.globals.push_back(it->second);
    return set(OpCode::GetGlobal);
  }
  if (isa<scf::ForOp>(op)) {
    if (llvm::Error failure = regions())
      return failure;
    return set(OpCode::For);
  }
  if (isa<scf::IfOp>(op)) {
    if (llvm::Error failure = regions())
      return failure;
    return set(OpCode::If);
  }
  if (isa<scf::WhileOp>(op)) {
    if (llvm::Error failure = regions())
      return failure;
    return set(OpCode::While);
  }
  if (auto copy = dyn_cast<nvgpu::DeviceAsyncCopyOp>(op)) {
    // Operands made: dst, dst indices..., src, src indices..., [src elems].
    instr.operands.clear();
    auto add = [&](mlir::Value v) {
      instr.operands.push_back(slots.lookup(v));
    };
    add(copy.getDst());
    for (mlir::Value v : copy.getDstIndices())
      add(v);
    add(copy.getSrc());
    for (mlir::Value v : copy.getSrcIndices())
      add(v);
    instr.positions = {int64_t(copy.getDstIndices().size()),
                       int64_t(copy.getSrcIndices().size()),
                       copy.getSrcElements() ? 1 : 0};
    if (copy.getSrcElements())
      add(copy.getSrcElements());
    instr.aux = copy.getDstElements().getZExtValue();
    instr.kind = *getElementKind(copy.getDst().getType().getElementType());
    return set(OpCode::AsyncCopy);
  }
  if (auto wait = dyn_cast<nvgpu::DeviceAsyncWaitOp>(op)) {
    instr.aux = wait.getNumGroups().value_or(0);
    return set(OpCode::AsyncWait);
  }
  if (auto wait = dyn_cast<NVVM::WgmmaWaitGroupSyncOp>(op)) {
    instr.aux = wait.getGroup();
    return set(OpCode::WgmmaWait);
  }
  if (auto fence = dyn_cast<NVVM::FenceProxyOp>(op)) {
    // Only fences toward the async proxy over shared memory matter to what
    // the emulator checks (wgmma's operand reads).
    bool async = fence.getKind() == NVVM::ProxyKind::async_shared ||
                 fence.getKind() == NVVM::ProxyKind::async;
    return set(async ? OpCode::ProxyFence : OpCode::NoOp);
  }
  if (auto ldmatrix = dyn_cast<nvgpu::LdMatrixOp>(op)) {
    instr.aux = ldmatrix.getNumTiles();
    instr.aux2 = ldmatrix.getTranspose();
    instr.kind =
        *getElementKind(ldmatrix.getSrcMemref().getType().getElementType());
    if (getBits(instr.kind) != 16)
      return error(op, "an ldmatrix of elements other than 16 bits");
    return set(OpCode::Ldmatrix);
  }
  if (auto mfma = dyn_cast<amdgpu::MFMAOp>(op)) {
    if (mfma.getBlocks() != 1 || mfma.getCbsz() || mfma.getAbid() ||
        mfma.getBlgp() != amdgpu::MFMAPermB::none ||
        mfma.getReducePrecision() || mfma.getNegateA() || mfma.getNegateB() ||
        mfma.getNegateC())
      return error(op, "an amdgpu.mfma with several blocks, broadcasts, "
                       "permutations or negations");
    Type elementA = getElementTypeOrSelf(mfma.getSourceA().getType());
    if (!elementA.isF16() && !elementA.isBF16() && !elementA.isF32())
      return error(op, "an amdgpu.mfma of operands other than f16, bf16 or "
                       "f32");
    instr.positions = {mfma.getM(), mfma.getN(), mfma.getK()};
    return set(OpCode::Mfma);
  }
  if (auto mma = dyn_cast<nvgpu::MmaSyncOp>(op)) {
    SmallVector<int64_t> shape = llvm::to_vector(mma.getMmaShapeAsArray());
    instr.positions.assign(shape.begin(), shape.end());
    instr.aux = mma.getTf32Enabled() ? 1 : 0;
    return set(OpCode::MmaSync);
  }
  if (auto mma = dyn_cast<NVVM::MmaOp>(op)) {
    NVVM::MMAShapeAttr shape = mma.getShape();
    instr.positions = {shape.getM(),
                       shape.getN(),
                       shape.getK(),
                       int64_t(mma.getODSOperandIndexAndLength(0).second),
                       int64_t(mma.getODSOperandIndexAndLength(1).second),
                       int64_t(mma.getODSOperandIndexAndLength(2).second)};
    std::optional<NVVM::MMATypes> typeA = mma.getMultiplicandAPtxType();
    if (!typeA ||
        (*typeA != NVVM::MMATypes::bf16 && *typeA != NVVM::MMATypes::f16 &&
         *typeA != NVVM::MMATypes::tf32))
      return error(op, "an mma.sync of a type the emulator does not run");
    instr.aux = int64_t(*typeA);
    if (mma.getLayoutA() != NVVM::MMALayout::row ||
        mma.getLayoutB() != NVVM::MMALayout::col)
      return error(op, "an mma.sync with layouts other than row.col");
    return set(OpCode::NvvmMmaSync);
  }
  if (auto wgmma = dyn_cast<NVVM::WgmmaMmaAsyncOp>(op)) {
    // Operands made: descriptor A, descriptor B, accumulators.
    instr.operands = {slots.lookup(wgmma.getDescriptorA()),
                      slots.lookup(wgmma.getDescriptorB()),
                      slots.lookup(wgmma.getInouts())};
    return set(OpCode::Wgmma);
  }
  return error(op, "operation not supported by the emulator");
}

llvm::Error mlir::pb::emulator::prepareKernel(Operation *func,
                                              const Globals &globals,
                                              Kernel &kernel) {
  auto gpuFunc = cast<gpu::GPUFuncOp>(func);
  if (!gpuFunc.getWorkgroupAttributions().empty() ||
      !gpuFunc.getPrivateAttributions().empty())
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "kernel '" + gpuFunc.getName() +
            "' has workgroup or private attributions, which the emulator "
            "does not support");
  Preparer preparer{globals, kernel, llvm::DenseMap<mlir::Value, unsigned>(),
                    0};
  if (!gpuFunc.getBody().hasOneBlock())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "kernel '" + gpuFunc.getName() +
                                       "' has several blocks");
  for (mlir::Value argument : gpuFunc.getArguments())
    if (!isa<MemRefType>(argument.getType()))
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "kernel '" + gpuFunc.getName() +
              "' takes an argument that is not a memref");
  if (llvm::Error failure =
          preparer.prepareBlock(gpuFunc.getBody().front(), kernel.body))
    return failure;
  kernel.name = gpuFunc.getName().str();
  std::function<bool(const Code &)> waits = [&](const Code &code) {
    return llvm::any_of(code.instrs, [&](const Instr &instr) {
      return getScope(instr) != Scope::None ||
             llvm::any_of(instr.regions, waits);
    });
  };
  kernel.waits = waits(kernel.body);
  kernel.func = func;
  kernel.numSlots = preparer.numSlots;
  return llvm::Error::success();
}
