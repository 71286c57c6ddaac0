// RUN: pb-compile %s --target=nvidia-sm80 -o %t.pbart
// RUN: %nvidia_artifact %t.pbart --plan --ptx | FileCheck %s
// RUN: %if ptxas %{ %nvidia_artifact %t.pbart --ptxas sm_80 | FileCheck %s --check-prefix=PTXAS %}
// RUN: pb-compile %s --target=nvidia-sm80 --options=allow-tf32=1 -o %t.tf32.pbart
// RUN: %nvidia_artifact %t.tf32.pbart --plan --ptx | FileCheck %s --check-prefix=TF32
// RUN: %if ptxas %{ %nvidia_artifact %t.tf32.pbart --ptxas sm_80 | FileCheck %s --check-prefix=PTXAS %}
// RUN: pb-compile %s --target=cpu-host --options=pipeline=reference -o %t.ref.pbart
// RUN: pb-run --emulate %t.pbart --check-against=%t.ref.pbart | FileCheck %s --check-prefix=EMU
// RUN: pb-run --emulate %t.tf32.pbart --check-against=%t.ref.pbart --rtol=1e-3 --atol=2e-2 \
// RUN:   | FileCheck %s --check-prefix=EMU
// With allow-tf32 the matmul runs on the tensor cores and the bias + GELU
// epilogue runs in its stores: two launches (C's fill, then the kernel,
// which reads the bias, argument 2), no third for the epilogue.
// TF32: entry dense_gelu
// TF32: launch dense_gelu_kernel grid [{{.*}}] block [{{.*}}] shared 0 args [3]
// TF32-NEXT: launch dense_gelu_kernel grid [4, 1, 1] block [256, 1, 1] shared 29184 args [3, 0, 1, 2]
// TF32-NOT: launch
// TF32: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// matmul-bias-gelu through S1-S5 for nvidia-sm80: every kernel reads its block and thread
// ids, and ptxas assembles every module without spills.
// Both builds, run in the emulator, match a cpu-host build
// (pipeline=reference): the f32 one within pb-run's default tolerances; the
// tf32 one within 2e-2, as the tensor cores read 10-bit mantissas (each
// product off by up to 2^-9 of its magnitude, about 0.25 on average for
// inputs in [-1, 1], with either sign: well under 2e-2 over 64 products,
// and GELU's slope is at most 1.13).

// CHECK: arch sm_80
// CHECK: entry dense_gelu
// CHECK: launch dense_gelu_kernel
// CHECK: .target sm_80
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
