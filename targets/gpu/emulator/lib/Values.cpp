//===- Values.cpp - Element kinds, conversions, combinations --------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Lanes hold the bit patterns of their elements; these functions convert
// them (round to nearest even) and combine them as reductions do.
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
// Element kinds and conversions
//===----------------------------------------------------------------------===//

unsigned mlir::pb::emulator::getBits(EK kind) {
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

std::optional<EK> mlir::pb::emulator::getElementKind(Type type) {
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

float mlir::pb::emulator::halfToFloat(uint16_t h) {
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

float mlir::pb::emulator::bfloatToFloat(uint16_t b) {
  uint32_t bits = uint32_t(b) << 16;
  float result;
  std::memcpy(&result, &bits, 4);
  return result;
}

uint16_t mlir::pb::emulator::floatToHalf(float value) {
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

uint16_t mlir::pb::emulator::floatToBfloat(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  if ((bits & 0x7fffffff) > 0x7f800000)
    return (bits >> 16) | 0x40;
  uint32_t rounding = 0x7fff + ((bits >> 16) & 1);
  return (bits + rounding) >> 16;
}

double mlir::pb::emulator::toDouble(uint64_t bits, EK kind) {
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

uint64_t mlir::pb::emulator::fromDouble(double value, EK kind) {
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

int64_t mlir::pb::emulator::toSigned(uint64_t bits, EK kind) {
  unsigned width = getBits(kind);
  if (width == 64)
    return int64_t(bits);
  return int64_t(bits << (64 - width)) >> (64 - width);
}

uint64_t mlir::pb::emulator::truncate(uint64_t value, EK kind) {
  unsigned width = getBits(kind);
  return width == 64 ? value : value & ((uint64_t(1) << width) - 1);
}

//===----------------------------------------------------------------------===//
// Operation codes
//===----------------------------------------------------------------------===//

std::optional<Combine> mlir::pb::emulator::getCombine(llvm::StringRef name) {
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

double mlir::pb::emulator::maxNum(double a, double b) {
  if (std::isnan(a))
    return b;
  if (std::isnan(b))
    return a;
  return a > b ? a : (b > a ? b : (std::signbit(a) ? b : a));
}
double mlir::pb::emulator::minNum(double a, double b) {
  if (std::isnan(a))
    return b;
  if (std::isnan(b))
    return a;
  return a < b ? a : (b < a ? b : (std::signbit(a) ? a : b));
}
double mlir::pb::emulator::maximum(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return NAN;
  return maxNum(a, b);
}
double mlir::pb::emulator::minimum(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return NAN;
  return minNum(a, b);
}

/// Combines two lanes of kind `kind`.
uint64_t mlir::pb::emulator::combineLanes(int64_t how, uint64_t a, uint64_t b,
                                          EK kind) {
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
