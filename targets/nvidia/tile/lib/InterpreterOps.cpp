//===- InterpreterOps.cpp - The tile interpreter's operations -------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Element types' rounding and memory encoding, and the execution of each
// prepared instruction over one tile block.
//
//===----------------------------------------------------------------------===//

#include "InterpreterInternal.h"
#include "pb/TileIR/TileIR.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

using namespace mlir;
using namespace mlir::pb::tileir;
using namespace mlir::pb::tileir::interpreter;

//===----------------------------------------------------------------------===//
// Element types: rounding and memory encoding
//===----------------------------------------------------------------------===//

std::optional<Elem> interpreter::classify(Type type) {
  if (auto i = dyn_cast<IntegerType>(type)) {
    if (!i.isSignless())
      return std::nullopt;
    switch (i.getWidth()) {
    case 1:
      return Elem::I1;
    case 8:
      return Elem::I8;
    case 16:
      return Elem::I16;
    case 32:
      return Elem::I32;
    case 64:
      return Elem::I64;
    default:
      return std::nullopt;
    }
  }
  return llvm::TypeSwitch<Type, std::optional<Elem>>(type)
      .Case([](Float16Type) { return Elem::F16; })
      .Case([](BFloat16Type) { return Elem::BF16; })
      .Case([](FloatTF32Type) { return Elem::TF32; })
      .Case([](Float32Type) { return Elem::F32; })
      .Case([](Float64Type) { return Elem::F64; })
      .Case([](Float8E4M3FNType) { return Elem::F8E4M3FN; })
      .Case([](Float8E5M2Type) { return Elem::F8E5M2; })
      .Case([](PointerType) { return Elem::Ptr; })
      .Default([](Type) { return std::nullopt; });
}

unsigned interpreter::byteSize(Elem e) {
  switch (e) {
  case Elem::I1:
  case Elem::I8:
  case Elem::F8E4M3FN:
  case Elem::F8E5M2:
    return 1;
  case Elem::I16:
  case Elem::F16:
  case Elem::BF16:
    return 2;
  case Elem::I32:
  case Elem::F32:
  case Elem::TF32:
    return 4;
  default:
    return 8;
  }
}

/// The APFloat semantics of the float types rounded through APFloat.
static const llvm::fltSemantics *semantics(Elem e) {
  switch (e) {
  case Elem::F16:
    return &llvm::APFloat::IEEEhalf();
  case Elem::BF16:
    return &llvm::APFloat::BFloat();
  case Elem::TF32:
    return &llvm::APFloat::FloatTF32();
  case Elem::F8E4M3FN:
    return &llvm::APFloat::Float8E4M3FN();
  case Elem::F8E5M2:
    return &llvm::APFloat::Float8E5M2();
  default:
    return nullptr;
  }
}

/// `x` rounded to nearest (ties to even) in `semantics`, as an APFloat.
static llvm::APFloat toAPFloat(const llvm::fltSemantics &sem, double x) {
  llvm::APFloat value(x);
  bool losesInfo;
  value.convert(sem, llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  return value;
}

void interpreter::roundAll(Elem e, llvm::MutableArrayRef<double> values) {
  if (e == Elem::F32) {
    for (double &x : values)
      x = static_cast<float>(x);
    return;
  }
  if (const llvm::fltSemantics *sem = semantics(e))
    for (double &x : values)
      x = toAPFloat(*sem, x).convertToDouble();
}

/// Every f16 bit pattern's value.
static const std::vector<double> &halfTable() {
  static const std::vector<double> table = [] {
    std::vector<double> t(1 << 16);
    for (unsigned bits = 0; bits < t.size(); ++bits)
      t[bits] = llvm::APFloat(llvm::APFloat::IEEEhalf(), llvm::APInt(16, bits))
                    .convertToDouble();
    return t;
  }();
  return table;
}

template <typename T> static T loadAs(const unsigned char *p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

template <typename T> static void storeAs(unsigned char *p, T value) {
  std::memcpy(p, &value, sizeof(T));
}

/// Reads one element of type `e` at `p` (host byte order).
static double decode(Elem e, const unsigned char *p, const double *half) {
  switch (e) {
  case Elem::I1:
    return *p ? 1 : 0;
  case Elem::I8:
    return loadAs<int8_t>(p);
  case Elem::I16:
    return loadAs<int16_t>(p);
  case Elem::I32:
    return loadAs<int32_t>(p);
  case Elem::I64:
    return static_cast<double>(loadAs<int64_t>(p));
  case Elem::F16:
    return half[loadAs<uint16_t>(p)];
  case Elem::BF16: {
    uint32_t bits = static_cast<uint32_t>(loadAs<uint16_t>(p)) << 16;
    float f;
    std::memcpy(&f, &bits, sizeof(f));
    return f;
  }
  case Elem::TF32:
    return toAPFloat(llvm::APFloat::FloatTF32(), loadAs<float>(p))
        .convertToDouble();
  case Elem::F32:
    return loadAs<float>(p);
  case Elem::F64:
    return loadAs<double>(p);
  case Elem::F8E4M3FN:
  case Elem::F8E5M2:
    return llvm::APFloat(*semantics(e), llvm::APInt(8, *p)).convertToDouble();
  case Elem::Ptr:
    break;
  }
  return 0;
}

/// Writes `x` (already a value of type `e`) as one element at `p`.
static void encode(Elem e, double x, unsigned char *p) {
  switch (e) {
  case Elem::I1:
    *p = x != 0;
    return;
  case Elem::I8:
    return storeAs(p, static_cast<int8_t>(static_cast<int64_t>(x)));
  case Elem::I16:
    return storeAs(p, static_cast<int16_t>(static_cast<int64_t>(x)));
  case Elem::I32:
    return storeAs(p, static_cast<int32_t>(static_cast<int64_t>(x)));
  case Elem::I64:
    return storeAs(p, static_cast<int64_t>(x));
  case Elem::TF32:
  case Elem::F32:
    return storeAs(p, static_cast<float>(x));
  case Elem::F64:
    return storeAs(p, x);
  case Elem::F16:
  case Elem::BF16:
    return storeAs(
        p, static_cast<uint16_t>(
               toAPFloat(*semantics(e), x).bitcastToAPInt().getZExtValue()));
  case Elem::F8E4M3FN:
  case Elem::F8E5M2:
    *p = static_cast<unsigned char>(
        toAPFloat(*semantics(e), x).bitcastToAPInt().getZExtValue());
    return;
  case Elem::Ptr:
    return;
  }
}

//===----------------------------------------------------------------------===//
// Execution
//===----------------------------------------------------------------------===//

Executor::Executor(const Kernel &kernel, const unsigned grid[3],
                   llvm::ArrayRef<InterpreterBuffer> buffers)
    : kernel(kernel), buffers(buffers), half(halfTable().data()),
      slots(kernel.numSlots) {
  std::copy(grid, grid + 3, this->grid);
}

bool Executor::runBlock(unsigned x, unsigned y, unsigned z) {
  block[0] = x;
  block[1] = y;
  block[2] = z;
  for (auto [i, slot] : llvm::enumerate(kernel.argSlots))
    slots[slot].assign({static_cast<double>(i), 0.0});
  return run(kernel.body);
}

bool Executor::fail(const Instr &in, const llvm::Twine &message) {
  error = (in.op->getName().getStringRef() + " " + message).str();
  return false;
}

bool Executor::run(const std::vector<Instr> &instrs) {
  for (const Instr &in : instrs)
    if (!exec(in))
      return false;
  return true;
}

template <typename F> void Executor::unary(const Instr &in, F f) {
  const std::vector<double> &a = slots[in.operands[0]];
  std::vector<double> &r = slots[in.results[0]];
  r.resize(a.size());
  for (size_t i = 0, e = a.size(); i < e; ++i)
    r[i] = f(a[i]);
  roundAll(in.elem, r);
}

template <typename F> void Executor::binary(const Instr &in, F f) {
  const std::vector<double> &a = slots[in.operands[0]];
  const std::vector<double> &b = slots[in.operands[1]];
  std::vector<double> &r = slots[in.results[0]];
  r.resize(a.size());
  for (size_t i = 0, e = a.size(); i < e; ++i)
    r[i] = f(a[i], b[i]);
  roundAll(in.elem, r);
}

bool Executor::exec(const Instr &in) {
  auto result = [&](unsigned i = 0) -> std::vector<double> & {
    return slots[in.results[i]];
  };
  switch (in.opcode) {
  case Opcode::Constant:
    result() = in.constant;
    return true;
  case Opcode::MakeToken:
    result().clear();
    return true;
  case Opcode::BlockId:
  case Opcode::NumBlocks: {
    const unsigned *values = in.opcode == Opcode::BlockId ? block : grid;
    for (unsigned i = 0; i < 3; ++i)
      result(i).assign(1, values[i]);
    return true;
  }
  case Opcode::Copy:
    result() = slots[in.operands[0]];
    return true;
  case Opcode::Load:
  case Opcode::Store:
    return access(in, in.opcode == Opcode::Store);
  case Opcode::MmaF:
    mmaf(in);
    return true;
  case Opcode::For:
    return loop(in);
  case Opcode::AddF:
    binary(in, [](double a, double b) { return a + b; });
    return true;
  case Opcode::SubF:
    binary(in, [](double a, double b) { return a - b; });
    return true;
  case Opcode::MulF:
    binary(in, [](double a, double b) { return a * b; });
    return true;
  case Opcode::DivF:
    binary(in, [](double a, double b) { return a / b; });
    return true;
  case Opcode::MaxF:
  case Opcode::MinF: {
    // `ordered` holds propagate_nan: NaN if either is NaN, else (maxnum,
    // minnum) the other operand.
    bool max = in.opcode == Opcode::MaxF, propagate = in.ordered;
    binary(in, [max, propagate](double a, double b) {
      if (std::isnan(a) || std::isnan(b)) {
        if (propagate || (std::isnan(a) && std::isnan(b)))
          return std::numeric_limits<double>::quiet_NaN();
        return std::isnan(a) ? b : a;
      }
      if (a == b) // +0 is larger than -0
        return std::signbit(a) == max ? b : a;
      return (a > b) == max ? a : b;
    });
    return true;
  }
  case Opcode::NegF:
    unary(in, [](double a) { return -a; });
    return true;
  case Opcode::Exp:
    unary(in, [](double a) { return std::exp(a); });
    return true;
  case Opcode::Log:
    unary(in, [](double a) { return std::log(a); });
    return true;
  case Opcode::Iota: {
    std::vector<double> &r = result();
    r.resize(in.numElements);
    for (int64_t i = 0; i < in.numElements; ++i)
      r[i] = static_cast<double>(i);
    return true;
  }
  case Opcode::Reduce:
    return reduce(in);
  case Opcode::TanH:
    unary(in, [](double a) { return std::tanh(a); });
    return true;
  case Opcode::Sqrt:
    unary(in, [](double a) { return std::sqrt(a); });
    return true;
  case Opcode::Rsqrt:
    unary(in, [](double a) { return 1 / std::sqrt(a); });
    return true;
  case Opcode::FToF:
    unary(in, [](double a) { return a; });
    return true;
  case Opcode::Broadcast:
    broadcast(in);
    return true;
  case Opcode::AbsF:
    unary(in, [](double a) { return std::fabs(a); });
    return true;
  case Opcode::Fma: {
    const std::vector<double> &a = slots[in.operands[0]];
    const std::vector<double> &b = slots[in.operands[1]];
    const std::vector<double> &c = slots[in.operands[2]];
    std::vector<double> &r = result();
    r.resize(a.size());
    // Exact in double for f32 and narrower operands, then rounded once.
    for (size_t i = 0, e = a.size(); i < e; ++i)
      r[i] = std::fma(a[i], b[i], c[i]);
    roundAll(in.elem, r);
    return true;
  }
  case Opcode::CmpF:
  case Opcode::CmpI: {
    // Integers are held exactly as doubles: one comparison for both.
    const std::vector<double> &a = slots[in.operands[0]];
    const std::vector<double> &b = slots[in.operands[1]];
    std::vector<double> &r = result();
    r.resize(a.size());
    for (size_t i = 0, e = a.size(); i < e; ++i) {
      bool value;
      if (std::isnan(a[i]) || std::isnan(b[i])) {
        value = !in.ordered;
      } else {
        switch (in.predicate) {
        case 0:
          value = a[i] == b[i];
          break;
        case 1:
          value = a[i] != b[i];
          break;
        case 2:
          value = a[i] < b[i];
          break;
        case 3:
          value = a[i] <= b[i];
          break;
        case 4:
          value = a[i] > b[i];
          break;
        default:
          value = a[i] >= b[i];
          break;
        }
      }
      r[i] = value ? 1 : 0;
    }
    return true;
  }
  case Opcode::AddI:
  case Opcode::MulI:
  case Opcode::DivI:
  case Opcode::RemI: {
    const std::vector<double> &a = slots[in.operands[0]];
    const std::vector<double> &b = slots[in.operands[1]];
    std::vector<double> &r = result();
    r.resize(a.size());
    for (size_t i = 0, e = a.size(); i < e; ++i) {
      auto x = static_cast<int64_t>(a[i]), y = static_cast<int64_t>(b[i]);
      if ((in.opcode == Opcode::DivI || in.opcode == Opcode::RemI) && y == 0)
        return fail(in, "divides by zero");
      int64_t v = in.opcode == Opcode::AddI   ? x + y
                  : in.opcode == Opcode::MulI ? x * y
                  : in.opcode == Opcode::DivI ? x / y
                                              : x % y;
      // Wrapped to the element type's width, as the hardware does.
      if (in.elem == Elem::I32)
        v = static_cast<int32_t>(static_cast<uint32_t>(v));
      r[i] = static_cast<double>(v);
    }
    return true;
  }
  case Opcode::Offset: {
    // A scalar pointer: (buffer index, byte offset) advanced by elements.
    const std::vector<double> &ptr = slots[in.operands[0]];
    double elements = slots[in.operands[1]][0];
    std::vector<double> &r = result();
    r = ptr;
    r[1] = ptr[1] + elements * in.pointeeBytes;
    return true;
  }
  case Opcode::Select: {
    const std::vector<double> &c = slots[in.operands[0]];
    const std::vector<double> &t = slots[in.operands[1]];
    const std::vector<double> &f = slots[in.operands[2]];
    std::vector<double> &r = result();
    r.resize(c.size());
    for (size_t i = 0, e = c.size(); i < e; ++i)
      r[i] = c[i] != 0 ? t[i] : f[i];
    return true;
  }
  }
  return fail(in, "has no implementation");
}

bool Executor::access(const Instr &in, bool isStore) {
  const ViewAccess &v = in.view;
  const std::vector<double> &viewValue = slots[in.operands[isStore ? 1 : 0]];
  size_t bufferIndex = static_cast<size_t>(viewValue[0]);
  int64_t base = static_cast<int64_t>(viewValue[1]);
  const InterpreterBuffer &buffer = buffers[bufferIndex];
  const char *verb = isStore ? "writes" : "reads";

  int rank = v.tileShape.size();
  Shape start(rank);
  for (int i = 0; i < rank; ++i) {
    int64_t index = static_cast<int64_t>(slots[in.index[i]][0]);
    if (index < 0 || index >= v.gridExtent[i])
      return fail(in, "index " + llvm::Twine(index) + " of tile dimension " +
                          llvm::Twine(i) +
                          " is outside the view's tile grid of " +
                          llvm::Twine(v.gridExtent[i]) + " tiles");
    start[i] = index * v.tileShape[i];
  }
  int64_t end;
  if (v.spanBytes < 0 || llvm::AddOverflow(base, v.spanBytes, end))
    return fail(in, "addresses overflow 64 bits");

  const std::vector<double> *source =
      isStore ? &slots[in.operands[0]] : nullptr;
  std::vector<double> *dest = isStore ? nullptr : &slots[in.results[0]];
  if (dest)
    dest->resize(v.numElements);
  double pad = v.padding         ? *v.padding
               : isFloat(v.elem) ? std::numeric_limits<double>::quiet_NaN()
                                 : 0;
  auto *bytes = static_cast<unsigned char *>(buffer.data);
  int64_t size = static_cast<int64_t>(buffer.bytes);

  // Row by row of the tile's innermost dimension: the outer dimensions'
  // coordinates in `t`, the row's first element offset and valid length.
  int64_t inner = rank ? v.tileShape[rank - 1] : 1;
  int64_t innerStart = rank ? start[rank - 1] : 0;
  int64_t innerExtent = rank ? v.extent[rank - 1] : 1;
  int64_t innerStride = rank ? v.stride[rank - 1] : 0;
  Shape t(std::max(rank - 1, 0), 0);
  for (int64_t e = 0; e < v.numElements; e += inner) {
    bool valid = true;
    int64_t offset = innerStart * innerStride;
    for (int i = 0; i + 1 < rank; ++i) {
      int64_t c = start[i] + t[i];
      valid &= c < v.extent[i];
      offset += c * v.stride[i];
    }
    int64_t count =
        valid ? std::clamp<int64_t>(innerExtent - innerStart, 0, inner) : 0;
    for (int64_t j = 0; j < count; ++j) {
      int64_t at = base + (offset + j * innerStride) * v.elemBytes;
      if (at < 0 || at + v.elemBytes > size)
        return fail(in, llvm::Twine(verb) + " element at byte offset " +
                            llvm::Twine(at) + " of a buffer of " +
                            llvm::Twine(size) + " bytes (kernel argument " +
                            llvm::Twine(bufferIndex) + ")");
      if (isStore)
        encode(v.elem, (*source)[e + j], bytes + at);
      else
        (*dest)[e + j] = decode(v.elem, bytes + at, half);
    }
    if (dest)
      std::fill(dest->begin() + e + count, dest->begin() + e + inner, pad);
    for (int i = rank - 2; i >= 0; --i) {
      if (++t[i] < v.tileShape[i])
        break;
      t[i] = 0;
    }
  }
  if (!isStore)
    slots[in.results[1]].clear();
  else
    slots[in.results[0]].clear();
  return true;
}

void Executor::mmaf(const Instr &in) {
  const double *a = slots[in.operands[0]].data();
  const double *b = slots[in.operands[1]].data();
  std::vector<double> &r = slots[in.results[0]];
  r = slots[in.operands[2]];
  int64_t m = in.m, n = in.n, k = in.k;
  for (int64_t p = 0; p < in.batch; ++p) {
    const double *ap = a + p * m * k, *bp = b + p * k * n;
    double *rp = r.data() + p * m * n;
    for (int64_t i = 0; i < m; ++i) {
      double *row = rp + i * n;
      for (int64_t q = 0; q < k; ++q) {
        double x = ap[i * k + q];
        const double *brow = bp + q * n;
        for (int64_t j = 0; j < n; ++j)
          row[j] += x * brow[j];
      }
    }
  }
  roundAll(in.elem, r);
}

void Executor::broadcast(const Instr &in) {
  const std::vector<double> &source = slots[in.operands[0]];
  std::vector<double> &r = slots[in.results[0]];
  int rank = in.shape.size();
  unsigned w = in.width;
  r.resize(in.numElements * w);
  Shape t(rank, 0);
  for (int64_t e = 0; e < in.numElements; ++e) {
    int64_t from = 0;
    for (int i = 0; i < rank; ++i)
      from += t[i] * in.sourceStrides[i];
    std::copy_n(source.begin() + from * w, w, r.begin() + e * w);
    for (int i = rank - 1; i >= 0; --i) {
      if (++t[i] < in.shape[i])
        break;
      t[i] = 0;
    }
  }
}

bool Executor::loop(const Instr &in) {
  int64_t lb = static_cast<int64_t>(slots[in.operands[0]][0]);
  int64_t ub = static_cast<int64_t>(slots[in.operands[1]][0]);
  int64_t step = static_cast<int64_t>(slots[in.operands[2]][0]);
  if (step <= 0)
    return fail(in, "step " + llvm::Twine(step) + " is not positive");
  size_t numIter = in.yields.size();
  for (size_t i = 0; i < numIter; ++i)
    slots[in.bodyArgs[i + 1]] = slots[in.operands[i + 3]];
  // The induction variable is 64-bit: it stays below `ub` (an i32) inside
  // the body and cannot wrap.
  std::vector<std::vector<double>> next(numIter);
  for (int64_t iv = lb; iv < ub; iv += step) {
    slots[in.bodyArgs[0]].assign(1, static_cast<double>(iv));
    if (!run(in.body))
      return false;
    // Through `next`: a continue may pass iter values on permuted.
    for (size_t i = 0; i < numIter; ++i)
      next[i] = slots[in.yields[i]];
    for (size_t i = 0; i < numIter; ++i)
      std::swap(slots[in.bodyArgs[i + 1]], next[i]);
  }
  for (size_t i = 0; i < numIter; ++i)
    slots[in.results[i]] = slots[in.bodyArgs[i + 1]];
  return true;
}

bool Executor::reduce(const Instr &in) {
  size_t n = in.yields.size();
  int64_t outer = 1, inner = 1, length = in.shape[in.reduceDim];
  for (int64_t d = 0; d < in.reduceDim; ++d)
    outer *= in.shape[d];
  for (int64_t d = in.reduceDim + 1, e = in.shape.size(); d < e; ++d)
    inner *= in.shape[d];
  for (size_t i = 0; i < n; ++i)
    slots[in.results[i]].assign(outer * inner, 0.0);
  // Folded in order from the identity: the hardware's tree differs only in
  // rounding.
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t p = 0; p < inner; ++p) {
      for (size_t i = 0; i < n; ++i)
        slots[in.bodyArgs[i]].assign(1, in.constant[i]);
      for (int64_t j = 0; j < length; ++j) {
        for (size_t i = 0; i < n; ++i)
          slots[in.bodyArgs[n + i]].assign(
              1, slots[in.operands[i]][(o * length + j) * inner + p]);
        if (!run(in.body))
          return false;
        for (size_t i = 0; i < n; ++i)
          slots[in.bodyArgs[i]].assign(1, slots[in.yields[i]][0]);
      }
      for (size_t i = 0; i < n; ++i)
        slots[in.results[i]][o * inner + p] = slots[in.bodyArgs[i]][0];
    }
  }
  return true;
}
