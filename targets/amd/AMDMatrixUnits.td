//===- AMDMatrixUnits.td - AMD MFMA instructions -----------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// MFMA matrix units shared by the AMD chips. `Intrinsic` holds the LLVM
// intrinsic, which is the same on gfx90a and gfx942 even where the assembly
// mnemonic changed (v_mfma_f32_32x32x8f16 vs v_mfma_f32_32x32x8_f16). All
// are single-block (blocks = 1) forms.
//
// Sources:
//  * AMD Instinct MI200 Series Instruction Set Architecture Reference Guide
//    (CDNA2), "Matrix Arithmetic Instructions": opcodes and pass counts.
//  * AMD Instinct MI300 Instruction Set Architecture Reference Guide (CDNA3),
//    "Matrix Arithmetic Instructions": opcodes and pass counts.
//  * LLVM IntrinsicsAMDGPU.td (llvm.amdgcn.mfma.*) for the intrinsic names.
//
// LatencyCycles = passes x 4 cycles. A record shared by both chips carries
// the CDNA2 (gfx90a) figure, which is the larger one: CDNA3 halves the pass
// count of the f16/bf16 forms (32x32x8: 64 -> 32 cycles, 16x16x16: 32 -> 16).
// Target.td has no per-chip latency, so gfx942 over-states those by 2x.
// Cross-check: pass counts x CU count x 4 SIMDs x clock give the datasheet
// peaks (e.g. MI300X: 16x16x16 f16 = 8192 flop / 16 cycles x 4 x 304 x
// 2.1 GHz = 1307.4 TFLOP/s).
//
//===----------------------------------------------------------------------===//

//===----------------------------------------------------------------------===//
// gfx90a and gfx942.
//===----------------------------------------------------------------------===//

def MFMA_F32_32x32x8_F16
    : PBMatrixUnit<"llvm.amdgcn.mfma.f32.32x32x8f16", 32, 32, 8, F16, F16,
                   F32, SubgroupScope, RegistersSplitK, AMDGPUMfma> {
  let Requires = [FeatureMFMA];
  let LatencyCycles = 64;                      // 16 passes (CDNA2); 8 on CDNA3
}

def MFMA_F32_16x16x16_F16
    : PBMatrixUnit<"llvm.amdgcn.mfma.f32.16x16x16f16", 16, 16, 16, F16, F16,
                   F32, SubgroupScope, RegistersSplitK, AMDGPUMfma> {
  let Requires = [FeatureMFMA];
  let LatencyCycles = 32;                      // 8 passes (CDNA2); 4 on CDNA3
}

def MFMA_F32_32x32x8_BF16
    : PBMatrixUnit<"llvm.amdgcn.mfma.f32.32x32x8bf16.1k", 32, 32, 8, BF16,
                   BF16, F32, SubgroupScope, RegistersSplitK, AMDGPUMfma> {
  let Requires = [FeatureMFMA, FeatureMFMABF16_1K, FeatureBF16];
  let LatencyCycles = 64;                      // 16 passes (CDNA2); 8 on CDNA3
}

def MFMA_F32_16x16x16_BF16
    : PBMatrixUnit<"llvm.amdgcn.mfma.f32.16x16x16bf16.1k", 16, 16, 16, BF16,
                   BF16, F32, SubgroupScope, RegistersSplitK, AMDGPUMfma> {
  let Requires = [FeatureMFMA, FeatureMFMABF16_1K, FeatureBF16];
  let LatencyCycles = 32;                      // 8 passes (CDNA2); 4 on CDNA3
}

def MFMA_F32_16x16x4_F32
    : PBMatrixUnit<"llvm.amdgcn.mfma.f32.16x16x4f32", 16, 16, 4, F32, F32,
                   F32, SubgroupScope, RegistersSplitK, AMDGPUMfma> {
  let Requires = [FeatureMFMA];
  let LatencyCycles = 32;                      // 8 passes on CDNA2 and CDNA3
}

//===----------------------------------------------------------------------===//
// gfx90a only: CDNA3 dropped these i8 forms for the doubled-K ones below.
// No feature excludes them on gfx942; gfx942 simply does not list them.
//===----------------------------------------------------------------------===//

def MFMA_I32_32x32x8_I8
    : PBMatrixUnit<"llvm.amdgcn.mfma.i32.32x32x8i8", 32, 32, 8, I8, I8, I32,
                   SubgroupScope, RegistersSplitK, AMDGPUMfma> {
  let Requires = [FeatureMFMA];
  let LatencyCycles = 64;                      // 16 passes (CDNA2)
}

//===----------------------------------------------------------------------===//
// gfx942 (CDNA3) only.
//===----------------------------------------------------------------------===//

def MFMA_I32_32x32x16_I8
    : PBMatrixUnit<"llvm.amdgcn.mfma.i32.32x32x16.i8", 32, 32, 16, I8, I8,
                   I32, SubgroupScope, RegistersSplitK, AMDGPUMfma> {
  let Requires = [FeatureMFMA, FeatureMFMAGfx94];
  let LatencyCycles = 32;                      // 8 passes
}

def MFMA_I32_16x16x32_I8
    : PBMatrixUnit<"llvm.amdgcn.mfma.i32.16x16x32.i8", 16, 16, 32, I8, I8,
                   I32, SubgroupScope, RegistersSplitK, AMDGPUMfma> {
  let Requires = [FeatureMFMA, FeatureMFMAGfx94];
  let LatencyCycles = 16;                      // 4 passes
}

// CDNA3 "fp8" is the FNUZ E4M3 encoding (bias 8, no negative zero, no inf).
def MFMA_F32_16x16x32_F8E4M3FNUZ
    : PBMatrixUnit<"llvm.amdgcn.mfma.f32.16x16x32.fp8.fp8", 16, 16, 32,
                   F8E4M3FNUZ, F8E4M3FNUZ, F32, SubgroupScope,
                   RegistersSplitK, AMDGPUMfma> {
  let Requires = [FeatureMFMA, FeatureMFMAGfx94, FeatureFP8];
  let LatencyCycles = 16;                      // 4 passes
}
