// RUN: pb-tblgen -gen-cost-model -I %targets_td -I %S/Inputs %s | FileCheck %s
// Peaks per element type and unit, bandwidth per level, launch overhead.
include "MinimalChip.td"
def Chip : MinimalChip<"minimal">;

// CHECK: static const PeakComputeDesc kPeaks_Chip[] = {
// CHECK-NEXT:   {ElementType::I8, "matrix", 1000},
// CHECK-NEXT:   {ElementType::F32, "vector", 250},
// CHECK: static const LevelBandwidthDesc kBandwidths_Chip[] = {
// CHECK-NEXT:   {MemoryKind::RegisterFile, "registers", 1000},
// CHECK-NEXT:   {MemoryKind::Scratchpad, "scratch", 500},
// CHECK-NEXT:   {MemoryKind::Cache, "l2", 2000},
// CHECK-NEXT:   {MemoryKind::MainMemory, "dram", 100},
// CHECK: static const CostModelDesc kCostModel_Chip = {kPeaks_Chip, kBandwidths_Chip, 2000, 1000};
