// RUN: %check_cpu | FileCheck %s
// RUN: pb-opt %s --target=cpu-x86-64-v3 --pb-pipeline=s1,s2,s3 --pb-explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// A transformer's query projection: x @ W^T + b, split into heads and
// transposed to (batch, heads, seq, head size). S1's reshape fusion turns the
// matmul into a generic with two N loops (heads, head size), adjacent in B
// and in C: they are flattened into the GEMM's N (4 x 32 = 128 columns), so
// that x is packed once, not once per head.
// CHECK: OK projection: 6144 values match the reference
// EXPLAIN: matrix units: linalg.generic MxNxK 48x128x96

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

// The same with B stored (K, heads, head size) and a ReLU epilogue: N is
// B's innermost dimension, the heads loop the one right outside it.
// CHECK: OK split_n_plain_b: 3456 values match the reference
// EXPLAIN: matrix units: linalg.generic MxNxK 27x128x40
func.func @split_n_plain_b(%x: tensor<27x40xf32>, %w: tensor<40x4x32xf32>) -> tensor<27x4x32xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<27x4x32xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<27x4x32xf32>) -> tensor<27x4x32xf32>
  %m = linalg.generic {
      indexing_maps = [affine_map<(i, h, d, k) -> (i, k)>,
                       affine_map<(i, h, d, k) -> (k, h, d)>,
                       affine_map<(i, h, d, k) -> (i, h, d)>],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<27x40xf32>, tensor<40x4x32xf32>) outs(%f : tensor<27x4x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<27x4x32xf32>
  %e2 = tensor.empty() : tensor<27x4x32xf32>
  %r = linalg.generic {
      indexing_maps = [affine_map<(i, h, d) -> (i, h, d)>,
                       affine_map<(i, h, d) -> (i, h, d)>],
      iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%m : tensor<27x4x32xf32>) outs(%e2 : tensor<27x4x32xf32>) {
  ^bb0(%v: f32, %o: f32):
    %y = arith.maximumf %v, %z : f32
    linalg.yield %y : f32
  } -> tensor<27x4x32xf32>
  return %r : tensor<27x4x32xf32>
}

// A head size that is not a multiple of the register tile's columns
// (x86-64-v3: 16) keeps the heads as batch loops around the GEMM.
// CHECK: OK split_n_narrow: 1080 values match the reference
// EXPLAIN: matrix units: linalg.generic MxNxK 27x20x40
func.func @split_n_narrow(%x: tensor<27x40xf32>, %w: tensor<2x20x40xf32>) -> tensor<27x2x20xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<27x2x20xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<27x2x20xf32>) -> tensor<27x2x20xf32>
  %m = linalg.generic {
      indexing_maps = [affine_map<(i, h, d, k) -> (i, k)>,
                       affine_map<(i, h, d, k) -> (h, d, k)>,
                       affine_map<(i, h, d, k) -> (i, h, d)>],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<27x40xf32>, tensor<2x20x40xf32>) outs(%f : tensor<27x2x20xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<27x2x20xf32>
  return %m : tensor<27x2x20xf32>
}
