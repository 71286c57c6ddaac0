//===- Execute.cpp - Preparing and running a kernel's operations ----------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// prepareKernel turns a gpu.func into `Code` (every operation an `Instr`
// whose operands and results are slots of the thread's frame); `run` walks
// it for one thread. Per-thread operations (arith, math, vector, memref,
// scf, llvm aggregates, cp.async) run here; barriers and collectives wait
// for the scheduler (Emulator.cpp), which runs them over the threads that
// issue them together.
//
// Semantics follow the dialects' documentation; floating-point results are
// rounded to their element type after every operation, integer results
// truncated to their width.
//
//===----------------------------------------------------------------------===//

#include "EmulatorInternal.h"

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
using namespace mlir::pb::nvidia::emulator;
using EValue = mlir::pb::nvidia::emulator::Value;

//===----------------------------------------------------------------------===//
// Element kinds and conversions
//===----------------------------------------------------------------------===//

unsigned mlir::pb::nvidia::emulator::getBits(EK kind) {
  switch (kind) {
  case EK::I1:
    return 1;
  case EK::I8:
    return 8;
  case EK::I16:
  case EK::F16:
  case EK::BF16:
    return 16;
  case EK::I32:
  case EK::F32:
    return 32;
  case EK::I64:
  case EK::Index:
  case EK::F64:
    return 64;
  }
  return 64;
}

std::optional<EK> mlir::pb::nvidia::emulator::getElementKind(Type type) {
  if (type.isIndex())
    return EK::Index;
  if (type.isF16())
    return EK::F16;
  if (type.isBF16())
    return EK::BF16;
  if (type.isF32())
    return EK::F32;
  if (type.isF64())
    return EK::F64;
  if (auto integer = dyn_cast<IntegerType>(type)) {
    switch (integer.getWidth()) {
    case 1:
      return EK::I1;
    case 8:
      return EK::I8;
    case 16:
      return EK::I16;
    case 32:
      return EK::I32;
    case 64:
      return EK::I64;
    default:
      return std::nullopt;
    }
  }
  return std::nullopt;
}

float mlir::pb::nvidia::emulator::halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000 | (mantissa << 13);
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else {
    // Subnormal: normalize.
    int shift = 0;
    while (!(mantissa & 0x400)) {
      mantissa <<= 1;
      ++shift;
    }
    mantissa &= 0x3ff;
    bits = sign | (uint32_t(113 - shift) << 23) | (mantissa << 13);
  }
  float result;
  std::memcpy(&result, &bits, 4);
  return result;
}

float mlir::pb::nvidia::emulator::bfloatToFloat(uint16_t b) {
  uint32_t bits = uint32_t(b) << 16;
  float result;
  std::memcpy(&result, &bits, 4);
  return result;
}

uint16_t mlir::pb::nvidia::emulator::floatToHalf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  uint16_t sign = (bits >> 16) & 0x8000;
  uint32_t exponent = (bits >> 23) & 0xff, mantissa = bits & 0x7fffff;
  if (exponent == 0xff)
    return sign | 0x7c00 | (mantissa ? 0x200 | (mantissa >> 13) : 0);
  int e = int(exponent) - 127 + 15;
  if (e >= 0x1f)
    return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10)
      return sign;
    // Subnormal half: shift the implicit one in, round to nearest even.
    uint32_t m = mantissa | 0x800000;
    unsigned shift = 14 - e;
    uint32_t half = m >> shift, rest = m & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1)))
      ++half;
    return sign | half;
  }
  uint32_t half = (uint32_t(e) << 10) | (mantissa >> 13);
  uint32_t rest = mantissa & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1)))
    ++half; // may carry into the exponent, up to infinity: correct
  return sign | half;
}

uint16_t mlir::pb::nvidia::emulator::floatToBfloat(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  if ((bits & 0x7fffffff) > 0x7f800000)
    return (bits >> 16) | 0x40;
  uint32_t rounding = 0x7fff + ((bits >> 16) & 1);
  return (bits + rounding) >> 16;
}

double mlir::pb::nvidia::emulator::toDouble(uint64_t bits, EK kind) {
  switch (kind) {
  case EK::F16:
    return halfToFloat(bits);
  case EK::BF16:
    return bfloatToFloat(bits);
  case EK::F32: {
    uint32_t b = bits;
    float f;
    std::memcpy(&f, &b, 4);
    return f;
  }
  case EK::F64: {
    double d;
    std::memcpy(&d, &bits, 8);
    return d;
  }
  default:
    return double(toSigned(bits, kind));
  }
}

uint64_t mlir::pb::nvidia::emulator::fromDouble(double value, EK kind) {
  switch (kind) {
  case EK::F16:
    // Through f32: exact for every result of an f16 operation computed in
    // double (products and sums of f16 fit), else double rounding is
    // within the comparison tolerance of f16.
    return floatToHalf(float(value));
  case EK::BF16:
    return floatToBfloat(float(value));
  case EK::F32: {
    float f = float(value);
    uint32_t b;
    std::memcpy(&b, &f, 4);
    return b;
  }
  case EK::F64: {
    uint64_t b;
    std::memcpy(&b, &value, 8);
    return b;
  }
  default:
    return truncate(uint64_t(int64_t(value)), kind);
  }
}

int64_t mlir::pb::nvidia::emulator::toSigned(uint64_t bits, EK kind) {
  unsigned width = getBits(kind);
  if (width == 64)
    return int64_t(bits);
  return int64_t(bits << (64 - width)) >> (64 - width);
}

uint64_t mlir::pb::nvidia::emulator::truncate(uint64_t value, EK kind) {
  unsigned width = getBits(kind);
  return width == 64 ? value : value & ((uint64_t(1) << width) - 1);
}

//===----------------------------------------------------------------------===//
// Operation codes
//===----------------------------------------------------------------------===//

namespace {
/// How a reduction combines (vector.reduction, gpu.all_reduce).
enum class Combine {
  Add,
  Mul,
  MinUI,
  MinSI,
  MinNumF,
  MaxUI,
  MaxSI,
  MaxNumF,
  And,
  Or,
  XOr,
  MinimumF,
  MaximumF
};
} // namespace

static std::optional<Combine> getCombine(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<Combine>>(name)
      .Case("add", Combine::Add)
      .Case("mul", Combine::Mul)
      .Case("minui", Combine::MinUI)
      .Case("minsi", Combine::MinSI)
      .Case("minnumf", Combine::MinNumF)
      .Case("maxui", Combine::MaxUI)
      .Case("maxsi", Combine::MaxSI)
      .Case("maxnumf", Combine::MaxNumF)
      .Case("and", Combine::And)
      .Case("or", Combine::Or)
      .Case("xor", Combine::XOr)
      .Case("minimumf", Combine::MinimumF)
      .Case("maximumf", Combine::MaximumF)
      .Default(std::nullopt);
}

static double maxNum(double a, double b) {
  if (std::isnan(a))
    return b;
  if (std::isnan(b))
    return a;
  return a > b ? a : (b > a ? b : (std::signbit(a) ? b : a));
}
static double minNum(double a, double b) {
  if (std::isnan(a))
    return b;
  if (std::isnan(b))
    return a;
  return a < b ? a : (b < a ? b : (std::signbit(a) ? a : b));
}
static double maximum(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return NAN;
  return maxNum(a, b);
}
static double minimum(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return NAN;
  return minNum(a, b);
}

/// Combines two lanes of kind `kind`.
static uint64_t combineLanes(int64_t how, uint64_t a, uint64_t b, EK kind) {
  switch (Combine(how)) {
  case Combine::Add:
    if (isFloat(kind))
      return fromDouble(toDouble(a, kind) + toDouble(b, kind), kind);
    return truncate(a + b, kind);
  case Combine::Mul:
    if (isFloat(kind))
      return fromDouble(toDouble(a, kind) * toDouble(b, kind), kind);
    return truncate(a * b, kind);
  case Combine::MinUI:
    return std::min(a, b);
  case Combine::MaxUI:
    return std::max(a, b);
  case Combine::MinSI:
    return toSigned(a, kind) < toSigned(b, kind) ? a : b;
  case Combine::MaxSI:
    return toSigned(a, kind) > toSigned(b, kind) ? a : b;
  case Combine::MinNumF:
    return fromDouble(minNum(toDouble(a, kind), toDouble(b, kind)), kind);
  case Combine::MaxNumF:
    return fromDouble(maxNum(toDouble(a, kind), toDouble(b, kind)), kind);
  case Combine::MinimumF:
    return fromDouble(minimum(toDouble(a, kind), toDouble(b, kind)), kind);
  case Combine::MaximumF:
    return fromDouble(maximum(toDouble(a, kind), toDouble(b, kind)), kind);
  case Combine::And:
    return a & b;
  case Combine::Or:
    return a | b;
  case Combine::XOr:
    return a ^ b;
  }
  return a;
}

//===----------------------------------------------------------------------===//
// Preparation
//===----------------------------------------------------------------------===//

namespace {
struct Preparer {
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

  std::optional<OpCode> simple =
      llvm::StringSwitch<std::optional<OpCode>>(op->getName().getStringRef())
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
          .Case("nvvm.wgmma.commit.group.sync.aligned", OpCode::NoOp)
          .Case("nvvm.fence.proxy", OpCode::NoOp)
          .Case("memref.assume_alignment", OpCode::NoOp)
          .Default(std::nullopt);
  if (simple) {
    if (*simple == OpCode::Bitcast && op->getNumOperands() == 1) {
      auto from = describeType(op->getOperand(0).getType());
      if (!from || getBits(from->first) * from->second !=
                       getBits(instr.resultKind) * instr.lanes)
        return error(op, "a bitcast between types of different sizes");
      instr.aux = from->second;
    }
    if (*simple == OpCode::Load || *simple == OpCode::Store) {
      unsigned memrefIndex = *simple == OpCode::Load ? 0 : 1;
      auto type = cast<MemRefType>(op->getOperand(memrefIndex).getType());
      std::optional<EK> kind = getElementKind(type.getElementType());
      if (!kind)
        return error(op, "a memref element type the emulator does not hold");
      instr.kind = *kind;
      instr.aux = memrefIndex;
    }
    if (*simple == OpCode::ExtractPointer || *simple == OpCode::Dealloc)
      instr.kind = EK::Index;
    return set(*simple);
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
  auto flatPosition = [&](Type aggregate, ArrayRef<int64_t> position,
                          Type part) -> std::optional<int64_t> {
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
    (void)part;
    return std::nullopt;
  };
  if (auto extract = dyn_cast<vector::ExtractOp>(op)) {
    if (!extract.getDynamicPosition().empty())
      return error(op, "a dynamic extract position");
    std::optional<int64_t> offset = flatPosition(
        extract.getSource().getType(), extract.getStaticPosition(), {});
    if (!offset)
      return error(op, "an extract position the emulator cannot read");
    instr.aux = *offset;
    return set(OpCode::Extract);
  }
  if (auto insert = dyn_cast<vector::InsertOp>(op)) {
    if (!insert.getDynamicPosition().empty())
      return error(op, "a dynamic insert position");
    std::optional<int64_t> offset = flatPosition(
        insert.getDest().getType(), insert.getStaticPosition(), {});
    if (!offset)
      return error(op, "an insert position the emulator cannot read");
    instr.aux = *offset;
    // Operands: value, destination.
    return set(OpCode::Insert);
  }
  if (auto extract = dyn_cast<LLVM::ExtractValueOp>(op)) {
    std::optional<int64_t> offset = flatPosition(
        extract.getContainer().getType(), extract.getPosition(), {});
    if (!offset)
      return error(op, "an extractvalue position the emulator cannot read");
    instr.aux = *offset;
    return set(OpCode::Extract);
  }
  if (auto insert = dyn_cast<LLVM::InsertValueOp>(op)) {
    std::optional<int64_t> offset =
        flatPosition(insert.getContainer().getType(), insert.getPosition(), {});
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
    (void)wait;
    return set(OpCode::NoOp);
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
  if (isa<NVVM::WgmmaMmaAsyncOp>(op))
    return set(OpCode::Wgmma);
  return error(op, "operation not supported by the emulator");
}

llvm::Error mlir::pb::nvidia::emulator::prepareKernel(Operation *func,
                                                      Kernel &kernel) {
  auto gpuFunc = cast<gpu::GPUFuncOp>(func);
  if (!gpuFunc.getWorkgroupAttributions().empty() ||
      !gpuFunc.getPrivateAttributions().empty())
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "kernel '" + gpuFunc.getName() +
            "' has workgroup or private attributions, which the emulator "
            "does not support");
  Preparer preparer;
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
  kernel.func = func;
  kernel.numSlots = preparer.numSlots;
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

namespace {
/// The frame of the running thread.
struct Frame {
  Thread &thread;
  std::vector<EValue> &slots;
  const EValue &in(const Instr &instr, unsigned i) {
    return slots[instr.operands[i]];
  }
  EValue &out(const Instr &instr, unsigned i = 0) {
    return slots[instr.results[i]];
  }
  uint64_t scalar(const Instr &instr, unsigned i) {
    return slots[instr.operands[i]].lanes[0];
  }
};
} // namespace

static double roundToType(double value, EK kind) {
  return toDouble(fromDouble(value, kind), kind);
}

/// Unary math on a lane in the element type's precision.
static uint64_t math1(OpCode code, uint64_t bits, EK kind) {
  double x = toDouble(bits, kind);
  bool single = kind != EK::F64;
  double r;
  switch (code) {
  case OpCode::NegF:
    r = -x;
    break;
  case OpCode::Exp:
    r = single ? std::exp(float(x)) : std::exp(x);
    break;
  case OpCode::Exp2:
    r = single ? std::exp2(float(x)) : std::exp2(x);
    break;
  case OpCode::Expm1:
    r = single ? std::expm1(float(x)) : std::expm1(x);
    break;
  case OpCode::Log:
    r = single ? std::log(float(x)) : std::log(x);
    break;
  case OpCode::Log2:
    r = single ? std::log2(float(x)) : std::log2(x);
    break;
  case OpCode::Log1p:
    r = single ? std::log1p(float(x)) : std::log1p(x);
    break;
  case OpCode::Sqrt:
    r = std::sqrt(x);
    break;
  case OpCode::Rsqrt:
    r = 1.0 / std::sqrt(x);
    break;
  case OpCode::Tanh:
    r = single ? std::tanh(float(x)) : std::tanh(x);
    break;
  case OpCode::Erf:
    r = single ? std::erf(float(x)) : std::erf(x);
    break;
  case OpCode::Floor:
    r = std::floor(x);
    break;
  case OpCode::Ceil:
    r = std::ceil(x);
    break;
  case OpCode::AbsF:
    r = std::fabs(x);
    break;
  case OpCode::Sin:
    r = single ? std::sin(float(x)) : std::sin(x);
    break;
  case OpCode::Cos:
    r = single ? std::cos(float(x)) : std::cos(x);
    break;
  case OpCode::Round:
    r = std::round(x);
    break;
  case OpCode::RoundEven:
    r = std::nearbyint(x);
    break;
  case OpCode::Trunc:
    r = std::trunc(x);
    break;
  default:
    r = x;
  }
  return fromDouble(r, kind);
}

static uint64_t float2(OpCode code, uint64_t a, uint64_t b, EK kind) {
  double x = toDouble(a, kind), y = toDouble(b, kind);
  double r;
  switch (code) {
  case OpCode::AddF:
    r = x + y;
    break;
  case OpCode::SubF:
    r = x - y;
    break;
  case OpCode::MulF:
    r = x * y;
    break;
  case OpCode::DivF:
    r = x / y;
    break;
  case OpCode::RemF:
    r = std::fmod(x, y);
    break;
  case OpCode::MaximumF:
    r = maximum(x, y);
    break;
  case OpCode::MinimumF:
    r = minimum(x, y);
    break;
  case OpCode::MaxNumF:
    r = maxNum(x, y);
    break;
  case OpCode::MinNumF:
    r = minNum(x, y);
    break;
  case OpCode::PowF:
    r = kind == EK::F64 ? std::pow(x, y) : std::pow(float(x), float(y));
    break;
  case OpCode::CopySign:
    r = std::copysign(x, y);
    break;
  default:
    r = x;
  }
  return fromDouble(r, kind);
}

static uint64_t int2(Thread &thread, OpCode code, uint64_t a, uint64_t b,
                     EK kind) {
  int64_t sa = toSigned(a, kind), sb = toSigned(b, kind);
  unsigned width = getBits(kind);
  auto divisor = [&](uint64_t d) {
    if (d == 0)
      fail(thread, "integer division by zero");
  };
  switch (code) {
  case OpCode::AddI:
    return truncate(a + b, kind);
  case OpCode::SubI:
    return truncate(a - b, kind);
  case OpCode::MulI:
    return truncate(a * b, kind);
  case OpCode::DivUI:
    divisor(b);
    return a / b;
  case OpCode::DivSI:
    divisor(b);
    return truncate(uint64_t(sa / sb), kind);
  case OpCode::RemUI:
    divisor(b);
    return a % b;
  case OpCode::RemSI:
    divisor(b);
    return truncate(uint64_t(sa % sb), kind);
  case OpCode::CeilDivUI:
    divisor(b);
    return a / b + (a % b != 0);
  case OpCode::CeilDivSI: {
    divisor(b);
    int64_t q = sa / sb;
    if ((sa % sb != 0) && ((sa < 0) == (sb < 0)))
      ++q;
    return truncate(uint64_t(q), kind);
  }
  case OpCode::FloorDivSI: {
    divisor(b);
    int64_t q = sa / sb;
    if ((sa % sb != 0) && ((sa < 0) != (sb < 0)))
      --q;
    return truncate(uint64_t(q), kind);
  }
  case OpCode::MinUI:
    return std::min(a, b);
  case OpCode::MaxUI:
    return std::max(a, b);
  case OpCode::MinSI:
    return sa < sb ? a : b;
  case OpCode::MaxSI:
    return sa > sb ? a : b;
  case OpCode::AndI:
    return a & b;
  case OpCode::OrI:
    return a | b;
  case OpCode::XOrI:
    return a ^ b;
  case OpCode::ShLI:
    return b >= width ? 0 : truncate(a << b, kind);
  case OpCode::ShRUI:
    return b >= width ? 0 : a >> b;
  case OpCode::ShRSI:
    return truncate(uint64_t(sa >> std::min<uint64_t>(b, width - 1)), kind);
  default:
    return a;
  }
}

static bool compareInt(int64_t predicate, uint64_t a, uint64_t b, EK kind) {
  int64_t sa = toSigned(a, kind), sb = toSigned(b, kind);
  switch (arith::CmpIPredicate(predicate)) {
  case arith::CmpIPredicate::eq:
    return a == b;
  case arith::CmpIPredicate::ne:
    return a != b;
  case arith::CmpIPredicate::slt:
    return sa < sb;
  case arith::CmpIPredicate::sle:
    return sa <= sb;
  case arith::CmpIPredicate::sgt:
    return sa > sb;
  case arith::CmpIPredicate::sge:
    return sa >= sb;
  case arith::CmpIPredicate::ult:
    return a < b;
  case arith::CmpIPredicate::ule:
    return a <= b;
  case arith::CmpIPredicate::ugt:
    return a > b;
  case arith::CmpIPredicate::uge:
    return a >= b;
  }
  return false;
}

static bool compareFloat(int64_t predicate, uint64_t a, uint64_t b, EK kind) {
  double x = toDouble(a, kind), y = toDouble(b, kind);
  bool unordered = std::isnan(x) || std::isnan(y);
  using P = arith::CmpFPredicate;
  switch (P(predicate)) {
  case P::AlwaysFalse:
    return false;
  case P::OEQ:
    return !unordered && x == y;
  case P::OGT:
    return !unordered && x > y;
  case P::OGE:
    return !unordered && x >= y;
  case P::OLT:
    return !unordered && x < y;
  case P::OLE:
    return !unordered && x <= y;
  case P::ONE:
    return !unordered && x != y;
  case P::ORD:
    return !unordered;
  case P::UEQ:
    return unordered || x == y;
  case P::UGT:
    return unordered || x > y;
  case P::UGE:
    return unordered || x >= y;
  case P::ULT:
    return unordered || x < y;
  case P::ULE:
    return unordered || x <= y;
  case P::UNE:
    return unordered || x != y;
  case P::UNO:
    return unordered;
  case P::AlwaysTrue:
    return true;
  }
  return false;
}

static uint64_t convert(OpCode code, uint64_t bits, EK from, EK to) {
  switch (code) {
  case OpCode::ExtF:
  case OpCode::TruncF:
    return fromDouble(toDouble(bits, from), to);
  case OpCode::ExtSI:
  case OpCode::IndexCast:
    return truncate(uint64_t(toSigned(bits, from)), to);
  case OpCode::ExtUI:
  case OpCode::IndexCastUI:
  case OpCode::TruncI:
    return truncate(bits, to);
  case OpCode::SIToFP:
    return fromDouble(double(toSigned(bits, from)), to);
  case OpCode::UIToFP:
    return fromDouble(double(bits), to);
  case OpCode::FPToSI: {
    double x = std::trunc(toDouble(bits, from));
    return truncate(uint64_t(int64_t(x)), to);
  }
  case OpCode::FPToUI: {
    double x = std::trunc(toDouble(bits, from));
    return truncate(x < 0 ? 0 : uint64_t(x), to);
  }
  default:
    return bits;
  }
}

/// Indices from operand slots [first, first + count).
static SmallVector<int64_t, 4> getIndices(Frame &frame, const Instr &instr,
                                          unsigned first, unsigned count) {
  SmallVector<int64_t, 4> indices;
  for (unsigned i = 0; i < count; ++i)
    indices.push_back(int64_t(frame.scalar(instr, first + i)));
  return indices;
}

static uint64_t readLane(const char *address, unsigned bytes) {
  uint64_t value = 0;
  std::memcpy(&value, address, bytes);
  return value;
}

static void writeLane(char *address, uint64_t value, unsigned bytes) {
  std::memcpy(address, &value, bytes);
}

/// A new memref value sharing `base`'s allocation.
static std::shared_ptr<MemRefValue> derive(const MemRefValue &base) {
  auto result = std::make_shared<MemRefValue>();
  result->data = base.data;
  result->elementBytes = base.elementBytes;
  result->allocation = base.allocation;
  return result;
}

static void runOne(Frame &frame, const Instr &instr);

void mlir::pb::nvidia::emulator::run(Thread &thread, const Code &code) {
  Frame frame{thread, thread.slots};
  for (const Instr &instr : code.instrs)
    runOne(frame, instr);
}

static void runOne(Frame &frame, const Instr &instr) {
  Thread &thread = frame.thread;
  BlockRun &block = *thread.block;
  OpCode code = instr.code;
  switch (code) {
  case OpCode::Constant:
    frame.out(instr).lanes = instr.constant;
    return;
  case OpCode::Zero:
    frame.out(instr).lanes.assign(instr.lanes, 0);
    return;
  case OpCode::AddI:
  case OpCode::SubI:
  case OpCode::MulI:
  case OpCode::DivUI:
  case OpCode::DivSI:
  case OpCode::RemUI:
  case OpCode::RemSI:
  case OpCode::CeilDivSI:
  case OpCode::CeilDivUI:
  case OpCode::FloorDivSI:
  case OpCode::MinUI:
  case OpCode::MinSI:
  case OpCode::MaxUI:
  case OpCode::MaxSI:
  case OpCode::AndI:
  case OpCode::OrI:
  case OpCode::XOrI:
  case OpCode::ShLI:
  case OpCode::ShRUI:
  case OpCode::ShRSI: {
    const auto &a = frame.in(instr, 0).lanes, &b = frame.in(instr, 1).lanes;
    SmallVector<uint64_t, 4> r(a.size());
    for (size_t l = 0; l < a.size(); ++l)
      r[l] = int2(thread, code, a[l], b[l], instr.kind);
    frame.out(instr).lanes = std::move(r);
    return;
  }
  case OpCode::AddF:
  case OpCode::SubF:
  case OpCode::MulF:
  case OpCode::DivF:
  case OpCode::RemF:
  case OpCode::MaximumF:
  case OpCode::MinimumF:
  case OpCode::MaxNumF:
  case OpCode::MinNumF:
  case OpCode::PowF:
  case OpCode::CopySign: {
    const auto &a = frame.in(instr, 0).lanes, &b = frame.in(instr, 1).lanes;
    SmallVector<uint64_t, 4> r(a.size());
    if (instr.kind == EK::F32 && code != OpCode::RemF && code != OpCode::PowF) {
      // The common case without the generic conversions.
      for (size_t l = 0; l < a.size(); ++l) {
        float x, y, z;
        uint32_t xa = a[l], yb = b[l];
        std::memcpy(&x, &xa, 4);
        std::memcpy(&y, &yb, 4);
        switch (code) {
        case OpCode::AddF:
          z = x + y;
          break;
        case OpCode::SubF:
          z = x - y;
          break;
        case OpCode::MulF:
          z = x * y;
          break;
        case OpCode::DivF:
          z = x / y;
          break;
        default:
          r[l] = float2(code, a[l], b[l], instr.kind);
          continue;
        }
        uint32_t bits;
        std::memcpy(&bits, &z, 4);
        r[l] = bits;
      }
    } else {
      for (size_t l = 0; l < a.size(); ++l)
        r[l] = float2(code, a[l], b[l], instr.kind);
    }
    frame.out(instr).lanes = std::move(r);
    return;
  }
  case OpCode::Fma: {
    const auto &a = frame.in(instr, 0).lanes, &b = frame.in(instr, 1).lanes,
               &c = frame.in(instr, 2).lanes;
    SmallVector<uint64_t, 4> r(a.size());
    for (size_t l = 0; l < a.size(); ++l) {
      double x = toDouble(a[l], instr.kind), y = toDouble(b[l], instr.kind),
             z = toDouble(c[l], instr.kind);
      double v = instr.kind == EK::F64 ? std::fma(x, y, z)
                 : instr.kind == EK::F32
                     ? double(std::fma(float(x), float(y), float(z)))
                     : roundToType(std::fma(x, y, z), instr.kind);
      r[l] = fromDouble(v, instr.kind);
    }
    frame.out(instr).lanes = std::move(r);
    return;
  }
  case OpCode::NegF:
  case OpCode::Exp:
  case OpCode::Exp2:
  case OpCode::Expm1:
  case OpCode::Log:
  case OpCode::Log2:
  case OpCode::Log1p:
  case OpCode::Sqrt:
  case OpCode::Rsqrt:
  case OpCode::Tanh:
  case OpCode::Erf:
  case OpCode::Floor:
  case OpCode::Ceil:
  case OpCode::AbsF:
  case OpCode::Sin:
  case OpCode::Cos:
  case OpCode::Round:
  case OpCode::RoundEven:
  case OpCode::Trunc: {
    const auto &a = frame.in(instr, 0).lanes;
    SmallVector<uint64_t, 4> r(a.size());
    for (size_t l = 0; l < a.size(); ++l)
      r[l] = math1(code, a[l], instr.kind);
    frame.out(instr).lanes = std::move(r);
    return;
  }
  case OpCode::AbsI: {
    const auto &a = frame.in(instr, 0).lanes;
    SmallVector<uint64_t, 4> r(a.size());
    for (size_t l = 0; l < a.size(); ++l) {
      int64_t v = toSigned(a[l], instr.kind);
      r[l] = truncate(uint64_t(v < 0 ? -v : v), instr.kind);
    }
    frame.out(instr).lanes = std::move(r);
    return;
  }
  case OpCode::CmpI:
  case OpCode::CmpF: {
    const auto &a = frame.in(instr, 0).lanes, &b = frame.in(instr, 1).lanes;
    SmallVector<uint64_t, 4> r(a.size());
    for (size_t l = 0; l < a.size(); ++l)
      r[l] = code == OpCode::CmpI
                 ? compareInt(instr.aux, a[l], b[l], instr.kind)
                 : compareFloat(instr.aux, a[l], b[l], instr.kind);
    frame.out(instr).lanes = std::move(r);
    return;
  }
  case OpCode::Select: {
    const EValue &c = frame.in(instr, 0);
    const EValue &a = frame.in(instr, 1), &b = frame.in(instr, 2);
    if (a.memref) {
      frame.out(instr) = c.lanes[0] ? a : b;
      return;
    }
    SmallVector<uint64_t, 4> r(a.lanes.size());
    for (size_t l = 0; l < r.size(); ++l)
      r[l] = (instr.aux ? c.lanes[l] : c.lanes[0]) ? a.lanes[l] : b.lanes[l];
    frame.out(instr).lanes = std::move(r);
    return;
  }
  case OpCode::ExtF:
  case OpCode::TruncF:
  case OpCode::ExtSI:
  case OpCode::ExtUI:
  case OpCode::TruncI:
  case OpCode::SIToFP:
  case OpCode::UIToFP:
  case OpCode::FPToSI:
  case OpCode::FPToUI:
  case OpCode::IndexCast:
  case OpCode::IndexCastUI: {
    const auto &a = frame.in(instr, 0).lanes;
    SmallVector<uint64_t, 4> r(a.size());
    for (size_t l = 0; l < a.size(); ++l)
      r[l] = convert(code, a[l], instr.kind, instr.resultKind);
    frame.out(instr).lanes = std::move(r);
    return;
  }
  case OpCode::Bitcast: {
    // Repack the bits: lanes of the source, low lanes first.
    const auto &a = frame.in(instr, 0).lanes;
    unsigned fromBits = getBits(instr.kind), toBits = getBits(instr.resultKind);
    SmallVector<uint64_t, 4> r(instr.lanes, 0);
    for (size_t l = 0; l < a.size(); ++l)
      for (unsigned bit = 0; bit < fromBits; ++bit)
        if ((a[l] >> bit) & 1) {
          size_t position = l * fromBits + bit;
          r[position / toBits] |= uint64_t(1) << (position % toBits);
        }
    frame.out(instr).lanes = std::move(r);
    return;
  }
  case OpCode::ShapeCast:
    frame.out(instr).lanes = frame.in(instr, 0).lanes;
    return;
  case OpCode::Broadcast: {
    const auto &a = frame.in(instr, 0).lanes;
    SmallVector<uint64_t, 4> r(instr.lanes);
    for (size_t l = 0; l < r.size(); ++l)
      r[l] = a[l % a.size()];
    frame.out(instr).lanes = std::move(r);
    return;
  }
  case OpCode::Extract: {
    const auto &a = frame.in(instr, 0).lanes;
    frame.out(instr).lanes.assign(a.begin() + instr.aux,
                                  a.begin() + instr.aux + instr.lanes);
    return;
  }
  case OpCode::Insert: {
    const auto &v = frame.in(instr, 0).lanes;
    SmallVector<uint64_t, 4> r = frame.in(instr, 1).lanes;
    std::copy(v.begin(), v.end(), r.begin() + instr.aux);
    frame.out(instr).lanes = std::move(r);
    return;
  }
  case OpCode::FromElements: {
    SmallVector<uint64_t, 4> r;
    for (unsigned i = 0; i < instr.operands.size(); ++i)
      r.push_back(frame.scalar(instr, i));
    frame.out(instr).lanes = std::move(r);
    return;
  }
  case OpCode::Reduction: {
    const auto &a = frame.in(instr, 0).lanes;
    uint64_t r = a[0];
    for (size_t l = 1; l < a.size(); ++l)
      r = combineLanes(instr.aux, r, a[l], instr.kind);
    if (instr.operands.size() > 1)
      r = combineLanes(instr.aux, r, frame.scalar(instr, 1), instr.kind);
    frame.out(instr).lanes.assign(1, r);
    return;
  }
  case OpCode::Load:
  case OpCode::Store: {
    unsigned m = instr.aux;
    const MemRefValue &memref = *frame.in(instr, m).memref;
    SmallVector<int64_t, 4> indices =
        getIndices(frame, instr, m + 1, instr.operands.size() - m - 1);
    bool write = code == OpCode::Store;
    const char *what = write ? "memref.store" : "memref.load";
    char *address = getAddress(thread, memref, indices, 1, what);
    unsigned bytes = memref.elementBytes;
    checkAccess(thread, memref, address, bytes, write, bytes, what);
    if (write)
      writeLane(address, frame.scalar(instr, 0), bytes);
    else
      frame.out(instr).lanes.assign(1, readLane(address, bytes));
    return;
  }
  case OpCode::VectorLoad:
  case OpCode::VectorStore: {
    bool write = code == OpCode::VectorStore;
    unsigned m = write ? 1 : 0;
    const MemRefValue &memref = *frame.in(instr, m).memref;
    SmallVector<int64_t, 4> indices =
        getIndices(frame, instr, m + 1, instr.operands.size() - m - 1);
    unsigned lanes = write ? frame.in(instr, 0).lanes.size() : instr.lanes;
    const char *what = write ? "vector.store" : "vector.load";
    char *address = getAddress(thread, memref, indices, lanes, what);
    unsigned bytes = memref.elementBytes;
    if (!memref.strides.empty() && memref.strides.back() != 1)
      fail(thread,
           llvm::Twine(what) + " along a dimension of stride other than 1");
    checkAccess(thread, memref, address, bytes * lanes, write,
                std::max<int64_t>(instr.aux, bytes), what);
    if (write) {
      const auto &v = frame.in(instr, 0).lanes;
      for (unsigned l = 0; l < lanes; ++l)
        writeLane(address + l * bytes, v[l], bytes);
    } else {
      SmallVector<uint64_t, 4> r(lanes);
      for (unsigned l = 0; l < lanes; ++l)
        r[l] = readLane(address + l * bytes, bytes);
      frame.out(instr).lanes = std::move(r);
    }
    return;
  }
  case OpCode::TransferRead:
  case OpCode::TransferWrite: {
    bool write = code == OpCode::TransferWrite;
    unsigned m = write ? 1 : 0;
    const MemRefValue &memref = *frame.in(instr, m).memref;
    unsigned rank = memref.sizes.size();
    SmallVector<int64_t, 4> indices = getIndices(frame, instr, m + 1, rank);
    unsigned lanes = write ? frame.in(instr, 0).lanes.size() : instr.lanes;
    const char *what = write ? "vector.transfer_write" : "vector.transfer_read";
    unsigned bytes = memref.elementBytes;
    bool broadcast = !write && instr.aux == 0;
    SmallVector<uint64_t, 4> r(write ? 0 : lanes);
    for (unsigned l = 0; l < lanes; ++l) {
      SmallVector<int64_t, 4> at = indices;
      if (!broadcast && rank)
        at.back() += l;
      bool inBounds = true;
      for (unsigned d = 0; d < rank; ++d)
        inBounds &= at[d] >= 0 && at[d] < memref.sizes[d];
      if (!inBounds && !instr.aux2) {
        // Lanes past the edge read the padding and are not written.
        if (!write)
          r[l] = frame.scalar(instr, 1 + rank);
        continue;
      }
      char *address = getAddress(thread, memref, at, 1, what);
      checkAccess(thread, memref, address, bytes, write, bytes, what);
      if (write)
        writeLane(address, frame.in(instr, 0).lanes[l], bytes);
      else
        r[l] = readLane(address, bytes);
    }
    if (!write)
      frame.out(instr).lanes = std::move(r);
    return;
  }
  case OpCode::View: {
    auto view = cast<memref::ViewOp>(instr.op);
    const MemRefValue &base = *frame.in(instr, 0).memref;
    auto result = derive(base);
    auto type = view.getType();
    result->elementBytes = type.getElementTypeBitWidth() / 8;
    int64_t shift = int64_t(frame.scalar(instr, 1));
    result->data = base.data + (base.offset * base.elementBytes) + shift;
    result->offset = 0;
    unsigned dynamic = 2;
    for (int64_t size : type.getShape())
      result->sizes.push_back(ShapedType::isDynamic(size)
                                  ? int64_t(frame.scalar(instr, dynamic++))
                                  : size);
    result->strides.assign(result->sizes.size(), 1);
    for (int d = int(result->sizes.size()) - 2; d >= 0; --d)
      result->strides[d] = result->strides[d + 1] * result->sizes[d + 1];
    frame.out(instr).memref = std::move(result);
    return;
  }
  case OpCode::SubView: {
    auto subview = cast<memref::SubViewOp>(instr.op);
    const MemRefValue &base = *frame.in(instr, 0).memref;
    auto result = derive(base);
    unsigned dynamic = 1;
    auto mixed = [&](ArrayRef<int64_t> statics) {
      SmallVector<int64_t, 4> values;
      for (int64_t v : statics)
        values.push_back(ShapedType::isDynamic(v)
                             ? int64_t(frame.scalar(instr, dynamic++))
                             : v);
      return values;
    };
    SmallVector<int64_t, 4> offsets = mixed(subview.getStaticOffsets());
    SmallVector<int64_t, 4> sizes = mixed(subview.getStaticSizes());
    SmallVector<int64_t, 4> steps = mixed(subview.getStaticStrides());
    llvm::SmallBitVector dropped = subview.getDroppedDims();
    result->offset = base.offset;
    for (unsigned d = 0; d < offsets.size(); ++d) {
      if (offsets[d] < 0 || sizes[d] < 0 ||
          (sizes[d] > 0 &&
           offsets[d] + (sizes[d] - 1) * steps[d] >= base.sizes[d]))
        fail(thread, "memref.subview out of bounds: dimension " +
                         llvm::Twine(d) + " offset " + llvm::Twine(offsets[d]) +
                         " size " + llvm::Twine(sizes[d]) + " stride " +
                         llvm::Twine(steps[d]) + " of extent " +
                         llvm::Twine(base.sizes[d]));
      result->offset += offsets[d] * base.strides[d];
      if (dropped.test(d))
        continue;
      result->sizes.push_back(sizes[d]);
      result->strides.push_back(base.strides[d] * steps[d]);
    }
    frame.out(instr).memref = std::move(result);
    return;
  }
  case OpCode::Reshape: {
    // Collapses, expansions and casts of contiguous memrefs: the result's
    // sizes from its type, strides row-major from its layout.
    const MemRefValue &base = *frame.in(instr, 0).memref;
    auto type = cast<MemRefType>(instr.op->getResult(0).getType());
    auto result = derive(base);
    SmallVector<int64_t> strides;
    int64_t offset;
    if (failed(type.getStridesAndOffset(strides, offset)) ||
        llvm::any_of(strides, ShapedType::isDynamic))
      fail(thread, "a reshape whose result has a dynamic layout");
    if (isa<memref::ReinterpretCastOp>(instr.op)) {
      if (ShapedType::isDynamic(offset))
        fail(thread, "a reinterpret_cast with a dynamic offset");
      result->offset = offset;
    } else {
      result->offset = base.offset;
    }
    result->sizes.assign(type.getShape().begin(), type.getShape().end());
    result->strides.assign(strides.begin(), strides.end());
    frame.out(instr).memref = std::move(result);
    return;
  }
  case OpCode::Alloca: {
    auto type = cast<MemRefType>(instr.op->getResult(0).getType());
    int64_t elements = type.getNumElements();
    unsigned bytes = std::max<unsigned>(type.getElementTypeBitWidth() / 8, 1);
    auto memory = std::make_unique<char[]>(elements * bytes + 16);
    // A pattern, not zeros: reads of unwritten private memory show.
    std::memset(memory.get(), 0xA5, elements * bytes + 16);
    char *data =
        memory.get() + (-reinterpret_cast<uintptr_t>(memory.get()) & 15);
    auto allocation = std::make_unique<Allocation>(Allocation{
        data, data + elements * bytes, Space::Private, "private memory"});
    auto result = std::make_shared<MemRefValue>();
    result->data = data;
    result->elementBytes = bytes;
    result->allocation = allocation.get();
    result->sizes.assign(type.getShape().begin(), type.getShape().end());
    result->strides.assign(result->sizes.size(), 1);
    for (int d = int(result->sizes.size()) - 2; d >= 0; --d)
      result->strides[d] = result->strides[d + 1] * result->sizes[d + 1];
    thread.privateMemory.push_back(std::move(memory));
    thread.privateAllocations.push_back(std::move(allocation));
    frame.out(instr).memref = std::move(result);
    return;
  }
  case OpCode::Dealloc:
  case OpCode::NoOp:
    return;
  case OpCode::ExtractPointer: {
    const MemRefValue &memref = *frame.in(instr, 0).memref;
    uint64_t address;
    if (memref.allocation->space == Space::Shared)
      address = block.sharedWindowBase + (memref.data - block.shared.begin);
    else
      address = reinterpret_cast<uintptr_t>(memref.data);
    frame.out(instr).lanes.assign(1, address);
    return;
  }
  case OpCode::For: {
    auto forOp = cast<scf::ForOp>(instr.op);
    EK kind = *getElementKind(forOp.getInductionVar().getType());
    int64_t lb = toSigned(frame.scalar(instr, 0), kind),
            ub = toSigned(frame.scalar(instr, 1), kind),
            step = toSigned(frame.scalar(instr, 2), kind);
    if (step <= 0)
      fail(thread, "scf.for with a step that is not positive");
    const Code &body = instr.regions[0];
    size_t numIters = instr.operands.size() - 3;
    for (size_t i = 0; i < numIters; ++i)
      frame.slots[body.arguments[1 + i]] = frame.in(instr, 3 + i);
    bool unsignedCmp = forOp.getUnsignedCmp();
    for (int64_t iv = lb; unsignedCmp ? uint64_t(iv) < uint64_t(ub) : iv < ub;
         iv += step) {
      frame.slots[body.arguments[0]].lanes.assign(1, truncate(iv, kind));
      run(thread, body);
      if (numIters == 1) {
        frame.slots[body.arguments[1]] = frame.slots[body.yields[0]];
      } else if (numIters) {
        // Through copies: a yield may pass one iter_arg into another.
        SmallVector<EValue, 4> next;
        for (size_t i = 0; i < numIters; ++i)
          next.push_back(frame.slots[body.yields[i]]);
        for (size_t i = 0; i < numIters; ++i)
          frame.slots[body.arguments[1 + i]] = std::move(next[i]);
      }
    }
    for (size_t i = 0; i < numIters; ++i)
      frame.out(instr, i) = frame.slots[body.arguments[1 + i]];
    return;
  }
  case OpCode::If: {
    bool condition = frame.scalar(instr, 0) & 1;
    const Code &branch = instr.regions[condition ? 0 : 1];
    if (!condition && instr.regions.size() < 2)
      return;
    run(thread, branch);
    for (size_t i = 0; i < instr.results.size(); ++i)
      frame.out(instr, i) = frame.slots[branch.yields[i]];
    return;
  }
  case OpCode::While: {
    const Code &before = instr.regions[0], &after = instr.regions[1];
    SmallVector<EValue, 4> values;
    for (unsigned i = 0; i < instr.operands.size(); ++i)
      values.push_back(frame.in(instr, i));
    for (;;) {
      for (size_t i = 0; i < values.size(); ++i)
        frame.slots[before.arguments[i]] = values[i];
      run(thread, before);
      bool condition = frame.slots[before.yields[0]].lanes[0] & 1;
      SmallVector<EValue, 4> forwarded;
      for (size_t i = 1; i < before.yields.size(); ++i)
        forwarded.push_back(frame.slots[before.yields[i]]);
      if (!condition) {
        for (size_t i = 0; i < forwarded.size(); ++i)
          frame.out(instr, i) = forwarded[i];
        return;
      }
      for (size_t i = 0; i < forwarded.size(); ++i)
        frame.slots[after.arguments[i]] = forwarded[i];
      run(thread, after);
      values.clear();
      for (unsigned slot : after.yields)
        values.push_back(frame.slots[slot]);
    }
  }
  case OpCode::ThreadId:
    frame.out(instr).lanes.assign(1, thread.id[instr.aux]);
    return;
  case OpCode::BlockId:
    frame.out(instr).lanes.assign(1, block.blockId[instr.aux]);
    return;
  case OpCode::BlockDim:
    frame.out(instr).lanes.assign(1, block.blockDim[instr.aux]);
    return;
  case OpCode::GridDim:
    frame.out(instr).lanes.assign(1, block.gridDim[instr.aux]);
    return;
  case OpCode::LaneId:
    frame.out(instr).lanes.assign(1, thread.linear % block.limits->warpSize);
    return;
  case OpCode::DynamicShared: {
    auto result = std::make_shared<MemRefValue>();
    result->data = block.shared.begin;
    result->elementBytes = 1;
    result->allocation = &block.shared;
    result->sizes = {block.shared.end - block.shared.begin};
    result->strides = {1};
    frame.out(instr).memref = std::move(result);
    return;
  }
  case OpCode::AsyncCopy: {
    unsigned dstRank = instr.positions[0], srcRank = instr.positions[1];
    const MemRefValue &dst = *frame.in(instr, 0).memref;
    const MemRefValue &src = *frame.in(instr, 1 + dstRank).memref;
    SmallVector<int64_t, 4> dstIndices = getIndices(frame, instr, 1, dstRank);
    SmallVector<int64_t, 4> srcIndices =
        getIndices(frame, instr, 2 + dstRank, srcRank);
    unsigned elements = instr.aux;
    unsigned bytes = elements * dst.elementBytes;
    int64_t sourceElements =
        instr.positions[2] ? int64_t(frame.scalar(instr, 2 + dstRank + srcRank))
                           : elements;
    if (sourceElements < 0 || sourceElements > elements)
      fail(thread, "cp.async with a source size of " +
                       llvm::Twine(sourceElements) + " elements, more than " +
                       llvm::Twine(elements));
    if (dst.allocation->space != Space::Shared)
      fail(thread, "cp.async to memory that is not shared");
    char *dstAddress =
        getAddress(thread, dst, dstIndices, elements, "cp.async destination");
    checkAccess(thread, dst, dstAddress, bytes, /*write=*/true, bytes,
                "cp.async destination");
    const char *srcAddress = nullptr;
    unsigned sourceBytes = sourceElements * src.elementBytes;
    if (sourceBytes) {
      char *address = getAddress(thread, src, srcIndices, sourceElements,
                                 "cp.async source");
      checkAccess(thread, src, address, sourceBytes, /*write=*/false, bytes,
                  "cp.async source");
      srcAddress = address;
    }
    // Mark the destination as pending until the thread's wait.
    size_t first = dstAddress - block.shared.begin;
    for (unsigned b = 0; b < bytes; ++b) {
      block.shadow[first + b].asyncPending = true;
      block.shadow[first + b].asyncOwner = thread.linear;
    }
    thread.openCopies.push_back({dstAddress, srcAddress, bytes, sourceBytes});
    frame.out(instr).lanes.assign(1, 0);
    return;
  }
  case OpCode::AsyncCreateGroup:
    thread.copyGroups.push_back(std::move(thread.openCopies));
    thread.openCopies.clear();
    frame.out(instr).lanes.assign(1, 0);
    return;
  case OpCode::AsyncWait:
    completeCopies(thread, instr.aux);
    return;
  case OpCode::Barrier:
  case OpCode::AllReduce:
  case OpCode::Shuffle:
  case OpCode::Ldmatrix:
  case OpCode::MmaSync:
  case OpCode::NvvmMmaSync:
  case OpCode::Wgmma:
    waitAt(thread, instr);
    return;
  }
}

Scope mlir::pb::nvidia::emulator::getScope(const Instr &instr) {
  switch (instr.code) {
  case OpCode::Barrier:
  case OpCode::AllReduce:
    return Scope::Block;
  case OpCode::Shuffle:
  case OpCode::Ldmatrix:
  case OpCode::MmaSync:
  case OpCode::NvvmMmaSync:
    return Scope::Warp;
  case OpCode::Wgmma:
    return Scope::Warpgroup;
  default:
    return Scope::None;
  }
}

void mlir::pb::nvidia::emulator::runCollective(BlockRun &block,
                                               const Instr &instr,
                                               ArrayRef<Thread *> threads) {
  switch (instr.code) {
  case OpCode::Barrier:
    return;
  case OpCode::AllReduce: {
    // In thread order: a reassociation the GPU's tree may differ from only
    // in rounding.
    EK kind = instr.kind;
    uint64_t result = threads[0]->slots[instr.operands[0]].lanes[0];
    for (Thread *thread : threads.drop_front())
      result = combineLanes(instr.aux, result,
                            thread->slots[instr.operands[0]].lanes[0], kind);
    for (Thread *thread : threads)
      thread->slots[instr.results[0]].lanes.assign(1, result);
    return;
  }
  case OpCode::Shuffle: {
    // gpu.shuffle: value, offset, width; results value, valid.
    SmallVector<uint64_t, 32> values;
    for (Thread *lane : threads)
      values.push_back(lane->slots[instr.operands[0]].lanes[0]);
    for (auto [i, lane] : llvm::enumerate(threads)) {
      uint64_t offset = lane->slots[instr.operands[1]].lanes[0];
      uint64_t width = lane->slots[instr.operands[2]].lanes[0];
      int64_t source = int64_t(i);
      uint64_t base = width ? (i / width) * width : 0;
      switch (gpu::ShuffleMode(instr.aux)) {
      case gpu::ShuffleMode::XOR:
        source = int64_t(i ^ offset);
        break;
      case gpu::ShuffleMode::UP:
        source = int64_t(i) - int64_t(offset);
        break;
      case gpu::ShuffleMode::DOWN:
        source = int64_t(i + offset);
        break;
      case gpu::ShuffleMode::IDX:
        source = int64_t(base + offset);
        break;
      }
      bool valid = source >= int64_t(base) && source < int64_t(base + width) &&
                   source < int64_t(values.size());
      lane->slots[instr.results[0]].lanes.assign(1, valid ? values[source]
                                                          : values[i]);
      lane->slots[instr.results[1]].lanes.assign(1, valid);
    }
    return;
  }
  case OpCode::Ldmatrix:
    return runLdmatrix(block, instr, threads);
  case OpCode::MmaSync:
  case OpCode::NvvmMmaSync:
    return runMmaSync(block, instr, threads);
  case OpCode::Wgmma:
    return runWgmma(block, instr, threads);
  default:
    return;
  }
}
