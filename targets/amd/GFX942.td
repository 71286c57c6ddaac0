//===- GFX942.td - AMD Instinct MI300X (gfx942) ------------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// AMD Instinct MI300X (CDNA3, gfx942): eight accelerator complex dies (XCDs)
// of 38 CUs each, exposed as one device in the default SPX mode.
//
// Sources of the figures:
//  [DS]   AMD Instinct MI300X accelerator datasheet: 304 CUs, 2100 MHz peak
//         engine clock, 192 GB HBM3 at 5.3 TB/s, 256 MB Infinity Cache,
//         peak FP64 vector 81.7, FP64/FP32 matrix and FP32 vector 163.4,
//         TF32 653.7, FP16/BF16 1307.4, FP8/INT8 2614.9 TFLOP/s (TOP/s),
//         dense.
//  [WP]   AMD CDNA 3 Architecture whitepaper (2023): 32 KiB vector L1 per CU
//         (128 B lines), 4 MiB 16-way L2 per XCD (2 KiB/clk), Infinity Cache
//         peak bandwidth 17.2 TB/s, LDS of 64 KiB per CU.
//  [ISA]  AMD Instinct MI300 Instruction Set Architecture Reference Guide
//         (CDNA3): LDS of 32 banks x 4 bytes, 512 VGPRs per lane (unified
//         VGPR/AGPR file), wave64, MFMA pass counts.
//  [LLVM] LLVM AMDGPUUsage: address spaces (1 global, 3 local/LDS),
//         1024 work-items per workgroup maximum.
// Latencies marked "estimate" are order-of-magnitude values from public
// microbenchmark reports of CDNA GPUs, not vendor figures.
//
//===----------------------------------------------------------------------===//

def GFX942_Grid : PBComputeLevel<"grid", Grid> {
  let PhysicalUnits = 304;                     // CUs, 8 XCDs x 38 [DS]
}
def GFX942_Workgroup : PBComputeLevel<"workgroup", Block>;
def GFX942_Wave : PBComputeLevel<"wavefront", Subgroup> {
  let MaxCountPerParent = 16;                  // 1024 work-items / 64 [LLVM]
}
def GFX942_Lane : PBComputeLevel<"lane", Lane> {
  let FixedCountPerParent = 64;                // wave64 [ISA]
}

def GFX942_VGPRs : PBMemoryLevel<"vgprs", RegisterFile, Lane> {
  let CapacityBytes = 2048;                    // 512 x 32-bit VGPRs+AGPRs [ISA]
  // Derived: 768 B/clk/CU (3 operands x 4 B x 16 lanes x 4 SIMDs)
  // x 304 CUs x 2.1 GHz.
  let BandwidthGBps = 490291;
  let LatencyCycles = 1;
}
def GFX942_LDS : PBMemoryLevel<"lds", Scratchpad, Block> {
  let CapacityBytes = 65536;                   // 64 KiB per workgroup [WP]
  // Derived: 128 B/clk/CU x 304 x 2.1 GHz
  let BandwidthGBps = 81715;
  let LatencyCycles = 64;                      // estimate
  let Banks = 32;                              // [ISA]
  let BankWidthBytes = 4;
  let AddressSpace = 3;                        // AMDGPU local [LLVM]
}
def GFX942_L1 : PBMemoryLevel<"l1", Cache, Block> {
  let CapacityBytes = 32768;                   // 32 KiB vector L1 per CU [WP]
  // Derived: 64 B/clk/CU x 304 x 2.1 GHz
  let BandwidthGBps = 40858;
  let LatencyCycles = 120;                     // estimate
  let LineBytes = 128;                         // [WP]
}
def GFX942_L2 : PBMemoryLevel<"l2", Cache, Grid> {
  // 4 MiB per XCD [WP]. Workgroups are spread round-robin over the XCDs and
  // each XCD caches only for its own CUs, so one XCD's 4 MiB -- not the
  // 32 MiB sum -- is what a workgroup's data can occupy. Target.td has no
  // compute level for an XCD, hence scope Grid.
  let CapacityBytes = 4194304;
  // Derived: 8 x 2048 B/clk [WP] x 2.1 GHz
  let BandwidthGBps = 34406;
  let LatencyCycles = 250;                     // estimate
  let LineBytes = 128;                         // [WP]
}
def GFX942_InfinityCache : PBMemoryLevel<"infinity-cache", Cache, Grid> {
  // 256 MiB, shared by all XCDs [DS]
  let CapacityBytes = 268435456;
  let BandwidthGBps = 17200;                   // peak [WP]
  let LatencyCycles = 450;                     // estimate
  // Line size not published; 0 per Target.td's "not meaningful".
}
def GFX942_HBM : PBMemoryLevel<"hbm", MainMemory, Grid> {
  // 192 GiB: 8 stacks x 24 GiB HBM3 [DS]
  let CapacityBytes = 206158430208;
  let BandwidthGBps = 5300;                    // [DS]
  let LatencyCycles = 800;                     // estimate
  let AddressSpace = 1;                        // AMDGPU global [LLVM]
}

def GFX942 : PBChip<"amd-gfx942", AMD> {
  let Description = "AMD Instinct MI300X (CDNA3, gfx942): 304 CUs, 256 MB "
                    # "Infinity Cache, 192 GB HBM3";
  let Sources = [
    "AMD Instinct MI300X accelerator datasheet",
    "AMD CDNA 3 Architecture whitepaper (2023)",
    "AMD Instinct MI300 Instruction Set Architecture Reference Guide (CDNA3)",
    "LLVM User Guide for AMDGPU Backend (AMDGPUUsage)"
  ];

  let LLVMTriple = "amdgcn-amd-amdhsa";
  let LLVMCPU = "gfx942";
  // xnack and sramecc are left at "any" (the empty target-ID default).
  let LLVMFeatures = "";

  let Features = [FeatureScratchpad, FeatureMatrixUnits, FeatureFMA,
                  FeatureBF16, FeatureFP8, FeatureMFMA, FeatureMFMABF16_1K,
                  FeatureMFMAGfx94, FeatureWave64, FeatureLDS,
                  FeaturePackedFP32, FeatureUnifiedVGPRs];
  let ClockMHz = 2100;                         // peak engine clock [DS]
  let VectorWidthBits = 128;                   // global_load_dwordx4 [ISA]

  let ComputeLevels = [GFX942_Grid, GFX942_Workgroup, GFX942_Wave,
                       GFX942_Lane];
  let MemoryLevels = [GFX942_VGPRs, GFX942_LDS, GFX942_L1, GFX942_L2,
                      GFX942_InfinityCache, GFX942_HBM];
  let MatrixUnits = [MFMA_F32_32x32x8_F16, MFMA_F32_16x16x16_F16,
                     MFMA_F32_32x32x8_BF16, MFMA_F32_16x16x16_BF16,
                     MFMA_F32_16x16x32_F8E4M3FNUZ, MFMA_I32_32x32x16_I8,
                     MFMA_I32_16x16x32_I8, MFMA_F32_16x16x4_F32];

  // Dense peaks of the whole device in GFLOP/s (GOP/s for i8) [DS].
  let PeakCompute = [
    PBPeakCompute<F64, "vector", 81700>,
    PBPeakCompute<F64, "matrix", 163400>,
    PBPeakCompute<F32, "vector", 163400>,
    PBPeakCompute<F32, "matrix", 163400>,
    // AMD's "TF32" is the xf32 MFMA; no matrix unit is listed for it.
    PBPeakCompute<TF32, "matrix", 653700>,
    PBPeakCompute<F16, "matrix", 1307400>,
    PBPeakCompute<BF16, "matrix", 1307400>,
    PBPeakCompute<F8E4M3FNUZ, "matrix", 2614900>,
    PBPeakCompute<F8E5M2FNUZ, "matrix", 2614900>,
    PBPeakCompute<I8, "matrix", 2614900>
  ];
  // Estimate: HIP kernel launch overhead is several us; not a vendor figure.
  let LaunchOverheadNs = 6000;
}
