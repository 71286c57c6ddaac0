//===- Wgmma.cpp - wgmma.mma_async over a warpgroup -----------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// wgmma.mma_async.sync.aligned.m64nNk{16,8}.f32.{f16,bf16,tf32} with both
// multiplicands in shared memory, computed from the PTX ISA (section numbers
// of PTX ISA 9.0, "Parallel Thread Execution ISA", 9.7.15 "Asynchronous
// Warpgroup Level Matrix Multiply-Accumulate Instructions"):
//
//  * 9.7.15.5.2 "wgmma.mma_async": D = A x B + D, or D = A x B when scale-d
//    is false; A is M x K, B is K x N, M = 64; imm-trans-a / imm-trans-b
//    (0 or 1) transpose A / B, only for .f16 and .bf16 operands read through
//    matrix descriptors;
//  * 9.7.15.5.1.2 "Shared Memory Matrix Layout": imm-trans 0 means K-major,
//    1 means M-major (A) or N-major (B); a matrix is made of swizzle atoms
//    whose rows are 16-byte units ("128-bit elements");
//  * 9.7.15.5.1.2.1 "Major-ness supported by Strides", with its tables
//    9.7.15.5.1.2.1.1 "Leading Dimension Byte Offset", 9.7.15.5.1.2.1.2
//    "Stride Dimension Byte Offset" and 9.7.15.5.1.2.1.3 "Canonical Layouts"
//    (the layouts as CuTe layouts composed with Swizzle<B, 4, 3>);
//  * 9.7.15.5.1.2.2 "Matrix Descriptor Format": the 64-bit descriptor;
//  * 9.7.15.5.1.1.1 / 9.7.15.5.1.1.2 "Matrix Fragments for
//    wgmma.mma_async.m64nNk16 / .m64nNk8" (Figures 149 and 151): the
//    registers of the accumulator D held by each thread.
//
//===----------------------------------------------------------------------===//

#include "MatrixOps.h"

#include "llvm/ADT/Twine.h"

#include <cstring>
#include <vector>

using namespace mlir::pb::emulator;

namespace {

//===----------------------------------------------------------------------===//
// Element conversions
//===----------------------------------------------------------------------===//

float bitsToFloat(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

uint32_t floatToBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

//===----------------------------------------------------------------------===//
// Matrix descriptors (9.7.15.5.1.2.2 "Matrix Descriptor Format")
//===----------------------------------------------------------------------===//

/// A decoded matrix descriptor. Bits 13-0 hold the start address, 29-16 the
/// leading dimension byte offset (LBO), 45-32 the stride dimension byte
/// offset (SBO), each as matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4;
/// 51-49 the matrix base offset; 63-62 the swizzling mode (0 none, 1 128B,
/// 2 64B, 3 32B). The other bits are not part of the format.
struct Descriptor {
  uint64_t start = 0;         ///< Shared-window byte address.
  uint64_t leadingBytes = 0;  ///< LBO in bytes.
  uint64_t strideBytes = 0;   ///< SBO in bytes.
  unsigned baseOffset = 0;    ///< Bits 51-49.
  unsigned swizzleChunks = 1; ///< 16-byte units per swizzle row: 1, 2, 4, 8.
};

bool decodeDescriptor(uint64_t bits, const char *operand, Descriptor &result,
                      std::string &error) {
  // Bits 15-14, 31-30, 48-46 and 61-52 are outside every field of the
  // format (46-48 is the fixed 0b001 of tcgen05's descriptor, not wgmma's).
  constexpr uint64_t fieldBits =
      (uint64_t(0x3fff) << 0) | (uint64_t(0x3fff) << 16) |
      (uint64_t(0x3fff) << 32) | (uint64_t(0x7) << 49) | (uint64_t(0x3) << 62);
  if (bits & ~fieldBits) {
    error = (llvm::Twine("the matrix descriptor of ") + operand + " (0x" +
             llvm::Twine::utohexstr(bits) +
             ") has bits set outside its fields (0x" +
             llvm::Twine::utohexstr(bits & ~fieldBits) +
             "): only bits 0-13, 16-29, 32-45, 49-51 and 62-63 are defined")
                .str();
    return false;
  }
  result.start = (bits & 0x3fff) << 4;
  result.leadingBytes = ((bits >> 16) & 0x3fff) << 4;
  result.strideBytes = ((bits >> 32) & 0x3fff) << 4;
  result.baseOffset = (bits >> 49) & 0x7;
  static const unsigned chunksOfMode[4] = {1, 8, 4, 2};
  result.swizzleChunks = chunksOfMode[(bits >> 62) & 0x3];
  // "Matrix base offset. This is valid for all swizzling modes except the
  // no-swizzle mode."
  if (result.swizzleChunks == 1 && result.baseOffset != 0) {
    error = (llvm::Twine("the matrix descriptor of ") + operand + " (0x" +
             llvm::Twine::utohexstr(bits) + ") has matrix base offset " +
             llvm::Twine(result.baseOffset) +
             " without swizzling; the base offset is only valid with a "
             "swizzling mode")
                .str();
    return false;
  }
  return true;
}

/// The swizzle of the canonical layouts (9.7.15.5.1.2.1.3): Swizzle<B, 4, 3>
/// with 2^B = the swizzle row in 16-byte units (B = 0 none, 1 for 32B, 2 for
/// 64B, 3 for 128B), applied to the byte address: address bits [4, 4 + B),
/// the 16-byte unit within a 128-byte line, are XORed with bits [7, 7 + B),
/// the 128-byte line within the repeating pattern of 256, 512 or 1024 bytes.
/// The pattern starts where the line bits are 0 when its start is aligned to
/// its size (9.7.15.5.1.2.2: 1024-, 512- or 256-byte boundary, base offset
/// 0); otherwise the descriptor's base offset is (pattern start >> 7) & 7,
/// and the line within the pattern is counted from there.
uint64_t swizzle(const Descriptor &desc, uint64_t address) {
  uint64_t mask = desc.swizzleChunks - 1;
  uint64_t line = ((address >> 7) - desc.baseOffset) & mask;
  return address ^ (line << 4);
}

//===----------------------------------------------------------------------===//
// Canonical layouts (9.7.15.5.1.2.1.3 "Canonical Layouts")
//===----------------------------------------------------------------------===//

/// The byte offset from the start address, before swizzling, of element
/// (mn, k) of an operand, mn its row of A (M) or column of B (N) and k its
/// index along K. In units of elements, with T = 16 bytes / element size and
/// W = the swizzle row in 16-byte units (1 without swizzling), the canonical
/// layouts are, for shape (MN, K):
///
///   K-major, no swizzling:   ((8,m),(T,2k)) : ((1T,SBO),(1,LBO))
///   K-major, swizzled:       ((8,m),(T,2k)) : ((WT,SBO),(1,T))
///   MN-major, no swizzling:  ((T,1,m),(8,k)) : ((1,T,SBO),(1T,LBO))
///   MN-major, swizzled:      ((T,W,m),(8,k)) : ((1,T,LBO),(WT,SBO))
///
/// so the rows of 16 bytes of a swizzle atom are 16 W bytes apart, the
/// 16-byte units along a row are contiguous, LBO is the K step between
/// 16-byte units of K-major matrices without swizzling (unused, "assumed to
/// be 1", when swizzled) and the step between groups of W units along MN of
/// swizzled MN-major ones, and SBO the step between groups of 8 rows.
uint64_t elementOffset(const Descriptor &desc, bool mnMajor,
                       unsigned elementBytes, unsigned mn, unsigned k) {
  unsigned t = 16 / elementBytes;
  uint64_t w = desc.swizzleChunks;
  bool swizzled = w != 1;
  if (!mnMajor) {
    // Rows along MN, 16-byte units along K.
    uint64_t offset = (mn % 8) * 16 * w + (mn / 8) * desc.strideBytes;
    uint64_t unit = k / t;
    offset += swizzled ? unit * 16 : unit * desc.leadingBytes;
    return offset + (k % t) * elementBytes;
  }
  // Rows along K, 16-byte units along MN.
  uint64_t unit = mn / t;
  uint64_t offset = (mn % t) * elementBytes;
  if (!swizzled)
    return offset + unit * desc.strideBytes + (k % 8) * 16 +
           (k / 8) * desc.leadingBytes;
  return offset + (unit % w) * 16 + (unit / w) * desc.leadingBytes +
         (k % 8) * 16 * w + (k / 8) * desc.strideBytes;
}

/// Reads the `rows` x `depth` (MN x K) operand described by `bits` into
/// `values` (row-major, values[mn * depth + k]), 16 bytes at a time: the
/// swizzle only permutes 16-byte units, so each unit of the canonical layout
/// stays contiguous.
bool readOperand(uint64_t bits, const char *operand, bool mnMajor,
                 MatrixType type, unsigned rows, unsigned depth,
                 const SharedReader &read, std::vector<float> &values,
                 std::string &error) {
  Descriptor desc;
  if (!decodeDescriptor(bits, operand, desc, error))
    return false;
  unsigned elementBytes = type == MatrixType::TF32 ? 4 : 2;
  unsigned t = 16 / elementBytes;
  values.assign(size_t(rows) * depth, 0.0f);
  auto convert = [&](const uint8_t *unit, unsigned i) {
    // tf32 operands: "wgmma.mma_async operation involving type .tf32 will
    // truncate lower 13 bits of the 32-bit input data before multiplication
    // is issued" (9.7.15.5.2, "Precision and rounding").
    uint64_t element = 0;
    std::memcpy(&element, unit + elementBytes * i, elementBytes);
    return matrixElementToFloat(element, type);
  };
  uint8_t unit[16];
  auto readUnit = [&](unsigned mn, unsigned k) {
    uint64_t address = swizzle(
        desc, desc.start + elementOffset(desc, mnMajor, elementBytes, mn, k));
    if (read(address, 16, unit))
      return true;
    error = (llvm::Twine("reading 16 bytes of matrix ") + operand +
             " at shared address " + llvm::Twine(address) + " failed")
                .str();
    return false;
  };
  if (!mnMajor) {
    // One unit holds T consecutive elements of a row along K.
    for (unsigned mn = 0; mn < rows; ++mn)
      for (unsigned k = 0; k < depth; k += t) {
        if (!readUnit(mn, k))
          return false;
        for (unsigned i = 0; i < t; ++i)
          values[size_t(mn) * depth + k + i] = convert(unit, i);
      }
    return true;
  }
  // One unit holds T consecutive elements along MN at one k.
  for (unsigned k = 0; k < depth; ++k)
    for (unsigned mn = 0; mn < rows; mn += t) {
      if (!readUnit(mn, k))
        return false;
      for (unsigned i = 0; i < t; ++i)
        values[size_t(mn + i) * depth + k] = convert(unit, i);
    }
  return true;
}

const char *typeName(MatrixType type) {
  switch (type) {
  case MatrixType::F16:
    return "f16";
  case MatrixType::BF16:
    return "bf16";
  case MatrixType::TF32:
    return "tf32";
  case MatrixType::F32:
    return "f32";
  }
  return "?";
}

} // namespace

//===----------------------------------------------------------------------===//
// wgmma.mma_async
//===----------------------------------------------------------------------===//

bool mlir::pb::emulator::wgmma(
    unsigned n, unsigned k, MatrixType type, bool transA, bool transB,
    uint64_t descA, uint64_t descB, bool scaleD, const SharedReader &read,
    llvm::MutableArrayRef<llvm::SmallVector<uint64_t, 64>> accumulators,
    std::string &error) {
  constexpr unsigned m = 64;
  constexpr unsigned warpgroupSize = 128;
  // 9.7.15.5.2: .f16/.bf16 are m64nNk16 and .tf32 is m64nNk8, each with
  // N = 8, 16, ..., 256 for an .f32 accumulator; imm-trans-a/b are only
  // accepted with .f16/.bf16.
  unsigned expectedK = 0;
  switch (type) {
  case MatrixType::F16:
  case MatrixType::BF16:
    expectedK = 16;
    break;
  case MatrixType::TF32:
    expectedK = 8;
    break;
  case MatrixType::F32:
    error = "wgmma.mma_async has no f32 multiplicands (f32 registers are "
            "read as tf32)";
    return false;
  }
  if (k != expectedK) {
    error = (llvm::Twine("the ") + typeName(type) + " shape is m64nNk" +
             llvm::Twine(expectedK) + ", not k = " + llvm::Twine(k))
                .str();
    return false;
  }
  if (n < 8 || n > 256 || n % 8 != 0) {
    error = ("N must be a multiple of 8 from 8 to 256, not " + llvm::Twine(n))
                .str();
    return false;
  }
  if (type == MatrixType::TF32 && (transA || transB)) {
    error = "imm-trans-a and imm-trans-b must be 0 (K-major) for tf32: the "
            "transpose is only supported for f16 and bf16";
    return false;
  }
  if (accumulators.size() != warpgroupSize) {
    error = ("the accumulators of " + llvm::Twine(accumulators.size()) +
             " threads were given, not of a warpgroup of 128")
                .str();
    return false;
  }
  for (unsigned t = 0; t < warpgroupSize; ++t)
    if (accumulators[t].size() != n / 2) {
      error = ("thread " + llvm::Twine(t) + " has " +
               llvm::Twine(accumulators[t].size()) +
               " accumulator registers; m64n" + llvm::Twine(n) +
               " with .f32 accumulators has " + llvm::Twine(n / 2))
                  .str();
      return false;
    }

  // A is M x K, stored K-major unless transA (M-major); B is K x N, stored
  // K-major (its columns along K) unless transB (N-major). Both are read as
  // (MN, K): a[row * k + kk] and b[col * k + kk].
  std::vector<float> a, b;
  if (!readOperand(descA, "A", transA, type, m, k, read, a, error) ||
      !readOperand(descB, "B", transB, type, n, k, read, b, error))
    return false;

  // The accumulator fragment (9.7.15.5.1.1.1 / 9.7.15.5.1.1.2, Figures 149
  // and 151): warp w = t / 32 of the warpgroup holds rows 16 w .. 16 w + 15
  // of D. Within them, lane l holds, for each block j of 8 columns, the
  // registers d[4j .. 4j + 3]: d[4j] and d[4j + 1] in row 16 w + l / 4,
  // d[4j + 2] and d[4j + 3] in row 16 w + l / 4 + 8, each pair in columns
  // 8 j + 2 (l % 4) and 8 j + 2 (l % 4) + 1. That is, register i holds
  //   D[16 w + l / 4 + 8 ((i / 2) % 2)][8 (i / 4) + 2 (l % 4) + i % 2].
  // The ISA leaves the accumulation order and rounding unspecified
  // (9.7.15.5.2, "Precision and rounding"); here each element starts from D
  // (or 0) and adds the products in K order, rounding to f32 at each step.
  for (unsigned t = 0; t < warpgroupSize; ++t) {
    unsigned warp = t / 32, lane = t % 32;
    for (unsigned i = 0; i < n / 2; ++i) {
      unsigned row = 16 * warp + lane / 4 + 8 * ((i / 2) % 2);
      unsigned col = 8 * (i / 4) + 2 * (lane % 4) + i % 2;
      uint64_t &reg = accumulators[t][i];
      float sum = scaleD ? bitsToFloat(uint32_t(reg)) : 0.0f;
      const float *aRow = &a[size_t(row) * k];
      const float *bCol = &b[size_t(col) * k];
      for (unsigned kk = 0; kk < k; ++kk) {
        // The product of two f16, bf16 or tf32 values is exact in double,
        // and rounding it to float is the single rounding of an f32
        // multiply; keeping it a separate step keeps the compiler from
        // fusing it with the sum.
        float product = float(double(aRow[kk]) * double(bCol[kk]));
        sum += product;
      }
      reg = floatToBits(sum);
    }
  }
  return true;
}
