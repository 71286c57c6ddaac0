// RUN: pb-compile %s --target=cpu-host -o %t.opt
// RUN: pb-compile %s --target=cpu-host --options=pipeline=reference -o %t.ref
// RUN: pb-run %t.opt --check-against=%t.ref --atol=1e-5 | FileCheck %s
// RUN: pb-opt %s --target=cpu-x86-64-v4 --pb-pipeline=s1 --pb-explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// A channels-last activation, max pooled, then concatenated along the
// channels with another channels-last activation and an NCHW tensor, and
// scaled per channel (DenseNet's stem and first dense layer, as the torch
// frontend emits them): the pooling runs channels-last, the concatenation
// is built channels-last (the NCHW piece copied transposed), and the scale
// reads it so. Against the reference pipeline.
// EXPLAIN: layout: result produced in its inputs' order (permutation [0, 2, 3, 1]); {{.*}} 1 copies transpose it
// EXPLAIN: layout: concatenation of 3 pieces built in their order (permutation [0, 2, 3, 1]); 1 generic, 0 padding and 0 reshaped users read it through permuted maps
// CHECK: OK forward: 5600 values match the reference

func.func @forward(%x: tensor<2x21x21x20xf32>, %u: tensor<2x10x10x4xf32>,
                   %y: tensor<2x4x10x10xf32>, %scale: tensor<28xf32>) -> tensor<2x28x10x10xf32> {
  %z = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<2x20x21x21xf32>
  %relu = linalg.generic {
      indexing_maps = [affine_map<(n, c, h, w) -> (n, h, w, c)>,
                       affine_map<(n, c, h, w) -> (n, c, h, w)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x21x21x20xf32>) outs(%e : tensor<2x20x21x21xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %z : f32
    linalg.yield %r : f32
  } -> tensor<2x20x21x21xf32>
  %w = tensor.empty() : tensor<3x3xf32>
  %pe = tensor.empty() : tensor<2x20x10x10xf32>
  %pf = linalg.fill ins(%ninf : f32) outs(%pe : tensor<2x20x10x10xf32>) -> tensor<2x20x10x10xf32>
  %p = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
       ins(%relu, %w : tensor<2x20x21x21xf32>, tensor<3x3xf32>) outs(%pf : tensor<2x20x10x10xf32>) -> tensor<2x20x10x10xf32>
  %ue = tensor.empty() : tensor<2x4x10x10xf32>
  %ru = linalg.generic {
      indexing_maps = [affine_map<(n, c, h, w) -> (n, h, w, c)>,
                       affine_map<(n, c, h, w) -> (n, c, h, w)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%u : tensor<2x10x10x4xf32>) outs(%ue : tensor<2x4x10x10xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %z : f32
    linalg.yield %r : f32
  } -> tensor<2x4x10x10xf32>
  %ce = tensor.empty() : tensor<2x28x10x10xf32>
  %s0 = tensor.extract_slice %ce[0, 0, 0, 0] [2, 20, 10, 10] [1, 1, 1, 1] : tensor<2x28x10x10xf32> to tensor<2x20x10x10xf32>
  %c0 = linalg.copy ins(%p : tensor<2x20x10x10xf32>) outs(%s0 : tensor<2x20x10x10xf32>) -> tensor<2x20x10x10xf32>
  %i0 = tensor.insert_slice %c0 into %ce[0, 0, 0, 0] [2, 20, 10, 10] [1, 1, 1, 1] : tensor<2x20x10x10xf32> into tensor<2x28x10x10xf32>
  %s1 = tensor.extract_slice %i0[0, 20, 0, 0] [2, 4, 10, 10] [1, 1, 1, 1] : tensor<2x28x10x10xf32> to tensor<2x4x10x10xf32>
  %c1 = linalg.copy ins(%ru : tensor<2x4x10x10xf32>) outs(%s1 : tensor<2x4x10x10xf32>) -> tensor<2x4x10x10xf32>
  %i1 = tensor.insert_slice %c1 into %i0[0, 20, 0, 0] [2, 4, 10, 10] [1, 1, 1, 1] : tensor<2x4x10x10xf32> into tensor<2x28x10x10xf32>
  %s2 = tensor.extract_slice %i1[0, 24, 0, 0] [2, 4, 10, 10] [1, 1, 1, 1] : tensor<2x28x10x10xf32> to tensor<2x4x10x10xf32>
  %c2 = linalg.copy ins(%y : tensor<2x4x10x10xf32>) outs(%s2 : tensor<2x4x10x10xf32>) -> tensor<2x4x10x10xf32>
  %i2 = tensor.insert_slice %c2 into %i1[0, 24, 0, 0] [2, 4, 10, 10] [1, 1, 1, 1] : tensor<2x4x10x10xf32> into tensor<2x28x10x10xf32>
  %oe = tensor.empty() : tensor<2x28x10x10xf32>
  %o = linalg.generic {
      indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>,
                       affine_map<(n, c, h, w) -> (c)>,
                       affine_map<(n, c, h, w) -> (n, c, h, w)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%i2, %scale : tensor<2x28x10x10xf32>, tensor<28xf32>) outs(%oe : tensor<2x28x10x10xf32>) {
  ^bb0(%v: f32, %s: f32, %o2: f32):
    %r = arith.mulf %v, %s : f32
    linalg.yield %r : f32
  } -> tensor<2x28x10x10xf32>
  return %o : tensor<2x28x10x10xf32>
}
