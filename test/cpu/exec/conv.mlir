// RUN: %check_cpu | FileCheck %s
// Padded convolutions and pooling compiled for the CPU: tensor.pad's copy
// into a strided view must become loops (not a runner-library call).
// CHECK: OK conv_pad: 1152 values match the reference
// CHECK: OK maxpool: 288 values match the reference
// CHECK: OK conv_strided_dilated: 1000 values match the reference
// CHECK: OK conv_1x1: 3920 values match the reference
// CHECK: OK conv_bias_relu: 1000 values match the reference

func.func @conv_pad(%x: tensor<1x12x12x8xf32>, %w: tensor<3x3x8x8xf32>) -> tensor<1x12x12x8xf32> {
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %z : f32
  } : tensor<1x12x12x8xf32> to tensor<1x14x14x8xf32>
  %e = tensor.empty() : tensor<1x12x12x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x12x12x8xf32>) -> tensor<1x12x12x8xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>,
                                 strides = dense<1> : tensor<2xi64>}
       ins(%p, %w : tensor<1x14x14x8xf32>, tensor<3x3x8x8xf32>)
       outs(%f : tensor<1x12x12x8xf32>) -> tensor<1x12x12x8xf32>
  return %r : tensor<1x12x12x8xf32>
}

func.func @maxpool(%x: tensor<1x12x12x8xf32>) -> tensor<1x6x6x8xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %ninf : f32
  } : tensor<1x12x12x8xf32> to tensor<1x14x14x8xf32>
  %k = tensor.empty() : tensor<3x3xf32>
  %e = tensor.empty() : tensor<1x6x6x8xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x6x6x8xf32>) -> tensor<1x6x6x8xf32>
  %r = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>,
                                strides = dense<2> : tensor<2xi64>}
       ins(%p, %k : tensor<1x14x14x8xf32>, tensor<3x3xf32>)
       outs(%f : tensor<1x6x6x8xf32>) -> tensor<1x6x6x8xf32>
  return %r : tensor<1x6x6x8xf32>
}

// Mapped onto the register-tiled micro-kernel (M = n*oh*ow = 25, N = 40
// with an edge, K = kh*kw*c blocked along c): stride 2 and dilation 2.
func.func @conv_strided_dilated(%x: tensor<1x14x14x16xf32>, %w: tensor<3x3x16x40xf32>) -> tensor<1x5x5x40xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x5x5x40xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x5x5x40xf32>) -> tensor<1x5x5x40xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<2> : tensor<2xi64>,
                                 strides = dense<2> : tensor<2xi64>}
       ins(%x, %w : tensor<1x14x14x16xf32>, tensor<3x3x16x40xf32>)
       outs(%f : tensor<1x5x5x40xf32>) -> tensor<1x5x5x40xf32>
  return %r : tensor<1x5x5x40xf32>
}

// A 1x1 convolution with batch 2 is a matmul over n*h*w rows.
func.func @conv_1x1(%x: tensor<2x7x7x24xf32>, %w: tensor<1x1x24x40xf32>) -> tensor<2x7x7x40xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x7x7x40xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<2x7x7x40xf32>) -> tensor<2x7x7x40xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>,
                                 strides = dense<1> : tensor<2xi64>}
       ins(%x, %w : tensor<2x7x7x24xf32>, tensor<1x1x24x40xf32>)
       outs(%f : tensor<2x7x7x40xf32>) -> tensor<2x7x7x40xf32>
  return %r : tensor<2x7x7x40xf32>
}

// A bias + relu epilogue fused into the micro-kernel's last K block (3x3
// filter: the last block is the last of kh, kw and the channel blocks).
func.func @conv_bias_relu(%x: tensor<1x7x7x16xf32>, %w: tensor<3x3x16x40xf32>,
                          %bias: tensor<40xf32>) -> tensor<1x5x5x40xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x5x5x40xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x5x5x40xf32>) -> tensor<1x5x5x40xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>,
                                 strides = dense<1> : tensor<2xi64>}
       ins(%x, %w : tensor<1x7x7x16xf32>, tensor<3x3x16x40xf32>)
       outs(%f : tensor<1x5x5x40xf32>) -> tensor<1x5x5x40xf32>
  %e2 = tensor.empty() : tensor<1x5x5x40xf32>
  %r = linalg.generic {
      indexing_maps = [affine_map<(n, h, w, c) -> (n, h, w, c)>,
                       affine_map<(n, h, w, c) -> (c)>,
                       affine_map<(n, h, w, c) -> (n, h, w, c)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c, %bias : tensor<1x5x5x40xf32>, tensor<40xf32>)
      outs(%e2 : tensor<1x5x5x40xf32>) {
  ^bb0(%v: f32, %b: f32, %o: f32):
    %s = arith.addf %v, %b : f32
    %m = arith.maximumf %s, %z : f32
    linalg.yield %m : f32
  } -> tensor<1x5x5x40xf32>
  return %r : tensor<1x5x5x40xf32>
}
