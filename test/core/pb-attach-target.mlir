// RUN: pb-opt --split-input-file --verify-diagnostics --pb-attach-target="target=nvidia-sm90" %s | FileCheck %s

// The pass attaches the named chip to the module.
// CHECK-LABEL: module attributes {pb.target = #pb.target<"nvidia-sm90">}
// CHECK: func.func @plain
module {
  func.func @plain() { return }
}

// -----

// Re-attaching the same target is a no-op.
// CHECK-LABEL: module attributes {pb.target = #pb.target<"nvidia-sm90">}
// CHECK: func.func @same
module attributes {pb.target = #pb.target<"nvidia-sm90">} {
  func.func @same() { return }
}

// -----

// A module compiled for another chip cannot be retargeted silently.
// expected-error @+1 {{module already targets 'amd-gfx942', cannot retarget it to 'nvidia-sm90'}}
module attributes {pb.target = #pb.target<"amd-gfx942">} {
  func.func @other() { return }
}
