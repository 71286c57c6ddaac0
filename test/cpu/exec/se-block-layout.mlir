// RUN: %check_cpu | FileCheck %s
// RUN: pb-opt %s --target=cpu-x86-64-v3 --pb-pipeline=s1 --pb-explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: pb-opt %s --target=cpu-x86-64-v3 --pb-pipeline=s1,s2,s3 -o - | FileCheck %s --check-prefix=S3
// CHECK: OK se: 1024 values match the reference
// CHECK: OK se_mean_view: 2048 values match the reference
// EXPLAIN: layout: result produced in its inputs' order (permutation [0, 2, 3, 4, 1]); 1 generic, 0 padding and 1 reshaped users
// EXPLAIN: layout: 1 results lose trailing unit dimensions
// EXPLAIN: layout: 1 results and 0 concatenations change layout; 0 generics still read an operand transposed
// EXPLAIN: layout: 1 results and 0 concatenations change layout; 0 generics still read an operand transposed
// Both exponentials (the SiLU's and the gate's, recomputed per pixel) run
// in vectors of 8 channels: the multiply writes (n, h, w, c) without its
// trailing unit loops.
// S3-COUNT-2: math.exp %{{.*}} : vector<8xf32>
// S3-NOT: math.exp %{{.*}} : f32
// A squeeze-excitation block (EfficientNet, MobileNetV3) as the torch
// frontend emits it: a SiLU that reads an NHWC convolution result through a
// unit-dimension reshape and writes (n, c, 1, h, w), the channel means, a
// sigmoid gate, and the multiply that reads the activation through a
// collapse_shape + expand_shape pair and writes channels-last. After
// pb-propagate-layouts the activation stays channels-last; the means then
// read it with the channel loop innermost. Checked against the reference
// lowering with 16 channels (two vectors) over 8x8 pixels.
func.func @se(%x: tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32> {
  %z = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %n = arith.constant 64.0 : f32
  %xe = tensor.expand_shape %x [[0], [1, 2], [3], [4]] output_shape [1, 1, 8, 8, 16] : tensor<1x8x8x16xf32> into tensor<1x1x8x8x16xf32>
  %e = tensor.empty() : tensor<1x16x1x8x8xf32>
  %act = linalg.generic {
      indexing_maps = [affine_map<(n, c, u, h, w) -> (n, u, h, w, c)>,
                       affine_map<(n, c, u, h, w) -> (n, c, u, h, w)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%xe : tensor<1x1x8x8x16xf32>) outs(%e : tensor<1x16x1x8x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %neg = arith.negf %v : f32
    %ex = math.exp %neg : f32
    %den = arith.addf %ex, %one : f32
    %sig = arith.divf %one, %den : f32
    %r = arith.mulf %v, %sig : f32
    linalg.yield %r : f32
  } -> tensor<1x16x1x8x8xf32>
  %se = tensor.empty() : tensor<1x16xf32>
  %sf = linalg.fill ins(%z : f32) outs(%se : tensor<1x16xf32>) -> tensor<1x16xf32>
  %sum = linalg.generic {
      indexing_maps = [affine_map<(n, c, u, h, w) -> (n, c, u, h, w)>,
                       affine_map<(n, c, u, h, w) -> (n, c)>],
      iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%act : tensor<1x16x1x8x8xf32>) outs(%sf : tensor<1x16xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %acc, %v : f32
    linalg.yield %r : f32
  } -> tensor<1x16xf32>
  %c = tensor.collapse_shape %act [[0, 1], [2, 3], [4]] : tensor<1x16x1x8x8xf32> into tensor<16x8x8xf32>
  %x6 = tensor.expand_shape %c [[0, 1, 2, 3], [4], [5]] output_shape [1, 16, 1, 1, 8, 8] : tensor<16x8x8xf32> into tensor<1x16x1x1x8x8xf32>
  %e2 = tensor.empty() : tensor<1x8x8x16x1x1xf32>
  %mul = linalg.generic {
      indexing_maps = [affine_map<(n, h, w, c, u, v) -> (n, c, u, v, h, w)>,
                       affine_map<(n, h, w, c, u, v) -> (n, c)>,
                       affine_map<(n, h, w, c, u, v) -> (n, h, w, c, u, v)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%x6, %sum : tensor<1x16x1x1x8x8xf32>, tensor<1x16xf32>) outs(%e2 : tensor<1x8x8x16x1x1xf32>) {
  ^bb0(%v: f32, %s: f32, %o: f32):
    %mean = arith.divf %s, %n : f32
    %neg = arith.negf %mean : f32
    %ex = math.exp %neg : f32
    %den = arith.addf %ex, %one : f32
    %gate = arith.divf %one, %den : f32
    %r = arith.mulf %v, %gate : f32
    linalg.yield %r : f32
  } -> tensor<1x8x8x16x1x1xf32>
  %r = tensor.collapse_shape %mul [[0], [1], [2], [3, 4, 5]] : tensor<1x8x8x16x1x1xf32> into tensor<1x8x8x16xf32>
  return %r : tensor<1x8x8x16xf32>
}

// @se_mean_view: the same block at batch 2 whose channel means read the
// activation through an expand_shape adding a unit dimension that only the
// mean's loop `g` indexes (the form the frontend emits at batch 8). The
// activation still becomes channels-last (the mean reads it with trailing
// unit dimensions for its unit loops); before, it kept (n, c, 1, h, w) and
// both it and the multiply ran as scalar transposing loops.
func.func @se_mean_view(%x: tensor<2x8x8x16xf32>) -> tensor<2x8x8x16xf32> {
  %z = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %n = arith.constant 64.0 : f32
  %xe = tensor.expand_shape %x [[0], [1, 2], [3], [4]] output_shape [2, 1, 8, 8, 16] : tensor<2x8x8x16xf32> into tensor<2x1x8x8x16xf32>
  %e = tensor.empty() : tensor<2x16x1x8x8xf32>
  %act = linalg.generic {
      indexing_maps = [affine_map<(n, c, u, h, w) -> (n, u, h, w, c)>,
                       affine_map<(n, c, u, h, w) -> (n, c, u, h, w)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%xe : tensor<2x1x8x8x16xf32>) outs(%e : tensor<2x16x1x8x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %neg = arith.negf %v : f32
    %ex = math.exp %neg : f32
    %den = arith.addf %ex, %one : f32
    %sig = arith.divf %one, %den : f32
    %r = arith.mulf %v, %sig : f32
    linalg.yield %r : f32
  } -> tensor<2x16x1x8x8xf32>
  %x6m = tensor.expand_shape %act [[0], [1, 2], [3], [4], [5]] output_shape [2, 16, 1, 1, 8, 8] : tensor<2x16x1x8x8xf32> into tensor<2x16x1x1x8x8xf32>
  %se = tensor.empty() : tensor<2x16xf32>
  %sf = linalg.fill ins(%z : f32) outs(%se : tensor<2x16xf32>) -> tensor<2x16xf32>
  %sum = linalg.generic {
      indexing_maps = [affine_map<(n, c, g, u, h, w) -> (n, c, g, u, h, w)>,
                       affine_map<(n, c, g, u, h, w) -> (n, c)>],
      iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]}
      ins(%x6m : tensor<2x16x1x1x8x8xf32>) outs(%sf : tensor<2x16xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %acc, %v : f32
    linalg.yield %r : f32
  } -> tensor<2x16xf32>
  %x6 = tensor.expand_shape %act [[0], [1, 2], [3], [4], [5]] output_shape [2, 16, 1, 1, 8, 8] : tensor<2x16x1x8x8xf32> into tensor<2x16x1x1x8x8xf32>
  %e2 = tensor.empty() : tensor<2x8x8x16x1x1xf32>
  %mul = linalg.generic {
      indexing_maps = [affine_map<(n, h, w, c, u, v) -> (n, c, u, v, h, w)>,
                       affine_map<(n, h, w, c, u, v) -> (n, c)>,
                       affine_map<(n, h, w, c, u, v) -> (n, h, w, c, u, v)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%x6, %sum : tensor<2x16x1x1x8x8xf32>, tensor<2x16xf32>) outs(%e2 : tensor<2x8x8x16x1x1xf32>) {
  ^bb0(%v: f32, %s: f32, %o: f32):
    %mean = arith.divf %s, %n : f32
    %neg = arith.negf %mean : f32
    %ex = math.exp %neg : f32
    %den = arith.addf %ex, %one : f32
    %gate = arith.divf %one, %den : f32
    %r = arith.mulf %v, %gate : f32
    linalg.yield %r : f32
  } -> tensor<2x8x8x16x1x1xf32>
  %r = tensor.collapse_shape %mul [[0], [1], [2], [3, 4, 5]] : tensor<2x8x8x16x1x1xf32> into tensor<2x8x8x16xf32>
  return %r : tensor<2x8x8x16xf32>
}
