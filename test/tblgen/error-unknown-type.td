// RUN: not pb-tblgen -gen-matrix-units -I %targets_td -I %S/Inputs %s 2>&1 | FileCheck %s
// A matrix unit naming an element type the schema does not define.
include "MinimalChip.td"

// CHECK: error-unknown-type.td:[[@LINE+2]]:{{[0-9]+}}: error: Variable not defined: 'F17'
def BAD_F32_4x4x4_F17
    : PBMatrixUnit<"bad", 4, 4, 4, F17, F16, F32, SubgroupScope,
                   RegistersRowCol, GPUSubgroupMma> {
  let LatencyCycles = 4;
}
