//===- MatrixOps.h - Warp and warpgroup matrix operations ------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The collective matrix operations of the PTX ISA, computed over the
// registers of all the threads that issue them together. Registers are
// given as the bit patterns of their elements (one uint64_t per element,
// the element's bits in the low bits), in the order the MLIR operations
// hold them. Each function cites the PTX ISA section it implements.
//
//===----------------------------------------------------------------------===//

#ifndef PB_GPU_EMULATOR_MATRIXOPS_H
#define PB_GPU_EMULATOR_MATRIXOPS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <functional>
#include <string>

namespace mlir::pb::emulator {

/// Element types of matrix operands.
enum class MatrixType { F16, BF16, TF32, F32 };

/// A matrix operand element (its bits in the low bits) as a float, exactly:
/// f16 and bf16 widen, tf32 drops the low 13 mantissa bits of its f32 (the
/// bits the tensor cores do not read), f32 is itself.
float matrixElementToFloat(uint64_t bits, MatrixType type);

/// Reads `bytes` bytes of the block's shared memory at shared-window address
/// `address` into `out`. Returns false (after reporting) when the range is
/// outside the block's shared memory or is otherwise invalid; the caller
/// then stops.
using SharedReader =
    std::function<bool(uint64_t address, unsigned bytes, void *out)>;

/// wgmma.mma_async (PTX ISA 9.7.15 "Asynchronous Warpgroup Level Matrix
/// Multiply-Accumulate Instructions"): D = A x B + (scaleD ? D : 0) for one
/// warpgroup of 128 threads, shape m64nNk16 (f16, bf16) or m64nNk8 (tf32),
/// A and B both in shared memory described by 64-bit matrix descriptors
/// (start address, leading- and stride-dimension byte offsets, base offset,
/// swizzle mode: 9.7.15.5.1 "Matrix Descriptor Format" and the canonical
/// layouts and swizzling modes of 9.7.15.5.1.x), `transA`/`transB` the
/// instruction's imm-trans-a / imm-trans-b (0: K-major, 1: MN-major).
/// `accumulators[t]` holds thread t's (warpgroup-relative thread index
/// 0..127) N/2 f32 accumulator registers as float bit patterns, in the
/// order of the register fragment of D (9.7.15.5.1.1 "Register Fragments":
/// the wgmma D fragment for .f32 accumulators); they are updated in place.
/// Products and sums are computed in f32 (tf32 operands: the low 13 bits of
/// each f32 mantissa ignored). Returns false when `read` failed or the
/// descriptor is invalid; `error` then says why.
bool wgmma(unsigned n, unsigned k, MatrixType type, bool transA, bool transB,
           uint64_t descA, uint64_t descB, bool scaleD,
           const SharedReader &read,
           llvm::MutableArrayRef<llvm::SmallVector<uint64_t, 64>> accumulators,
           std::string &error);

} // namespace mlir::pb::emulator

#endif // PB_GPU_EMULATOR_MATRIXOPS_H
