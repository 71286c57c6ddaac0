// RUN: %s3_on_host %s --rtol 1e-5 | FileCheck %s
// Pooling: linalg.pooling_nhwc_max and an average pool
// (linalg.pooling_nhwc_sum, then a divide by the window size), both 3x3
// with stride 2 over an input padded by tensor.pad (-inf for max, 0 for
// sum), and a 2x2 stride-2 linalg.pooling_nchw_max, for every target,
// match the unoptimized program on the host.
// CHECK: OK amd-gfx942: 624 values match
// CHECK: OK cpu-x86-64-v3: 624 values match
// CHECK: OK nvidia-sm80: 624 values match
// CHECK: OK toy-chip: 624 values match

#id = affine_map<(i, j) -> (i, j)>
#id4 = affine_map<(n, h, w, c) -> (n, h, w, c)>

func.func @maxpool(%x: tensor<2x11x11x4xf32>) -> tensor<2x6x6x4xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %ninf : f32
  } : tensor<2x11x11x4xf32> to tensor<2x13x13x4xf32>
  %win = tensor.empty() : tensor<3x3xf32>
  %e = tensor.empty() : tensor<2x6x6x4xf32>
  %acc = linalg.fill ins(%ninf : f32) outs(%e : tensor<2x6x6x4xf32>) -> tensor<2x6x6x4xf32>
  %r = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>,
                                strides = dense<2> : tensor<2xi64>}
       ins(%p, %win : tensor<2x13x13x4xf32>, tensor<3x3xf32>)
       outs(%acc : tensor<2x6x6x4xf32>) -> tensor<2x6x6x4xf32>
  return %r : tensor<2x6x6x4xf32>
}

func.func @avgpool(%x: tensor<2x11x11x4xf32>) -> tensor<2x6x6x4xf32> {
  %zero = arith.constant 0.0 : f32
  %nine = arith.constant 9.0 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<2x11x11x4xf32> to tensor<2x13x13x4xf32>
  %win = tensor.empty() : tensor<3x3xf32>
  %e = tensor.empty() : tensor<2x6x6x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x6x6x4xf32>) -> tensor<2x6x6x4xf32>
  %s = linalg.pooling_nhwc_sum {dilations = dense<1> : tensor<2xi64>,
                                strides = dense<2> : tensor<2xi64>}
       ins(%p, %win : tensor<2x13x13x4xf32>, tensor<3x3xf32>)
       outs(%acc : tensor<2x6x6x4xf32>) -> tensor<2x6x6x4xf32>
  %r = linalg.generic {indexing_maps = [#id4, #id4],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x6x6x4xf32>) outs(%e : tensor<2x6x6x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %d = arith.divf %v, %nine : f32
    linalg.yield %d : f32
  } -> tensor<2x6x6x4xf32>
  return %r : tensor<2x6x6x4xf32>
}

func.func @maxpool_nchw(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %win = tensor.empty() : tensor<2x2xf32>
  %e = tensor.empty() : tensor<1x3x4x4xf32>
  %acc = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  %r = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>,
                                strides = dense<2> : tensor<2xi64>}
       ins(%x, %win : tensor<1x3x8x8xf32>, tensor<2x2xf32>)
       outs(%acc : tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  return %r : tensor<1x3x4x4xf32>
}

// ((i * mul + j + i * j * j) mod m) - off: small integers, so every order of
// summation gives the same f32 result. Each input is a slice of one
// tensor<24x44xf32> of these values.
func.func @iota(%mul: index, %mod: index, %off: index) -> tensor<24x44xf32> {
  %init = tensor.empty() : tensor<24x44xf32>
  %r = linalg.generic {indexing_maps = [#id],
                       iterator_types = ["parallel", "parallel"]}
      outs(%init : tensor<24x44xf32>) {
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
  } -> tensor<24x44xf32>
  return %r : tensor<24x44xf32>
}

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c11 = arith.constant 11 : index
  %c13 = arith.constant 13 : index

  %xd = call @iota(%c5, %c13, %c6) : (index, index, index) -> tensor<24x44xf32>
  %xs = tensor.extract_slice %xd[0, 0] [22, 44] [1, 1]
      : tensor<24x44xf32> to tensor<22x44xf32>
  %x = tensor.expand_shape %xs [[0, 1], [2, 3]] output_shape [2, 11, 11, 4]
      : tensor<22x44xf32> into tensor<2x11x11x4xf32>
  %r1 = call @maxpool(%x) : (tensor<2x11x11x4xf32>) -> tensor<2x6x6x4xf32>
  %u1 = tensor.cast %r1 : tensor<2x6x6x4xf32> to tensor<*xf32>
  call @printMemrefF32(%u1) : (tensor<*xf32>) -> ()
  %r2 = call @avgpool(%x) : (tensor<2x11x11x4xf32>) -> tensor<2x6x6x4xf32>
  %u2 = tensor.cast %r2 : tensor<2x6x6x4xf32> to tensor<*xf32>
  call @printMemrefF32(%u2) : (tensor<*xf32>) -> ()

  %yd = call @iota(%c3, %c11, %c4) : (index, index, index) -> tensor<24x44xf32>
  %ys = tensor.extract_slice %yd[0, 0] [24, 8] [1, 1]
      : tensor<24x44xf32> to tensor<24x8xf32>
  %y = tensor.expand_shape %ys [[0, 1, 2], [3]] output_shape [1, 3, 8, 8]
      : tensor<24x8xf32> into tensor<1x3x8x8xf32>
  %r3 = call @maxpool_nchw(%y) : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
  %u3 = tensor.cast %r3 : tensor<1x3x4x4xf32> to tensor<*xf32>
  call @printMemrefF32(%u3) : (tensor<*xf32>) -> ()
  return
}
