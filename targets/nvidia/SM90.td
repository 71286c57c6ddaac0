//===- SM90.td - NVIDIA H200 (sm_90a) ----------------------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// NVIDIA H200 SXM (GH100, compute capability 9.0). Its SM array, caches and
// compute rates are those of the H100 SXM5; only the memory (141 GB HBM3e at
// 4.8 TB/s) differs. Compiled for sm_90a, the architecture-specific target
// that wgmma needs.
//
// Sources of the figures:
//  [WP]   NVIDIA H100 Tensor Core GPU Architecture whitepaper (2022): 132
//         SMs (SXM5), 256 KiB combined L1/shared memory per SM, the SXM5
//         peak throughput table (dense figures; sparsity doubles matrix
//         rates). Tensor peaks correspond to 1830 MHz, vector peaks to
//         1980 MHz (132 SMs x 128 FP32 lanes x 2 x 1.98 GHz = 66.9 TFLOP/s).
//  [DS]   NVIDIA H200 Tensor Core GPU datasheet (2024): 141 GB HBM3e,
//         4.8 TB/s, the same compute figures as H100 SXM (listed with
//         sparsity; halved here).
//  [CUDA] CUDA C++ Programming Guide, table "Technical Specifications per
//         Compute Capability" (9.0): 1024 threads/block, 255 registers per
//         thread, 227 KB shared memory per block (opt-in), 228 KB per SM;
//         sections "Thread Block Clusters" and "Distributed Shared Memory".
//  [PTX]  PTX ISA 8.0: sm_90a requires PTX ISA 8.0; wgmma.mma_async and
//         setmaxnreg require sm_90a; cp.async.bulk.tensor requires sm_90.
//  [MB]   Luo et al., "Benchmarking and Dissecting the Nvidia Hopper GPU
//         Architecture" (IPDPS 2024; H800 measurements): latencies marked
//         "measured estimate" are rounded values in the range reported
//         there; they are not vendor figures.
// Figures marked "derived" are computed from the above as shown.
//
//===----------------------------------------------------------------------===//

def SM90_Grid : PBComputeLevel<"grid", Grid> {
  let PhysicalUnits = 132;                     // SMs [WP]
}
def SM90_Block : PBComputeLevel<"block", Block> {
  let MaxCountPerParent = 2147483647;          // grid x-dimension, 2^31-1 [CUDA]
  let MaxResidentPerUnit = 32;                 // resident blocks per SM [CUDA]
}
def SM90_Warp : PBComputeLevel<"warp", Subgroup> {
  let MaxCountPerParent = 32;                  // 1024 threads/block / 32 [CUDA]
  let MaxResidentPerUnit = 64;                 // resident warps per SM [CUDA]
}
def SM90_Lane : PBComputeLevel<"lane", Lane> {
  let FixedCountPerParent = 32;                // warp size [CUDA]
  let MaxResidentPerUnit = 2048;               // resident threads per SM [CUDA]
}

def SM90_Registers : PBMemoryLevel<"registers", RegisterFile, Lane> {
  let CapacityBytes = 1020;                    // 255 x 32-bit registers [CUDA]
  let CapacityBytesPerUnit = 262144;           // 64K 32-bit registers per SM [CUDA]
  // Registers are allocated per warp in units of 256 [CUDA occupancy
  // calculator]: 8 per lane.
  let AllocationGranuleBytes = 32;
  // Derived: 1536 B/clk/SM (3 operands x 4 B x 32 lanes x 4 schedulers)
  // x 132 SMs x 1.98 GHz.
  let BandwidthGBps = 401449;
  let LatencyCycles = 1;
}
def SM90_Shared : PBMemoryLevel<"shared", Scratchpad, Block> {
  // 227 KiB per block, opt-in [CUDA]
  let CapacityBytes = 232448;
  // Derived: 128 B/clk/SM x 132 x 1.98 GHz
  let BandwidthGBps = 33454;
  let LatencyCycles = 29;                      // measured estimate [MB]
  let Banks = 32;                              // [CUDA]
  let BankWidthBytes = 4;
  let AddressSpace = 3;                        // NVPTX shared
  let CapacityBytesPerUnit = 233472;           // 228 KiB per SM [CUDA]
  let AllocationGranuleBytes = 128;            // [CUDA occupancy calculator]
  let ReservedBytesPerInstance = 1024;         // 1 KiB per block for the system [CUDA]
}
def SM90_L1 : PBMemoryLevel<"l1", Cache, Block> {
  // 256 KiB per SM is split between L1 and shared memory; 28 KiB is what
  // stays L1 when a block takes the full 228 KiB shared carve-out [WP].
  let CapacityBytes = 28672;
  let BandwidthGBps = 33454;                   // same SRAM as shared memory
  let LatencyCycles = 33;                      // measured estimate [MB]
  let LineBytes = 128;
}
def SM90_L2 : PBMemoryLevel<"l2", Cache, Grid> {
  // H100 SXM5 is documented with 50 MB [WP]. On the H200 the runtime's
  // cudaDevAttrL2CacheSize has been observed as 60 MiB (through PyTorch's
  // device properties); this record describes the H200, so that figure is
  // used. It is not in a vendor document: re-check on the device.
  let CapacityBytes = 62914560;
  // Estimate: NVIDIA publishes no H100 L2 bandwidth; A100's 5120 B/clk
  // (A100 whitepaper) x 1.98 GHz is assumed.
  let BandwidthGBps = 10138;
  let LatencyCycles = 260;                     // measured estimate [MB]
  let LineBytes = 128;
}
def SM90_HBM : PBMemoryLevel<"hbm", MainMemory, Grid> {
  // 141 GB [DS]. The driver reports a total of about 140 GiB; 140 GiB is
  // used (rounded down; re-check on the device).
  let CapacityBytes = 150323855360;
  let BandwidthGBps = 4800;                    // [DS]
  let LatencyCycles = 480;                     // measured estimate [MB]
  let AddressSpace = 1;                        // NVPTX global
}

// The Tile IR path: measured with tileiras 13.4 on f16/bf16 matmuls with
// f32 accumulation (M x N x K tiles, 128 threads per tile block): 128 x 64
// tiles (64 accumulator registers per thread) with K tiles of 32 assemble
// to HGMMA without local-memory spills for 256^3 to 4096^3 and the BERT
// layer shapes; K tiles of 64 spill once K reaches 1024 (28 LDL/STL at
// 2048^3, as the same kernel written in cuTile Python does), and 128 x 128
// spills at any K (LDL/STL in the SASS).
def SM90_TileIR : PBTileIRPath {
  let GPUName = "sm_90";
  let ThreadsPerTileBlock = 128;
  let AccumulatorRegistersPerThread = 64;
  let OperandRowBytes = 64;                    // K tile of 32 f16/bf16
  let ConvolutionOperandRowBytes = 64;         // no spills at 32 channels
}

def SM90 : PBChip<"nvidia-sm90", NVIDIA> {
  let Description = "NVIDIA H200 SXM 141GB (Hopper GH100, sm_90a; same SM "
                    # "array and rates as H100 SXM5)";
  let Sources = [
    "NVIDIA H100 Tensor Core GPU Architecture whitepaper (2022)",
    "NVIDIA H200 Tensor Core GPU datasheet (2024)",
    "CUDA C++ Programming Guide, Technical Specifications per Compute "
    # "Capability",
    "PTX ISA 8.0",
    "Luo et al., Benchmarking and Dissecting the Nvidia Hopper GPU "
    # "Architecture, IPDPS 2024 (measured latency estimates)"
  ];

  let LLVMTriple = "nvptx64-nvidia-cuda";
  let LLVMCPU = "sm_90a";                      // wgmma needs sm_90a [PTX]
  let LLVMFeatures = "+ptx80";                 // sm_90a needs PTX ISA 8.0 [PTX]

  let Features = [FeatureAsyncCopy, FeatureScratchpad, FeatureMatrixUnits,
                  FeatureFMA, FeatureBF16, FeatureFP8, FeatureMMASync,
                  FeatureLdMatrix, FeatureStMatrix, FeatureCpAsync,
                  FeatureTF32, FeatureTMA, FeatureWGMMA,
                  FeatureArchSpecific90a, FeatureClusters];
  // Max boost clock; derived from the FP32 peak [WP]:
  // 66.9 TFLOP/s / (132 SMs x 128 lanes x 2) = 1.98 GHz.
  let ClockMHz = 1980;
  let VectorWidthBits = 128;                   // ld.global.v4.b32 [PTX]

  let ComputeLevels = [SM90_Grid, SM90_Block, SM90_Warp, SM90_Lane];
  let MemoryLevels = [SM90_Registers, SM90_Shared, SM90_L1, SM90_L2, SM90_HBM];
  let MatrixUnits = [WGMMA_F32_64x128x16_F16, WGMMA_F32_64x128x16_BF16,
                     WGMMA_F32_64x128x8_TF32, WGMMA_F32_64x128x32_F8E4M3FN,
                     MMA_F32_16x8x16_F16, MMA_F16_16x8x16_F16,
                     MMA_F32_16x8x16_BF16, MMA_F32_16x8x8_TF32,
                     MMA_I32_16x8x32_I8];

  // Dense peaks of the whole GPU in GFLOP/s (GOP/s for i8), H100 SXM5 [WP];
  // the H200 datasheet [DS] gives the same figures rounded.
  let PeakCompute = [
    PBPeakCompute<F64, "vector", 33500>,
    PBPeakCompute<F64, "matrix", 66900>,
    PBPeakCompute<F32, "vector", 66900>,
    PBPeakCompute<TF32, "matrix", 494700>,
    PBPeakCompute<F16, "vector", 133800>,
    PBPeakCompute<F16, "matrix", 989400>,
    PBPeakCompute<BF16, "vector", 133800>,
    PBPeakCompute<BF16, "matrix", 989400>,
    PBPeakCompute<F8E4M3FN, "matrix", 1978900>,
    PBPeakCompute<F8E5M2, "matrix", 1978900>,
    PBPeakCompute<I8, "matrix", 1978900>
  ];
  // Measured estimate: empty-kernel launch-to-completion is a few us on
  // CUDA 12; not a vendor figure.
  let LaunchOverheadNs = 4000;
  let TileIRPath = [SM90_TileIR];
}
