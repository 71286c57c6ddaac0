// RUN: pb-opt %s --target=cpu-host --pb-pipeline=s1 | FileCheck %s
// S1 folds B's transpose into the matmul before reshape propagation: the
// packed q, k, v projection of nn.MultiheadAttention (x @ W^T with W of
// 3E x E, its result viewed as (L, 3, E)) would otherwise get the view
// pushed through the transpose, a 4-d permutation that no longer folds and
// that a CPU then ran as a scalar copy of W on every call.
// CHECK-LABEL: func.func @packed_qkv
// CHECK-NOT: linalg.transpose
// CHECK: tensor.expand_shape %arg1
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<16x32xf32>, tensor<3x32x32xf32>)
// CHECK-NOT: linalg.transpose
func.func @packed_qkv(%x: tensor<16x32xf32>, %w: tensor<96x32xf32>) -> tensor<16x3x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x96xf32>
  %wt = linalg.transpose ins(%w : tensor<96x32xf32>) outs(%e : tensor<32x96xf32>) permutation = [1, 0]
  %init = tensor.empty() : tensor<16x96xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<16x96xf32>) -> tensor<16x96xf32>
  %y = linalg.matmul ins(%x, %wt : tensor<16x32xf32>, tensor<32x96xf32>)
                     outs(%acc : tensor<16x96xf32>) -> tensor<16x96xf32>
  %v = tensor.expand_shape %y [[0], [1, 2]] output_shape [16, 3, 32] : tensor<16x96xf32> into tensor<16x3x32xf32>
  return %v : tensor<16x3x32xf32>
}
