// RUN: pb-compile %s --target=nvidia-sm80 -o %t.pbart
// RUN: %nvidia_artifact %t.pbart --plan --ptx | FileCheck %s
// RUN: %if ptxas %{ %nvidia_artifact %t.pbart --ptxas sm_80 | FileCheck %s --check-prefix=PTXAS %}
// RUN: pb-compile %s --target=cpu-host --options=pipeline=reference -o %t.ref.pbart
// RUN: pb-run --emulate %t.pbart --check-against=%t.ref.pbart | FileCheck %s --check-prefix=EMU
// softmax through S1-S5 for nvidia-sm80: every kernel reads its block and thread
// ids, ptxas assembles every module without spills, and the kernels,
// run in the emulator, match a cpu-host build of the module
// (pipeline=reference) within pb-run's default f32 tolerances.

// CHECK: arch sm_80
// CHECK: entry softmax
// CHECK: launch softmax_kernel
// CHECK: .target sm_80
// CHECK: .entry softmax_kernel
// CHECK: %tid.x
// CHECK: ld.global
// CHECK: st.global
// PTXAS-NOT: error
// PTXAS: 0 bytes spill stores, 0 bytes spill loads

// EMU: softmax: output 0 f32 [64,128]
// EMU: OK softmax: 8192 values match the reference

func.func @softmax(%x: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %e = tensor.empty() : tensor<64x128xf32>
  %y = linalg.softmax dimension(1) ins(%x : tensor<64x128xf32>)
                      outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %y : tensor<64x128xf32>
}
