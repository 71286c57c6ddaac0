// RUN: pb-compile %s --target=nvidia-sm80 -o %t.pbart
// RUN: %nvidia_artifact %t.pbart --plan --ptx | FileCheck %s
// RUN: %if ptxas %{ %nvidia_artifact %t.pbart --ptxas sm_80 | FileCheck %s --check-prefix=PTXAS %}
// RUN: pb-compile %s --target=cpu-host --options=pipeline=reference -o %t.ref.pbart
// RUN: pb-run --emulate %t.pbart --check-against=%t.ref.pbart | FileCheck %s --check-prefix=EMU
// batch-matmul through S1-S5 for nvidia-sm80: every kernel reads its block and thread
// ids, ptxas assembles every module without spills, and the kernels,
// run in the emulator, match a cpu-host build of the module
// (pipeline=reference) within pb-run's default f32 tolerances.

// CHECK: arch sm_80
// CHECK: entry bmm
// CHECK: launch bmm_kernel
// CHECK: .target sm_80
// CHECK: .entry bmm_kernel
// CHECK: %tid.x
// CHECK: ld.global
// CHECK: st.global
// PTXAS-NOT: error
// PTXAS: 0 bytes spill stores, 0 bytes spill loads

// EMU: bmm: output 0 f32 [4,64,48]
// EMU: OK bmm: 12288 values match the reference

func.func @bmm(%a: tensor<4x64x32xf32>, %b: tensor<4x32x48xf32>) -> tensor<4x64x48xf32> {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<4x64x48xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<4x64x48xf32>) -> tensor<4x64x48xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<4x64x32xf32>, tensor<4x32x48xf32>)
                           outs(%acc : tensor<4x64x48xf32>) -> tensor<4x64x48xf32>
  return %r : tensor<4x64x48xf32>
}
