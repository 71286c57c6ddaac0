// RUN: pb-compile %s --target=amd-gfx90a -o %t.pbart
// RUN: %amd_artifact %t.pbart --plan --isa | FileCheck %s
// RUN: %amd_artifact %t.pbart --notes | FileCheck %s --check-prefix=NOTES
// RUN: pb-compile %s --target=cpu-host --options=pipeline=reference -o %t.ref.pbart
// RUN: pb-run --emulate %t.pbart --check-against=%t.ref.pbart | FileCheck %s --check-prefix=EMU
// layernorm through S1-S5 for amd-gfx90a (layernorm: a workgroup per row,
// wavefront shuffles, v_rsq_f32): code objects whose kernels use no scratch
// (no spills) and at most the 512 VGPRs of GFX90A.td's register file, and
// whose kernels, run in the emulator (wavefronts of 64), match a cpu-host
// build (pipeline=reference).

// CHECK: arch gfx90a
// CHECK: launch layernorm_kernel grid [32, 1, 1] block [64, 1, 1] shared 256 args [0, 3, 1, 2]
// CHECK: ds_bpermute_b32
// CHECK: v_rsq_f32

// NOTES: amdhsa.kernels:
// NOTES-NOT: .private_segment_fixed_size: {{[1-9]}}
// NOTES-NOT: .vgpr_count: {{(51[3-9]|5[2-9][0-9]|[6-9][0-9][0-9]|[0-9]{4,})}}
// NOTES: .private_segment_fixed_size: 0
// NOTES: .vgpr_spill_count: 0

// EMU: OK layernorm: 8192 values match the reference

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#col = affine_map<(i, j) -> (j)>
func.func @layernorm(%x: tensor<32x256xf32>, %g: tensor<256xf32>, %b: tensor<256xf32>) -> tensor<32x256xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 256.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %e1 = tensor.empty() : tensor<32xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<32xf32>) -> tensor<32xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<32x256xf32>) outs(%z1 : tensor<32xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<32xf32>
  %e2 = tensor.empty() : tensor<32x256xf32>
  %cent = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum : tensor<32x256xf32>, tensor<32xf32>) outs(%e2 : tensor<32x256xf32>) {
  ^bb0(%v: f32, %s: f32, %o: f32):
    %m = arith.divf %s, %n : f32
    %c = arith.subf %v, %m : f32
    linalg.yield %c : f32
  } -> tensor<32x256xf32>
  %var = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%cent : tensor<32x256xf32>) outs(%z1 : tensor<32xf32>) {
  ^bb0(%c: f32, %acc: f32):
    %q = arith.mulf %c, %c : f32
    %s = arith.addf %acc, %q : f32
    linalg.yield %s : f32
  } -> tensor<32xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #col, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%cent, %var, %g, %b : tensor<32x256xf32>, tensor<32xf32>, tensor<256xf32>, tensor<256xf32>)
      outs(%e2 : tensor<32x256xf32>) {
  ^bb0(%c: f32, %v: f32, %gg: f32, %bb: f32, %o: f32):
    %vm = arith.divf %v, %n : f32
    %ve = arith.addf %vm, %eps : f32
    %r = math.rsqrt %ve : f32
    %t = arith.mulf %c, %r : f32
    %u = arith.mulf %t, %gg : f32
    %w = arith.addf %u, %bb : f32
    linalg.yield %w : f32
  } -> tensor<32x256xf32>
  return %y : tensor<32x256xf32>
}
