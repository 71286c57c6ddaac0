// RUN: %check_cpu | FileCheck %s
// RUN: pb-opt %s --target=cpu-host --pb-pipeline=s1,s2,s3 --pb-explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// A transformer's query projection: x @ W^T + b, split into heads and
// transposed to (batch, heads, seq, head size). S1's reshape fusion turns the
// matmul into a generic with two N loops (heads, head size); the head loop
// iterates around the GEMM and the head-size loop is its N.
// CHECK: OK projection: 6144 values match the reference
// EXPLAIN: matrix units: linalg.generic MxNxK 48x32x96

func.func @projection(%x: tensor<48x96xf32>, %w: tensor<128x96xf32>,
                      %b: tensor<128xf32>) -> tensor<1x4x48x32xf32> {
  %z = arith.constant 0.0 : f32
  %et = tensor.empty() : tensor<96x128xf32>
  %wt = linalg.transpose ins(%w : tensor<128x96xf32>) outs(%et : tensor<96x128xf32>)
        permutation = [1, 0]
  %e = tensor.empty() : tensor<48x128xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<48x128xf32>) -> tensor<48x128xf32>
  %m = linalg.matmul ins(%x, %wt : tensor<48x96xf32>, tensor<96x128xf32>)
                     outs(%f : tensor<48x128xf32>) -> tensor<48x128xf32>
  %e2 = tensor.empty() : tensor<48x128xf32>
  %s = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>,
                       affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%b, %m : tensor<128xf32>, tensor<48x128xf32>) outs(%e2 : tensor<48x128xf32>) {
  ^bb0(%bb: f32, %v: f32, %o: f32):
    %a = arith.addf %bb, %v : f32
    linalg.yield %a : f32
  } -> tensor<48x128xf32>
  %r = tensor.expand_shape %s [[0, 1], [2, 3]] output_shape [1, 48, 4, 32]
       : tensor<48x128xf32> into tensor<1x48x4x32xf32>
  %e3 = tensor.empty() : tensor<1x4x48x32xf32>
  %t = linalg.transpose ins(%r : tensor<1x48x4x32xf32>) outs(%e3 : tensor<1x4x48x32xf32>)
       permutation = [0, 2, 1, 3]
  return %t : tensor<1x4x48x32xf32>
}
