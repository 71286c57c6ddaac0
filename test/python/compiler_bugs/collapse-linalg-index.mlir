// Reproducer of a PolyBlocks compiler bug found by the Python frontend's tests;
// test/python/test_compiler_bugs.py runs it (fixed in d834f44; a regression test now).
func.func @forward(%x: tensor<4x6xf32>) -> tensor<i64> {
  %c = tensor.collapse_shape %x [[0, 1]] : tensor<4x6xf32> into tensor<24xf32>
  %z = arith.constant 0 : i64
  %e = tensor.empty() : tensor<i64>
  %init = linalg.fill ins(%z : i64) outs(%e : tensor<i64>) -> tensor<i64>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%c : tensor<24xf32>) outs(%init : tensor<i64>) {
  ^bb0(%a: f32, %acc: i64):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i64
    %s = arith.addi %acc, %ii : i64
    linalg.yield %s : i64
  } -> tensor<i64>
  return %r : tensor<i64>
}
