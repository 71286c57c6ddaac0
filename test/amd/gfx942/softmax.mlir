// RUN: pb-compile %s --target=amd-gfx942 -o %t.pbart
// RUN: %amd_artifact %t.pbart --plan --isa | FileCheck %s
// RUN: %amd_artifact %t.pbart --notes | FileCheck %s --check-prefix=NOTES
// RUN: pb-compile %s --target=cpu-host --options=pipeline=reference -o %t.ref.pbart
// RUN: pb-run --emulate %t.pbart --check-against=%t.ref.pbart | FileCheck %s --check-prefix=EMU
// softmax through S1-S5 for amd-gfx942 (softmax: a workgroup per row, the row reductions across the wavefront
// by ds_bpermute shuffles and through LDS): code objects whose
// kernels use no scratch (no spills) and at most the 512 VGPRs of
// GFX942.td's register file, and whose kernels, run in the emulator
// (wavefronts of 64), match a cpu-host build (pipeline=reference).

// CHECK: arch gfx942
// CHECK: launch softmax_kernel grid [64, 1, 1] block [64, 1, 1] shared 256 args [0, 1]
// CHECK: global_load_dwordx4
// CHECK: ds_bpermute_b32
// CHECK: ds_write_b32
// CHECK: ds_read_b32

// NOTES: amdhsa.kernels:
// NOTES-NOT: .private_segment_fixed_size: {{[1-9]}}
// NOTES-NOT: .vgpr_count: {{(51[3-9]|5[2-9][0-9]|[6-9][0-9][0-9]|[0-9]{4,})}}
// NOTES: .private_segment_fixed_size: 0
// NOTES: .vgpr_spill_count: 0

// EMU: OK softmax: 8192 values match the reference

func.func @softmax(%x: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %e = tensor.empty() : tensor<64x128xf32>
  %y = linalg.softmax dimension(1) ins(%x : tensor<64x128xf32>)
                      outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %y : tensor<64x128xf32>
}
