//===- GFX90A.td - AMD Instinct MI250X GCD (gfx90a) --------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// One Graphics Compute Die (GCD) of an AMD Instinct MI250X (CDNA2, gfx90a).
// An MI250X package holds two GCDs that the runtime exposes as two devices,
// so every figure here is per GCD: half of the package's datasheet figure.
//
// Sources of the figures:
//  [DS]   AMD Instinct MI250X accelerator datasheet / product specifications:
//         220 CUs, 1700 MHz peak engine clock, 128 GB HBM2e at 3.2 TB/s,
//         peak FP64/FP32 vector 47.9, FP64/FP32 matrix 95.7, packed FP32
//         95.7, FP16/BF16/INT8 matrix 383 TFLOP/s (TOP/s) per package.
//  [WP]   AMD CDNA 2 Architecture whitepaper (2021): 16 KiB vector L1 per
//         CU (64 B lines), 8 MiB 16-way L2 per GCD (128 B lines, 2 KiB/clk
//         aggregate), LDS of 64 KiB per CU.
//  [ISA]  AMD Instinct MI200 Series Instruction Set Architecture Reference
//         Guide (CDNA2): LDS of 32 banks x 4 bytes, 512 VGPRs per lane
//         (unified VGPR/AGPR file), wave64, global_load_dwordx4 (128-bit).
//  [LLVM] LLVM AMDGPUUsage: address spaces (1 global, 3 local/LDS),
//         1024 work-items per workgroup maximum.
// Latencies marked "estimate" are order-of-magnitude values from public
// microbenchmark reports of CDNA GPUs, not vendor figures.
//
//===----------------------------------------------------------------------===//

def GFX90A_Grid : PBComputeLevel<"grid", Grid> {
  let PhysicalUnits = 110;                     // CUs per GCD: 220 / 2 [DS]
}
def GFX90A_Workgroup : PBComputeLevel<"workgroup", Block>;
def GFX90A_Wave : PBComputeLevel<"wavefront", Subgroup> {
  let MaxCountPerParent = 16;                  // 1024 work-items / 64 [LLVM]
}
def GFX90A_Lane : PBComputeLevel<"lane", Lane> {
  let FixedCountPerParent = 64;                // wave64 [ISA]
}

def GFX90A_VGPRs : PBMemoryLevel<"vgprs", RegisterFile, Lane> {
  let CapacityBytes = 2048;                    // 512 x 32-bit VGPRs+AGPRs [ISA]
  // Derived: 3 operands x 4 B x 16 lanes x 4 SIMDs = 768 B/clk/CU,
  // x 110 CUs x 1.7 GHz.
  let BandwidthGBps = 143616;
  let LatencyCycles = 1;
}
def GFX90A_LDS : PBMemoryLevel<"lds", Scratchpad, Block> {
  let CapacityBytes = 65536;                   // 64 KiB per workgroup [WP]
  // Derived: 128 B/clk/CU x 110 x 1.7 GHz
  let BandwidthGBps = 23936;
  let LatencyCycles = 64;                      // estimate
  let Banks = 32;                              // [ISA]
  let BankWidthBytes = 4;
  let AddressSpace = 3;                        // AMDGPU local [LLVM]
}
def GFX90A_L1 : PBMemoryLevel<"l1", Cache, Block> {
  let CapacityBytes = 16384;                   // 16 KiB vector L1 per CU [WP]
  // Derived: 64 B/clk/CU x 110 x 1.7 GHz
  let BandwidthGBps = 11968;
  let LatencyCycles = 120;                     // estimate
  let LineBytes = 64;                          // [WP]
}
def GFX90A_L2 : PBMemoryLevel<"l2", Cache, Grid> {
  let CapacityBytes = 8388608;                 // 8 MiB per GCD [WP]
  // Derived: 2048 B/clk [WP] x 1.7 GHz
  let BandwidthGBps = 3482;
  let LatencyCycles = 250;                     // estimate
  let LineBytes = 128;                         // [WP]
}
def GFX90A_HBM : PBMemoryLevel<"hbm", MainMemory, Grid> {
  let CapacityBytes = 68719476736;             // 64 GiB HBM2e per GCD [DS]
  let BandwidthGBps = 1638;                    // 3276.8 GB/s / 2 [DS]
  let LatencyCycles = 600;                     // estimate
  let AddressSpace = 1;                        // AMDGPU global [LLVM]
}

def GFX90A : PBChip<"amd-gfx90a", AMD> {
  let Description = "AMD Instinct MI250X, one GCD (CDNA2, gfx90a): 110 CUs, "
                    # "64 GiB HBM2e";
  let Sources = [
    "AMD Instinct MI250X accelerator datasheet",
    "AMD CDNA 2 Architecture whitepaper (2021)",
    "AMD Instinct MI200 Series Instruction Set Architecture Reference Guide",
    "LLVM User Guide for AMDGPU Backend (AMDGPUUsage)"
  ];

  let LLVMTriple = "amdgcn-amd-amdhsa";
  let LLVMCPU = "gfx90a";
  // xnack and sramecc are left at "any" (the empty target-ID default).
  let LLVMFeatures = "";

  let Features = [FeatureScratchpad, FeatureMatrixUnits, FeatureFMA,
                  FeatureBF16, FeatureMFMA, FeatureMFMABF16_1K, FeatureWave64,
                  FeatureLDS, FeaturePackedFP32, FeatureUnifiedVGPRs];
  let ClockMHz = 1700;                         // peak engine clock [DS]
  let VectorWidthBits = 128;                   // global_load_dwordx4 [ISA]

  let ComputeLevels = [GFX90A_Grid, GFX90A_Workgroup, GFX90A_Wave,
                       GFX90A_Lane];
  let MemoryLevels = [GFX90A_VGPRs, GFX90A_LDS, GFX90A_L1, GFX90A_L2,
                      GFX90A_HBM];
  let MatrixUnits = [MFMA_F32_32x32x8_F16, MFMA_F32_16x16x16_F16,
                     MFMA_F32_32x32x8_BF16, MFMA_F32_16x16x16_BF16,
                     MFMA_F32_16x16x4_F32, MFMA_I32_32x32x8_I8];

  // Per-GCD peaks in GFLOP/s (GOP/s for i8): half of the MI250X figures [DS].
  let PeakCompute = [
    PBPeakCompute<F64, "vector", 23950>,
    PBPeakCompute<F64, "matrix", 47850>,
    // Non-packed FP32; v_pk_fma_f32 (FeaturePackedFP32) reaches 47850.
    PBPeakCompute<F32, "vector", 23950>,
    PBPeakCompute<F32, "matrix", 47850>,
    PBPeakCompute<F16, "matrix", 191500>,
    PBPeakCompute<BF16, "matrix", 191500>,
    PBPeakCompute<I8, "matrix", 191500>
  ];
  // Estimate: HIP kernel launch overhead is several us; not a vendor figure.
  let LaunchOverheadNs = 6000;
}
