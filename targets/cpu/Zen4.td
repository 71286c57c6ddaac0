//===- Zen4.td - AMD Zen 4: AVX-512 with BF16 and VNNI -----*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// AMD Zen 4 cores (EPYC 9004 "Genoa", Ryzen 7000): x86-64-v4 plus the
// AVX512-BF16 and AVX512-VNNI extensions, which the x86-64-v4 level does
// not include. bf16 contractions run on VDPBF16PS
// (VDPBF16PS_BF16_1x16x2_F32) instead of widening to f32, int8 ones on
// VPDPBUSD (VPDPBUSD_I8_1x16x4_I32) instead of scalar loops. cpu-host also
// resolves to this chip on other AVX-512 CPUs that report both extensions
// and no AMX (Intel Cooper Lake): its code runs there, its figures are a
// Zen 4 core's.
//
// The figures are X86_64_V4.td's, which already describe one Zen 4 core
// (EPYC 9654): the same memory levels. Per-core convention as in
// X86_64_V3.td.
//
// Sources of the figures:
//  [SOG]  Software Optimization Guide for the AMD Zen4 Microarchitecture:
//         two 256-bit FMA pipes (a 512-bit operation uses both), the
//         AVX512-BF16 and AVX512-VNNI extensions.
//  [EPYC] AMD EPYC 9654 product specifications: 2.4 GHz base.
//  [LLVM] LLVM X86TargetParser: the host feature names "avx512bf16" and
//         "avx512vnni".
//
//===----------------------------------------------------------------------===//

def Zen4 : PBChip<"cpu-zen4", CPU> {
  let Description = "AMD Zen 4 (x86-64-v4 with AVX512-BF16 and AVX512-VNNI); "
                    # "figures per core of an EPYC 9654";
  let Sources = [
    "Software Optimization Guide for the AMD Zen4 Microarchitecture",
    "AMD EPYC 9654 processor specifications",
    "LLVM X86TargetParser"
  ];

  let LLVMTriple = "x86_64-unknown-linux-gnu";
  let LLVMCPU = "x86-64-v4";
  let LLVMFeatures = "+avx512bf16,+avx512vnni";

  let Features = [FeatureFMA, FeatureAVX2, FeatureF16C, FeatureAVX512,
                  FeatureAVX512BF16, FeatureAVX512VNNI];
  let ClockMHz = 2400;                         // EPYC 9654 base clock [EPYC]
  let VectorWidthBits = 512;

  let ComputeLevels = [X86_64_V4_Socket, X86_64_V4_Core, X86_64_V4_Lane];
  let MemoryLevels = [X86_64_V4_Registers, X86_64_V4_L1, X86_64_V4_L2,
                      X86_64_V4_L3, X86_64_V4_DRAM];
  let MatrixUnits = [VDPBF16PS_BF16_1x16x2_F32, VPDPBUSD_I8_1x16x4_I32,
                     VFMA_F32_1x16x1_F32, VFMA_F32_1x8x1_F32,
                     VFMA_BF16_1x16x1_F32, VFMA_BF16_1x8x1_F32,
                     VFMA_F16_1x16x1_F32, VFMA_F16_1x8x1_F32];

  // Per core, GFLOP/s: one 512-bit FMA per clock (two 256-bit pipes) [SOG].
  let PeakCompute = [
    PBPeakCompute<F32, "vector", 77>,          // 16 x 2 x 2.4 = 76.8
    PBPeakCompute<F64, "vector", 38>,          // 8 x 2 x 2.4 = 38.4
    // One 512-bit VDPBF16PS per clock: 16 x 2 pairs x 2 x 2.4 (estimate:
    // assumes the FMA's rate).
    PBPeakCompute<BF16, "vector", 154>,
    // One 512-bit VPDPBUSD per clock: 16 x 4 x 2 x 2.4 (estimate, likewise).
    PBPeakCompute<I8, "vector", 307>
  ];
  // Estimate, as for x86-64-v3: parallel-region fork/join; not a vendor
  // figure.
  let LaunchOverheadNs = 2000;

  // x86-64-v4's host features plus the two extensions [LLVM].
  let HostCPUFeatures = ["avx", "avx2", "bmi", "bmi2", "f16c", "fma",
                         "lzcnt", "movbe", "xsave", "avx512f", "avx512bw",
                         "avx512cd", "avx512dq", "avx512vl", "avx512bf16",
                         "avx512vnni"];
}
