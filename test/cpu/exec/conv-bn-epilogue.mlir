// RUN: %check_cpu | FileCheck %s
// RUN: pb-opt %s --target=cpu-x86-64-v3 --pb-pipeline=s1,s2,s3 --pb-explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// A channels-last convolution followed by batch norm and ReLU, the norm's per-channel
// parameters viewed as (1, C) (expand_shape, as torch's graphs have them):
// the views sit between the convolution and its epilogue after
// bufferization, and the epilogue is still fused into the micro-kernel's
// final stores (before, only allocations and constants could sit there).
// EXPLAIN: matrix units: epilogue of {{[0-9]+}} ops fused
// CHECK: OK conv_bn_relu: 1568 values match the reference
#x = affine_map<(n, h, w, c) -> (n, h, w, c)>
#p = affine_map<(n, h, w, c) -> (n, c)>
func.func @conv_bn_relu(%x: tensor<1x9x9x8xf32>, %w: tensor<3x3x8x32xf32>,
                        %mean: tensor<32xf32>, %var: tensor<32xf32>,
                        %gamma: tensor<32xf32>, %beta: tensor<32xf32>) -> tensor<1x7x7x32xf32> {
  %z = arith.constant 0.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<1x7x7x32xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x7x7x32xf32>) -> tensor<1x7x7x32xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%x, %w : tensor<1x9x9x8xf32>, tensor<3x3x8x32xf32>) outs(%f : tensor<1x7x7x32xf32>) -> tensor<1x7x7x32xf32>
  %m = tensor.expand_shape %mean [[0, 1]] output_shape [1, 32] : tensor<32xf32> into tensor<1x32xf32>
  %v = tensor.expand_shape %var [[0, 1]] output_shape [1, 32] : tensor<32xf32> into tensor<1x32xf32>
  %g = tensor.expand_shape %gamma [[0, 1]] output_shape [1, 32] : tensor<32xf32> into tensor<1x32xf32>
  %b = tensor.expand_shape %beta [[0, 1]] output_shape [1, 32] : tensor<32xf32> into tensor<1x32xf32>
  %e2 = tensor.empty() : tensor<1x7x7x32xf32>
  %r = linalg.generic {indexing_maps = [#x, #p, #p, #p, #p, #x], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c, %m, %v, %g, %b : tensor<1x7x7x32xf32>, tensor<1x32xf32>, tensor<1x32xf32>, tensor<1x32xf32>, tensor<1x32xf32>)
      outs(%e2 : tensor<1x7x7x32xf32>) {
  ^bb0(%in: f32, %mu: f32, %sigma2: f32, %ga: f32, %be: f32, %o: f32):
    %s = arith.addf %sigma2, %eps : f32
    %sq = math.sqrt %s : f32
    %inv = arith.divf %one, %sq : f32
    %d = arith.subf %in, %mu : f32
    %n = arith.mulf %d, %inv : f32
    %y = arith.mulf %n, %ga : f32
    %t = arith.addf %y, %be : f32
    %relu = arith.maximumf %t, %z : f32
    linalg.yield %relu : f32
  } -> tensor<1x7x7x32xf32>
  return %r : tensor<1x7x7x32xf32>
}
