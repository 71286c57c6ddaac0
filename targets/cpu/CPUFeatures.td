//===- CPUFeatures.td - x86-64 CPU capabilities ------------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Capabilities of x86-64 CPUs that CPU-specific stages ask about. These are
// compiler-side capabilities; what the running CPU must report is spelled
// separately, as LLVM host feature names, in each chip's HostCPUFeatures.
//
// Sources:
//  * System V Application Binary Interface, AMD64 Architecture Processor
//    Supplement (x86-64 psABI), "Micro-architecture levels": x86-64-v3 =
//    AVX, AVX2, BMI1, BMI2, F16C, FMA, LZCNT, MOVBE, XSAVE on top of v2;
//    x86-64-v4 = AVX512F, AVX512BW, AVX512CD, AVX512DQ, AVX512VL on top of v3.
//  * Intel 64 and IA-32 Architectures Software Developer's Manual, Vol. 2
//    (AVX512_BF16: VDPBF16PS; AVX512_VNNI: VPDPBUSD; AMX-TILE: LDTILECFG,
//    TILELOADD, TILESTORED, TILEZERO; AMX-BF16: TDPBF16PS; AMX-INT8:
//    TDPBUSD), and Vol. 1, "Intel Advanced Matrix Extensions".
//
//===----------------------------------------------------------------------===//

/// 256-bit integer SIMD (the vector part of x86-64-v3).
def FeatureAVX2 : PBFeature<"avx2", "256-bit AVX2 integer and FP SIMD">;

/// f16 <-> f32 conversions of vectors (VCVTPH2PS, VCVTPS2PH; part of
/// x86-64-v3).
def FeatureF16C : PBFeature<"f16c", "f16 <-> f32 vector conversions">;

/// The AVX-512 subsets of x86-64-v4 (F, BW, CD, DQ, VL): 32 zmm registers,
/// mask registers, 512-bit vectors.
def FeatureAVX512
    : PBFeature<"avx512", "AVX-512 F/BW/CD/DQ/VL (x86-64-v4)", [FeatureAVX2]>;

/// bf16 dot products into f32 (VDPBF16PS) and f32->bf16 conversions. Not
/// part of x86-64-v4; present on e.g. AMD Zen 4 and Intel Sapphire Rapids.
def FeatureAVX512BF16
    : PBFeature<"avx512bf16", "AVX-512 bf16 dot products and conversions",
                [FeatureAVX512, FeatureBF16]>;

/// u8 x s8 -> i32 dot products (VPDPBUSD). Not part of x86-64-v4.
def FeatureAVX512VNNI
    : PBFeature<"avx512vnni", "AVX-512 VNNI int8 dot products",
                [FeatureAVX512]>;

/// Eight tile registers of up to 16 rows x 64 bytes, configured by
/// LDTILECFG, loaded and stored with a row stride (TILELOADD, TILESTORED).
/// Linux grants a process the tile state only on request
/// (arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)).
def FeatureAMXTile
    : PBFeature<"amx-tile", "AMX tile registers (TMM0-TMM7)",
                [FeatureAVX512]>;

/// bf16 tile multiply into f32 tiles (TDPBF16PS).
def FeatureAMXBF16
    : PBFeature<"amx-bf16", "AMX bf16 tile multiply into f32",
                [FeatureAMXTile, FeatureBF16]>;

/// int8 tile multiply into i32 tiles (TDPBSSD, TDPBUSD, ...).
def FeatureAMXInt8
    : PBFeature<"amx-int8", "AMX int8 tile multiply into i32",
                [FeatureAMXTile]>;
