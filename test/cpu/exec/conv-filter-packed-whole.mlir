// RUN: pb-compile %s --target=cpu-host -o %t.opt
// RUN: pb-compile %s --target=cpu-host --options=pipeline=reference -o %t.ref
// RUN: pb-run %t.opt --check-against=%t.ref --atol=1e-4 | FileCheck %s
// RUN: pb-opt %s --target=cpu-x86-64-v3 --pb-pipeline=s1,s2,s3 --pb-explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// Convolutions whose FCHW filters are arguments: the micro-kernel packs
// each filter whole, reading its rows along (c, kh, kw) and transposing
// 8 x 8 squares in registers (GemmPlan::packWhole). Sums of 2700
// products of magnitude ~10 differ from the reference's in their last
// bits: an output near zero needs an absolute tolerance of 1e-4.
//
// @wide: 300 x 3 x 3 filter rows (10.5 KB each, 2700 = 337 x 8 + 4
// elements: the last 4 take the scalar path) in two KC blocks per window
// position; all 32 filters do not fit the per-core cache. The NCHW input
// is packed (through a table of each K index's offset, GemmPlan::aLinear),
// so the filter is packed whole once and the K blocks run one at a time
// over it.
// EXPLAIN: matrix units: linalg.generic MxNxK 16x32x300 {{.*}} KC=160 (l1d), {{.*}}, A packed through a table of K offsets, one K block per task, B packed whole along its rows
// CHECK: OK wide: 512 values match the reference
//
// @wide_nhwc: the same filter over a channels-last input, read in place:
// the two NC blocks of 16 filters are the parallel tasks, each packing its
// own columns for all of K.
// EXPLAIN: matrix units: linalg.generic MxNxK 16x32x300 {{.*}} KC=160 (l1d), MC={{[0-9]+}} (l2), NC=16 (l2), 1 M blocks x 1 N groups (>= 8 tasks), the NC blocks as the tasks, A read in place, all K blocks per task, B packed whole along its rows
// CHECK: OK wide_nhwc: 512 values match the reference
//
// @narrow: a 16 x 3 x 3 filter that fits the per-core cache, its 16
// channels flattened with the window's columns into a blocked K of 48
// (A's offsets of (kw, c) from the table, no division per element),
// packed whole before the M blocks run.
// EXPLAIN: matrix units: linalg.generic MxNxK 64x32x48 {{.*}} A packed through a table of K offsets, all K blocks per task, B packed whole along its rows
// CHECK: OK narrow: 2048 values match the reference
//
// @short_m_nhwc: a 1x1 convolution over 28 x 28 channels-last pixels whose
// filter fits the per-core cache. Eight M blocks of 98 rows would be shorter
// than kMinDirectTiles register tiles: the NC blocks are the tasks (one
// fork, each task packing its own filters), as for filters that do not fit.
// EXPLAIN: matrix units: linalg.generic MxNxK 784x128x128 {{.*}} the NC blocks as the tasks, A read in place, all K blocks per task, B packed whole along its rows
// CHECK: OK short_m_nhwc: 100352 values match the reference
//
// @tall_m_nhwc: the same over 56 x 56 pixels: M blocks of 392 rows are
// the tasks, after the filter is packed whole.
// EXPLAIN: matrix units: linalg.generic MxNxK 3136x128x128 {{.*}} 8 M blocks x 1 N groups (>= 8 tasks), A read in place, all K blocks per task, B packed whole along its rows
// CHECK: OK tall_m_nhwc: 401408 values match the reference
//
// @one_block_nhwc: 16 filters, one NC block: the NC blocks would be one
// task on one core (DenseNet's 3x3 convolutions to 32 channels were); the M
// blocks are the tasks, after the filter is packed whole.
// EXPLAIN: matrix units: linalg.generic MxNxK 196x16x48 {{.*}} {{[2-9]}} M blocks x 1 N groups (>= 8 tasks), A read in place, all K blocks per task, B packed whole along its rows
// CHECK: OK one_block_nhwc: 3136 values match the reference

func.func @wide(%x: tensor<1x300x6x6xf32>, %w: tensor<32x300x3x3xf32>)
    -> tensor<1x32x4x4xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x32x4x4xf32>
  %o = linalg.fill ins(%z : f32) outs(%e : tensor<1x32x4x4xf32>) -> tensor<1x32x4x4xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>,
                                 strides = dense<1> : tensor<2xi64>}
       ins(%x, %w : tensor<1x300x6x6xf32>, tensor<32x300x3x3xf32>)
       outs(%o : tensor<1x32x4x4xf32>) -> tensor<1x32x4x4xf32>
  return %r : tensor<1x32x4x4xf32>
}

#in = affine_map<(n, oh, ow, f, kh, kw, c) -> (n, oh + kh, ow + kw, c)>
#fchw = affine_map<(n, oh, ow, f, kh, kw, c) -> (f, c, kh, kw)>
#out = affine_map<(n, oh, ow, f, kh, kw, c) -> (n, oh, ow, f)>
func.func @wide_nhwc(%x: tensor<1x6x6x300xf32>, %w: tensor<32x300x3x3xf32>)
    -> tensor<1x4x4x32xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x4x32xf32>
  %o = linalg.fill ins(%z : f32) outs(%e : tensor<1x4x4x32xf32>) -> tensor<1x4x4x32xf32>
  %r = linalg.generic {indexing_maps = [#in, #fchw, #out],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel",
                                         "reduction", "reduction", "reduction"]}
       ins(%x, %w : tensor<1x6x6x300xf32>, tensor<32x300x3x3xf32>)
       outs(%o : tensor<1x4x4x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x4x4x32xf32>
  return %r : tensor<1x4x4x32xf32>
}

func.func @narrow(%x: tensor<1x16x10x10xf32>, %w: tensor<32x16x3x3xf32>)
    -> tensor<1x32x8x8xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x32x8x8xf32>
  %o = linalg.fill ins(%z : f32) outs(%e : tensor<1x32x8x8xf32>) -> tensor<1x32x8x8xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>,
                                 strides = dense<1> : tensor<2xi64>}
       ins(%x, %w : tensor<1x16x10x10xf32>, tensor<32x16x3x3xf32>)
       outs(%o : tensor<1x32x8x8xf32>) -> tensor<1x32x8x8xf32>
  return %r : tensor<1x32x8x8xf32>
}

#in1 = affine_map<(n, oh, ow, f, kh, kw, c) -> (n, oh + kh, ow + kw, c)>
func.func @short_m_nhwc(%x: tensor<1x28x28x128xf32>, %w: tensor<128x128x1x1xf32>)
    -> tensor<1x28x28x128xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x28x28x128xf32>
  %o = linalg.fill ins(%z : f32) outs(%e : tensor<1x28x28x128xf32>) -> tensor<1x28x28x128xf32>
  %r = linalg.generic {indexing_maps = [#in1, #fchw, #out],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel",
                                         "reduction", "reduction", "reduction"]}
       ins(%x, %w : tensor<1x28x28x128xf32>, tensor<128x128x1x1xf32>)
       outs(%o : tensor<1x28x28x128xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x28x28x128xf32>
  return %r : tensor<1x28x28x128xf32>
}

func.func @tall_m_nhwc(%x: tensor<1x56x56x128xf32>, %w: tensor<128x128x1x1xf32>)
    -> tensor<1x56x56x128xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x56x56x128xf32>
  %o = linalg.fill ins(%z : f32) outs(%e : tensor<1x56x56x128xf32>) -> tensor<1x56x56x128xf32>
  %r = linalg.generic {indexing_maps = [#in1, #fchw, #out],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel",
                                         "reduction", "reduction", "reduction"]}
       ins(%x, %w : tensor<1x56x56x128xf32>, tensor<128x128x1x1xf32>)
       outs(%o : tensor<1x56x56x128xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x56x56x128xf32>
  return %r : tensor<1x56x56x128xf32>
}

func.func @one_block_nhwc(%x: tensor<1x16x16x48xf32>, %w: tensor<16x48x3x3xf32>)
    -> tensor<1x14x14x16xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x14x14x16xf32>
  %o = linalg.fill ins(%z : f32) outs(%e : tensor<1x14x14x16xf32>) -> tensor<1x14x14x16xf32>
  %r = linalg.generic {indexing_maps = [#in, #fchw, #out],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel",
                                         "reduction", "reduction", "reduction"]}
       ins(%x, %w : tensor<1x16x16x48xf32>, tensor<16x48x3x3xf32>)
       outs(%o : tensor<1x14x14x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x14x14x16xf32>
  return %r : tensor<1x14x14x16xf32>
}
