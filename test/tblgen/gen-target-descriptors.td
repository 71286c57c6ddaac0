// RUN: pb-tblgen -gen-target-descriptors -I %targets_td -I %S/Inputs %s | FileCheck %s
// RUN: pb-tblgen -gen-target-descriptors -I %targets_td -I %S/Inputs %s | FileCheck %s --check-prefix=TILE
// A ChipDesc per chip: features closed over Implies, hierarchies, units.
include "MinimalChip.td"
def Chip : MinimalChip<"minimal">;

// FeatureTestMMA implies FeatureMatrixUnits.
// CHECK: static const llvm::StringRef kFeatures_Chip[] = {"matrix-units", "scratchpad", "test-mma", ""};
// CHECK: static const ComputeLevelDesc kComputeLevels_Chip[] = {
// CHECK-NEXT:   {"grid", ComputeLevelKind::Grid, 0, 0, 4, 0},
// CHECK-NEXT:   {"block", ComputeLevelKind::Block, 0, 0, 0, 6},
// CHECK-NEXT:   {"warp", ComputeLevelKind::Subgroup, 0, 8, 0, 0},
// CHECK-NEXT:   {"lane", ComputeLevelKind::Lane, 16, 0, 0, 0},
// CHECK: static const MemoryLevelDesc kMemoryLevels_Chip[] = {
// CHECK:   {"scratch", MemoryKind::Scratchpad, ComputeLevelKind::Block, 49152, 500, 20, 16, 4, 0, 0, 3, 98304, 256, 512},
// CHECK-NEXT:   {"l2", MemoryKind::Cache, ComputeLevelKind::Grid, 4194304, 2000, 200, 0, 0, 128, 16, -1, 0, 0, 0},
// CHECK: static const MatrixUnitDesc *const kMatrixUnits_Chip[] = {&kMatrixUnits[MU_TEST_I32_4x4x4_I8], nullptr};
// CHECK: static const ChipDesc kChips[] = {
// CHECK-NEXT:   {"minimal", Vendor::TestVendor,
// CHECK:   &kCostModel_Chip,
// CHECK-NEXT:   nullptr,

// A chip with a Tile IR path gets its figures, in the order of TileIRPathDesc.
def TilePath : PBTileIRPath {
  let GPUName = "sm_80";
  let ThreadsPerTileBlock = 128;
  let AccumulatorRegistersPerThread = 64;
  let OperandRowBytes = 128;
  let ConvolutionOperandRowBytes = 64;
}
def TileChip : MinimalChip<"minimal-tile"> {
  let TileIRPath = [TilePath];
}
// TILE: static const TileIRPathDesc kTileIR_TileChip = {"sm_80", 128, 64, 128, 64};
// TILE: {"minimal-tile", Vendor::TestVendor,
// TILE:   &kCostModel_TileChip,
// TILE-NEXT:   &kTileIR_TileChip,
