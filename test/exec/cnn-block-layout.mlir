// RUN: %s3_on_host %s --rtol 1e-5 | FileCheck %s
// CHECK: OK amd-gfx942: 256 values match
// CHECK: OK cpu-x86-64-v3: 256 values match
// CHECK: OK nvidia-sm80: 256 values match
// CHECK: OK nvidia-sm90: 256 values match
// CHECK: OK toy-chip: 256 values match
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

#id = affine_map<(i) -> (i)>

// Deterministic non-uniform values (small integers, so that sums are exact).
func.func @iota(%mul: index, %mod: index, %off: index) -> tensor<4096xf32> {
  %init = tensor.empty() : tensor<4096xf32>
  %r = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]}
      outs(%init : tensor<4096xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %t = arith.muli %i, %mul : index
    %ii = arith.muli %i, %i : index
    %u = arith.addi %t, %ii : index
    %v = arith.remui %u, %mod : index
    %w = arith.index_cast %v : index to i32
    %z = arith.index_cast %off : index to i32
    %d = arith.subi %w, %z : i32
    %f = arith.sitofp %d : i32 to f32
    linalg.yield %f : f32
  } -> tensor<4096xf32>
  return %r : tensor<4096xf32>
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %xd = call @iota(%c3, %c7, %c3) : (index, index, index) -> tensor<4096xf32>
  %w1d = call @iota(%c5, %c5, %c2) : (index, index, index) -> tensor<4096xf32>
  %w2d = call @iota(%c7, %c5, %c2) : (index, index, index) -> tensor<4096xf32>
  %sd = call @iota(%c2, %c3, %c0) : (index, index, index) -> tensor<4096xf32>
  %xs = tensor.extract_slice %xd[0] [2592] [1] : tensor<4096xf32> to tensor<2592xf32>
  %x = tensor.expand_shape %xs [[0, 1, 2, 3]] output_shape [1, 8, 18, 18] : tensor<2592xf32> into tensor<1x8x18x18xf32>
  %w1s = tensor.extract_slice %w1d[0] [1152] [1] : tensor<4096xf32> to tensor<1152xf32>
  %w1 = tensor.expand_shape %w1s [[0, 1, 2, 3]] output_shape [16, 8, 3, 3] : tensor<1152xf32> into tensor<16x8x3x3xf32>
  %w2s = tensor.extract_slice %w2d[0] [2304] [1] : tensor<4096xf32> to tensor<2304xf32>
  %w2 = tensor.expand_shape %w2s [[0, 1, 2, 3]] output_shape [16, 16, 3, 3] : tensor<2304xf32> into tensor<16x16x3x3xf32>
  %scale = tensor.extract_slice %sd[0] [16] [1] : tensor<4096xf32> to tensor<16xf32>
  %shift = tensor.extract_slice %sd[16] [16] [1] : tensor<4096xf32> to tensor<16xf32>
  %r = call @block(%x, %w1, %scale, %shift, %w2) : (tensor<1x8x18x18xf32>, tensor<16x8x3x3xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x4x4xf32>
  %u = tensor.cast %r : tensor<1x16x4x4xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}

func.func private @printMemrefF32(tensor<*xf32>)
