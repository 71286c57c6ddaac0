// RUN: pb-opt --split-input-file --verify-diagnostics %s

// expected-error @+1 {{unknown target 'nvidia-sm75'; valid targets: amd-gfx90a, amd-gfx942, cpu-host, cpu-sapphire-rapids, cpu-x86-64-v3, cpu-x86-64-v4, cpu-zen4, nvidia-sm80, nvidia-sm90}}
module attributes {pb.target = #pb.target<"nvidia-sm75">} {
}

// -----

// expected-error @+1 {{'pb.target' may only be attached to a builtin.module}}
func.func @on_func() attributes {pb.target = #pb.target<"nvidia-sm80">} {
  return
}

// -----

// expected-error @+1 {{'pb.target' must be a #pb.target attribute, got "nvidia-sm80"}}
module attributes {pb.target = "nvidia-sm80"} {
}

// -----

// expected-error @+1 {{'pb.host_clock_mhz' is a positive integer attribute (MHz) of a builtin.module}}
module attributes {pb.host_clock_mhz = 0 : i64, pb.target = #pb.target<"cpu-zen4">} {
}

// -----

// expected-error @+1 {{'pb.host_clock_mhz' is a positive integer attribute (MHz) of a builtin.module}}
func.func @clock_on_func() attributes {pb.host_clock_mhz = 3000 : i64} {
  return
}

// -----

// expected-error @+1 {{unknown pb attribute 'pb.tile'}}
module attributes {pb.tile = 4} {
}

// -----

func.func @keep_layout_on_alloc() {
  // expected-error @+1 {{'pb.keep_layout' is a unit attribute of linalg.generic}}
  %a = memref.alloc() {pb.keep_layout} : memref<4xf32>
  return
}
