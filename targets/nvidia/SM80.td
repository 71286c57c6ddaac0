//===- SM80.td - NVIDIA A100 (sm_80) -----------------------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// NVIDIA A100 SXM4 80GB (GA100, compute capability 8.0).
//
// Sources of the figures:
//  [WP]   NVIDIA A100 Tensor Core GPU Architecture whitepaper (2020): SM
//         count (108), 192 KiB combined L1/shared memory per SM, 40 MB L2,
//         L2 read bandwidth 5120 B/clk, 1410 MHz boost clock, and the peak
//         throughput table (dense figures; sparsity doubles matrix rates).
//  [DS]   NVIDIA A100 Tensor Core GPU datasheet: 80 GB HBM2e, 2039 GB/s
//         (SXM4 80GB).
//  [CUDA] CUDA C++ Programming Guide, table "Technical Specifications per
//         Compute Capability" (8.0): 1024 threads/block, 32 threads/warp,
//         255 registers/thread, 163 KB shared memory per block (opt-in),
//         164 KB per SM; section "Shared Memory" (32 banks of 4 bytes).
//  [PTX]  PTX ISA 8.0: sm_80 requires PTX ISA 7.0; ld.global.v4.b32 is the
//         widest vector load (128 bits).
//  [MB]   Abdelkhalik et al., "Demystifying the Nvidia Ampere Architecture
//         through Microbenchmarking and Instruction-level Analysis" (HPEC
//         2022): latencies marked "measured estimate" are approximately the
//         values reported there, rounded; they are not vendor figures.
// Figures marked "derived" are computed from the above as shown.
//
//===----------------------------------------------------------------------===//

def SM80_Grid : PBComputeLevel<"grid", Grid> {
  let PhysicalUnits = 108;                     // SMs [WP]
}
def SM80_Block : PBComputeLevel<"block", Block> {
  let MaxCountPerParent = 2147483647;          // grid x-dimension, 2^31-1 [CUDA]
  let MaxResidentPerUnit = 32;                 // resident blocks per SM [CUDA]
}
def SM80_Warp : PBComputeLevel<"warp", Subgroup> {
  let MaxCountPerParent = 32;                  // 1024 threads/block / 32 [CUDA]
  let MaxResidentPerUnit = 64;                 // resident warps per SM [CUDA]
}
def SM80_Lane : PBComputeLevel<"lane", Lane> {
  let FixedCountPerParent = 32;                // warp size [CUDA]
  let MaxResidentPerUnit = 2048;               // resident threads per SM [CUDA]
}

def SM80_Registers : PBMemoryLevel<"registers", RegisterFile, Lane> {
  let CapacityBytes = 1020;                    // 255 x 32-bit registers [CUDA]
  let CapacityBytesPerUnit = 262144;           // 64K 32-bit registers per SM [CUDA]
  // Registers are allocated per warp in units of 256 [CUDA occupancy
  // calculator]: 8 per lane.
  let AllocationGranuleBytes = 32;
  // Derived: 3 operands x 4 B x 32 lanes x 4 schedulers per SM per clock
  // = 1536 B/clk/SM, x 108 SMs x 1.41 GHz.
  let BandwidthGBps = 233902;
  let LatencyCycles = 1;
}
def SM80_Shared : PBMemoryLevel<"shared", Scratchpad, Block> {
  // 163 KiB per block, opt-in [CUDA]
  let CapacityBytes = 166912;
  // Derived: 128 B/clk/SM x 108 x 1.41 GHz
  let BandwidthGBps = 19492;
  let LatencyCycles = 23;                      // measured estimate [MB]
  let Banks = 32;                              // [CUDA]
  let BankWidthBytes = 4;
  let AddressSpace = 3;                        // NVPTX shared
  let CapacityBytesPerUnit = 167936;           // 164 KiB per SM [CUDA]
  let AllocationGranuleBytes = 128;            // [CUDA occupancy calculator]
  let ReservedBytesPerInstance = 1024;         // 1 KiB per block for the system [CUDA]
}
def SM80_L1 : PBMemoryLevel<"l1", Cache, Block> {
  // 192 KiB per SM is split between L1 and shared memory; 28 KiB is what
  // stays L1 when a block takes the full 164 KiB shared carve-out [WP].
  let CapacityBytes = 28672;
  let BandwidthGBps = 19492;                   // same SRAM as shared memory
  let LatencyCycles = 33;                      // measured estimate [MB]
  let LineBytes = 128;                         // 4 sectors of 32 B
}
def SM80_L2 : PBMemoryLevel<"l2", Cache, Grid> {
  let CapacityBytes = 41943040;                // 40 MiB [WP]
  // Derived: 5120 B/clk [WP] x 1.41 GHz
  let BandwidthGBps = 7219;
  // Measured estimate [MB], near partition; the far half of the split L2
  // is slower.
  let LatencyCycles = 200;
  let LineBytes = 128;
}
def SM80_HBM : PBMemoryLevel<"hbm", MainMemory, Grid> {
  let CapacityBytes = 85899345920;             // 80 GiB HBM2e [DS]
  let BandwidthGBps = 2039;                    // [DS]
  let LatencyCycles = 290;                     // measured estimate [MB]
  let AddressSpace = 1;                        // NVPTX global
}

// The Tile IR path: measured with tileiras 13.4 on f16/bf16 matmuls with
// f32 accumulation (M x N x K tiles, 128 threads per tile block): 128 x 64
// and 64 x 64 tiles (at most 64 accumulator registers per thread) with K
// tiles of 32 assemble to HMMA without local-memory spills for 256^3 to
// 4096^3, the BERT layer shapes and attention's products; K tiles of 64
// spilled 8 registers on BERT's 128 x 3072 x 768 at 64 x 64, and 128 x 128
// (128 per thread) spills at any K (LDL/STL in the SASS).
def SM80_TileIR : PBTileIRPath {
  let GPUName = "sm_80";
  let ThreadsPerTileBlock = 128;
  let AccumulatorRegistersPerThread = 64;
  let OperandRowBytes = 64;                    // K tile of 32 f16/bf16
  // Channel tiles of 16 f16: with 32, tileiras unrolled resnet50's 3x3
  // 64-channel convolution (18 iterations) and its 1x1 512 -> 2048 one on
  // 7 x 7 pixels (16) whole and spilled (26/46 and 34/33 LDL/STL); with 16
  // none of its twelve convolution shapes spills.
  let ConvolutionOperandRowBytes = 32;
}

def SM80 : PBChip<"nvidia-sm80", NVIDIA> {
  let Description = "NVIDIA A100 SXM4 80GB (Ampere GA100, sm_80)";
  let Sources = [
    "NVIDIA A100 Tensor Core GPU Architecture whitepaper (2020)",
    "NVIDIA A100 Tensor Core GPU datasheet",
    "CUDA C++ Programming Guide, Technical Specifications per Compute "
    # "Capability",
    "PTX ISA 8.0",
    "Abdelkhalik et al., Demystifying the Nvidia Ampere Architecture through "
    # "Microbenchmarking and Instruction-level Analysis, HPEC 2022 "
    # "(measured latency estimates)"
  ];

  let LLVMTriple = "nvptx64-nvidia-cuda";
  let LLVMCPU = "sm_80";
  let LLVMFeatures = "+ptx70";                 // sm_80 needs PTX ISA 7.0 [PTX]

  let Features = [FeatureAsyncCopy, FeatureScratchpad, FeatureMatrixUnits,
                  FeatureFMA, FeatureBF16, FeatureMMASync, FeatureLdMatrix,
                  FeatureCpAsync, FeatureTF32];
  let ClockMHz = 1410;                         // boost clock [WP]
  let VectorWidthBits = 128;                   // ld.global.v4.b32 [PTX]

  let ComputeLevels = [SM80_Grid, SM80_Block, SM80_Warp, SM80_Lane];
  let MemoryLevels = [SM80_Registers, SM80_Shared, SM80_L1, SM80_L2, SM80_HBM];
  let MatrixUnits = [MMA_F32_16x8x16_F16, MMA_F16_16x8x16_F16,
                     MMA_F32_16x8x16_BF16, MMA_F32_16x8x8_TF32,
                     MMA_I32_16x8x32_I8];

  // Dense peaks of the whole GPU in GFLOP/s (GOP/s for i8) [WP].
  let PeakCompute = [
    PBPeakCompute<F64, "vector", 9700>,
    PBPeakCompute<F64, "matrix", 19500>,
    PBPeakCompute<F32, "vector", 19500>,
    PBPeakCompute<TF32, "matrix", 156000>,
    PBPeakCompute<F16, "vector", 78000>,
    PBPeakCompute<F16, "matrix", 312000>,
    PBPeakCompute<BF16, "vector", 39000>,
    PBPeakCompute<BF16, "matrix", 312000>,
    PBPeakCompute<I8, "matrix", 624000>
  ];
  // Measured estimate: empty-kernel launch-to-completion is a few us on
  // CUDA 11/12; not a vendor figure.
  let LaunchOverheadNs = 4000;
  let TileIRPath = [SM80_TileIR];
}
