// RUN: pb-opt %s --split-input-file --pass-pipeline='builtin.module(pb-attach-target{target=nvidia-sm80},func.func(pb-nvidia-lower-matrix-units))' | FileCheck %s
// RUN: pb-opt %s --split-input-file --pb-explain --pass-pipeline='builtin.module(pb-attach-target{target=nvidia-sm80},func.func(pb-nvidia-lower-matrix-units))' -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: pb-opt %s --split-input-file --pass-pipeline='builtin.module(pb-attach-target{target=nvidia-sm80},func.func(pb-nvidia-lower-matrix-units,cse))' | FileCheck %s --check-prefix=PERM
// A contraction tagged for mma.sync becomes one launch: cp.async copies of
// both operands into multi-buffered dynamic shared memory, a K loop that
// waits for the oldest group, synchronizes the block, prefetches the next
// tile and runs ldmatrix + mma.sync on f32 accumulators, then stores C.

// EXPLAIN: remark: pb-explain: matrix units: linalg.matmul on MMA_F32_16x8x16_F16: batch 1, MxNxK 1536x1536x128; block tile 128x128x32 (144 blocks of 256 threads), warp tile 64x32 (4x4 units), 3 stages in 56832 B of shared memory (row strides 40, 136; B k-major); copies of 8 and 8 elements (ldmatrix fragments)
// CHECK-LABEL: func.func @f16
// CHECK-NOT: linalg.matmul
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c144{{.*}}) threads({{.*}}) in ({{.*}} = %c256{{.*}}) dynamic_shared_memory_size %c56832_i32
// CHECK: gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<3x128x40xf16, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<3x32x136xf16, #gpu.address_space<workgroup>>
// CHECK: memref.load %arg2
// CHECK: arith.extf {{.*}} : f16 to f32
// CHECK: nvgpu.device_async_copy %arg0{{.*}}, 8, %{{.*}} {bypassL1} : memref<1536x128xf16> to memref<3x128x40xf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_copy %arg1{{.*}}, 8, %{{.*}} {bypassL1} : memref<128x1536xf16> to memref<3x32x136xf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_create_group
// CHECK: %[[TOKEN:.*]] = nvgpu.device_async_create_group
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (vector<2x2xf32>, vector<2x2xf32>
// CHECK: nvgpu.device_async_wait %[[TOKEN]] {numGroups = 1 : i32}
// CHECK-NEXT: gpu.barrier
// CHECK: nvgpu.device_async_copy
// CHECK: nvgpu.device_async_create_group
// CHECK: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = false} : memref<3x128x40xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// CHECK: nvgpu.ldmatrix {{.*}} {numTiles = 2 : i32, transpose = true} : memref<3x32x136xf16, #gpu.address_space<workgroup>> -> vector<2x2xf16>
// CHECK: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
// CHECK: scf.yield
// CHECK: nvgpu.device_async_wait %[[TOKEN]] {numGroups = 0 : i32}
// CHECK: arith.truncf {{.*}} : f32 to f16
// CHECK: memref.store {{.*}}, %arg2
// CHECK: gpu.terminator
func.func @f16(%a: memref<1536x128xf16>, %b: memref<128x1536xf16>, %c: memref<1536x1536xf16>) {
  linalg.matmul {pb.matrix_unit = "MMA_F32_16x8x16_F16"} ins(%a, %b : memref<1536x128xf16>, memref<128x1536xf16>) outs(%c : memref<1536x1536xf16>)
  return
}

// -----

// tf32: fragments are read element by element (ldmatrix moves 16-bit
// elements); B indexed (n, k) is kept n-major in shared memory. The row
// strides (20 and 20 f32) are those with conflict-free fragment reads on
// 32 banks of 4 bytes. Partial tiles guard C's loads and stores. With
// fewer blocks than SMs, the block tile shrinks to 64 x 64 (2 x 2 units
// per warp, no further).
// EXPLAIN: remark: pb-explain: matrix units: linalg.generic on MMA_F32_16x8x8_TF32: batch 1, MxNxK 96x40x64; block tile 64x64x16 (2 blocks of 256 threads), warp tile 32x16 (2x2 units), 3 stages in 30720 B of shared memory (row strides 20, 20; B n-major); copies of 4 and 4 elements (ld.shared fragments)
// CHECK-LABEL: func.func @tf32_bt
// CHECK: scf.if
// CHECK: memref.load {{.*}} : memref<3x64x20xf32, #gpu.address_space<workgroup>>
// CHECK: vector.from_elements {{.*}} : vector<4x1xf32>
// CHECK: memref.load {{.*}} : memref<3x64x20xf32, #gpu.address_space<workgroup>>
// CHECK: vector.from_elements {{.*}} : vector<2x1xf32>
// CHECK: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 8], tf32Enabled} : (vector<4x1xf32>, vector<2x1xf32>, vector<2x2xf32>) -> vector<2x2xf32>
func.func @tf32_bt(%a: memref<96x64xf32>, %b: memref<40x64xf32>, %c: memref<96x40xf32>) {
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<96x64xf32>, memref<40x64xf32>) outs(%c : memref<96x40xf32>)
      attrs = {pb.matrix_unit = "MMA_F32_16x8x8_TF32"} {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %z, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// K = 33 f16 elements per row (66 bytes) allows no cp.async width: A is
// copied element by element, zero-filled past K.
// EXPLAIN: copies of 1 and 8 elements (ldmatrix fragments)
// CHECK-LABEL: func.func @odd_k
// CHECK: %[[V:.*]] = memref.load %arg0
// CHECK: %[[S:.*]] = arith.select %{{.*}}, %[[V]], %{{.*}} : f16
// CHECK: memref.store %[[S]], %{{.*}} : memref<3x64x40xf16, #gpu.address_space<workgroup>>
func.func @odd_k(%a: memref<3x64x33xf16>, %b: memref<3x33x40xf16>, %c: memref<3x64x40xf16>) {
  linalg.batch_matmul {pb.matrix_unit = "MMA_F32_16x8x16_F16"} ins(%a, %b : memref<3x64x33xf16>, memref<3x33x40xf16>) outs(%c : memref<3x64x40xf16>)
  return
}

// -----

// bf16: upstream's nvgpu.mma.sync lowering has no bf16 PTX types, so the
// fragments' 32-bit registers go to nvvm.mma.sync directly.
// EXPLAIN: remark: pb-explain: matrix units: linalg.matmul on MMA_F32_16x8x16_BF16: batch 1, MxNxK 64x64x64
// CHECK-LABEL: func.func @bf16
// CHECK: nvgpu.ldmatrix {{.*}} -> vector<4x2xbf16>
// CHECK: llvm.bitcast {{.*}} : vector<2xbf16> to i32
// CHECK: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK: llvm.extractvalue
func.func @bf16(%a: memref<64x64xbf16>, %b: memref<64x64xbf16>, %c: memref<64x64xf32>) {
  linalg.matmul {pb.matrix_unit = "MMA_F32_16x8x16_BF16"} ins(%a, %b : memref<64x64xbf16>, memref<64x64xbf16>) outs(%c : memref<64x64xf32>)
  return
}


// -----

// A convolution (implicit GEMM): the copies of A compute the input's indices
// from the flat row (n, oh, ow) and flat K (kh, kw, c) through its indexing
// map; c (16 f16) is the contiguous run each copy stays within.
// EXPLAIN: remark: pb-explain: matrix units: linalg.conv_2d_nhwc_hwcf on MMA_F32_16x8x16_F16: batch 1, MxNxK 128x32x144
// CHECK-LABEL: func.func @conv
// CHECK: gpu.launch
// CHECK: %[[IH:.*]] = affine.apply #{{.*}}(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}})
// CHECK: %[[IW:.*]] = affine.apply #{{.*}}(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}})
// CHECK: nvgpu.device_async_copy %arg0[%{{.*}}, %[[IH]], %[[IW]], %{{.*}}], %{{.*}}, 8, %{{.*}} {bypassL1} : memref<2x10x10x16xf16>
// CHECK: nvgpu.mma.sync
func.func @conv(%x: memref<2x10x10x16xf16>, %w: memref<3x3x16x32xf16>, %y: memref<2x8x8x32xf16>) {
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>, pb.matrix_unit = "MMA_F32_16x8x16_F16"}
    ins(%x, %w : memref<2x10x10x16xf16>, memref<3x3x16x32xf16>) outs(%y : memref<2x8x8x32xf16>)
  return
}

// -----

// The epilogue S3 tagged runs in the kernel's stores: the bias is read at
// C's column, the body is cloned, the result goes to the epilogue's output;
// the alloc S2 placed between the two now precedes the kernel.
// EXPLAIN: remark: pb-explain: matrix units: epilogue of 2 ops fused into the stores of the MMA_F32_16x8x16_F16 kernel
// CHECK-LABEL: func.func @bias_relu
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<64x64xf16>
// CHECK: gpu.launch
// CHECK: nvgpu.mma.sync
// CHECK: %[[BIAS:.*]] = memref.load %arg2[%{{.*}}] : memref<64xf16>
// CHECK: %[[SUM:.*]] = arith.addf %{{.*}}, %[[BIAS]] : f16
// CHECK: %[[RELU:.*]] = arith.maximumf %[[SUM]], %{{.*}} : f16
// CHECK: memref.store %[[RELU]], %[[OUT]]
// CHECK-NOT: linalg.generic
func.func @bias_relu(%a: memref<64x64xf16>, %b: memref<64x64xf16>, %bias: memref<64xf16>) -> memref<64x64xf16> {
  %c = memref.alloc() : memref<64x64xf16>
  linalg.matmul {pb.matrix_unit = "MMA_F32_16x8x16_F16"} ins(%a, %b : memref<64x64xf16>, memref<64x64xf16>) outs(%c : memref<64x64xf16>)
  %out = memref.alloc() : memref<64x64xf16>
  %zero = arith.constant 0.0 : f16
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias : memref<64x64xf16>, memref<64xf16>) outs(%out : memref<64x64xf16>)
      attrs = {pb.matrix_unit_epilogue} {
  ^bb0(%x: f16, %y: f16, %o: f16):
    %s = arith.addf %x, %y : f16
    %r = arith.maximumf %s, %zero : f16
    linalg.yield %r : f16
  }
  memref.dealloc %c : memref<64x64xf16>
  return %out : memref<64x64xf16>
}

// -----

// An epilogue that reads C through a permutation of its loops (a
// convolution's NHWC result into an NCHW output, here a transposing ReLU)
// past a view of another buffer: each C element (row, col) is stored at the
// output's (col, row), and the per-row scale is read at C's row.
// EXPLAIN: remark: pb-explain: matrix units: epilogue of 2 ops fused into the stores of the MMA_F32_16x8x16_F16 kernel
// CHECK-LABEL: func.func @transposed_epilogue
// CHECK: memref.collapse_shape
// CHECK: gpu.launch
// CHECK: nvgpu.mma.sync
// CHECK: %[[SCALE:.*]] = memref.load %{{.*}}[%[[ROW:.*]]] : memref<64xf16>
// CHECK: %[[PRODUCT:.*]] = arith.mulf %{{.*}}, %[[SCALE]] : f16
// CHECK: %[[RELU:.*]] = arith.maximumf %[[PRODUCT]], %{{.*}} : f16
// CHECK: memref.store %[[RELU]], %{{.*}}[%{{.*}}, %[[ROW]]] : memref<32x64xf16>
// CHECK-NOT: linalg.generic
// After CSE the stores reuse the row and column of C's initial loads: the
// output is written at (column, row).
// PERM-LABEL: func.func @transposed_epilogue
// PERM: memref.load %{{.*}}[%[[R:.*]], %[[C:.*]]] : memref<64x32xf16>
// PERM: memref.load %{{.*}}[%[[R]]] : memref<64xf16>
// PERM: memref.store %{{.*}}, %{{.*}}[%[[C]], %[[R]]] : memref<32x64xf16>
func.func @transposed_epilogue(%a: memref<64x64xf16>, %b: memref<64x32xf16>, %scale: memref<1x64xf16>) -> memref<32x64xf16> {
  %c = memref.alloc() : memref<64x32xf16>
  linalg.matmul {pb.matrix_unit = "MMA_F32_16x8x16_F16"} ins(%a, %b : memref<64x64xf16>, memref<64x32xf16>) outs(%c : memref<64x32xf16>)
  %s = memref.collapse_shape %scale [[0, 1]] : memref<1x64xf16> into memref<64xf16>
  %out = memref.alloc() : memref<32x64xf16>
  %zero = arith.constant 0.0 : f16
  linalg.generic {indexing_maps = [affine_map<(n, m) -> (m, n)>, affine_map<(n, m) -> (m)>, affine_map<(n, m) -> (n, m)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c, %s : memref<64x32xf16>, memref<64xf16>) outs(%out : memref<32x64xf16>)
      attrs = {pb.matrix_unit_epilogue} {
  ^bb0(%x: f16, %y: f16, %o: f16):
    %p = arith.mulf %x, %y : f16
    %r = arith.maximumf %p, %zero : f16
    linalg.yield %r : f16
  }
  memref.dealloc %c : memref<64x32xf16>
  return %out : memref<32x64xf16>
}
