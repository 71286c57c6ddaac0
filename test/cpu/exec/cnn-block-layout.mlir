// RUN: %check_cpu | FileCheck %s
// RUN: pb-opt %s --target=cpu-x86-64-v3 --pb-pipeline=s1 --pb-explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// CHECK: OK block: 256 values match the reference
// EXPLAIN: layout: result produced in its inputs' order (permutation [0, 2, 3, 1]); 1 generic, 1 padding and 0 reshaped users
// EXPLAIN: layout: result produced in its inputs' order (permutation [0, 2, 3, 1]); 2 generic, 1 padding and 0 reshaped users
// EXPLAIN: layout: 2 results and 0 concatenations change layout; 1 generics still read an operand transposed
// A ResNet-style block in PyTorch's layout as the frontend emits it: a
// stride-2 convolution, batch norm + ReLU, padding (fill + copy +
// insert_slice), 3x3/2 max pooling, a 3x3 convolution on the padded pooled
// map, and a residual add of the pooled map. pb-propagate-layouts keeps
// everything between the convolutions channels-last.
func.func @block(%x: tensor<1x8x18x18xf32>, %w1: tensor<16x8x3x3xf32>,
                 %scale: tensor<16xf32>, %shift: tensor<16xf32>,
                 %w2: tensor<16x16x3x3xf32>) -> tensor<1x16x4x4xf32> {
  %z = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e1 = tensor.empty() : tensor<1x16x8x8xf32>
  %f1 = linalg.fill ins(%z : f32) outs(%e1 : tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
  %c1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
        ins(%x, %w1 : tensor<1x8x18x18xf32>, tensor<16x8x3x3xf32>) outs(%f1 : tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
  %bn = linalg.generic {
      indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (c)>,
                       affine_map<(n, c, h, w) -> (c)>, affine_map<(n, c, h, w) -> (n, c, h, w)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c1, %scale, %shift : tensor<1x16x8x8xf32>, tensor<16xf32>, tensor<16xf32>)
      outs(%e1 : tensor<1x16x8x8xf32>) {
  ^bb0(%v: f32, %s: f32, %t: f32, %o: f32):
    %m = arith.mulf %v, %s : f32
    %a = arith.addf %m, %t : f32
    %r = arith.maximumf %a, %z : f32
    linalg.yield %r : f32
  } -> tensor<1x16x8x8xf32>
  %pe = tensor.empty() : tensor<1x16x10x10xf32>
  %pf = linalg.fill ins(%ninf : f32) outs(%pe : tensor<1x16x10x10xf32>) -> tensor<1x16x10x10xf32>
  %ps = tensor.extract_slice %pf[0, 0, 1, 1] [1, 16, 8, 8] [1, 1, 1, 1] : tensor<1x16x10x10xf32> to tensor<1x16x8x8xf32>
  %pc = linalg.copy ins(%bn : tensor<1x16x8x8xf32>) outs(%ps : tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
  %pad = tensor.insert_slice %pc into %pf[0, 0, 1, 1] [1, 16, 8, 8] [1, 1, 1, 1] : tensor<1x16x8x8xf32> into tensor<1x16x10x10xf32>
  %win = tensor.empty() : tensor<3x3xf32>
  %me = tensor.empty() : tensor<1x16x4x4xf32>
  %mf = linalg.fill ins(%ninf : f32) outs(%me : tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32>
  %pool = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
          ins(%pad, %win : tensor<1x16x10x10xf32>, tensor<3x3xf32>) outs(%mf : tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32>
  %qe = tensor.empty() : tensor<1x16x6x6xf32>
  %qf = linalg.fill ins(%z : f32) outs(%qe : tensor<1x16x6x6xf32>) -> tensor<1x16x6x6xf32>
  %qs = tensor.extract_slice %qf[0, 0, 1, 1] [1, 16, 4, 4] [1, 1, 1, 1] : tensor<1x16x6x6xf32> to tensor<1x16x4x4xf32>
  %qc = linalg.copy ins(%pool : tensor<1x16x4x4xf32>) outs(%qs : tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32>
  %qpad = tensor.insert_slice %qc into %qf[0, 0, 1, 1] [1, 16, 4, 4] [1, 1, 1, 1] : tensor<1x16x4x4xf32> into tensor<1x16x6x6xf32>
  %f2 = linalg.fill ins(%z : f32) outs(%me : tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32>
  %c2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
        ins(%qpad, %w2 : tensor<1x16x6x6xf32>, tensor<16x16x3x3xf32>) outs(%f2 : tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32>
  %re = tensor.empty() : tensor<1x16x4x4xf32>
  %res = linalg.generic {
      indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (n, c, h, w)>,
                       affine_map<(n, c, h, w) -> (n, c, h, w)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c2, %pool : tensor<1x16x4x4xf32>, tensor<1x16x4x4xf32>) outs(%re : tensor<1x16x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    %r = arith.maximumf %s, %z : f32
    linalg.yield %r : f32
  } -> tensor<1x16x4x4xf32>
  return %res : tensor<1x16x4x4xf32>
}
