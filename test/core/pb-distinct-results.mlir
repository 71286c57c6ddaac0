// RUN: pb-opt %s --pb-distinct-results | FileCheck %s

// The second return of the same tensor gets its own copy.
// CHECK-LABEL: func.func @twice
// CHECK: %[[R:.*]] = linalg.generic
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK: %[[C:.*]] = linalg.copy ins(%[[R]] : tensor<4x8xf32>) outs(%[[E]] : tensor<4x8xf32>)
// CHECK: return %[[R]], %[[C]]
#id = affine_map<(i, j) -> (i, j)>
func.func @twice(%a: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.negf %x : f32
    linalg.yield %y : f32
  } -> tensor<4x8xf32>
  return %r, %r : tensor<4x8xf32>, tensor<4x8xf32>
}
