// RUN: pb-opt %s --split-input-file --pb-fuse-elementwise | FileCheck %s

// A scale on q is not fused into q @ k^T (the contraction would stop being
// a multiply-accumulate); the transpose of k, which only moves data, is.
// CHECK-LABEL: func.func @scores
// CHECK: %[[SCALED:.*]] = linalg.generic
// CHECK: arith.mulf
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}} ins(%[[SCALED]], %arg1 :
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: arith.addf
// CHECK-NEXT: linalg.yield
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

// -----

// Elementwise chains still fuse into one op.
// CHECK-LABEL: func.func @chain
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK-NOT: linalg.generic
// CHECK: return
#m = affine_map<(i) -> (i)>
func.func @chain(%x: tensor<16xf32>, %y: tensor<16xf32>) -> tensor<16xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16xf32>
  %s = linalg.generic {indexing_maps = [#m, #m, #m], iterator_types = ["parallel"]}
      ins(%x, %y : tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %v = arith.addf %a, %b : f32
    linalg.yield %v : f32
  } -> tensor<16xf32>
  %r = linalg.generic {indexing_maps = [#m, #m], iterator_types = ["parallel"]}
      ins(%s : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.maximumf %a, %z : f32
    linalg.yield %v : f32
  } -> tensor<16xf32>
  return %r : tensor<16xf32>
}

// -----

// A producer that adds to its output's initial value (a scatter-add with
// one update per element) stays a generic of its own: fused into a consumer
// that reads each of its elements in several iterations (the reduction
// over j), it would add again in each of them.
// CHECK-LABEL: func.func @accumulating_producer
// CHECK: %[[P:.*]] = linalg.generic {{.*}}iterator_types = ["parallel"]}
// CHECK: arith.addf %{{.*}}, %{{.*}} : f32
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[P]]
#id = affine_map<(i) -> (i)>
#ri = affine_map<(i, j) -> (j)>
#ro = affine_map<(i, j) -> (i)>
func.func @accumulating_producer(%u: tensor<4xf32>) -> tensor<3xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%z : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%u : tensor<4xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %e2 = tensor.empty() : tensor<3xf32>
  %init2 = linalg.fill ins(%z : f32) outs(%e2 : tensor<3xf32>) -> tensor<3xf32>
  %r = linalg.generic {indexing_maps = [#ri, #ro], iterator_types = ["parallel", "reduction"]}
      ins(%p : tensor<4xf32>) outs(%init2 : tensor<3xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  } -> tensor<3xf32>
  return %r : tensor<3xf32>
}
