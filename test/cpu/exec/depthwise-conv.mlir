// RUN: %check_cpu | FileCheck %s
// RUN: pb-opt %s --target=cpu-x86-64-v3 --pb-pipeline=s1 -o - | FileCheck %s --check-prefix=S1
// RUN: pb-opt %s --target=cpu-x86-64-v3 --pb-pipeline=s1,s2,s3 -o - | FileCheck %s --check-prefix=S3
// CHECK: OK depthwise: 700 values match the reference
// S1-NOT: linalg.conv_2d_ngchw_gfchw
// The filter is copied to (kh, kw, c), a copy that S1 keeps as it is
// (pb.keep_layout: neither fused nor rebuilt around the reshape of its
// operand), so that the channel loop reads it contiguously.
// S1: linalg.generic {{.*}} ins(%{{.*}} : tensor<16x3x3xf32>) outs(%{{.*}} : tensor<3x3x16xf32>) attrs = {{.*}}pb.keep_layout
// S1: iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]
// S1-SAME: ins(%{{.*}}, %{{.*}} : tensor<1x11x11x16xf32>, tensor<3x3x16xf32>)
// S1-SAME: outs(%{{.*}} : tensor<1x5x5x16xf32>)
// In S3 the 16-channel convolution's channel loop is vectorized: input,
// filter and accumulator are read in vectors of 8 channels.
// S3: affine.for %{{.*}} = 0 to 16 step 8 {
// S3: vector.transfer_read {{.*}} : memref<1x1x11x11x16xf32>, vector<8xf32>
// S3: vector.transfer_read {{.*}} : memref<3x3x16xf32>, vector<8xf32>
// Depthwise convolutions as the torch frontend emits them (groups ==
// channels: NGCHW with one channel per group between reshapes): 16
// channels with stride 2 after a ReLU, and 12 channels (not a multiple of
// the vector width) with dilation 2. pb-conv-to-channels-last makes each a
// channels-last generic with the channel loop innermost.
func.func @depthwise(%x: tensor<1x16x11x11xf32>, %w: tensor<16x1x3x3xf32>,
                     %x2: tensor<1x12x9x9xf32>, %w2: tensor<12x1x3x3xf32>)
    -> (tensor<1x16x5x5xf32>, tensor<1x12x5x5xf32>) {
  %z = arith.constant 0.0 : f32
  %re = tensor.empty() : tensor<1x16x11x11xf32>
  %relu = linalg.generic {
      indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (n, c, h, w)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x16x11x11xf32>) outs(%re : tensor<1x16x11x11xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %z : f32
    linalg.yield %r : f32
  } -> tensor<1x16x11x11xf32>
  %xg = tensor.expand_shape %relu [[0], [1], [2, 3], [4]] output_shape [1, 16, 1, 11, 11] : tensor<1x16x11x11xf32> into tensor<1x16x1x11x11xf32>
  %wg = tensor.expand_shape %w [[0], [1], [2, 3], [4]] output_shape [16, 1, 1, 3, 3] : tensor<16x1x3x3xf32> into tensor<16x1x1x3x3xf32>
  %e = tensor.empty() : tensor<1x16x1x5x5xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x16x1x5x5xf32>) -> tensor<1x16x1x5x5xf32>
  %c = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
       ins(%xg, %wg : tensor<1x16x1x11x11xf32>, tensor<16x1x1x3x3xf32>) outs(%f : tensor<1x16x1x5x5xf32>) -> tensor<1x16x1x5x5xf32>
  %r = tensor.collapse_shape %c [[0], [1], [2, 3], [4]] : tensor<1x16x1x5x5xf32> into tensor<1x16x5x5xf32>
  %xg2 = tensor.expand_shape %x2 [[0], [1], [2, 3], [4]] output_shape [1, 12, 1, 9, 9] : tensor<1x12x9x9xf32> into tensor<1x12x1x9x9xf32>
  %wg2 = tensor.expand_shape %w2 [[0], [1], [2, 3], [4]] output_shape [12, 1, 1, 3, 3] : tensor<12x1x3x3xf32> into tensor<12x1x1x3x3xf32>
  %e2 = tensor.empty() : tensor<1x12x1x5x5xf32>
  %f2 = linalg.fill ins(%z : f32) outs(%e2 : tensor<1x12x1x5x5xf32>) -> tensor<1x12x1x5x5xf32>
  %c2 = linalg.conv_2d_ngchw_gfchw {dilations = dense<2> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%xg2, %wg2 : tensor<1x12x1x9x9xf32>, tensor<12x1x1x3x3xf32>) outs(%f2 : tensor<1x12x1x5x5xf32>) -> tensor<1x12x1x5x5xf32>
  %r2 = tensor.collapse_shape %c2 [[0], [1], [2, 3], [4]] : tensor<1x12x1x5x5xf32> into tensor<1x12x5x5xf32>
  return %r, %r2 : tensor<1x16x5x5xf32>, tensor<1x12x5x5xf32>
}
