// RUN: %s3_on_host %s --rtol 1e-5 | FileCheck %s
// 2-d convolutions: linalg.conv_2d_nchw_fchw with stride 2,
// linalg.conv_2d_nhwc_hwcf with dilation 2 on an explicitly padded input
// (tensor.pad), a depthwise linalg.depthwise_conv_2d_nhwc_hwc and a grouped
// linalg.conv_2d_ngchw_gfchw, for every target, match the unoptimized
// program on the host (small integers: exact in any order).
// CHECK: OK amd-gfx942: 1304 values match
// CHECK: OK cpu-x86-64-v3: 1304 values match
// CHECK: OK nvidia-sm80: 1304 values match
// CHECK: OK toy-chip: 1304 values match

#id = affine_map<(i, j) -> (i, j)>

func.func @conv_nchw_s2(%x: tensor<2x3x11x11xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x4x5x5xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x5x5xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>,
                                 strides = dense<2> : tensor<2xi64>}
       ins(%x, %w : tensor<2x3x11x11xf32>, tensor<4x3x3x3xf32>)
       outs(%acc : tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  return %r : tensor<2x4x5x5xf32>
}

func.func @conv_nhwc_pad_d2(%x: tensor<1x10x10x3xf32>, %w: tensor<3x3x3x5xf32>) -> tensor<1x8x8x5xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<1x10x10x3xf32> to tensor<1x12x12x3xf32>
  %e = tensor.empty() : tensor<1x8x8x5xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x8x5xf32>) -> tensor<1x8x8x5xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<2> : tensor<2xi64>,
                                 strides = dense<1> : tensor<2xi64>}
       ins(%p, %w : tensor<1x12x12x3xf32>, tensor<3x3x3x5xf32>)
       outs(%acc : tensor<1x8x8x5xf32>) -> tensor<1x8x8x5xf32>
  return %r : tensor<1x8x8x5xf32>
}

func.func @conv_depthwise(%x: tensor<1x9x9x8xf32>, %w: tensor<3x3x8xf32>) -> tensor<1x7x7x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x7x7x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x7x7x8xf32>) -> tensor<1x7x7x8xf32>
  %r = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>,
                                          strides = dense<1> : tensor<2xi64>}
       ins(%x, %w : tensor<1x9x9x8xf32>, tensor<3x3x8xf32>)
       outs(%acc : tensor<1x7x7x8xf32>) -> tensor<1x7x7x8xf32>
  return %r : tensor<1x7x7x8xf32>
}

func.func @conv_grouped(%x: tensor<1x2x3x9x9xf32>, %w: tensor<2x4x3x3x3xf32>) -> tensor<1x2x4x7x7xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x4x7x7xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x4x7x7xf32>) -> tensor<1x2x4x7x7xf32>
  %r = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>,
                                   strides = dense<1> : tensor<2xi64>}
       ins(%x, %w : tensor<1x2x3x9x9xf32>, tensor<2x4x3x3x3xf32>)
       outs(%acc : tensor<1x2x4x7x7xf32>) -> tensor<1x2x4x7x7xf32>
  return %r : tensor<1x2x4x7x7xf32>
}

// ((i * mul + j + i * j * j) mod m) - off: small integers, so every order of
// summation gives the same f32 result. Each input is a slice of one
// tensor<10x121xf32> of these values.
func.func @iota(%mul: index, %mod: index, %off: index) -> tensor<10x121xf32> {
  %init = tensor.empty() : tensor<10x121xf32>
  %r = linalg.generic {indexing_maps = [#id],
                       iterator_types = ["parallel", "parallel"]}
      outs(%init : tensor<10x121xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %t = arith.muli %i, %mul : index
    %jj = arith.muli %j, %j : index
    %ijj = arith.muli %i, %jj : index
    %t2 = arith.addi %t, %ijj : index
    %u = arith.addi %t2, %j : index
    %v = arith.remui %u, %mod : index
    %w = arith.index_cast %v : index to i32
    %z = arith.index_cast %off : index to i32
    %d = arith.subi %w, %z : i32
    %f = arith.sitofp %d : i32 to f32
    linalg.yield %f : f32
  } -> tensor<10x121xf32>
  return %r : tensor<10x121xf32>
}

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %c9 = arith.constant 9 : index
  %c11 = arith.constant 11 : index

  // NCHW, stride 2.
  %x1d = call @iota(%c5, %c7, %c3) : (index, index, index) -> tensor<10x121xf32>
  %w1d = call @iota(%c3, %c5, %c2) : (index, index, index) -> tensor<10x121xf32>
  %x1s = tensor.extract_slice %x1d[0, 0] [6, 121] [1, 1]
      : tensor<10x121xf32> to tensor<6x121xf32>
  %w1s = tensor.extract_slice %w1d[0, 0] [4, 27] [1, 1]
      : tensor<10x121xf32> to tensor<4x27xf32>
  %x1 = tensor.expand_shape %x1s [[0, 1], [2, 3]] output_shape [2, 3, 11, 11]
      : tensor<6x121xf32> into tensor<2x3x11x11xf32>
  %w1 = tensor.expand_shape %w1s [[0], [1, 2, 3]] output_shape [4, 3, 3, 3]
      : tensor<4x27xf32> into tensor<4x3x3x3xf32>
  %r1 = call @conv_nchw_s2(%x1, %w1) : (tensor<2x3x11x11xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x5x5xf32>
  %u1 = tensor.cast %r1 : tensor<2x4x5x5xf32> to tensor<*xf32>
  call @printMemrefF32(%u1) : (tensor<*xf32>) -> ()

  // NHWC, padding 1, dilation 2.
  %x2d = call @iota(%c3, %c7, %c3) : (index, index, index) -> tensor<10x121xf32>
  %w2d = call @iota(%c2, %c5, %c2) : (index, index, index) -> tensor<10x121xf32>
  %x2s = tensor.extract_slice %x2d[0, 0] [10, 30] [1, 1]
      : tensor<10x121xf32> to tensor<10x30xf32>
  %w2s = tensor.extract_slice %w2d[0, 0] [9, 15] [1, 1]
      : tensor<10x121xf32> to tensor<9x15xf32>
  %x2 = tensor.expand_shape %x2s [[0, 1], [2, 3]] output_shape [1, 10, 10, 3]
      : tensor<10x30xf32> into tensor<1x10x10x3xf32>
  %w2 = tensor.expand_shape %w2s [[0, 1], [2, 3]] output_shape [3, 3, 3, 5]
      : tensor<9x15xf32> into tensor<3x3x3x5xf32>
  %r2 = call @conv_nhwc_pad_d2(%x2, %w2) : (tensor<1x10x10x3xf32>, tensor<3x3x3x5xf32>) -> tensor<1x8x8x5xf32>
  %u2 = tensor.cast %r2 : tensor<1x8x8x5xf32> to tensor<*xf32>
  call @printMemrefF32(%u2) : (tensor<*xf32>) -> ()

  // Depthwise NHWC.
  %x3d = call @iota(%c5, %c9, %c4) : (index, index, index) -> tensor<10x121xf32>
  %w3d = call @iota(%c3, %c5, %c2) : (index, index, index) -> tensor<10x121xf32>
  %x3s = tensor.extract_slice %x3d[0, 0] [9, 72] [1, 1]
      : tensor<10x121xf32> to tensor<9x72xf32>
  %w3s = tensor.extract_slice %w3d[0, 0] [9, 8] [1, 1]
      : tensor<10x121xf32> to tensor<9x8xf32>
  %x3 = tensor.expand_shape %x3s [[0, 1], [2, 3]] output_shape [1, 9, 9, 8]
      : tensor<9x72xf32> into tensor<1x9x9x8xf32>
  %w3 = tensor.expand_shape %w3s [[0, 1], [2]] output_shape [3, 3, 8]
      : tensor<9x8xf32> into tensor<3x3x8xf32>
  %r3 = call @conv_depthwise(%x3, %w3) : (tensor<1x9x9x8xf32>, tensor<3x3x8xf32>) -> tensor<1x7x7x8xf32>
  %u3 = tensor.cast %r3 : tensor<1x7x7x8xf32> to tensor<*xf32>
  call @printMemrefF32(%u3) : (tensor<*xf32>) -> ()

  // Grouped NGCHW (2 groups of 3 input and 4 output channels).
  %x4d = call @iota(%c7, %c11, %c5) : (index, index, index) -> tensor<10x121xf32>
  %w4d = call @iota(%c2, %c5, %c2) : (index, index, index) -> tensor<10x121xf32>
  %x4s = tensor.extract_slice %x4d[0, 0] [6, 81] [1, 1]
      : tensor<10x121xf32> to tensor<6x81xf32>
  %w4s = tensor.extract_slice %w4d[0, 0] [8, 27] [1, 1]
      : tensor<10x121xf32> to tensor<8x27xf32>
  %x4 = tensor.expand_shape %x4s [[0, 1, 2], [3, 4]] output_shape [1, 2, 3, 9, 9]
      : tensor<6x81xf32> into tensor<1x2x3x9x9xf32>
  %w4 = tensor.expand_shape %w4s [[0, 1], [2, 3, 4]] output_shape [2, 4, 3, 3, 3]
      : tensor<8x27xf32> into tensor<2x4x3x3x3xf32>
  %r4 = call @conv_grouped(%x4, %w4) : (tensor<1x2x3x9x9xf32>, tensor<2x4x3x3x3xf32>) -> tensor<1x2x4x7x7xf32>
  %u4 = tensor.cast %r4 : tensor<1x2x4x7x7xf32> to tensor<*xf32>
  call @printMemrefF32(%u4) : (tensor<*xf32>) -> ()
  return
}
