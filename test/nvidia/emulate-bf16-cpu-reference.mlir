// RUN: pb-compile %s --target=nvidia-sm80 -o %t.pbart
// RUN: pb-compile %s --target=cpu-host --options=pipeline=reference -o %t.ref.pbart
// RUN: pb-run --emulate %t.pbart --check-against=%t.ref.pbart --rtol=2e-2 --atol=0.25 | FileCheck %s
//
// The emulated bf16 kernel against a cpu-host build of its own module. The
// CPU computes each bf16 arith.mulf and arith.addf in f32 and rounds its
// result to bf16 (pb-emulate-bf16: LLVM's x86 back end would round with a
// call to compiler-rt's __truncsfbf2, which nothing defines where the
// artifact is loaded), as the program says; the tensor cores sum in f32
// and round once. The tolerances are those of a reference that rounds
// every product and partial sum to bf16 (8-bit mantissas; sums of 72
// products up to about 12, where a bf16 ulp is 2^-4): on these inputs the
// two differ by at most 0.22, three and a half such ulps.
// emulate-bf16.mlir checks the same kernel against f32 sums, within about
// one bf16 ulp.

// CHECK: linear_bf16: output 0 bf16 [2,50,100]
// CHECK: OK linear_bf16: 10000 values match the reference

func.func @linear_bf16(%x: tensor<2x50x72xbf16>, %w: tensor<100x72xbf16>) -> tensor<2x50x100xbf16> {
  %zero = arith.constant 0.0 : bf16
  %init = tensor.empty() : tensor<2x50x100xbf16>
  %acc = linalg.fill ins(%zero : bf16) outs(%init : tensor<2x50x100xbf16>) -> tensor<2x50x100xbf16>
  %r = linalg.generic {indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<2x50x72xbf16>, tensor<100x72xbf16>) outs(%acc : tensor<2x50x100xbf16>) {
  ^bb0(%a: bf16, %b: bf16, %c: bf16):
    %p = arith.mulf %a, %b : bf16
    %s = arith.addf %c, %p : bf16
    linalg.yield %s : bf16
  } -> tensor<2x50x100xbf16>
  return %r : tensor<2x50x100xbf16>
}
