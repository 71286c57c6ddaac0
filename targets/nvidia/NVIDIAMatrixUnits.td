//===- NVIDIAMatrixUnits.td - NVIDIA tensor-core units ---*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Tensor-core matrix units shared by the NVIDIA chips. `Intrinsic` holds the
// PTX instruction (LLVM has no wgmma.mma_async intrinsic; MLIR's NVVM
// dialect emits it as inline PTX), so both families are spelled in PTX.
//
// Sources:
//  * PTX ISA 8.0, "Warp Level Matrix Multiply-Accumulate Instructions":
//    mma.m16n8k16 (.f16/.bf16), mma.m16n8k8 (.tf32), mma.m16n8k32 (.s8),
//    all with .row.col layouts, sm_80+.
//  * PTX ISA 8.0, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate
//    Instructions": wgmma.mma_async shapes m64nNk16 (.f16/.bf16), m64nNk8
//    (.tf32), m64nNk32 (.e4m3/.e5m2/.s8), N a multiple of 8 up to 256, sm_90a.
//  * NVIDIA A100 Tensor Core GPU Architecture whitepaper (2020) and NVIDIA
//    H100 Tensor Core GPU Architecture whitepaper (2022): per-SM tensor-core
//    rates used to derive the issue intervals below.
//
// LatencyCycles are ESTIMATES, not vendor figures. mma.sync: every shape
// below takes 8 cycles per tensor core at the A100 peak rate (e.g. m16n8k16
// f16 = 2048 FMA at 256 FMA/clk/tensor core); warp-level microbenchmark
// studies (e.g. Sun et al., "Dissecting Tensor Cores via Microbenchmarks",
// IEEE TPDS 2023; Abdelkhalik et al., "Demystifying the Nvidia Ampere
// Architecture through Microbenchmarking and Instruction-level Analysis",
// HPEC 2022) report dependent-issue latencies around 30 cycles on A100;
// 32 is used. H100 keeps mma.sync latency in the same range. wgmma: each
// m64n128 unit below takes 64 cycles per SM at the H100 peak rate (e.g.
// 64*128*16 FMA at 2048 FMA/clk/SM); 128 adds shared-memory operand fetch
// and pipeline fill, an estimate.
//
//===----------------------------------------------------------------------===//

//===----------------------------------------------------------------------===//
// Warp-level mma.sync (sm_80+): one warp, A/B/C fragments in registers.
//===----------------------------------------------------------------------===//

def MMA_F32_16x8x16_F16
    : PBMatrixUnit<"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
                   16, 8, 16, F16, F16, F32, SubgroupScope, RegistersRowCol,
                   NVGPUMmaSync> {
  let Requires = [FeatureMMASync];
  let LatencyCycles = 32;
}

def MMA_F16_16x8x16_F16
    : PBMatrixUnit<"mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16",
                   16, 8, 16, F16, F16, F16, SubgroupScope, RegistersRowCol,
                   NVGPUMmaSync> {
  let Requires = [FeatureMMASync];
  let LatencyCycles = 32;
}

def MMA_F32_16x8x16_BF16
    : PBMatrixUnit<"mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
                   16, 8, 16, BF16, BF16, F32, SubgroupScope, RegistersRowCol,
                   NVGPUMmaSync> {
  let Requires = [FeatureMMASync, FeatureBF16];
  let LatencyCycles = 32;
}

// tf32: operands are f32 registers; the tensor core reads 10 mantissa bits.
def MMA_F32_16x8x8_TF32
    : PBMatrixUnit<"mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32",
                   16, 8, 8, TF32, TF32, F32, SubgroupScope, RegistersRowCol,
                   NVGPUMmaSync> {
  let Requires = [FeatureMMASync, FeatureTF32];
  let LatencyCycles = 32;
}

def MMA_I32_16x8x32_I8
    : PBMatrixUnit<"mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32",
                   16, 8, 32, I8, I8, I32, SubgroupScope, RegistersRowCol,
                   NVGPUMmaSync> {
  let Requires = [FeatureMMASync];
  let LatencyCycles = 32;
}

//===----------------------------------------------------------------------===//
// Warpgroup-level wgmma.mma_async (sm_90a): four warps, A and B read from
// shared memory through matrix descriptors, accumulators in registers.
// N = 128 is the shape listed; wgmma accepts any N in 8..256 step 8.
//===----------------------------------------------------------------------===//

def WGMMA_F32_64x128x16_F16
    : PBMatrixUnit<"wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16",
                   64, 128, 16, F16, F16, F32, WarpgroupScope,
                   SharedMemoryDescriptors, NVGPUWarpgroupMma> {
  let Requires = [FeatureWGMMA, FeatureArchSpecific90a];
  let LatencyCycles = 128;
}

def WGMMA_F32_64x128x16_BF16
    : PBMatrixUnit<"wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16",
                   64, 128, 16, BF16, BF16, F32, WarpgroupScope,
                   SharedMemoryDescriptors, NVGPUWarpgroupMma> {
  let Requires = [FeatureWGMMA, FeatureArchSpecific90a, FeatureBF16];
  let LatencyCycles = 128;
}

def WGMMA_F32_64x128x8_TF32
    : PBMatrixUnit<"wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32",
                   64, 128, 8, TF32, TF32, F32, WarpgroupScope,
                   SharedMemoryDescriptors, NVGPUWarpgroupMma> {
  let Requires = [FeatureWGMMA, FeatureArchSpecific90a, FeatureTF32];
  let LatencyCycles = 128;
}

// PTX .e4m3 is the OCP FP8 E4M3 encoding (finite, NaN only), i.e. f8E4M3FN.
def WGMMA_F32_64x128x32_F8E4M3FN
    : PBMatrixUnit<"wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3",
                   64, 128, 32, F8E4M3FN, F8E4M3FN, F32, WarpgroupScope,
                   SharedMemoryDescriptors, NVGPUWarpgroupMma> {
  let Requires = [FeatureWGMMA, FeatureArchSpecific90a, FeatureFP8];
  let LatencyCycles = 128;
}
