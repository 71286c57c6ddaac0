// RUN: pb-opt %s --pb-conv-to-channels-last | FileCheck %s

// An NCHW/FCHW convolution becomes an NHWC/HWCF one between transposes,
// with its strides and dilations kept.
// The transposes are linalg.generic ops (elementwise fusion folds them into
// their neighbours); a filled init is refilled in the new layout.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d1, d2)>
// CHECK-DAG: #[[FILTER:.*]] = affine_map<(d0, d1, d2, d3) -> (d3, d2, d0, d1)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3, d1)>
// CHECK-LABEL: func.func @nchw
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #{{.*}}]{{.*}} ins(%{{.*}} : tensor<1x3x9x9xf32>) outs(%{{.*}} : tensor<1x9x9x3xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[FILTER]], #{{.*}}]{{.*}} ins(%{{.*}} : tensor<8x3x3x3xf32>) outs(%{{.*}} : tensor<3x3x3x8xf32>)
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x4x4x8xf32>)
// CHECK: linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
// CHECK: linalg.generic {indexing_maps = [#[[OUT]], #{{.*}}]{{.*}} ins(%{{.*}} : tensor<1x4x4x8xf32>) outs(%{{.*}} : tensor<1x8x4x4xf32>)
// CHECK-NOT: conv_2d_nchw_fchw
func.func @nchw(%x: tensor<1x3x9x9xf32>, %w: tensor<8x3x3x3xf32>)
    -> tensor<1x8x4x4xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x4x4xf32>
  %o = linalg.fill ins(%z : f32) outs(%e : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>,
                                 strides = dense<2> : tensor<2xi64>}
       ins(%x, %w : tensor<1x3x9x9xf32>, tensor<8x3x3x3xf32>)
       outs(%o : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  return %r : tensor<1x8x4x4xf32>
}
