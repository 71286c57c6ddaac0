//===- X86_64_V4.td - x86-64-v4 (AVX-512) CPU core ---------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The generic x86-64-v4 level. The figures describe ONE CORE of a
// representative part: an AMD Zen 4 core (EPYC 9654 "Genoa", 96 cores, base
// clock 2.4 GHz), which runs 512-bit operations on two 256-bit FMA pipes.
// Intel cores with two 512-bit FMA units reach twice the flop/cycle.
//
// Per-core convention as in X86_64_V3.td: peaks and bandwidths are for one
// core at ClockMHz, DRAM bandwidth is the socket's divided by its cores.
// AVX512_BF16 and AVX512_VNNI are not part of the v4 level, so they are not
// claimed here although Zen 4 has them.
//
// Sources of the figures:
//  [ABI]  x86-64 psABI (System V ABI, AMD64 Architecture Processor
//         Supplement), "Micro-architecture levels": the v4 feature set.
//  [SOG]  Software Optimization Guide for the AMD Zen4 Microarchitecture:
//         32 KiB L1D (64 B lines), 1 MiB L2, 32 MiB L3 per CCD, two 256-bit
//         FMA pipes (a 512-bit op uses both), 4-cycle FMA, latencies.
//  [EPYC] AMD EPYC 9654 product specifications: 96 cores, 2.4 GHz base,
//         12 channels DDR5-4800 (460.8 GB/s).
//  [LLVM] LLVM X86TargetParser: the x86-64-v4 CPU name and host feature
//         names.
//
//===----------------------------------------------------------------------===//

def X86_64_V4_Socket : PBComputeLevel<"socket", Socket>;
def X86_64_V4_Core : PBComputeLevel<"core", Core>;   // count known at run time
def X86_64_V4_Lane : PBComputeLevel<"simd-lane", SIMDLane> {
  let FixedCountPerParent = 16;                // f32 lanes of a 512-bit zmm
}

def X86_64_V4_Registers : PBMemoryLevel<"zmm", RegisterFile, Core> {
  let CapacityBytes = 2048;                    // 32 zmm x 64 B [ABI]
  // Derived: 1 zmm FMA x 3 x 64 B x 2.4 GHz
  let BandwidthGBps = 461;
  let LatencyCycles = 1;
}
def X86_64_V4_L1 : PBMemoryLevel<"l1d", Cache, Core> {
  let CapacityBytes = 32768;                   // [SOG]
  let BandwidthGBps = 154;                     // derived: 64 B/clk x 2.4 GHz
  let LatencyCycles = 7;                       // FP/SIMD load-to-use [SOG]
  let LineBytes = 64;
  let Ways = 8;                                // [SOG]
}
def X86_64_V4_L2 : PBMemoryLevel<"l2", Cache, Core> {
  let CapacityBytes = 1048576;                 // 1 MiB [SOG]
  let BandwidthGBps = 77;                      // estimate: 32 B/clk x 2.4 GHz
  let LatencyCycles = 14;                      // [SOG]
  let LineBytes = 64;
  let Ways = 8;                                // [SOG]
}
def X86_64_V4_L3 : PBMemoryLevel<"l3", Cache, Socket> {
  // One CCD's 32 MiB: the most of the socket's L3 one core's data can use.
  let CapacityBytes = 33554432;
  // Estimate: 32 B/clk per core x 2.4 GHz
  let BandwidthGBps = 77;
  let LatencyCycles = 50;                      // average [SOG]
  let LineBytes = 64;
  let Ways = 16;                               // [SOG]
}
def X86_64_V4_DRAM : PBMemoryLevel<"dram", MainMemory, Socket> {
  // Placeholder (pb-tblgen requires > 0): the real size is only known at
  // run time; 12 channels x one 32 GiB DIMM is assumed.
  let CapacityBytes = 412316860416;
  // Derived: 460.8 GB/s / 96 cores [EPYC]
  let BandwidthGBps = 5;
  let LatencyCycles = 260;                     // estimate: ~110 ns at 2.4 GHz
  let LineBytes = 64;
  let AddressSpace = 0;                        // LLVM default address space
}

def X86_64_V4 : PBChip<"cpu-x86-64-v4", CPU> {
  let Description = "x86-64-v4 CPU (AVX-512 F/BW/CD/DQ/VL); figures per core "
                    # "of an AMD Zen 4 (EPYC 9654) reference part";
  let Sources = [
    "x86-64 psABI (System V ABI AMD64 Architecture Processor Supplement), "
    # "Micro-architecture levels",
    "Software Optimization Guide for the AMD Zen4 Microarchitecture",
    "AMD EPYC 9654 processor specifications",
    "LLVM X86TargetParser"
  ];

  let LLVMTriple = "x86_64-unknown-linux-gnu";
  let LLVMCPU = "x86-64-v4";

  let Features = [FeatureFMA, FeatureAVX2, FeatureF16C, FeatureAVX512];
  let ClockMHz = 2400;                         // EPYC 9654 base clock [EPYC]
  let VectorWidthBits = 512;

  let ComputeLevels = [X86_64_V4_Socket, X86_64_V4_Core, X86_64_V4_Lane];
  let MemoryLevels = [X86_64_V4_Registers, X86_64_V4_L1, X86_64_V4_L2,
                      X86_64_V4_L3, X86_64_V4_DRAM];
  let MatrixUnits = [VFMA_F32_1x16x1_F32, VFMA_F32_1x8x1_F32,
                     VFMA_BF16_1x16x1_F32, VFMA_BF16_1x8x1_F32,
                     VFMA_F16_1x16x1_F32, VFMA_F16_1x8x1_F32];

  // Per core, GFLOP/s: one 512-bit FMA per clock (two 256-bit pipes) [SOG].
  let PeakCompute = [
    PBPeakCompute<F32, "vector", 77>,          // 16 x 2 x 2.4 = 76.8
    PBPeakCompute<F64, "vector", 38>           // 8 x 2 x 2.4 = 38.4
  ];
  // Estimate, as for x86-64-v3: parallel-region fork/join; not a vendor
  // figure.
  let LaunchOverheadNs = 2000;

  // x86-64-v3's host features plus the v4 additions of [ABI] [LLVM].
  let HostCPUFeatures = ["avx", "avx2", "bmi", "bmi2", "f16c", "fma",
                         "lzcnt", "movbe", "xsave", "avx512f", "avx512bw",
                         "avx512cd", "avx512dq", "avx512vl"];
}
