// RUN: not pb-tblgen -gen-matrix-units -I %targets_td -I %S/Inputs %s 2>&1 | FileCheck %s
// A matrix unit's name states its shape; a mismatch is a typo.
include "MinimalChip.td"

// CHECK: error-matrix-unit-name.td:[[@LINE+1]]:5: error: matrix unit 'TYPO_F32_16x8x16_F16': the name does not contain its shape '_16x8x8_'
def TYPO_F32_16x8x16_F16
    : PBMatrixUnit<"typo", 16, 8, 8, F16, F16, F32, SubgroupScope,
                   RegistersRowCol, NVGPUMmaSync> {
  let LatencyCycles = 4;
}
