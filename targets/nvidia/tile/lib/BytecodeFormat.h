//===- BytecodeFormat.h - Tile IR bytecode constants ------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The numbers of the CUDA Tile IR bytecode format (version 13.4) that the
// writer and the reader share: section ids, type codes, opcodes, and the
// varint and little-endian helpers.
//
//===----------------------------------------------------------------------===//

#ifndef PB_TILEIR_BYTECODEFORMAT_H
#define PB_TILEIR_BYTECODEFORMAT_H

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace mlir::pb::tileir::bytecode {

using Buffer = llvm::SmallVector<char, 256>;

inline constexpr char kMagic[8] = {0x7f, 'T', 'i', 'l', 'e', 'I', 'R', 0};

enum Section : uint8_t {
  kEndOfBytecode = 0x00,
  kStringSection = 0x01,
  kFuncSection = 0x02,
  kDebugSection = 0x03,
  kConstantSection = 0x04,
  kTypeSection = 0x05,
  kGlobalSection = 0x06,
  kNumSections = 0x07,
};
inline constexpr uint8_t kSectionAligned = 0x80;
inline constexpr char kPadByte = static_cast<char>(0xcb);

// Type codes: simple types are one byte (FNV8 is two, not used here).
enum TypeCode : uint8_t {
  kI1 = 0x00,
  kI8 = 0x01,
  kI16 = 0x02,
  kI32 = 0x03,
  kI64 = 0x04,
  kF16 = 0x05,
  kBF16 = 0x06,
  kF32 = 0x07,
  kTF32 = 0x08,
  kF64 = 0x09,
  kF8E4M3FN = 0x0a,
  kF8E5M2 = 0x0b,
  kPointerType = 0x0c,
  kTileType = 0x0d,
  kTensorViewType = 0x0e,
  kPartitionViewType = 0x0f,
  kFunctionType = 0x10,
  kTokenType = 0x11,
};

/// A function's flag byte: bit 1, an entry (kernel); bit 2, with hints.
inline constexpr char kFunctionIsEntry = 0x02;
inline constexpr uint8_t kFunctionHasHints = 0x04;

/// Tags of self-describing attributes (a reduce's identities).
inline constexpr char kFloatAttrTag = 0x02;

enum Opcode : unsigned {
  kAbsF = 0,
  kCmpF = 14,
  kFma = 40,
  kOffset = 81,
  kAddI = 3,
  kMulI = 78,
  kDivI = 21,
  kRemI = 90,
  kSelect = 95,
  kAddF = 2,
  kBroadcast = 11,
  kConstant = 16,
  kContinue = 17,
  kDivF = 20,
  kExp = 23,
  kFor = 41,
  kFToF = 42,
  kGetNumTileBlocks = 46,
  kGetTileBlockId = 48,
  kLoadViewTko = 62,
  kMakePartitionView = 66,
  kMakeTensorView = 67,
  kMakeToken = 68,
  kMaxF = 69,
  kMinF = 71,
  kMmaF = 73,
  kMulF = 76,
  kNegF = 79,
  kReshape = 91,
  kReturn = 92,
  kRsqrt = 93,
  kSqrt = 100,
  kStoreViewTko = 102,
  kSubF = 103,
  kTanH = 106,
  kCmpI = 15,
  kIota = 58,
  kLog = 63,
  kReduce = 88,
  kYield = 109,
};

inline void encodeVarint(uint64_t x, Buffer &buf) {
  while (x >= 0x80) {
    buf.push_back(static_cast<char>((x & 0x7f) | 0x80));
    x >>= 7;
  }
  buf.push_back(static_cast<char>(x));
}

inline void appendLittleEndian(uint64_t x, unsigned bytes, Buffer &buf) {
  for (unsigned i = 0; i < bytes; ++i)
    buf.push_back(static_cast<char>((x >> (8 * i)) & 0xff));
}

/// A count, then each value in `bytes` little-endian bytes.
inline void encodeIntList(llvm::ArrayRef<int64_t> values, unsigned bytes,
                          Buffer &buf) {
  encodeVarint(values.size(), buf);
  for (int64_t v : values)
    appendLittleEndian(static_cast<uint64_t>(v), bytes, buf);
}

/// Pads with the format's filler byte to a multiple of `alignment` (of the
/// buffer's size: sections start aligned in the file).
inline void padTo(Buffer &buf, unsigned alignment) {
  while (buf.size() % alignment)
    buf.push_back(kPadByte);
}

/// id (with the aligned bit), length, alignment, padding, contents.
inline void writeSection(Section id, unsigned alignment, const Buffer &contents,
                         Buffer &out) {
  out.push_back(static_cast<char>(id | (alignment > 1 ? kSectionAligned : 0)));
  encodeVarint(contents.size(), out);
  if (alignment > 1) {
    encodeVarint(alignment, out);
    padTo(out, alignment);
  }
  out.append(contents.begin(), contents.end());
}

/// The one-byte code of a simple (non-composite) type, if it is one.
std::optional<uint8_t> getSimpleTypeCode(Type type);

/// The type a simple type code names (null for an unknown code).
Type getSimpleType(uint8_t code, MLIRContext *context);

} // namespace mlir::pb::tileir::bytecode

#endif // PB_TILEIR_BYTECODEFORMAT_H
