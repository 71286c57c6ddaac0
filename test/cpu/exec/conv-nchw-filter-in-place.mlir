// RUN: %check_cpu | FileCheck %s
// RUN: pb-opt %s --target=cpu-x86-64-v3 --pb-pipeline=s1,s2,s3 --pb-explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// An NCHW convolution with strides and dilations whose FCHW filter is an
// argument: the micro-kernel packs the filter from its FCHW layout (no
// transpose of it runs), its 3x3 window flattened with the 10 channels
// into one blocked K of 90, and the result matches the reference pipeline.
// EXPLAIN: matrix units: linalg.generic MxNxK 20x40x90
// CHECK: OK conv_filter_in_place: 800 values match the reference

func.func @conv_filter_in_place(%x: tensor<1x10x13x9xf32>, %w: tensor<40x10x3x3xf32>)
    -> tensor<1x40x4x5xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x40x4x5xf32>
  %o = linalg.fill ins(%z : f32) outs(%e : tensor<1x40x4x5xf32>) -> tensor<1x40x4x5xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<[3, 2]> : tensor<2xi64>,
                                 strides = dense<[2, 1]> : tensor<2xi64>}
       ins(%x, %w : tensor<1x10x13x9xf32>, tensor<40x10x3x3xf32>)
       outs(%o : tensor<1x40x4x5xf32>) -> tensor<1x40x4x5xf32>
  return %r : tensor<1x40x4x5xf32>
}
