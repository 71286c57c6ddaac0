// RUN: not pb-tblgen -gen-target-registry -I %targets_td -I %S/Inputs %s 2>&1 | FileCheck %s
// Two chips may not share a target name.
include "MinimalChip.td"

// CHECK: error-duplicate-name.td:[[@LINE+4]]:5: error: duplicate target name 'twin'
// CHECK: error-duplicate-name.td:[[@LINE+1]]:5: note: first defined here
def TwinA : MinimalChip<"twin">;

def TwinB : MinimalChip<"twin">;
