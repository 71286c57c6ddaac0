// A complete chip with made-up figures, which the tblgen tests derive from
// and break one field at a time.
include "Target.td"

def FeatureTestMMA : PBFeature<"test-mma", "a test matrix unit",
                               [FeatureMatrixUnits]>;

def TEST_I32_4x4x4_I8
    : PBMatrixUnit<"test.mma.4x4x4", 4, 4, 4, I8, I8, I32, SubgroupScope,
                   RegistersRowCol, GPUSubgroupMma> {
  let Requires = [FeatureTestMMA];
  let LatencyCycles = 8;
}

def TestGrid : PBComputeLevel<"grid", Grid> { let PhysicalUnits = 4; }
def TestBlock : PBComputeLevel<"block", Block> { let MaxResidentPerUnit = 6; }
def TestWarp : PBComputeLevel<"warp", Subgroup> { let MaxCountPerParent = 8; }
def TestLane : PBComputeLevel<"lane", Lane> { let FixedCountPerParent = 16; }

def TestRegisters : PBMemoryLevel<"registers", RegisterFile, Lane> {
  let CapacityBytes = 256;
  let BandwidthGBps = 1000;
  let LatencyCycles = 1;
}
def TestScratch : PBMemoryLevel<"scratch", Scratchpad, Block> {
  let CapacityBytes = 49152;
  let BandwidthGBps = 500;
  let LatencyCycles = 20;
  let Banks = 16;
  let BankWidthBytes = 4;
  let CapacityBytesPerUnit = 98304;
  let AllocationGranuleBytes = 256;
  let ReservedBytesPerInstance = 512;
  let AddressSpace = 3;
}
def TestL2 : PBMemoryLevel<"l2", Cache, Grid> {
  let CapacityBytes = 4194304;
  let BandwidthGBps = 2000;
  let LatencyCycles = 200;
  let LineBytes = 128;
  let Ways = 16;
}
def TestDRAM : PBMemoryLevel<"dram", MainMemory, Grid> {
  let CapacityBytes = 1073741824;
  let BandwidthGBps = 100;
  let LatencyCycles = 400;
  let AddressSpace = 1;
}

class MinimalChip<string name> : PBChip<name, TestVendor> {
  let Description = "minimal test chip";
  let Sources = ["invented for tests"];
  let LLVMTriple = "nvptx64-nvidia-cuda";
  let LLVMCPU = "sm_80";
  let Features = [FeatureTestMMA, FeatureScratchpad];
  let ClockMHz = 1000;
  let VectorWidthBits = 128;
  let ComputeLevels = [TestGrid, TestBlock, TestWarp, TestLane];
  let MemoryLevels = [TestRegisters, TestScratch, TestL2, TestDRAM];
  let MatrixUnits = [TEST_I32_4x4x4_I8];
  let PeakCompute = [PBPeakCompute<I8, "matrix", 1000>,
                     PBPeakCompute<F32, "vector", 250>];
  let LaunchOverheadNs = 2000;
}
