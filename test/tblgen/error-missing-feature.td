// RUN: not pb-tblgen -gen-target-descriptors -I %targets_td -I %S/Inputs %s 2>&1 | FileCheck %s
// A chip may only list matrix units whose required features it has.
include "MinimalChip.td"

// CHECK: error-missing-feature.td:[[@LINE+1]]:5: error: target 'no-mma': matrix unit 'TEST_I32_4x4x4_I8' requires feature 'test-mma', which the chip does not have
def NoMMA : MinimalChip<"no-mma"> {
  let Features = [FeatureScratchpad];
}
