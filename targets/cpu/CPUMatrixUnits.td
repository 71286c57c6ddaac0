//===- CPUMatrixUnits.td - x86-64 register-tile FMA units --*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// CPUs without matrix engines still compute a matrix product as a register
// tile of broadcast FMAs: one A element broadcast times one row of B (a full
// vector register) accumulated into a row of C. Each record is one such
// vector FMA, C[1xN] += A[1x1] * B[1xN], with N the f32 lanes of a register.
// `Intrinsic` is the LLVM intrinsic the FMA is emitted as.
//
// The same FMA takes bf16 and f16 operands into an f32 accumulator: the
// micro-kernel widens them where it packs B's panels and copies A's rows
// (bf16: each 16-bit lane shifted into the high half of a 32-bit lane,
// VPMOVZXWD + VPSLLD; f16: VCVTPH2PS), once per packed element, so the
// FMAs run at the f32 rate on half the bytes of memory traffic.
//
// AVX512-BF16 (Intel Cooper Lake and Sapphire Rapids, AMD Zen 4) adds a
// dot-product form: VDPBF16PS multiplies a pair of bf16 per 32-bit lane,
// K's consecutive pair of A (one pair broadcast to every lane) by the same
// pair of each of 16 columns of B (a B row of 16 VNNI pairs), and adds both
// products to the lane's f32: C[1x16] += A[1x2] * B[2x16], twice the
// multiply-adds of a VFMADD231PS per instruction, on unwidened operands.
//
// AVX512-VNNI's VPDPBUSD likewise multiplies four u8 of A (one quad
// broadcast to every lane) by four s8 of each of 16 columns of B and adds
// the four products to the lane's i32: C[1x16] += A[1x4] * B[4x16]. Signed
// A (linalg's i8 contractions) is offset by 128 into u8, and 128 x B's
// column sums subtracted from the sums.
//
// AMX (Intel Sapphire Rapids and later) is a matrix unit proper: TDPBF16PS
// multiplies a 16x32 bf16 tile of A by a 32x16 tile of B, held as 16 rows of
// 16 K pairs (VNNI), into a 16x16 f32 tile, all in eight tile registers;
// TDPBSSD likewise 16x64 s8 by 64x16 s8 (16 rows of 16 K quads) into i32.
//
// Sources:
//  * Intel 64 and IA-32 Architectures Software Developer's Manual, Vol. 2
//    (VFMADD231PS).
//  * Software Optimization Guide for AMD EPYC 7003 Processors (Zen 3) and
//    Software Optimization Guide for the AMD Zen4 Microarchitecture: FMA
//    latency 4 cycles, two FMA pipes.
//  * Intel 64 and IA-32 Architectures Optimization Reference Manual: FMA
//    latency 4 cycles on Skylake and later (5 on Haswell); "Intel AMX":
//    one TDPBF16PS of 16x16x32 per 16 cycles per core, 8 tile registers of
//    16 rows x 64 bytes; "Intel AVX-512 BF16": VDPBF16PS.
//  * The VDPBF16PS latency (6 cycles) is an estimate: the documents above
//    give none; it is the FMA's 4 plus the pair's addition. VPDPBUSD's (5)
//    likewise.
//
//===----------------------------------------------------------------------===//

/// vfmadd231ps ymm: 8 f32 lanes.
def VFMA_F32_1x8x1_F32
    : PBMatrixUnit<"llvm.fma.v8f32", 1, 8, 1, F32, F32, F32, ThreadScope,
                   RegistersBroadcast, VectorOuterProduct> {
  let Requires = [FeatureFMA, FeatureAVX2];
  let LatencyCycles = 4;
}

/// vfmadd231ps zmm: 16 f32 lanes.
def VFMA_F32_1x16x1_F32
    : PBMatrixUnit<"llvm.fma.v16f32", 1, 16, 1, F32, F32, F32, ThreadScope,
                   RegistersBroadcast, VectorOuterProduct> {
  let Requires = [FeatureFMA, FeatureAVX512];
  let LatencyCycles = 4;
}

/// bf16 operands widened to f32, then vfmadd231ps ymm.
def VFMA_BF16_1x8x1_F32
    : PBMatrixUnit<"llvm.fma.v8f32", 1, 8, 1, BF16, BF16, F32, ThreadScope,
                   RegistersBroadcast, VectorOuterProduct> {
  let Requires = [FeatureFMA, FeatureAVX2];
  let LatencyCycles = 4;
}

/// bf16 operands widened to f32, then vfmadd231ps zmm.
def VFMA_BF16_1x16x1_F32
    : PBMatrixUnit<"llvm.fma.v16f32", 1, 16, 1, BF16, BF16, F32, ThreadScope,
                   RegistersBroadcast, VectorOuterProduct> {
  let Requires = [FeatureFMA, FeatureAVX512];
  let LatencyCycles = 4;
}

/// f16 operands widened to f32 (vcvtph2ps), then vfmadd231ps ymm.
def VFMA_F16_1x8x1_F32
    : PBMatrixUnit<"llvm.fma.v8f32", 1, 8, 1, F16, F16, F32, ThreadScope,
                   RegistersBroadcast, VectorOuterProduct> {
  let Requires = [FeatureFMA, FeatureAVX2, FeatureF16C];
  let LatencyCycles = 4;
}

/// f16 operands widened to f32 (vcvtph2ps), then vfmadd231ps zmm.
def VFMA_F16_1x16x1_F32
    : PBMatrixUnit<"llvm.fma.v16f32", 1, 16, 1, F16, F16, F32, ThreadScope,
                   RegistersBroadcast, VectorOuterProduct> {
  let Requires = [FeatureFMA, FeatureAVX512, FeatureF16C];
  let LatencyCycles = 4;
}

/// tdpbf16ps: C[16x16 f32] += A[16x32 bf16] x B[32x16 bf16], B as 16 rows of
/// 16 column pairs (VNNI); 16 cycles per instruction, 8 tile registers.
def VDPBF16PS_BF16_1x16x2_F32
    : PBMatrixUnit<"llvm.x86.avx512bf16.dpbf16ps.512", 1, 16, 2, BF16, BF16,
                   F32, ThreadScope, RegistersBroadcastGroups, X86VectorDot> {
  let Requires = [FeatureAVX512BF16];
  let LatencyCycles = 6;
  // The 32 zmm registers: accumulators, B's vectors and A's broadcast.
  let OperandRegisters = 32;
}

def VPDPBUSD_I8_1x16x4_I32
    : PBMatrixUnit<"llvm.x86.avx512.vpdpbusd.512", 1, 16, 4, I8, I8, I32,
                   ThreadScope, RegistersBroadcastGroups, AVX512VNNIDot> {
  let Requires = [FeatureAVX512VNNI];
  let LatencyCycles = 5;
  let OperandRegisters = 32;
}

def AMX_BF16_16x16x32_F32
    : PBMatrixUnit<"llvm.x86.tdpbf16ps.internal", 16, 16, 32, BF16, BF16, F32,
                   ThreadScope, TileRegisters, AMXTileMul> {
  let Requires = [FeatureAMXBF16];
  let LatencyCycles = 16;
  let OperandRegisters = 8;
}

/// tdpbssd: C[16x16 i32] += A[16x64 s8] x B[64x16 s8], B as 16 rows of 16
/// column quads (VNNI); 16 cycles per instruction, 8 tile registers.
def AMX_I8_16x16x64_I32
    : PBMatrixUnit<"llvm.x86.tdpbssd.internal", 16, 16, 64, I8, I8, I32,
                   ThreadScope, TileRegisters, AMXTileMul> {
  let Requires = [FeatureAMXInt8];
  let LatencyCycles = 16;
  let OperandRegisters = 8;
}
