// RUN: %check_cpu | FileCheck %s
// RUN: pb-opt %s --target=cpu-x86-64-v3 --pb-pipeline=s1,s2,s3 --pb-explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: pb-opt %s --target=cpu-x86-64-v4 --pb-pipeline=s1,s2,s3 --pb-explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=V4
// CHECK: OK grouped: 2466 values match the reference
// Grouped convolutions as the torch frontend emits them (NGCHW between the
// reshapes that split the channels into groups) after a ReLU: 4 groups of
// 8 channels, and 3 groups of 3 channels with stride 2 and dilation 2 (a
// group narrower than a vector). Each becomes a channels-last generic over
// (n, oh, ow, g, f, kh, kw, c); the wider one runs on the matrix units as
// a GEMM batched over the groups (M = 2 x 6 x 6 pixels, N = the group's
// 8 output channels, K = 3 x 3 x 8).
// EXPLAIN: matrix units: linalg.generic MxNxK 72x8x72 -> {{.*}}register tile
// EXPLAIN: matrix units: linalg.generic left to loop tiling: N = 3 is narrower than the register tile
// With 16- and 8-lane FMAs (AVX-512), the 8 output channels of a group
// take the 8-lane one, with 24 accumulators of the 32 registers.
// V4: matrix units: linalg.generic MxNxK 72x8x72 -> VFMA_F32_1x8x1_F32 register tile 24x8 (24 accumulators of 32 registers)
func.func @grouped(%x: tensor<2x32x8x8xf32>, %w: tensor<32x8x3x3xf32>,
                   %x2: tensor<2x9x9x9xf32>, %w2: tensor<9x3x3x3xf32>)
    -> (tensor<2x32x6x6xf32>, tensor<2x9x3x3xf32>) {
  %z = arith.constant 0.0 : f32
  %re = tensor.empty() : tensor<2x32x8x8xf32>
  %relu = linalg.generic {
      indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (n, c, h, w)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x32x8x8xf32>) outs(%re : tensor<2x32x8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %z : f32
    linalg.yield %m : f32
  } -> tensor<2x32x8x8xf32>
  %xg = tensor.expand_shape %relu [[0], [1, 2], [3], [4]] output_shape [2, 4, 8, 8, 8]
      : tensor<2x32x8x8xf32> into tensor<2x4x8x8x8xf32>
  %wg = tensor.expand_shape %w [[0, 1], [2], [3], [4]] output_shape [4, 8, 8, 3, 3]
      : tensor<32x8x3x3xf32> into tensor<4x8x8x3x3xf32>
  %e = tensor.empty() : tensor<2x4x8x6x6xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<2x4x8x6x6xf32>) -> tensor<2x4x8x6x6xf32>
  %c = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%xg, %wg : tensor<2x4x8x8x8xf32>, tensor<4x8x8x3x3xf32>)
      outs(%f : tensor<2x4x8x6x6xf32>) -> tensor<2x4x8x6x6xf32>
  %r = tensor.collapse_shape %c [[0], [1, 2], [3], [4]] : tensor<2x4x8x6x6xf32> into tensor<2x32x6x6xf32>
  %xg2 = tensor.expand_shape %x2 [[0], [1, 2], [3], [4]] output_shape [2, 3, 3, 9, 9]
      : tensor<2x9x9x9xf32> into tensor<2x3x3x9x9xf32>
  %wg2 = tensor.expand_shape %w2 [[0, 1], [2], [3], [4]] output_shape [3, 3, 3, 3, 3]
      : tensor<9x3x3x3xf32> into tensor<3x3x3x3x3xf32>
  %e2 = tensor.empty() : tensor<2x3x3x3x3xf32>
  %f2 = linalg.fill ins(%z : f32) outs(%e2 : tensor<2x3x3x3x3xf32>) -> tensor<2x3x3x3x3xf32>
  %c2 = linalg.conv_2d_ngchw_gfchw {dilations = dense<2> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%xg2, %wg2 : tensor<2x3x3x9x9xf32>, tensor<3x3x3x3x3xf32>)
      outs(%f2 : tensor<2x3x3x3x3xf32>) -> tensor<2x3x3x3x3xf32>
  %r2 = tensor.collapse_shape %c2 [[0], [1, 2], [3], [4]] : tensor<2x3x3x3x3xf32> into tensor<2x9x3x3xf32>
  return %r, %r2 : tensor<2x32x6x6xf32>, tensor<2x9x3x3xf32>
}
