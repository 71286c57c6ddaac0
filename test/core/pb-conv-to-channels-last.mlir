// RUN: pb-opt %s --pb-conv-to-channels-last --split-input-file | FileCheck %s
// RUN: pb-opt %s --split-input-file --pass-pipeline='builtin.module(pb-attach-target{target=cpu-x86-64-v3},func.func(pb-conv-to-channels-last))' | FileCheck %s --check-prefix=CPU
// RUN: pb-opt %s --split-input-file --pass-pipeline='builtin.module(pb-attach-target{target=nvidia-sm90},func.func(pb-conv-to-channels-last))' | FileCheck %s --check-prefix=GPU

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

// -----

// On a CPU (thread-scope matrix units, whose kernel packs the filter) a
// filter argument is read in place in its FCHW layout: the convolution is a
// multiply-accumulate generic over (n, oh, ow, f, kh, kw, c) with the
// strides and dilations in the input map, and no filter transpose remains.
// A GPU target keeps the HWCF filter its tensor-core kernel reads.
// CPU-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 * 2 + d4 * 3, d2 + d5 * 2, d6)>
// CPU-DAG: #[[FCHW:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3, d6, d4, d5)>
// CPU-DAG: #[[NHWC:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
// CPU-LABEL: func.func @filter_argument
// CPU-NOT: outs(%{{.*}} : tensor<3x3x4x8xf32>)
// CPU: linalg.generic {indexing_maps = [#[[IN]], #[[FCHW]], #[[NHWC]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
// CPU-SAME: ins(%{{.*}}, %{{.*}} : tensor<1x13x9x4xf32>, tensor<8x4x3x3xf32>)
// CPU: arith.mulf
// CPU: arith.addf
// CPU-NOT: linalg.conv_2d_nhwc_hwcf
// GPU-LABEL: func.func @filter_argument
// GPU: outs(%{{.*}} : tensor<3x3x4x8xf32>)
// GPU: linalg.conv_2d_nhwc_hwcf
func.func @filter_argument(%x: tensor<1x4x13x9xf32>, %w: tensor<8x4x3x3xf32>)
    -> tensor<1x8x4x5xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x4x5xf32>
  %o = linalg.fill ins(%z : f32) outs(%e : tensor<1x8x4x5xf32>) -> tensor<1x8x4x5xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<[3, 2]> : tensor<2xi64>,
                                 strides = dense<[2, 1]> : tensor<2xi64>}
       ins(%x, %w : tensor<1x4x13x9xf32>, tensor<8x4x3x3xf32>)
       outs(%o : tensor<1x8x4x5xf32>) -> tensor<1x8x4x5xf32>
  return %r : tensor<1x8x4x5xf32>
}

// -----

// A constant filter (a frozen model) is still transposed to HWCF on a
// CPU target:
// S1 folds that transpose at compile time into a contiguous constant.
// CPU-LABEL: func.func @constant_filter
// CPU: linalg.generic {{.*}} ins(%{{.*}} : tensor<8x4x3x3xf32>) outs(%{{.*}} : tensor<3x3x4x8xf32>)
// CPU: linalg.conv_2d_nhwc_hwcf
func.func @constant_filter(%x: tensor<1x4x13x9xf32>) -> tensor<1x8x4x5xf32> {
  %w = arith.constant dense<0.5> : tensor<8x4x3x3xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x4x5xf32>
  %o = linalg.fill ins(%z : f32) outs(%e : tensor<1x8x4x5xf32>) -> tensor<1x8x4x5xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<[3, 2]> : tensor<2xi64>,
                                 strides = dense<[2, 1]> : tensor<2xi64>}
       ins(%x, %w : tensor<1x4x13x9xf32>, tensor<8x4x3x3xf32>)
       outs(%o : tensor<1x8x4x5xf32>) -> tensor<1x8x4x5xf32>
  return %r : tensor<1x8x4x5xf32>
}

// -----

// A grouped convolution with more than one channel per group (2 groups of
// 4 input and 3 output channels, as the torch frontend emits it: NGCHW
// between reshapes) becomes a multiply-accumulate generic over
// (n, oh, ow, g, f, kh, kw, c): input read as (n, h, w, g, c), result
// written as (n, oh, ow, g, f), so that per group the output channels are
// innermost (a batched GEMM for pb-map-matrix-units); strides and
// dilations in the input map. Without a chip that packs the filter, and on
// a GPU, the filter is transposed to (g, kh, kw, c, f); on a CPU it is read
// in place (g, f, c, kh, kw).
// CHECK-DAG: #[[GIN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1 * 2 + d5, d2 + d6 * 2, d3, d7)>
// CHECK-DAG: #[[GHWCF:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d3, d5, d6, d7, d4)>
// CHECK-DAG: #[[GOUT:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>
// CHECK-DAG: #[[TO_NHWGC:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d4, d1, d2)>
// CHECK-DAG: #[[TO_GHWCF:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d4, d3, d1, d2)>
// CHECK-LABEL: func.func @grouped
// CHECK: linalg.generic {indexing_maps = [#[[TO_NHWGC]], #{{.*}}]{{.*}} ins(%{{.*}} : tensor<1x2x4x9x9xf32>) outs(%{{.*}} : tensor<1x9x9x2x4xf32>)
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x4x3x2x3xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[TO_GHWCF]], #{{.*}}]{{.*}} ins(%{{.*}} : tensor<2x3x4x3x3xf32>) outs(%{{.*}} : tensor<2x3x3x4x3xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[GIN]], #[[GHWCF]], #[[GOUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<1x9x9x2x4xf32>, tensor<2x3x3x4x3xf32>) outs(%{{.*}} : tensor<1x4x3x2x3xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: linalg.generic {indexing_maps = [#[[TO_NHWGC]], #{{.*}}]{{.*}} ins(%{{.*}} : tensor<1x4x3x2x3xf32>) outs(%{{.*}} : tensor<1x2x3x4x3xf32>)
// CHECK-NOT: linalg.conv_2d_ngchw_gfchw
// CPU-DAG: #[[GFCHW:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d3, d4, d7, d5, d6)>
// CPU-LABEL: func.func @grouped
// CPU-NOT: outs(%{{.*}} : tensor<2x3x3x4x3xf32>)
// CPU: linalg.generic {indexing_maps = [#{{.*}}, #[[GFCHW]], #{{.*}}]
// CPU-SAME: ins(%{{.*}}, %{{.*}} : tensor<1x9x9x2x4xf32>, tensor<2x3x4x3x3xf32>)
// CPU-NOT: linalg.conv_2d_ngchw_gfchw
// GPU-LABEL: func.func @grouped
// GPU: outs(%{{.*}} : tensor<2x3x3x4x3xf32>)
// GPU-NOT: linalg.conv_2d_ngchw_gfchw
func.func @grouped(%x: tensor<1x2x4x9x9xf32>, %w: tensor<2x3x4x3x3xf32>)
    -> tensor<1x2x3x4x3xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x3x4x3xf32>
  %o = linalg.fill ins(%z : f32) outs(%e : tensor<1x2x3x4x3xf32>) -> tensor<1x2x3x4x3xf32>
  %r = linalg.conv_2d_ngchw_gfchw {dilations = dense<[1, 2]> : tensor<2xi64>,
                                   strides = dense<[2, 1]> : tensor<2xi64>}
       ins(%x, %w : tensor<1x2x4x9x9xf32>, tensor<2x3x4x3x3xf32>)
       outs(%o : tensor<1x2x3x4x3xf32>) -> tensor<1x2x3x4x3xf32>
  return %r : tensor<1x2x3x4x3xf32>
}

// -----

// bf16 operands summed in f32 (torch's bf16 convolutions): the depthwise
// and the grouped channels-last generics widen both operands first, as
// the named convolution does; neither is left as a (per-group) NGCHW op.
// CHECK-LABEL: func.func @depthwise_bf16
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<1x7x7x4xf32>)
// CHECK: ^bb0(%[[X:.*]]: bf16, %[[W:.*]]: bf16, %[[ACC:.*]]: f32):
// CHECK-DAG: %[[XW:.*]] = arith.extf %[[X]] : bf16 to f32
// CHECK-DAG: %[[WW:.*]] = arith.extf %[[W]] : bf16 to f32
// CHECK: %[[P:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK: arith.addf %[[ACC]], %[[P]] : f32
// CHECK-NOT: linalg.conv_2d_ngchw_gfchw
func.func @depthwise_bf16(%x: tensor<1x4x1x9x9xbf16>, %w: tensor<4x1x1x3x3xbf16>)
    -> tensor<1x4x1x7x7xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x1x7x7xf32>
  %o = linalg.fill ins(%z : f32) outs(%e : tensor<1x4x1x7x7xf32>) -> tensor<1x4x1x7x7xf32>
  %r = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>,
                                   strides = dense<1> : tensor<2xi64>}
       ins(%x, %w : tensor<1x4x1x9x9xbf16>, tensor<4x1x1x3x3xbf16>)
       outs(%o : tensor<1x4x1x7x7xf32>) -> tensor<1x4x1x7x7xf32>
  return %r : tensor<1x4x1x7x7xf32>
}

// -----

// CHECK-LABEL: func.func @grouped_bf16
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK-NOT: linalg.conv_2d_ngchw_gfchw
func.func @grouped_bf16(%x: tensor<1x2x4x9x9xbf16>, %w: tensor<2x3x4x3x3xbf16>)
    -> tensor<1x2x3x7x7xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x3x7x7xf32>
  %o = linalg.fill ins(%z : f32) outs(%e : tensor<1x2x3x7x7xf32>) -> tensor<1x2x3x7x7xf32>
  %r = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>,
                                   strides = dense<1> : tensor<2xi64>}
       ins(%x, %w : tensor<1x2x4x9x9xbf16>, tensor<2x3x4x3x3xbf16>)
       outs(%o : tensor<1x2x3x7x7xf32>) -> tensor<1x2x3x7x7xf32>
  return %r : tensor<1x2x3x7x7xf32>
}
