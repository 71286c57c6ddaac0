//===- AMDFeatures.td - AMD GPU capabilities ---------------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Capabilities of AMD Instinct (CDNA) GPUs that AMD-specific stages ask
// about. `Implies` links them to the target-neutral features of Target.td.
//
// Sources:
//  * AMD Instinct MI200 Series Instruction Set Architecture Reference Guide
//    (CDNA2), chapter "Matrix Arithmetic Instructions" (MFMA, the *_1K bf16
//    forms), "Vector ALU" (V_PK_FMA_F32 and the other packed FP32 ops), and
//    "Data Share Operations" (LDS).
//  * AMD Instinct MI300 Instruction Set Architecture Reference Guide (CDNA3),
//    chapter "Matrix Arithmetic Instructions" (FP8/BF8, XF32 and the i8 MFMAs
//    with doubled K that replace the CDNA2 i8 ones).
//  * LLVM "User Guide for AMDGPU Backend" (AMDGPUUsage): processor table
//    (gfx90a, gfx942), wavefront size, unified VGPR file on gfx90a+.
//
//===----------------------------------------------------------------------===//

/// Matrix fused multiply-add (v_mfma_*) on the CU's matrix cores.
def FeatureMFMA
    : PBFeature<"mfma", "MFMA matrix fused multiply-add instructions",
                [FeatureMatrixUnits]>;

/// The bf16 MFMAs with full rate and K doubled (v_mfma_*bf16_1k, gfx90a+;
/// gfx940+ renames them without the suffix).
def FeatureMFMABF16_1K
    : PBFeature<"mfma-bf16-1k", "full-rate bf16 MFMA (the *_1k forms)",
                [FeatureMFMA]>;

/// The CDNA3 (gfx940/gfx941/gfx942) MFMA set: fp8/bf8 inputs in the FNUZ
/// encodings, xf32, and the i8 MFMAs with K doubled (32x32x16, 16x16x32),
/// which replace CDNA2's 32x32x8 / 16x16x16 i8 forms.
def FeatureMFMAGfx94
    : PBFeature<"mfma-gfx94", "CDNA3 MFMA instruction set (fp8 FNUZ, xf32, "
                              "i8 with doubled K)", [FeatureMFMA]>;

/// 64-lane wavefronts (the only mode on CDNA).
def FeatureWave64 : PBFeature<"wave64", "64-lane wavefronts">;

/// Local Data Share: the per-workgroup software-managed memory.
def FeatureLDS
    : PBFeature<"lds", "Local Data Share per workgroup", [FeatureScratchpad]>;

/// Packed FP32 arithmetic: v_pk_fma_f32 / v_pk_mul_f32 / v_pk_add_f32 work
/// on two f32 values per lane (gfx90a+), doubling the vector FP32 peak.
def FeaturePackedFP32
    : PBFeature<"packed-fp32", "packed two-wide FP32 vector arithmetic">;

/// One 512-entry VGPR file per lane shared by architectural VGPRs and the
/// MFMA accumulation registers (AGPRs) (gfx90a+).
def FeatureUnifiedVGPRs
    : PBFeature<"unified-vgprs", "unified VGPR/AGPR register file">;
