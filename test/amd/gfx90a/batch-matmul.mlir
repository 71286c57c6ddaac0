// RUN: pb-compile %s --target=amd-gfx90a -o %t.pbart
// RUN: %amd_artifact %t.pbart --plan --isa | FileCheck %s
// RUN: %amd_artifact %t.pbart --notes | FileCheck %s --check-prefix=NOTES
// RUN: pb-compile %s --target=cpu-host --options=pipeline=reference -o %t.ref.pbart
// RUN: pb-run --emulate %t.pbart --check-against=%t.ref.pbart | FileCheck %s --check-prefix=EMU
// batch-matmul through S1-S5 for amd-gfx90a (an f32 batch matmul on the f32
// MFMA unit, v_mfma_f32_16x16x4f32): code objects whose kernels use no scratch
// (no spills) and at most the 512 VGPRs of GFX90A.td's register file, and
// whose kernels, run in the emulator (wavefronts of 64), match a cpu-host
// build (pipeline=reference).

// CHECK: arch gfx90a
// CHECK: launch bmm_kernel grid [96, 1, 1] block [128, 1, 1] shared 0 args [2]
// CHECK-NEXT: launch bmm_kernel grid [16, 1, 1] block [256, 1, 1] shared 9216 args [2, 0, 1]
// CHECK: s_barrier
// CHECK: v_mfma_f32_16x16x4f32

// NOTES: amdhsa.kernels:
// NOTES-NOT: .private_segment_fixed_size: {{[1-9]}}
// NOTES-NOT: .vgpr_count: {{(51[3-9]|5[2-9][0-9]|[6-9][0-9][0-9]|[0-9]{4,})}}
// NOTES: .private_segment_fixed_size: 0
// NOTES: .vgpr_spill_count: 0

// EMU: OK bmm: 12288 values match the reference

func.func @bmm(%a: tensor<4x64x32xf32>, %b: tensor<4x32x48xf32>) -> tensor<4x64x48xf32> {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<4x64x48xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<4x64x48xf32>) -> tensor<4x64x48xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<4x64x32xf32>, tensor<4x32x48xf32>)
                           outs(%acc : tensor<4x64x48xf32>) -> tensor<4x64x48xf32>
  return %r : tensor<4x64x48xf32>
}
