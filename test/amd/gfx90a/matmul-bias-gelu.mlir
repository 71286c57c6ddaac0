// RUN: pb-compile %s --target=amd-gfx90a -o %t.pbart
// RUN: %amd_artifact %t.pbart --plan --isa | FileCheck %s
// RUN: %amd_artifact %t.pbart --notes | FileCheck %s --check-prefix=NOTES
// RUN: pb-compile %s --target=cpu-host --options=pipeline=reference -o %t.ref.pbart
// RUN: pb-run --emulate %t.pbart --check-against=%t.ref.pbart | FileCheck %s --check-prefix=EMU
// matmul-bias-gelu through S1-S5 for amd-gfx90a (matmul + bias + GELU in f32:
// C's fill, then the matmul on the f32 MFMA unit with the bias (argument 2)
// and GELU in its stores): code objects whose kernels use no scratch (no
// spills) and at most the 512 VGPRs of GFX90A.td's register file, and whose
// kernels, run in the emulator (wavefronts of 64), match a cpu-host build
// (pipeline=reference).

// CHECK: arch gfx90a
// CHECK: launch dense_gelu_kernel grid [384, 1, 1] block [64, 1, 1] shared 0 args [3]
// CHECK-NEXT: launch dense_gelu_kernel grid [12, 1, 1] block [256, 1, 1] shared 9216 args [3, 0, 1, 2]
// CHECK-NOT: launch
// CHECK: v_mfma_f32_16x16x4f32

// NOTES: amdhsa.kernels:
// NOTES-NOT: .private_segment_fixed_size: {{[1-9]}}
// NOTES-NOT: .vgpr_count: {{(51[3-9]|5[2-9][0-9]|[6-9][0-9][0-9]|[0-9]{4,})}}
// NOTES: .private_segment_fixed_size: 0
// NOTES: .vgpr_spill_count: 0

// EMU: OK dense_gelu: 12288 values match the reference

#id = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>
func.func @dense_gelu(%a: tensor<128x64xf32>, %b: tensor<64x96xf32>, %bias: tensor<96xf32>) -> tensor<128x96xf32> {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %rsqrt2 = arith.constant 0.70710678 : f32
  %init = tensor.empty() : tensor<128x96xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<128x96xf32>) -> tensor<128x96xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<128x64xf32>, tensor<64x96xf32>)
                      outs(%acc : tensor<128x96xf32>) -> tensor<128x96xf32>
  %out = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %bias : tensor<128x96xf32>, tensor<96xf32>) outs(%init : tensor<128x96xf32>) {
  ^bb0(%x: f32, %c: f32, %o: f32):
    %s = arith.addf %x, %c : f32
    %t = arith.mulf %s, %rsqrt2 : f32
    %e = math.erf %t : f32
    %p = arith.addf %e, %one : f32
    %h = arith.mulf %s, %half : f32
    %g = arith.mulf %h, %p : f32
    linalg.yield %g : f32
  } -> tensor<128x96xf32>
  return %out : tensor<128x96xf32>
}
