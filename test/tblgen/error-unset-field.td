// RUN: not pb-tblgen -gen-target-registry -I %targets_td -I %S/Inputs %s 2>&1 | FileCheck %s
// A field without a default that a chip leaves unset is an error at the chip.
include "MinimalChip.td"

// CHECK: error-unset-field.td:[[@LINE+1]]:5: error: target 'no-clock': field 'ClockMHz' is not set
def NoClock : MinimalChip<"no-clock"> {
  let ClockMHz = ?;
}
