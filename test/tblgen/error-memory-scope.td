// RUN: not pb-tblgen -gen-target-descriptors -I %targets_td -I %S/Inputs %s 2>&1 | FileCheck %s
// A memory level must be owned by one of the chip's compute levels.
include "MinimalChip.td"

def NoBlocks : MinimalChip<"no-blocks"> {
  let ComputeLevels = [PBComputeLevel<"grid", Grid>,
                       PBComputeLevel<"lane", Lane>];
}
// CHECK: MinimalChip.td:{{[0-9]+}}:{{[0-9]+}}: error: target 'no-blocks' memory level 'scratch': scope 'Block' is not one of the chip's compute levels
