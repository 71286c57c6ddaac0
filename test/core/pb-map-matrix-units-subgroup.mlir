// RUN: pb-opt %s --split-input-file --pass-pipeline='builtin.module(pb-attach-target{target=nvidia-sm80},pb-map-matrix-units)' | FileCheck %s
// RUN: pb-opt %s --split-input-file --pb-explain --pass-pipeline='builtin.module(pb-attach-target{target=nvidia-sm80},pb-map-matrix-units)' -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: pb-opt %s --split-input-file --pass-pipeline='builtin.module(pb-attach-target{target=nvidia-sm80},pb-map-matrix-units{allow-tf32=1})' | FileCheck %s --check-prefix=TF32
// RUN: pb-opt %s --split-input-file --pass-pipeline='builtin.module(pb-attach-target{target=nvidia-sm80},pb-map-matrix-units{allow-tf32-convolutions=1})' | FileCheck %s --check-prefix=TF32CONV
// On a chip whose matrix units are subgroup-scope (a warp's mma.sync),
// pb-map-matrix-units tags the contractions such a unit can run and leaves
// them as linalg ops for the target's S4; the others are explained.

// EXPLAIN: remark: pb-explain: matrix units: linalg.matmul MxNxK 256x192x128 on MMA_F32_16x8x16_F16 (SubgroupScope), left to S4
// CHECK-LABEL: func.func @f16
// CHECK: linalg.matmul {pb.matrix_unit = "MMA_F32_16x8x16_F16"}
func.func @f16(%a: memref<256x128xf16>, %b: memref<128x192xf16>, %c: memref<256x192xf16>) {
  linalg.matmul ins(%a, %b : memref<256x128xf16>, memref<128x192xf16>) outs(%c : memref<256x192xf16>)
  return
}

// -----

// f32 runs on tf32 units only when allowed (allow-tf32-convolutions allows
// convolutions only, as PyTorch's cudnn.allow_tf32 does).
// EXPLAIN: remark: pb-explain: matrix units: linalg.matmul not on a subgroup- or warpgroup-scope unit: f32 operands (tf32 units need allow-tf32, or allow-tf32-convolutions for a convolution)
// TF32CONV-LABEL: func.func @f32
// TF32CONV-NEXT: linalg.matmul ins(
// CHECK-LABEL: func.func @f32
// CHECK-NOT: pb.matrix_unit
// TF32-LABEL: func.func @f32
// TF32: linalg.matmul {pb.matrix_unit = "MMA_F32_16x8x8_TF32"}
func.func @f32(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: memref<64x64xf32>) {
  linalg.matmul ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>)
  return
}

// -----

// x @ W^T over a (batch, sequence) activation: two M loops, B indexed (n, k).
// EXPLAIN: remark: pb-explain: matrix units: linalg.generic MxNxK 100x96x72 on MMA_F32_16x8x16_F16 (SubgroupScope), left to S4
// CHECK-LABEL: func.func @linear
// CHECK: linalg.generic {{.*}}pb.matrix_unit = "MMA_F32_16x8x16_F16"
func.func @linear(%x: memref<2x50x72xf16>, %w: memref<96x72xf16>, %y: memref<2x50x96xf16>) {
  linalg.generic {indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<2x50x72xf16>, memref<96x72xf16>) outs(%y : memref<2x50x96xf16>) {
  ^bb0(%a: f16, %b: f16, %c: f16):
    %p = arith.mulf %a, %b : f16
    %s = arith.addf %c, %p : f16
    linalg.yield %s : f16
  }
  return
}

// -----

// A indexed (k, m) is not a layout the warp-level kernel reads.
// EXPLAIN: remark: pb-explain: matrix units: linalg.generic not on a subgroup- or warpgroup-scope unit: A's innermost dimension is not its innermost K loop
// CHECK-LABEL: func.func @a_transposed
// CHECK-NOT: pb.matrix_unit
func.func @a_transposed(%a: memref<64x32xf16>, %b: memref<64x48xf16>, %c: memref<32x48xf16>) {
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<64x32xf16>, memref<64x48xf16>) outs(%c : memref<32x48xf16>) {
  ^bb0(%x: f16, %y: f16, %z: f16):
    %p = arith.mulf %x, %y : f16
    %s = arith.addf %z, %p : f16
    linalg.yield %s : f16
  }
  return
}

// -----

// A channels-last convolution is an implicit GEMM: M = n x oh x ow, N = f,
// K = kh x kw x c in the filter's order, A read through its map (no im2col
// buffer).
// EXPLAIN: remark: pb-explain: matrix units: linalg.conv_2d_nhwc_hwcf MxNxK 64x32x144 on MMA_F32_16x8x16_F16 (SubgroupScope), left to S4
// CHECK-LABEL: func.func @conv
// CHECK: linalg.conv_2d_nhwc_hwcf {{.*}}pb.matrix_unit = "MMA_F32_16x8x16_F16"
func.func @conv(%x: memref<1x10x10x16xf16>, %w: memref<3x3x16x32xf16>, %y: memref<1x8x8x32xf16>) {
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : memref<1x10x10x16xf16>, memref<3x3x16x32xf16>) outs(%y : memref<1x8x8x32xf16>)
  return
}

// -----

// An f32 convolution runs on tf32 units with allow-tf32 or
// allow-tf32-convolutions.
// TF32-LABEL: func.func @conv_f32
// TF32: linalg.conv_2d_nhwc_hwcf {{.*}}pb.matrix_unit = "MMA_F32_16x8x8_TF32"
// TF32CONV-LABEL: func.func @conv_f32
// TF32CONV: linalg.conv_2d_nhwc_hwcf {{.*}}pb.matrix_unit = "MMA_F32_16x8x8_TF32"
func.func @conv_f32(%x: memref<1x10x10x16xf32>, %w: memref<3x3x16x32xf32>, %y: memref<1x8x8x32xf32>) {
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : memref<1x10x10x16xf32>, memref<3x3x16x32xf32>) outs(%y : memref<1x8x8x32xf32>)
  return
}

// -----

// An elementwise epilogue reading the result once is tagged for S4 to fuse.
// EXPLAIN: remark: pb-explain: matrix units: epilogue of 1 ops left to S4 to fuse into the stores of the MMA_F32_16x8x16_F16 kernel
// CHECK-LABEL: func.func @epilogue
// CHECK: linalg.matmul {pb.matrix_unit = "MMA_F32_16x8x16_F16"}
// CHECK: linalg.generic {{.*}}pb.matrix_unit_epilogue
func.func @epilogue(%a: memref<64x64xf16>, %b: memref<64x64xf16>, %bias: memref<64xf16>, %out: memref<64x64xf16>) {
  %c = memref.alloc() : memref<64x64xf16>
  linalg.matmul ins(%a, %b : memref<64x64xf16>, memref<64x64xf16>) outs(%c : memref<64x64xf16>)
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias : memref<64x64xf16>, memref<64xf16>) outs(%out : memref<64x64xf16>) {
  ^bb0(%x: f16, %y: f16, %o: f16):
    %s = arith.addf %x, %y : f16
    linalg.yield %s : f16
  }
  memref.dealloc %c : memref<64x64xf16>
  return
}

// -----

// The kernels store element by element, so an epilogue may read the result
// through a permutation of its loops and write another layout (a
// convolution's NHWC result into NCHW), past statements independent of the
// convolution (a view of another buffer, a residual branch's copy), which
// S4 moves before the kernel.
// EXPLAIN: remark: pb-explain: matrix units: epilogue of 2 ops left to S4 to fuse into the stores of the MMA_F32_16x8x16_F16 kernel
// CHECK-LABEL: func.func @nchw_epilogue
// CHECK: linalg.conv_2d_nhwc_hwcf {{.*}}pb.matrix_unit = "MMA_F32_16x8x16_F16"
// CHECK: memref.collapse_shape
// CHECK: linalg.copy
// CHECK: linalg.generic {{.*}}pb.matrix_unit_epilogue
func.func @nchw_epilogue(%x: memref<1x10x10x16xf16>, %w: memref<3x3x16x32xf16>, %scale: memref<1x32xf16>, %out: memref<1x32x8x8xf16>) {
  %y = memref.alloc() : memref<1x8x8x32xf16>
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : memref<1x10x10x16xf16>, memref<3x3x16x32xf16>) outs(%y : memref<1x8x8x32xf16>)
  %s = memref.collapse_shape %scale [[0, 1]] : memref<1x32xf16> into memref<32xf16>
  %residual = memref.alloc() : memref<1x32x8x8xf16>
  linalg.copy ins(%out : memref<1x32x8x8xf16>) outs(%residual : memref<1x32x8x8xf16>)
  %zero = arith.constant 0.0 : f16
  linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, h, w, c)>, affine_map<(n, c, h, w) -> (c)>, affine_map<(n, c, h, w) -> (n, c, h, w)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%y, %s : memref<1x8x8x32xf16>, memref<32xf16>) outs(%out : memref<1x32x8x8xf16>) {
  ^bb0(%v: f16, %k: f16, %o: f16):
    %p = arith.mulf %v, %k : f16
    %r = arith.maximumf %p, %zero : f16
    linalg.yield %r : f16
  }
  memref.dealloc %y : memref<1x8x8x32xf16>
  return
}

// -----

// A statement between the two that writes the convolution's input must
// stay after it: the epilogue is not fused.
// CHECK-LABEL: func.func @dependent_between
// CHECK: linalg.conv_2d_nhwc_hwcf {{.*}}pb.matrix_unit = "MMA_F32_16x8x16_F16"
// CHECK: linalg.fill
// CHECK-NOT: pb.matrix_unit_epilogue
func.func @dependent_between(%x: memref<1x10x10x16xf16>, %w: memref<3x3x16x32xf16>, %out: memref<1x32x8x8xf16>) {
  %y = memref.alloc() : memref<1x8x8x32xf16>
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : memref<1x10x10x16xf16>, memref<3x3x16x32xf16>) outs(%y : memref<1x8x8x32xf16>)
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%x : memref<1x10x10x16xf16>)
  linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, h, w, c)>, affine_map<(n, c, h, w) -> (n, c, h, w)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%y : memref<1x8x8x32xf16>) outs(%out : memref<1x32x8x8xf16>) {
  ^bb0(%v: f16, %o: f16):
    %r = arith.maximumf %v, %zero : f16
    linalg.yield %r : f16
  }
  memref.dealloc %y : memref<1x8x8x32xf16>
  return
}

// -----

// Nor may the deallocation of the convolution's input move before it.
// CHECK-LABEL: func.func @input_freed_between
// CHECK: linalg.conv_2d_nhwc_hwcf {{.*}}pb.matrix_unit = "MMA_F32_16x8x16_F16"
// CHECK: memref.dealloc
// CHECK-NOT: pb.matrix_unit_epilogue
func.func @input_freed_between(%w: memref<3x3x16x32xf16>, %out: memref<1x32x8x8xf16>) {
  %x = memref.alloc() : memref<1x10x10x16xf16>
  %y = memref.alloc() : memref<1x8x8x32xf16>
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : memref<1x10x10x16xf16>, memref<3x3x16x32xf16>) outs(%y : memref<1x8x8x32xf16>)
  memref.dealloc %x : memref<1x10x10x16xf16>
  %zero = arith.constant 0.0 : f16
  linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, h, w, c)>, affine_map<(n, c, h, w) -> (n, c, h, w)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%y : memref<1x8x8x32xf16>) outs(%out : memref<1x32x8x8xf16>) {
  ^bb0(%v: f16, %o: f16):
    %r = arith.maximumf %v, %zero : f16
    linalg.yield %r : f16
  }
  memref.dealloc %y : memref<1x8x8x32xf16>
  return
}
