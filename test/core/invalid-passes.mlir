// RUN: pb-opt --split-input-file --verify-diagnostics --pass-pipeline="builtin.module(func.func(pb-tile))" %s
// RUN: pb-opt --verify-diagnostics --pass-pipeline="builtin.module(pb-attach-target)" %S/Inputs/no-target-option.mlir

// Target-driven passes refuse to guess when the module names no target.
// expected-error @+1 {{pb-tile needs a target: run with --target}}
func.func @no_target() {
  return
}
