//===- X86_64_V3.td - x86-64-v3 (AVX2 + FMA) CPU core ------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The generic x86-64-v3 level. A level has no figures of its own, so the
// figures describe ONE CORE of a representative part: an AMD Zen 3 core
// (EPYC 7763, 64 cores, base clock 2.45 GHz). Haswell and later Intel cores
// have the same two 256-bit FMA pipes, so the flop/cycle figures hold there.
//
// Per-core convention: peaks and bandwidths are for one core at ClockMHz;
// the core count is only known when the compiler runs. DRAM bandwidth is the
// reference socket's bandwidth divided by its cores (what each core gets when
// all run), so per-core compute / per-core DRAM keeps the socket's ratio.
//
// Sources of the figures:
//  [ABI]  x86-64 psABI (System V ABI, AMD64 Architecture Processor
//         Supplement), "Micro-architecture levels": the v3 feature set.
//  [SOG]  Software Optimization Guide for AMD EPYC 7003 Processors (Zen 3):
//         32 KiB 8-way L1D with 64 B lines and two 256-bit loads per cycle,
//         512 KiB L2 (32 B/clk to L1), 32 MiB L3 shared by the 8 cores of a
//         CCX, two 256-bit FMA pipes, 4-cycle FMA, load-to-use latencies.
//  [EPYC] AMD EPYC 7763 product specifications: 64 cores, 2.45 GHz base,
//         8 channels DDR4-3200 (204.8 GB/s).
//  [OPT]  Intel 64 and IA-32 Architectures Optimization Reference Manual
//         (Haswell and later: two 256-bit FMA units per core).
//  [LLVM] LLVM X86TargetParser: the x86-64-v3 CPU name and the host feature
//         names returned by llvm::sys::getHostCPUFeatures.
//
//===----------------------------------------------------------------------===//

def X86_64_V3_Socket : PBComputeLevel<"socket", Socket>;
def X86_64_V3_Core : PBComputeLevel<"core", Core>;   // count known at run time
def X86_64_V3_Lane : PBComputeLevel<"simd-lane", SIMDLane> {
  let FixedCountPerParent = 8;                 // f32 lanes of a 256-bit ymm
}

def X86_64_V3_Registers : PBMemoryLevel<"ymm", RegisterFile, Core> {
  let CapacityBytes = 512;                     // 16 ymm x 32 B [ABI]
  // Derived: 2 FMAs x 3 x 32 B x 2.45 GHz
  let BandwidthGBps = 470;
  let LatencyCycles = 1;
}
def X86_64_V3_L1 : PBMemoryLevel<"l1d", Cache, Core> {
  let CapacityBytes = 32768;                   // [SOG]
  // Derived: 2 x 32 B/clk x 2.45 GHz
  let BandwidthGBps = 157;
  // FP/SIMD load-to-use (4 integer) [SOG]
  let LatencyCycles = 7;
  let LineBytes = 64;
  let Ways = 8;                                // [SOG]
}
def X86_64_V3_L2 : PBMemoryLevel<"l2", Cache, Core> {
  let CapacityBytes = 524288;                  // 512 KiB [SOG]
  let BandwidthGBps = 78;                      // derived: 32 B/clk x 2.45 GHz
  let LatencyCycles = 12;                      // [SOG]
  let LineBytes = 64;
  let Ways = 8;                                // [SOG]
}
def X86_64_V3_L3 : PBMemoryLevel<"l3", Cache, Socket> {
  // One CCX's 32 MiB: the most of the socket's L3 one core's data can use.
  let CapacityBytes = 33554432;
  // Derived: 32 B/clk per core x 2.45 GHz
  let BandwidthGBps = 78;
  let LatencyCycles = 46;                      // average [SOG]
  let LineBytes = 64;
  let Ways = 16;                               // [SOG]
}
def X86_64_V3_DRAM : PBMemoryLevel<"dram", MainMemory, Socket> {
  // Placeholder (pb-tblgen requires > 0): the real size is only known at
  // run time; 8 channels x one 32 GiB DIMM is assumed.
  let CapacityBytes = 274877906944;
  // Derived: 204.8 GB/s / 64 cores [EPYC]
  let BandwidthGBps = 3;
  let LatencyCycles = 250;                     // estimate: ~100 ns at 2.45 GHz
  let LineBytes = 64;
  let AddressSpace = 0;                        // LLVM default address space
}

def X86_64_V3 : PBChip<"cpu-x86-64-v3", CPU> {
  let Description = "x86-64-v3 CPU (AVX2 + FMA); figures per core of an AMD "
                    # "Zen 3 (EPYC 7763) reference part";
  let Sources = [
    "x86-64 psABI (System V ABI AMD64 Architecture Processor Supplement), "
    # "Micro-architecture levels",
    "Software Optimization Guide for AMD EPYC 7003 Processors",
    "AMD EPYC 7763 processor specifications",
    "Intel 64 and IA-32 Architectures Optimization Reference Manual",
    "LLVM X86TargetParser"
  ];

  let LLVMTriple = "x86_64-unknown-linux-gnu";
  let LLVMCPU = "x86-64-v3";

  let Features = [FeatureFMA, FeatureAVX2, FeatureF16C];
  let ClockMHz = 2450;                         // EPYC 7763 base clock [EPYC]
  let VectorWidthBits = 256;

  let ComputeLevels = [X86_64_V3_Socket, X86_64_V3_Core, X86_64_V3_Lane];
  let MemoryLevels = [X86_64_V3_Registers, X86_64_V3_L1, X86_64_V3_L2,
                      X86_64_V3_L3, X86_64_V3_DRAM];
  let MatrixUnits = [VFMA_F32_1x8x1_F32, VFMA_BF16_1x8x1_F32,
                     VFMA_F16_1x8x1_F32];

  // Per core, GFLOP/s: 2 FMA pipes x lanes x 2 flop x 2.45 GHz [SOG].
  let PeakCompute = [
    PBPeakCompute<F32, "vector", 78>,          // 2 x 8 x 2 x 2.45
    PBPeakCompute<F64, "vector", 39>           // 2 x 4 x 2 x 2.45
  ];
  // Estimate: entering and leaving a parallel region (thread-pool fork and
  // join) costs on the order of microseconds; not a vendor figure.
  let LaunchOverheadNs = 2000;

  // The x86-64-v3 additions of [ABI], spelled as LLVM host features [LLVM].
  let HostCPUFeatures = ["avx", "avx2", "bmi", "bmi2", "f16c", "fma",
                         "lzcnt", "movbe", "xsave"];
}
