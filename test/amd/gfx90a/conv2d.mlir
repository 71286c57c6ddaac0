// RUN: pb-compile %s --target=amd-gfx90a -o %t.pbart
// RUN: %amd_artifact %t.pbart --plan --isa | FileCheck %s
// RUN: %amd_artifact %t.pbart --notes | FileCheck %s --check-prefix=NOTES
// RUN: pb-compile %s --target=cpu-host --options=pipeline=reference -o %t.ref.pbart
// RUN: pb-run --emulate %t.pbart --check-against=%t.ref.pbart | FileCheck %s --check-prefix=EMU
// conv2d through S1-S5 for amd-gfx90a (a 3x3 NHWC convolution in f32 as an
// implicit GEMM on the f32 MFMA unit): code objects whose kernels use no
// scratch (no spills) and at most the 512 VGPRs of GFX90A.td's register file,
// and whose kernels, run in the emulator (wavefronts of 64), match a cpu-host
// build (pipeline=reference).

// CHECK: arch gfx90a
// CHECK: launch conv_kernel grid [784, 1, 1] block [64, 1, 1] shared 0 args [2]
// CHECK-NEXT: launch conv_kernel grid [7, 1, 1] block [256, 1, 1] shared 9216 args [2, 0, 1]
// CHECK: global_load_dwordx4
// CHECK: s_barrier
// CHECK: v_mfma_f32_16x16x4f32

// NOTES: amdhsa.kernels:
// NOTES-NOT: .private_segment_fixed_size: {{[1-9]}}
// NOTES-NOT: .vgpr_count: {{(51[3-9]|5[2-9][0-9]|[6-9][0-9][0-9]|[0-9]{4,})}}
// NOTES: .private_segment_fixed_size: 0
// NOTES: .vgpr_spill_count: 0

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
