// RUN: %check_cpu | FileCheck %s
// NCHW convolutions (PyTorch's layout) run channels-last on the
// micro-kernel (pb-conv-to-channels-last), with a relu between them.
// CHECK: OK conv_relu_conv: 4000 values match the reference

func.func @conv_relu_conv(%x: tensor<1x16x12x12xf32>, %w1: tensor<32x16x3x3xf32>,
                          %w2: tensor<40x32x1x1xf32>) -> tensor<1x40x10x10xf32> {
  %z = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<1x32x10x10xf32>
  %f1 = linalg.fill ins(%z : f32) outs(%e1 : tensor<1x32x10x10xf32>) -> tensor<1x32x10x10xf32>
  %c1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>,
                                  strides = dense<1> : tensor<2xi64>}
        ins(%x, %w1 : tensor<1x16x12x12xf32>, tensor<32x16x3x3xf32>)
        outs(%f1 : tensor<1x32x10x10xf32>) -> tensor<1x32x10x10xf32>
  %r = linalg.generic {
      indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>,
                       affine_map<(n, c, h, w) -> (n, c, h, w)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c1 : tensor<1x32x10x10xf32>) outs(%e1 : tensor<1x32x10x10xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.maximumf %v, %z : f32
    linalg.yield %m : f32
  } -> tensor<1x32x10x10xf32>
  %e2 = tensor.empty() : tensor<1x40x10x10xf32>
  %f2 = linalg.fill ins(%z : f32) outs(%e2 : tensor<1x40x10x10xf32>) -> tensor<1x40x10x10xf32>
  %c2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>,
                                  strides = dense<1> : tensor<2xi64>}
        ins(%r, %w2 : tensor<1x32x10x10xf32>, tensor<40x32x1x1xf32>)
        outs(%f2 : tensor<1x40x10x10xf32>) -> tensor<1x40x10x10xf32>
  return %c2 : tensor<1x40x10x10xf32>
}
