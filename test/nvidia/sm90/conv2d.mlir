// RUN: pb-compile %s --target=nvidia-sm90 -o %t.pbart
// RUN: %nvidia_artifact %t.pbart --plan --ptx | FileCheck %s
// RUN: %if ptxas %{ %nvidia_artifact %t.pbart --ptxas sm_90a | FileCheck %s --check-prefix=PTXAS %}
// RUN: pb-compile %s --target=cpu-host --options=pipeline=reference -o %t.ref.pbart
// RUN: pb-run --emulate %t.pbart --check-against=%t.ref.pbart | FileCheck %s --check-prefix=EMU
// conv2d through S1-S5 for nvidia-sm90: every kernel reads its block and thread
// ids, ptxas assembles every module without spills, and the kernels,
// run in the emulator, match a cpu-host build of the module
// (pipeline=reference) within pb-run's default f32 tolerances.

// CHECK: arch sm_90a
// CHECK: entry conv
// CHECK: launch conv_kernel
// CHECK: .target sm_90a
// CHECK: .entry conv_kernel
// CHECK: %tid.x
// CHECK: ld.global
// CHECK: st.global
// PTXAS-NOT: error
// PTXAS: 0 bytes spill stores, 0 bytes spill loads

// EMU: conv: output 0 f32 [1,14,14,16]
// EMU: OK conv: 3136 values match the reference

func.func @conv(%x: tensor<1x16x16x8xf32>, %w: tensor<3x3x8x16xf32>) -> tensor<1x14x14x16xf32> {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<1x14x14x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<1x14x14x16xf32>) -> tensor<1x14x14x16xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%x, %w : tensor<1x16x16x8xf32>, tensor<3x3x8x16xf32>)
         outs(%acc : tensor<1x14x14x16xf32>) -> tensor<1x14x14x16xf32>
  return %r : tensor<1x14x14x16xf32>
}
