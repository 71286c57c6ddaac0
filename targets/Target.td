//===- Target.td - PolyBlocks target description classes ---*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The schema every chip description is written in. A chip is one `PBChip`
// record in targets/<vendor>/<Chip>.td; pb-tblgen reads these records and
// generates the target registry, the descriptor tables, the matrix-unit
// table, the cost-model tables and docs/targets.md.
//
// Rules of the schema:
//  * Capabilities are features (`PBFeature`), never version numbers. A chip
//    lists the features it introduces; `Implies` closes the set.
//  * Every figure carries its unit in its field name (Bytes, GBps, Cycles,
//    Ns, MHz, Bits, GFLOPs).
//  * Fields without a default must be set by every record; pb-tblgen reports
//    an unset field as an error at the record's file:line.
//
//===----------------------------------------------------------------------===//

//===----------------------------------------------------------------------===//
// Enumerations of the schema (C++ enums are generated from these records).
//===----------------------------------------------------------------------===//

/// An element type that a matrix unit or a peak figure refers to.
class PBElementType<string mlirName, int bitWidth> {
  /// The spelling of the type in MLIR (`f16`, `bf16`, `i8`, ...).
  string MLIRName = mlirName;
  int BitWidth = bitWidth;
}
def F64 : PBElementType<"f64", 64>;
def F32 : PBElementType<"f32", 32>;
/// TensorFloat-32: f32 storage, 10-bit mantissa inside the matrix unit.
def TF32 : PBElementType<"tf32", 32>;
def F16 : PBElementType<"f16", 16>;
def BF16 : PBElementType<"bf16", 16>;
def F8E4M3FN : PBElementType<"f8E4M3FN", 8>;
def F8E5M2 : PBElementType<"f8E5M2", 8>;
def F8E4M3FNUZ : PBElementType<"f8E4M3FNUZ", 8>;
def F8E5M2FNUZ : PBElementType<"f8E5M2FNUZ", 8>;
def I64 : PBElementType<"i64", 64>;
def I32 : PBElementType<"i32", 32>;
def I8 : PBElementType<"i8", 8>;

/// The kind of a level of the compute hierarchy. Passes map parallel loops
/// onto levels by kind, never by chip.
class PBComputeLevelKind<string description> {
  string Description = description;
}
def Grid : PBComputeLevelKind<"all blocks of one kernel launch (GPU)">;
def Block : PBComputeLevelKind<"a thread block / workgroup sharing a scratchpad">;
def Subgroup : PBComputeLevelKind<"a warp / wavefront executing in lockstep">;
def Lane : PBComputeLevelKind<"one thread of a subgroup">;
def Socket : PBComputeLevelKind<"a CPU package and its last-level cache">;
def Core : PBComputeLevelKind<"a CPU core running one software thread">;
def SIMDLane : PBComputeLevelKind<"one element lane of a vector register">;

/// The kind of a level of the memory hierarchy.
class PBMemoryKind<string description> {
  string Description = description;
}
def RegisterFile : PBMemoryKind<"registers private to a lane or core">;
def Scratchpad : PBMemoryKind<"software-managed on-chip memory (shared memory, LDS)">;
def Cache : PBMemoryKind<"hardware-managed cache">;
def MainMemory : PBMemoryKind<"off-chip memory (HBM, DRAM)">;

/// Which group of hardware threads executes one matrix instruction together.
class PBMatrixScope<int subgroups, string description> {
  /// Number of subgroups that cooperate (0: one lane or core on its own).
  int Subgroups = subgroups;
  string Description = description;
}
def ThreadScope : PBMatrixScope<0, "one thread / core issues it alone">;
def SubgroupScope : PBMatrixScope<1, "one warp / wavefront">;
def WarpgroupScope : PBMatrixScope<4, "four consecutive warps (a warpgroup)">;

/// How the operands of a matrix unit are laid out where it reads them.
class PBOperandLayout<string description> {
  string Description = description;
}
def RegistersRowCol
    : PBOperandLayout<"A row-major, B column-major fragments in registers">;
def SharedMemoryDescriptors
    : PBOperandLayout<"A and B read from swizzled shared memory through "
                      "matrix descriptors, C in registers">;
def RegistersBroadcast
    : PBOperandLayout<"A broadcast per lane, B and C as vector registers">;
def RegistersSplitK
    : PBOperandLayout<"A and B fragments split along K across lanes, C in "
                      "registers (AMD MFMA)">;
def TileRegisters
    : PBOperandLayout<"A, B and C as two-dimensional tile registers loaded "
                      "from memory rows; B's rows hold K's consecutive pairs "
                      "(16-bit types) or quads (8-bit types) per column "
                      "(VNNI)">;
def RegistersBroadcastGroups
    : PBOperandLayout<"A's K-consecutive pair (16-bit types) or quad (8-bit "
                      "types) broadcast as one 32-bit lane, B's rows holding "
                      "K's consecutive pairs or quads per column (VNNI) and C "
                      "as vector registers">;

/// How stage S4 lowers a target-neutral matrix op for this unit. S4 code of
/// each vendor dispatches on this and on nothing else.
class PBMatrixLowering<string dialectOp, string description> {
  /// The MLIR operation S4 emits.
  string DialectOp = dialectOp;
  string Description = description;
}
def NVGPUMmaSync : PBMatrixLowering<"nvgpu.mma.sync", "warp-level mma.sync">;
def NVGPUWarpgroupMma
    : PBMatrixLowering<"nvgpu.warpgroup.mma", "warpgroup-level wgmma">;
def GPUSubgroupMma
    : PBMatrixLowering<"gpu.subgroup_mma_compute", "portable WMMA fragments">;
def AMDGPUMfma : PBMatrixLowering<"amdgpu.mfma", "AMD matrix fused multiply-add">;
def VectorOuterProduct
    : PBMatrixLowering<"vector.outerproduct",
                       "broadcast-FMA register tile on SIMD units">;
def AMXTileMul
    : PBMatrixLowering<"amx.tile_mulf/amx.tile_muli",
                       "tile-register multiply (x86 AMX TMUL) of a core">;
def X86VectorDot
    : PBMatrixLowering<"x86vector.avx512.dot",
                       "dot products of 32-bit groups into vector lanes "
                       "(AVX512-BF16 VDPBF16PS) of a core">;
def AVX512VNNIDot
    : PBMatrixLowering<"llvm.call_intrinsic (llvm.x86.avx512.vpdpbusd.512)",
                       "u8 x s8 quad dot products into i32 lanes "
                       "(AVX512-VNNI VPDPBUSD) of a core; s8 A is offset "
                       "by 128 and the sums corrected by 128 x B's column "
                       "sums">;

//===----------------------------------------------------------------------===//
// Features.
//===----------------------------------------------------------------------===//

/// A capability. Passes test features by name; a chip states the features
/// it has and pb-tblgen closes the set over `Implies`.
class PBFeature<string name, string description, list<PBFeature> implies = []> {
  string Name = name;
  string Description = description;
  list<PBFeature> Implies = implies;
}

// Target-neutral capabilities that core passes may ask about.
def FeatureAsyncCopy
    : PBFeature<"async-copy",
                "asynchronous global-to-scratchpad copies, so scratchpad "
                "buffers can be multi-buffered">;
def FeatureScratchpad
    : PBFeature<"scratchpad", "a software-managed on-chip memory">;
def FeatureMatrixUnits
    : PBFeature<"matrix-units", "dedicated matrix multiply-accumulate units">;
def FeatureFMA : PBFeature<"fma", "fused multiply-add on vectors">;
def FeatureBF16 : PBFeature<"bf16", "bfloat16 arithmetic">;
def FeatureFP8 : PBFeature<"fp8", "8-bit floating-point matrix arithmetic">;

//===----------------------------------------------------------------------===//
// Hierarchy levels, matrix units and cost figures.
//===----------------------------------------------------------------------===//

/// One level of the compute hierarchy, listed outermost first in a chip.
class PBComputeLevel<string name, PBComputeLevelKind kind> {
  string Name = name;
  PBComputeLevelKind Kind = kind;
  /// Instances of this level per instance of the enclosing level when the
  /// hardware fixes it (lanes per warp); 0 when the program chooses.
  int FixedCountPerParent = 0;
  /// Most instances per enclosing instance a program may ask for (threads
  /// per block); 0 when only the problem size bounds it.
  int MaxCountPerParent = 0;
  /// Hardware units of this level on the whole chip (SMs, cores); 0 when the
  /// level is virtual or the number is only known when the compiler runs.
  int PhysicalUnits = 0;
  /// Most instances of this level resident at once on one physical unit of
  /// the root level (blocks and threads per SM), for occupancy; 0 when not
  /// stated.
  int MaxResidentPerUnit = 0;
}

/// One level of the memory hierarchy, listed innermost (fastest) first.
class PBMemoryLevel<string name, PBMemoryKind kind, PBComputeLevelKind scope> {
  string Name = name;
  PBMemoryKind Kind = kind;
  /// The compute level whose one instance owns one instance of this memory
  /// (registers: a lane; shared memory: a block; L2: the grid).
  PBComputeLevelKind Scope = scope;
  /// Capacity usable by one instance of `Scope`.
  int CapacityBytes = ?;
  /// Aggregate bandwidth of the whole chip at this level.
  int BandwidthGBps = ?;
  /// Load-to-use latency.
  int LatencyCycles = ?;
  /// Number of banks and their width (0 when not banked).
  int Banks = 0;
  int BankWidthBytes = 0;
  /// Line or transaction size (0 when not meaningful).
  int LineBytes = 0;
  /// Associativity of a set-associative cache: lines of one set (0 when
  /// not stated or not a cache).
  int Ways = 0;
  /// LLVM / GPU-dialect address space of buffers placed at this level
  /// (-1 when it cannot be addressed explicitly, e.g. a cache).
  int AddressSpace = -1;
  /// Capacity of this memory on one physical unit of the root level (an
  /// SM's register file or shared memory), which the instances of `Scope`
  /// resident there share; 0 when not stated (occupancy ignores it).
  int CapacityBytesPerUnit = 0;
  /// Granularity in which one instance of `Scope` is given this memory
  /// (registers of a lane, shared memory of a block); 0: byte-exact.
  int AllocationGranuleBytes = 0;
  /// Bytes of this memory the system reserves per instance of `Scope`
  /// (shared memory per block on NVIDIA GPUs).
  int ReservedBytesPerInstance = 0;
}

/// A matrix multiply-accumulate unit: C[MxN] += A[MxK] * B[KxN] in one
/// instruction issued by `Scope`. Record names follow
/// `<Unit>_<C>_<M>x<N>x<K>_<A>[_<B>]` (for example MMA_F32_16x8x16_F16).
class PBMatrixUnit<string intrinsic, int m, int n, int k, PBElementType a,
                   PBElementType b, PBElementType c, PBMatrixScope scope,
                   PBOperandLayout layout, PBMatrixLowering lowering> {
  /// The hardware instruction or LLVM intrinsic it stands for.
  string Intrinsic = intrinsic;
  int M = m;
  int N = n;
  int K = k;
  PBElementType AType = a;
  PBElementType BType = b;
  PBElementType CType = c;
  PBMatrixScope Scope = scope;
  PBOperandLayout Layout = layout;
  PBMatrixLowering Lowering = lowering;
  /// Features a chip must have for this unit to be usable.
  list<PBFeature> Requires = [];
  /// Cycles from issue to result, for the cost model.
  int LatencyCycles = ?;
  /// Registers of their own that hold the unit's operands and accumulators
  /// (AMX: 8 tile registers), from which the register blocking follows; 0:
  /// the operands live in the chip's vector registers.
  int OperandRegisters = 0;
}

/// What the CUDA Tile IR path (`--codegen=tile-ir`, NVIDIA) needs of a
/// chip: NVIDIA's assembler (tileiras) maps tiles onto threads, shared
/// memory and tensor cores itself, so its cost model sizes tiles by what
/// the assembler makes of them (docs/TileIR.md).
class PBTileIRPath {
  /// `tileiras --gpu-name`.
  string GPUName = ?;
  /// Threads tileiras gives a tile block of a contraction (the REQNTID of
  /// its cubins).
  int ThreadsPerTileBlock = ?;
  /// f32 accumulator registers per thread that a contraction tile may
  /// take (M x N / threads): the most for which tileiras keeps the kernels
  /// free of local-memory spills, measured on its SASS.
  int AccumulatorRegistersPerThread = ?;
  /// Bytes of an operand tile's row along the reduction (K tile = this /
  /// element bytes).
  int OperandRowBytes = ?;
  /// The same for the implicit-GEMM convolutions' channel tiles (their
  /// loops over filter offsets and channel tiles are short: tileiras
  /// unrolls short loops whole, which can spill).
  int ConvolutionOperandRowBytes = ?;
}

/// Peak arithmetic throughput of the whole chip for one element type on one
/// kind of unit.
class PBPeakCompute<PBElementType type, string unit, int gflops> {
  PBElementType Type = type;
  /// "matrix" (tensor cores, MFMA, AMX) or "vector" (CUDA cores, SIMD).
  string Unit = unit;
  int GFLOPs = gflops;
}

//===----------------------------------------------------------------------===//
// Vendors and chips.
//===----------------------------------------------------------------------===//

class PBVendor<string name> {
  string Name = name;
}
def NVIDIA : PBVendor<"nvidia">;
def AMD : PBVendor<"amd">;
def CPU : PBVendor<"cpu">;
/// Vendor of test-only chips.
def TestVendor : PBVendor<"test">;

/// One chip. Its record name is free; `Name` is what users type after
/// `--target=`.
class PBChip<string name, PBVendor vendor> {
  string Name = name;
  PBVendor Vendor = vendor;
  string Description = ?;
  /// Where the figures come from (vendor documents), for docs/targets.md.
  list<string> Sources = ?;

  /// Code generation identity for LLVM.
  string LLVMTriple = ?;
  string LLVMCPU = ?;
  string LLVMFeatures = "";

  list<PBFeature> Features = [];
  int ClockMHz = ?;
  /// Widest vector register (CPUs) or widest vector memory access (GPUs).
  int VectorWidthBits = ?;

  list<PBComputeLevel> ComputeLevels = ?;
  list<PBMemoryLevel> MemoryLevels = ?;
  list<PBMatrixUnit> MatrixUnits = [];

  list<PBPeakCompute> PeakCompute = ?;
  /// Fixed cost of one kernel launch or parallel-region entry.
  int LaunchOverheadNs = ?;
  /// The CUDA Tile IR path's figures (NVIDIA chips that tileiras targets;
  /// at most one).
  list<PBTileIRPath> TileIRPath = [];

  /// Host-resolved chips (cpu-host): the compiler picks, when it runs, the
  /// first candidate whose `HostCPUFeatures` the running CPU has, and uses
  /// that candidate's description.
  list<PBChip> HostCandidates = [];
  /// LLVM host feature names (as llvm::sys::getHostCPUFeatures spells them)
  /// that the running CPU must have for this chip to describe it.
  list<string> HostCPUFeatures = [];
}

/// A chip that stands for "the machine the compiler runs on".
class PBHostChip<string name, PBVendor vendor, list<PBChip> candidates> {
  string Name = name;
  PBVendor Vendor = vendor;
  string Description = ?;
  list<PBChip> HostCandidates = candidates;
}
