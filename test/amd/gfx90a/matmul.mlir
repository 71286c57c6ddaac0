// RUN: pb-compile %s --target=amd-gfx90a -o %t.pbart
// RUN: %amd_artifact %t.pbart --plan --isa | FileCheck %s
// RUN: %amd_artifact %t.pbart --notes | FileCheck %s --check-prefix=NOTES
// RUN: pb-compile %s --target=cpu-host --options=pipeline=reference -o %t.ref.pbart
// RUN: pb-run --emulate %t.pbart --check-against=%t.ref.pbart | FileCheck %s --check-prefix=EMU
// matmul through S1-S5 for amd-gfx90a (an f32 matmul on the f32 MFMA unit, one
// 16x16 unit per wavefront for 110 compute units): code objects whose kernels
// use no scratch (no spills) and at most the 512 VGPRs of GFX90A.td's register
// file, and whose kernels, run in the emulator (wavefronts of 64), match a
// cpu-host build (pipeline=reference).

// CHECK: arch gfx90a
// CHECK: launch matmul_kernel grid [24, 1, 1] block [512, 1, 1] shared 0 args [2]
// CHECK-NEXT: launch matmul_kernel grid [48, 1, 1] block [256, 1, 1] shared 9216 args [2, 0, 1]
// CHECK: v_mfma_f32_16x16x4f32

// NOTES: amdhsa.kernels:
// NOTES-NOT: .private_segment_fixed_size: {{[1-9]}}
// NOTES-NOT: .vgpr_count: {{(51[3-9]|5[2-9][0-9]|[6-9][0-9][0-9]|[0-9]{4,})}}
// NOTES: .private_segment_fixed_size: 0
// NOTES: .vgpr_spill_count: 0

// EMU: OK matmul: 49152 values match the reference

func.func @matmul(%a: tensor<256x128xf32>, %b: tensor<128x192xf32>) -> tensor<256x192xf32> {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<256x192xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<256x192xf32>) -> tensor<256x192xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<256x128xf32>, tensor<128x192xf32>)
                      outs(%acc : tensor<256x192xf32>) -> tensor<256x192xf32>
  return %mm : tensor<256x192xf32>
}
