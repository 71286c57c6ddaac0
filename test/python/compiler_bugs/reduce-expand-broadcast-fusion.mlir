// Reproducer of a PolyBlocks compiler bug found by the Python frontend's tests;
// test/python/test_compiler_bugs.py runs it (expected to fail until fixed).
func.func @forward(%x: tensor<5xf32>) -> tensor<5xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e0 = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%ninf : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %m = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%x : tensor<5xf32>) outs(%init : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.maximumf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %m1 = tensor.expand_shape %m [] output_shape [1] : tensor<f32> into tensor<1xf32>
  %e = tensor.empty() : tensor<5xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x, %m1 : tensor<5xf32>, tensor<1xf32>) outs(%e : tensor<5xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    linalg.yield %d : f32
  } -> tensor<5xf32>
  return %y : tensor<5xf32>
}
