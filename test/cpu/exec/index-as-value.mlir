// RUN: %check_cpu | FileCheck %s
// RUN: pb-opt %s --target=cpu-x86-64-v4 --pb-pipeline=s1,s2,s3 --pb-explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// Loops that read their indices as values (linalg.index), vectorized with
// vectors of consecutive indices (pb-vectorize), compared with the
// reference pipeline: a causal mask over 2 x 200 x 200 scores (192 columns
// in 16-lane vectors, the remaining 8 in one vector of 8), and an i32
// index expression (3 * column - row) written as floats.
// CHECK: OK causal_mask: 80000 values match the reference
// CHECK: OK index_expression: 4000 values match the reference
// EXPLAIN: vectorize: {{.*}}; {{[1-9][0-9]*}} loop indices read as values made vectors of consecutive indices

#scores = affine_map<(h, i, j) -> (h, i, j)>
#cells = affine_map<(i, j) -> (i, j)>

func.func @causal_mask(%s: tensor<2x200x200xf32>) -> tensor<2x200x200xf32> {
  %e = tensor.empty() : tensor<2x200x200xf32>
  %r = linalg.generic {indexing_maps = [#scores, #scores],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x200x200xf32>) outs(%e : tensor<2x200x200xf32>) {
  ^bb0(%x: f32, %o: f32):
    %zero = arith.constant 0 : i64
    %keep = arith.constant 0.0 : f32
    %drop = arith.constant -10000.0 : f32
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %row = arith.index_cast %i : index to i64
    %col = arith.index_cast %j : index to i64
    %d = arith.subi %col, %row : i64
    %c = arith.cmpi sle, %d, %zero : i64
    %m = arith.select %c, %keep, %drop : f32
    %y = arith.addf %x, %m : f32
    linalg.yield %y : f32
  } -> tensor<2x200x200xf32>
  return %r : tensor<2x200x200xf32>
}

func.func @index_expression(%s: tensor<20x200xf32>) -> tensor<20x200xf32> {
  %e = tensor.empty() : tensor<20x200xf32>
  %r = linalg.generic {indexing_maps = [#cells, #cells],
                       iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<20x200xf32>) outs(%e : tensor<20x200xf32>) {
  ^bb0(%x: f32, %o: f32):
    %three = arith.constant 3 : i32
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %row = arith.index_cast %i : index to i32
    %col = arith.index_cast %j : index to i32
    %c3 = arith.muli %col, %three : i32
    %v = arith.subi %c3, %row : i32
    %f = arith.sitofp %v : i32 to f32
    %y = arith.addf %x, %f : f32
    linalg.yield %y : f32
  } -> tensor<20x200xf32>
  return %r : tensor<20x200xf32>
}
