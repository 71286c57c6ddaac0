//===- ToyChip.td - Test-only chip "toy-chip" --------------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A chip that does not exist, for pb-tblgen and registry tests. It differs
// from every real chip where tests look: a 16-lane subgroup, a 4x4x4
// i8 -> i32 matrix unit, a 48 KiB scratchpad and exactly three memory
// levels. Included through TestTargets.td, never from AllTargets.td.
//
// Sources: none. EVERY FIGURE BELOW IS INVENTED FOR TESTING; they are only
// meant to be plausible (a small GPU at 1 GHz).
//
//===----------------------------------------------------------------------===//

def TOY_I32_4x4x4_I8
    : PBMatrixUnit<"toy.mma.4x4x4.i32.i8", 4, 4, 4, I8, I8, I32,
                   SubgroupScope, RegistersRowCol, GPUSubgroupMma> {
  let Requires = [FeatureMatrixUnits];
  let LatencyCycles = 8;                       // invented
}

def ToyChip_Grid : PBComputeLevel<"grid", Grid> {
  let PhysicalUnits = 4;                       // invented: 4 cores
}
def ToyChip_Block : PBComputeLevel<"block", Block>;
def ToyChip_Subgroup : PBComputeLevel<"subgroup", Subgroup> {
  let MaxCountPerParent = 16;                  // invented: 256 threads / 16
}
def ToyChip_Lane : PBComputeLevel<"lane", Lane> {
  let FixedCountPerParent = 16;                // invented: 16-wide subgroup
}

def ToyChip_Registers : PBMemoryLevel<"registers", RegisterFile, Lane> {
  let CapacityBytes = 512;                     // invented: 128 x 32-bit
  let BandwidthGBps = 12288;                   // invented
  let LatencyCycles = 1;
}
def ToyChip_Scratchpad : PBMemoryLevel<"scratchpad", Scratchpad, Block> {
  let CapacityBytes = 49152;                   // invented: 48 KiB
  let BandwidthGBps = 256;                     // invented: 64 B/clk x 4 x 1 GHz
  let LatencyCycles = 20;                      // invented
  let Banks = 16;                              // invented
  let BankWidthBytes = 4;
  let AddressSpace = 3;
}
def ToyChip_MainMemory : PBMemoryLevel<"dram", MainMemory, Grid> {
  let CapacityBytes = 4294967296;              // invented: 4 GiB
  let BandwidthGBps = 64;                      // invented
  let LatencyCycles = 300;                     // invented
  let LineBytes = 64;
  let AddressSpace = 1;
}

def ToyChip : PBChip<"toy-chip", TestVendor> {
  let Description = "test-only toy GPU with invented figures";
  let Sources = ["none: every figure is invented for testing"];

  let LLVMTriple = "nvptx64-nvidia-cuda";      // any valid triple; never run
  let LLVMCPU = "toy";

  let Features = [FeatureScratchpad, FeatureMatrixUnits, FeatureFMA];
  let ClockMHz = 1000;                         // invented
  let VectorWidthBits = 64;                    // invented

  let ComputeLevels = [ToyChip_Grid, ToyChip_Block, ToyChip_Subgroup,
                       ToyChip_Lane];
  let MemoryLevels = [ToyChip_Registers, ToyChip_Scratchpad,
                      ToyChip_MainMemory];
  let MatrixUnits = [TOY_I32_4x4x4_I8];

  // Invented; consistent with 4 cores x 16 lanes x 1 GHz.
  let PeakCompute = [
    PBPeakCompute<F32, "vector", 128>,         // 4 x 16 x 2 x 1 GHz
    PBPeakCompute<I8, "matrix", 512>           // 4 x 128 op/clk x 1 GHz
  ];
  let LaunchOverheadNs = 5000;                 // invented
}
