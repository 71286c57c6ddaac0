// RUN: %check_cpu | FileCheck %s
// RUN: pb-opt %s --target=cpu-x86-64-v3 --pb-pipeline=s1,s2,s3 --pb-explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// Attention scores (q * scale) @ k^T: the scale stays out of the
// contraction (pb-fuse-elementwise) and the transpose of k folds into it, so
// the micro-kernel packs B along its outer dimension (strided reads).
// CHECK: OK scores: 3072 values match the reference
// EXPLAIN: matrix units: linalg.generic MxNxK 64x48x32
#id = affine_map<(i, j) -> (i, j)>
#tr = affine_map<(i, j) -> (j, i)>
#a = affine_map<(i, j, k) -> (i, k)>
#b = affine_map<(i, j, k) -> (k, j)>
#c = affine_map<(i, j, k) -> (i, j)>
func.func @scores(%q: tensor<64x32xf32>, %k: tensor<48x32xf32>) -> tensor<64x48xf32> {
  %s = arith.constant 0.125 : f32
  %e = tensor.empty() : tensor<64x32xf32>
  %qs = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%q : tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.mulf %x, %s : f32
    linalg.yield %m : f32
  } -> tensor<64x32xf32>
  %et = tensor.empty() : tensor<32x48xf32>
  %kt = linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel"]}
      ins(%k : tensor<48x32xf32>) outs(%et : tensor<32x48xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<32x48xf32>
  %z = arith.constant 0.0 : f32
  %ec = tensor.empty() : tensor<64x48xf32>
  %f = linalg.fill ins(%z : f32) outs(%ec : tensor<64x48xf32>) -> tensor<64x48xf32>
  %r = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%qs, %kt : tensor<64x32xf32>, tensor<32x48xf32>) outs(%f : tensor<64x48xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %a = arith.addf %acc, %m : f32
    linalg.yield %a : f32
  } -> tensor<64x48xf32>
  return %r : tensor<64x48xf32>
}

