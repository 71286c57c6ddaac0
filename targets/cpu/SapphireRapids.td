//===- SapphireRapids.td - Intel Xeon, 2 x 512-bit FMA -----*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Intel Xeon Scalable cores of the 4th generation ("Sapphire Rapids") and the
// generations after it that keep its core cache sizes: x86-64-v4 with two
// 512-bit FMA units per core, a 48 KiB L1D and a 2 MiB L2. The figures
// describe ONE CORE of a representative part, the Xeon Platinum 8480+ (56
// cores, base clock 2.0 GHz).
//
// Per-core convention as in X86_64_V3.td: peaks and bandwidths are for one
// core at ClockMHz, DRAM bandwidth is the socket's divided by its cores. The
// generated code is x86-64-v4 code (LLVMCPU) plus AVX512-BF16, AVX512-VNNI,
// AMX-TILE, AMX-BF16 and AMX-INT8 (LLVMFeatures); bf16 and int8
// contractions run on AMX (AMX_BF16_16x16x32_F32, AMX_I8_16x16x64_I32);
// AVX512-FP16 is used only to recognize the part as a host.
//
// What sets it apart from X86_64_V4.td (an AMD Zen 4 core) for the
// optimizer: twice the f32 flop/cycle (two 512-bit FMA pipes instead of two
// 256-bit ones), a 1.5x larger L1D and a 2x larger L2, so that GEMM blocks
// (KC from the L1D, MC from the L2) and reduction chains differ.
//
// Sources of the figures:
//  [OPT]  Intel 64 and IA-32 Architectures Optimization Reference Manual,
//         Golden Cove microarchitecture: 48 KiB L1D (12-way, 64 B lines,
//         two 64 B loads per cycle), 2 MiB L2 (64 B/clk to L1), two 512-bit
//         FMA units on server parts, 4-cycle FMA latency, load-to-use
//         latencies.
//  [ARK]  Intel Xeon Platinum 8480+ product specifications: 56 cores,
//         2.0 GHz base, 105 MB L3, 8 channels DDR5-4800 (307.2 GB/s).
//  [LLVM] LLVM X86TargetParser: the host feature names "amx-tile" and
//         "avx512fp16" (first in Sapphire Rapids among x86 parts).
//
//===----------------------------------------------------------------------===//

def SapphireRapids_Socket : PBComputeLevel<"socket", Socket>;
def SapphireRapids_Core : PBComputeLevel<"core", Core>;  // count at run time
def SapphireRapids_Lane : PBComputeLevel<"simd-lane", SIMDLane> {
  let FixedCountPerParent = 16;                // f32 lanes of a 512-bit zmm
}

def SapphireRapids_Registers : PBMemoryLevel<"zmm", RegisterFile, Core> {
  let CapacityBytes = 2048;                    // 32 zmm x 64 B
  // Derived: 2 zmm FMAs x 3 operands x 64 B x 2.0 GHz
  let BandwidthGBps = 768;
  let LatencyCycles = 1;
}
def SapphireRapids_L1 : PBMemoryLevel<"l1d", Cache, Core> {
  let CapacityBytes = 49152;                   // 48 KiB [OPT]
  let BandwidthGBps = 256;                     // derived: 2 x 64 B/clk x 2.0 GHz
  let LatencyCycles = 5;                       // [OPT]
  let LineBytes = 64;
  let Ways = 12;                               // [OPT]
}
def SapphireRapids_L2 : PBMemoryLevel<"l2", Cache, Core> {
  let CapacityBytes = 2097152;                 // 2 MiB [OPT]
  let BandwidthGBps = 128;                     // derived: 64 B/clk x 2.0 GHz
  let LatencyCycles = 16;                      // [OPT]
  let LineBytes = 64;
  let Ways = 16;                               // [OPT]
}
def SapphireRapids_L3 : PBMemoryLevel<"l3", Cache, Socket> {
  // The socket's 105 MB, shared by all cores over the mesh [ARK].
  let CapacityBytes = 110100480;
  // Estimate: 32 B/clk per core x 2.0 GHz
  let BandwidthGBps = 64;
  let LatencyCycles = 100;                     // estimate: ~50 ns at 2.0 GHz
  let LineBytes = 64;
}
def SapphireRapids_DRAM : PBMemoryLevel<"dram", MainMemory, Socket> {
  // Assumed (pb-tblgen requires > 0): the real size is only known at
  // run time; 8 channels x one 64 GiB DIMM is assumed.
  let CapacityBytes = 549755813888;
  // Derived: 307.2 GB/s / 56 cores [ARK]
  let BandwidthGBps = 5;
  let LatencyCycles = 240;                     // estimate: ~120 ns at 2.0 GHz
  let LineBytes = 64;
  let AddressSpace = 0;                        // LLVM default address space
}

def SapphireRapids : PBChip<"cpu-sapphire-rapids", CPU> {
  let Description = "Intel Xeon with AMX (Sapphire Rapids and later): "
                    # "x86-64-v4 code, figures per core of a Xeon Platinum "
                    # "8480+ (two 512-bit FMA units, 48 KiB L1D, 2 MiB L2)";
  let Sources = [
    "Intel 64 and IA-32 Architectures Optimization Reference Manual "
    # "(Golden Cove)",
    "Intel Xeon Platinum 8480+ processor specifications",
    "LLVM X86TargetParser"
  ];

  let LLVMTriple = "x86_64-unknown-linux-gnu";
  let LLVMCPU = "x86-64-v4";
  let LLVMFeatures = "+avx512bf16,+avx512vnni,+amx-tile,+amx-bf16,+amx-int8";

  let Features = [FeatureFMA, FeatureAVX2, FeatureF16C, FeatureAVX512,
                  FeatureAVX512BF16, FeatureAVX512VNNI, FeatureAMXBF16,
                  FeatureAMXInt8];
  let ClockMHz = 2000;                         // Platinum 8480+ base [ARK]
  let VectorWidthBits = 512;

  let ComputeLevels = [SapphireRapids_Socket, SapphireRapids_Core,
                       SapphireRapids_Lane];
  let MemoryLevels = [SapphireRapids_Registers, SapphireRapids_L1,
                      SapphireRapids_L2, SapphireRapids_L3,
                      SapphireRapids_DRAM];
  let MatrixUnits = [VFMA_F32_1x16x1_F32, VFMA_F32_1x8x1_F32,
                     VFMA_BF16_1x16x1_F32, VFMA_BF16_1x8x1_F32,
                     VFMA_F16_1x16x1_F32, VFMA_F16_1x8x1_F32,
                     AMX_BF16_16x16x32_F32, AMX_I8_16x16x64_I32];
  // Not VDPBF16PS_BF16_1x16x2_F32, although the part has AVX512-BF16: it
  // issues one VDPBF16PS every other cycle, half the flops of its two FMA
  // units (measured on a Sapphire Rapids-class host: 1.37 G VDPBF16PS/s
  // against 5.5 G VFMADD231PS/s on one core, register operands), so the
  // widening FMA stays the faster path where AMX does not fit (M < 16).

  // Per core, GFLOP/s: two 512-bit FMAs per clock [OPT].
  let PeakCompute = [
    PBPeakCompute<F32, "vector", 128>,         // 16 x 2 x 2 x 2.0
    PBPeakCompute<F64, "vector", 64>,          // 8 x 2 x 2 x 2.0
    // VDPBF16PS: one per 2 clocks x 16 lanes x 2 pairs x 2 flop x 2.0
    // (measured rate, see the note under MatrixUnits).
    PBPeakCompute<BF16, "vector", 64>,
    // One 16x16x32 TDPBF16PS per 16 cycles: 1024 flop/clock x 2.0 [OPT].
    PBPeakCompute<BF16, "matrix", 2048>,
    // One 16x16x64 TDPBSSD per 16 cycles: 2048 op/clock x 2.0 [OPT].
    PBPeakCompute<I8, "matrix", 4096>
  ];
  // Estimate, as for x86-64-v3: parallel-region fork/join; not a vendor
  // figure.
  let LaunchOverheadNs = 2000;

  // x86-64-v4's host features plus AVX512-FP16 and AMX, which only these
  // Intel parts report, and the BF16 and VNNI extensions they have [LLVM].
  let HostCPUFeatures = ["avx", "avx2", "bmi", "bmi2", "f16c", "fma",
                         "lzcnt", "movbe", "xsave", "avx512f", "avx512bw",
                         "avx512cd", "avx512dq", "avx512vl", "avx512fp16",
                         "avx512bf16", "avx512vnni", "amx-tile", "amx-bf16",
                         "amx-int8"];
}
