// RUN: pb-tblgen -gen-matrix-units -I %targets_td -I %S/Inputs %s | FileCheck %s
// One MatrixUnitDesc per named unit, with the lowering S4 dispatches on.
include "MinimalChip.td"
def Chip : MinimalChip<"minimal">;

// CHECK: static const llvm::StringRef kRequires_TEST_I32_4x4x4_I8[] = {"test-mma", ""};
// CHECK: enum MatrixUnitIndex : unsigned {
// CHECK-NEXT:   MU_TEST_I32_4x4x4_I8,
// CHECK: static const MatrixUnitDesc kMatrixUnits[] = {
// CHECK-NEXT: {"TEST_I32_4x4x4_I8", "test.mma.4x4x4", 4, 4, 4,
// CHECK-NEXT: ElementType::I8, ElementType::I8, ElementType::I32,
// CHECK-NEXT: MatrixScope::SubgroupScope, 1, OperandLayout::RegistersRowCol,
// CHECK-NEXT: MatrixLowering::GPUSubgroupMma, "gpu.subgroup_mma_compute",
// CHECK-NEXT: llvm::ArrayRef<llvm::StringRef>(kRequires_TEST_I32_4x4x4_I8, size_t(1)), 8, 0},
