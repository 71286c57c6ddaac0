// RUN: not pb-tblgen -gen-target-registry -I %targets_td -I %S/Inputs %s 2>&1 | FileCheck %s
// A figure of the wrong type is rejected by TableGen itself, at file:line.
include "MinimalChip.td"

def WrongType : MinimalChip<"wrong-type"> {
  // CHECK: error-wrong-type.td:[[@LINE+1]]:7: error: Field 'ClockMHz' of type 'int' is incompatible with value '"fast"' of type 'string'
  let ClockMHz = "fast";
}
