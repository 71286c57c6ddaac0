//===- TargetDesc.h - Descriptor types of the target tables -*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The typed form of what a chip's .td file states. pb-tblgen generates
// constant tables of these structs from targets/**/*.td; passes read a chip
// only through them (see TargetRegistry.h), never through chip names.
//
//===----------------------------------------------------------------------===//

#ifndef PB_TARGET_TARGETDESC_H
#define PB_TARGET_TARGETDESC_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>

namespace mlir::pb {

// Enumerations of the schema: ElementType, ComputeLevelKind, MemoryKind,
// MatrixScope, OperandLayout, MatrixLowering, Vendor.
#include "pb/Target/TargetEnums.h.inc"

/// One level of the compute hierarchy (grid, block, warp, lane; socket,
/// core, SIMD lane).
struct ComputeLevelDesc {
  llvm::StringRef name;
  ComputeLevelKind kind;
  /// Instances per parent fixed by hardware (lanes per warp), or 0.
  int64_t fixedCountPerParent;
  /// Most instances per parent a program may use (warps per block), or 0.
  int64_t maxCountPerParent;
  /// Hardware units on the chip (SMs, cores), or 0 when unknown statically.
  int64_t physicalUnits;
  /// Most instances resident at once on one physical unit of the root level
  /// (blocks or threads per SM), or 0 when not stated.
  int64_t maxResidentPerUnit;
};

/// One level of the memory hierarchy, innermost first.
struct MemoryLevelDesc {
  llvm::StringRef name;
  MemoryKind kind;
  /// The compute level whose one instance owns one instance of this memory.
  ComputeLevelKind scope;
  int64_t capacityBytes;
  int64_t bandwidthGBps;
  int64_t latencyCycles;
  int64_t banks;
  int64_t bankWidthBytes;
  int64_t lineBytes;
  /// Associativity of a set-associative cache, or 0.
  int64_t ways;
  /// Address space of explicitly placed buffers, or -1.
  int64_t addressSpace;
  /// Capacity on one physical unit of the root level, shared by the
  /// instances of `scope` resident there (an SM's registers), or 0.
  int64_t capacityBytesPerUnit;
  /// Granularity in which one instance of `scope` gets this memory, or 0.
  int64_t allocationGranuleBytes;
  /// Bytes reserved by the system per instance of `scope`.
  int64_t reservedBytesPerInstance;
};

/// A matrix multiply-accumulate unit, C[MxN] += A[MxK] * B[KxN].
struct MatrixUnitDesc {
  llvm::StringRef name;
  llvm::StringRef intrinsic;
  int64_t m, n, k;
  ElementType aType, bType, cType;
  MatrixScope scope;
  /// Subgroups issuing one instruction together (0: one lane or core).
  int64_t scopeSubgroups;
  OperandLayout layout;
  /// What S4 lowers this unit to; S4 dispatches on this field.
  MatrixLowering lowering;
  /// The MLIR operation of that lowering (`nvgpu.mma.sync`, ...).
  llvm::StringRef loweringOp;
  llvm::ArrayRef<llvm::StringRef> requiredFeatures;
  int64_t latencyCycles;
  /// Registers of the unit's own holding its operands and accumulators
  /// (tile registers); 0: the chip's vector registers.
  int64_t operandRegisters;
};

/// Peak throughput of the whole chip for one element type on one unit kind.
struct PeakComputeDesc {
  ElementType type;
  /// "matrix" or "vector".
  llvm::StringRef unit;
  int64_t gflops;
};

/// Bandwidth of one memory level, as the cost model reads it.
struct LevelBandwidthDesc {
  MemoryKind kind;
  llvm::StringRef level;
  int64_t bandwidthGBps;
};

/// Figures of the analytical cost model.
struct CostModelDesc {
  llvm::ArrayRef<PeakComputeDesc> peaks;
  llvm::ArrayRef<LevelBandwidthDesc> bandwidths;
  int64_t launchOverheadNs;
  int64_t clockMHz;

  /// Peak GFLOP/s for `type` on `unit`, or 0 when the chip states none.
  int64_t getPeakGFLOPs(ElementType type, llvm::StringRef unit) const;
};

/// The CUDA Tile IR path's figures (PBTileIRPath in Target.td).
struct TileIRPathDesc {
  llvm::StringRef gpuName;
  int64_t threadsPerTileBlock;
  int64_t accumulatorRegistersPerThread;
  int64_t operandRowBytes;
  int64_t convolutionOperandRowBytes;
};

/// Everything a chip's .td file states.
struct ChipDesc {
  llvm::StringRef name;
  Vendor vendor;
  llvm::StringRef description;
  llvm::ArrayRef<llvm::StringRef> sources;
  llvm::StringRef llvmTriple;
  llvm::StringRef llvmCPU;
  llvm::StringRef llvmFeatures;
  /// Features closed over implication, sorted.
  llvm::ArrayRef<llvm::StringRef> features;
  int64_t clockMHz;
  int64_t vectorWidthBits;
  llvm::ArrayRef<ComputeLevelDesc> computeLevels;
  llvm::ArrayRef<MemoryLevelDesc> memoryLevels;
  llvm::ArrayRef<const MatrixUnitDesc *> matrixUnits;
  const CostModelDesc *costModel;
  /// The CUDA Tile IR path's figures, or null where the chip has none.
  const TileIRPathDesc *tileIR;
  /// LLVM host features the running CPU needs for this chip to describe it.
  llvm::ArrayRef<llvm::StringRef> hostCPUFeatures;

  bool hasFeature(llvm::StringRef feature) const;
  /// The compute level of `kind`, or null.
  const ComputeLevelDesc *getComputeLevel(ComputeLevelKind kind) const;
  /// The innermost memory level of `kind`, or null.
  const MemoryLevelDesc *getMemoryLevel(MemoryKind kind) const;
  /// The cache levels, smallest first.
  llvm::SmallVector<const MemoryLevelDesc *> getCachesBySize() const;
  /// The level a kernel's parallel tasks map to: the one below the root
  /// (cores of a socket, blocks of a grid), or the root when it is the
  /// only one; null when the chip states none.
  const ComputeLevelDesc *getTaskLevel() const;
};

/// One entry of the target registry: a chip, or a name resolved to one of
/// several chips from the machine the compiler runs on.
struct TargetRegistryEntry {
  llvm::StringRef name;
  Vendor vendor;
  llvm::StringRef description;
  /// The chip, or null for a host-resolved entry.
  const ChipDesc *chip;
  /// Candidates of a host-resolved entry, most capable first.
  llvm::ArrayRef<const ChipDesc *> hostCandidates;
};

/// The registry generated from the .td files linked into this binary.
/// Defined by the generated target tables library, not by the core.
llvm::ArrayRef<TargetRegistryEntry> getTargetRegistry();

} // namespace mlir::pb

#endif // PB_TARGET_TARGETDESC_H
