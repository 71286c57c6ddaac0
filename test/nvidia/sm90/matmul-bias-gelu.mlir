// RUN: pb-compile %s --target=nvidia-sm90 -o %t.pbart
// RUN: %nvidia_artifact %t.pbart --plan --ptx | FileCheck %s
// RUN: %if ptxas %{ %nvidia_artifact %t.pbart --ptxas sm_90a | FileCheck %s --check-prefix=PTXAS %}
// RUN: pb-compile %s --target=cpu-host --options=pipeline=reference -o %t.ref.pbart
// RUN: pb-run --emulate %t.pbart --check-against=%t.ref.pbart | FileCheck %s --check-prefix=EMU
// matmul-bias-gelu through S1-S5 for nvidia-sm90: every kernel reads its block and thread
// ids, ptxas assembles every module without spills, and the kernels,
// run in the emulator, match a cpu-host build of the module
// (pipeline=reference) within pb-run's default f32 tolerances.

// CHECK: arch sm_90a
// CHECK: entry dense_gelu
// CHECK: launch dense_gelu_kernel
// CHECK: .target sm_90a
// CHECK: .entry dense_gelu_kernel
// CHECK: %tid.x
// CHECK: ld.global
// CHECK: st.global
// PTXAS-NOT: error
// PTXAS: 0 bytes spill stores, 0 bytes spill loads

// EMU: dense_gelu: output 0 f32 [128,96]
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
