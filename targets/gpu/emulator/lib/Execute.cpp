//===- Execute.cpp - Running a thread's operations -----------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// `run` walks a kernel's prepared Code (Prepare.cpp) for one thread.
// Per-thread operations (arith, math, vector, memref, scf, llvm aggregates,
// cp.async) run here; barriers and collectives wait
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
using namespace mlir::pb::emulator;
using EValue = mlir::pb::emulator::Value;
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

void mlir::pb::emulator::run(Thread &thread, const Code &code) {
  Frame frame{thread, thread.slots};
  for (const Instr &instr : code.instrs) {
    if (!thread.wgmmaPendingSlots.empty() && instr.code != OpCode::Wgmma)
      checkWgmmaPending(thread, instr);
    runOne(frame, instr);
  }
}

/// Carries the pending state of a wgmma accumulator along a copy of its
/// value (loop-carried and yielded values).
static void copyPending(Thread &thread, unsigned from, unsigned to) {
  if (thread.wgmmaPendingSlots.empty() || from == to)
    return;
  if (llvm::is_contained(thread.wgmmaPendingSlots, from) &&
      !llvm::is_contained(thread.wgmmaPendingSlots, to))
    thread.wgmmaPendingSlots.push_back(to);
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
    auto &r = frame.out(instr).lanes;
    r.resize(a.size());
    for (size_t l = 0; l < a.size(); ++l)
      r[l] = int2(thread, code, a[l], b[l], instr.kind);
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
    auto &r = frame.out(instr).lanes;
    r.resize(a.size());
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
    return;
  }
  case OpCode::Fma: {
    const auto &a = frame.in(instr, 0).lanes, &b = frame.in(instr, 1).lanes,
               &c = frame.in(instr, 2).lanes;
    auto &r = frame.out(instr).lanes;
    r.resize(a.size());
    for (size_t l = 0; l < a.size(); ++l) {
      double x = toDouble(a[l], instr.kind), y = toDouble(b[l], instr.kind),
             z = toDouble(c[l], instr.kind);
      double v = instr.kind == EK::F64 ? std::fma(x, y, z)
                 : instr.kind == EK::F32
                     ? double(std::fma(float(x), float(y), float(z)))
                     : roundToType(std::fma(x, y, z), instr.kind);
      r[l] = fromDouble(v, instr.kind);
    }
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
    auto &r = frame.out(instr).lanes;
    r.resize(a.size());
    for (size_t l = 0; l < a.size(); ++l)
      r[l] = math1(code, a[l], instr.kind);
    return;
  }
  case OpCode::AbsI: {
    const auto &a = frame.in(instr, 0).lanes;
    auto &r = frame.out(instr).lanes;
    r.resize(a.size());
    for (size_t l = 0; l < a.size(); ++l) {
      int64_t v = toSigned(a[l], instr.kind);
      r[l] = truncate(uint64_t(v < 0 ? -v : v), instr.kind);
    }
    return;
  }
  case OpCode::CmpI:
  case OpCode::CmpF: {
    const auto &a = frame.in(instr, 0).lanes, &b = frame.in(instr, 1).lanes;
    auto &r = frame.out(instr).lanes;
    r.resize(a.size());
    for (size_t l = 0; l < a.size(); ++l)
      r[l] = code == OpCode::CmpI
                 ? compareInt(instr.aux, a[l], b[l], instr.kind)
                 : compareFloat(instr.aux, a[l], b[l], instr.kind);
    return;
  }
  case OpCode::Select: {
    const EValue &c = frame.in(instr, 0);
    const EValue &a = frame.in(instr, 1), &b = frame.in(instr, 2);
    if (a.memref) {
      frame.out(instr) = c.lanes[0] ? a : b;
      return;
    }
    auto &r = frame.out(instr).lanes;
    r.resize(a.lanes.size());
    for (size_t l = 0; l < r.size(); ++l)
      r[l] = (instr.aux ? c.lanes[l] : c.lanes[0]) ? a.lanes[l] : b.lanes[l];
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
    auto &r = frame.out(instr).lanes;
    r.resize(a.size());
    for (size_t l = 0; l < a.size(); ++l)
      r[l] = convert(code, a[l], instr.kind, instr.resultKind);
    return;
  }
  case OpCode::Bitcast: {
    // Repack the bits: lanes of the source, low lanes first.
    const auto &a = frame.in(instr, 0).lanes;
    unsigned fromBits = getBits(instr.kind), toBits = getBits(instr.resultKind);
    auto &r = frame.out(instr).lanes;
    r.assign(instr.lanes, 0);
    for (size_t l = 0; l < a.size(); ++l)
      for (unsigned bit = 0; bit < fromBits; ++bit)
        if ((a[l] >> bit) & 1) {
          size_t position = l * fromBits + bit;
          r[position / toBits] |= uint64_t(1) << (position % toBits);
        }
    return;
  }
  case OpCode::ShapeCast:
    frame.out(instr).lanes = frame.in(instr, 0).lanes;
    return;
  case OpCode::Broadcast: {
    const auto &a = frame.in(instr, 0).lanes;
    auto &r = frame.out(instr).lanes;
    r.resize(instr.lanes);
    for (size_t l = 0; l < r.size(); ++l)
      r[l] = a[l % a.size()];
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
    auto &r = frame.out(instr).lanes;
    r = frame.in(instr, 1).lanes;
    std::copy(v.begin(), v.end(), r.begin() + instr.aux);
    return;
  }
  case OpCode::FromElements: {
    auto &r = frame.out(instr).lanes;
    r.resize(instr.operands.size());
    for (unsigned i = 0; i < instr.operands.size(); ++i)
      r[i] = frame.scalar(instr, i);
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
      auto &r = frame.out(instr).lanes;
      r.resize(lanes);
      for (unsigned l = 0; l < lanes; ++l)
        r[l] = readLane(address + l * bytes, bytes);
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
  case OpCode::GetGlobal:
    frame.out(instr).memref = block.kernel->globals[instr.aux];
    return;
  case OpCode::Dealloc:
  case OpCode::NoOp:
  case OpCode::Unsupported:
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
    for (size_t i = 0; i < numIters; ++i) {
      copyPending(thread, instr.operands[3 + i], body.arguments[1 + i]);
      frame.slots[body.arguments[1 + i]] = frame.in(instr, 3 + i);
    }
    bool unsignedCmp = forOp.getUnsignedCmp();
    for (int64_t iv = lb; unsignedCmp ? uint64_t(iv) < uint64_t(ub) : iv < ub;
         iv += step) {
      frame.slots[body.arguments[0]].lanes.assign(1, truncate(iv, kind));
      run(thread, body);
      for (size_t i = 0; i < numIters; ++i)
        copyPending(thread, body.yields[i], body.arguments[1 + i]);
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
    for (size_t i = 0; i < numIters; ++i) {
      copyPending(thread, body.arguments[1 + i], instr.results[i]);
      frame.out(instr, i) = frame.slots[body.arguments[1 + i]];
    }
    return;
  }
  case OpCode::If: {
    bool condition = frame.scalar(instr, 0) & 1;
    const Code &branch = instr.regions[condition ? 0 : 1];
    if (!condition && instr.regions.size() < 2)
      return;
    run(thread, branch);
    for (size_t i = 0; i < instr.results.size(); ++i) {
      copyPending(thread, branch.yields[i], instr.results[i]);
      frame.out(instr, i) = frame.slots[branch.yields[i]];
    }
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
  case OpCode::WgmmaCommit:
    thread.wgmmaGroups.push_back(std::move(thread.wgmmaOpen));
    thread.wgmmaOpen.clear();
    return;
  case OpCode::WgmmaWait:
    completeWgmma(thread, instr.aux);
    return;
  case OpCode::ProxyFence:
    ++thread.proxyFences;
    return;
  case OpCode::Barrier:
  case OpCode::AllReduce:
  case OpCode::Shuffle:
  case OpCode::Ldmatrix:
  case OpCode::MmaSync:
  case OpCode::NvvmMmaSync:
  case OpCode::Mfma:
  case OpCode::Wgmma:
    waitAt(thread, instr);
    return;
  }
}

Scope mlir::pb::emulator::getScope(const Instr &instr) {
  switch (instr.code) {
  case OpCode::Barrier:
  case OpCode::AllReduce:
    return Scope::Block;
  case OpCode::Shuffle:
  case OpCode::Ldmatrix:
  case OpCode::MmaSync:
  case OpCode::NvvmMmaSync:
  case OpCode::Mfma:
    return Scope::Warp;
  case OpCode::Wgmma:
    return Scope::Warpgroup;
  default:
    return Scope::None;
  }
}

void mlir::pb::emulator::runCollective(BlockRun &block, const Instr &instr,
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
    // gpu.shuffle: value, offset, width; results value, valid. As
    // shfl.sync (PTX ISA 9.7.9.6 "Data Movement and Conversion
    // Instructions: shfl.sync"): lanes in segments of `width`; a source
    // outside the lane's segment is invalid and the lane keeps its own
    // value.
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
  case OpCode::Mfma:
    return runMfma(block, instr, threads);
  case OpCode::Wgmma:
    return runWgmma(block, instr, threads);
  default:
    return;
  }
}
