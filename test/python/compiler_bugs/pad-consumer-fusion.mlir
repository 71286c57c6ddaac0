// Reproducer of a PolyBlocks compiler bug found by the Python frontend's tests;
// test/python/test_compiler_bugs.py runs it (expected to fail until fixed).
func.func @forward(%a: tensor<4x8xf32>) -> (tensor<6x10xf32>) {
  %z = arith.constant 1.5 : f32
  %p = tensor.pad %a low[1, 1] high[1, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %z : f32
  } : tensor<4x8xf32> to tensor<6x10xf32>
  %e = tensor.empty() : tensor<6x10xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i,j)->(i,j)>, affine_map<(i,j)->(i,j)>], iterator_types = ["parallel", "parallel"]} ins(%p : tensor<6x10xf32>) outs(%e : tensor<6x10xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.negf %x : f32
    linalg.yield %y : f32
  } -> tensor<6x10xf32>
  return %r : tensor<6x10xf32>
}
