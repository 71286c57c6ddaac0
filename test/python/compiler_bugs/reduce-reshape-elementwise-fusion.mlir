// Reproducer of a PolyBlocks compiler bug found by the Python frontend's tests;
// test/python/test_compiler_bugs.py runs it (expected to fail until fixed).
func.func @forward(%x: tensor<5xf32>) -> tensor<5xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%x : tensor<5xf32>) outs(%init : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %m = arith.mulf %a, %a : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %s1 = tensor.expand_shape %s [] output_shape [1] : tensor<f32> into tensor<1xf32>
  %e1 = tensor.empty() : tensor<1xf32>
  %n1 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%s1 : tensor<1xf32>) outs(%e1 : tensor<1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.sqrt %a : f32
    linalg.yield %r : f32
  } -> tensor<1xf32>
  %n = tensor.collapse_shape %n1 [] : tensor<1xf32> into tensor<f32>
  %e = tensor.empty() : tensor<5xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x, %n : tensor<5xf32>, tensor<f32>) outs(%e : tensor<5xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.divf %a, %b : f32
    linalg.yield %d : f32
  } -> tensor<5xf32>
  return %y : tensor<5xf32>
}
