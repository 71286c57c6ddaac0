// RUN: not pb-tblgen -gen-target-enums -I %targets_td -I %S/Inputs %s 2>&1 | FileCheck %s
// Enumerations are part of the schema: a chip file may not add one.
include "MinimalChip.td"

// CHECK: error-enum-outside-schema.td:[[@LINE+1]]:5: error: 'F17' of class PBElementType must be defined in Target.td
def F17 : PBElementType<"f17", 17>;
