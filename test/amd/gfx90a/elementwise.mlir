// RUN: pb-compile %s --target=amd-gfx90a -o %t.pbart
// RUN: %amd_artifact %t.pbart --plan --isa | FileCheck %s
// RUN: %amd_artifact %t.pbart --notes | FileCheck %s --check-prefix=NOTES
// RUN: pb-compile %s --target=cpu-host --options=pipeline=reference -o %t.ref.pbart
// RUN: pb-run --emulate %t.pbart --check-against=%t.ref.pbart | FileCheck %s --check-prefix=EMU
// elementwise through S1-S5 for amd-gfx90a (an elementwise add over 1M floats:
// 16-byte global loads and stores): code objects whose kernels use no scratch
// (no spills) and at most the 512 VGPRs of GFX90A.td's register file, and
// whose kernels, run in the emulator (wavefronts of 64), match a cpu-host
// build (pipeline=reference).

// CHECK: arch gfx90a
// CHECK: launch add_kernel grid [1024, 1, 1] block [256, 1, 1] shared 0 args [0, 1, 2]
// CHECK: global_load_dwordx4
// CHECK: global_store_dwordx4

// NOTES: amdhsa.kernels:
// NOTES-NOT: .private_segment_fixed_size: {{[1-9]}}
// NOTES-NOT: .vgpr_count: {{(51[3-9]|5[2-9][0-9]|[6-9][0-9][0-9]|[0-9]{4,})}}
// NOTES: .private_segment_fixed_size: 0
// NOTES: .vgpr_spill_count: 0

// EMU: OK add: 1048576 values match the reference

func.func @add(%a: tensor<1024x1024xf32>, %b: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %e = tensor.empty() : tensor<1024x1024xf32>
  %r = linalg.add ins(%a, %b : tensor<1024x1024xf32>, tensor<1024x1024xf32>)
                  outs(%e : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  return %r : tensor<1024x1024xf32>
}
