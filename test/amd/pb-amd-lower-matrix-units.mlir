// RUN: pb-opt --target=amd-gfx942 --pb-pipeline=s1,s2,s3 %s | pb-opt --pass-pipeline='builtin.module(func.func(pb-amd-lower-matrix-units))' --pb-explain 2>&1 | FileCheck %s
// A mixed-precision f16 matmul (extf of the operands into an f32
// accumulator, as the torch frontend emits it) tagged for
// MFMA_F32_32x32x8_F16 becomes one launch: 64 x 96 in block tiles of
// 64 x 64 (one unit per wavefront: two blocks on a 304-CU chip), four
// wavefronts of 64, K tiles of 32 copied into LDS by 8-element vector
// stores between barriers, four amdgpu.mfma per K tile on a vector<16xf32>
// accumulator carried by the K loop. An f16 convolution tagged for the same
// unit becomes an implicit GEMM: M = n x oh x ow (64), K = kh x kw x c
// (144), its input's rows gathered through the map (oh + kh, ow + kw) by
// affine.apply while the K tiles are copied (8-element copies: 16
// channels per window position). pb-amd-lower-matrix-units-fallback.mlir
// has an op the kernel does not take.

// CHECK: remark: pb-explain: matrix units: linalg.generic on MFMA_F32_32x32x8_F16: batch 1, MxNxK 64x96x64; block tile 64x64x32 (2 blocks of 256 work-items, 1x1 units per wavefront), 9216 B of LDS
// CHECK: remark: pb-explain: matrix units: linalg.conv_2d_nhwc_hwcf on MFMA_F32_32x32x8_F16: batch 1, MxNxK 64x32x144; block tile 64x64x32 (1 blocks of 256 work-items, 1x1 units per wavefront), 9216 B of LDS, copies of 8 and 8 elements
// CHECK-LABEL: func.func @mm
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c2, {{.*}}) threads({{.*}}) in ({{.*}} = %c256, {{.*}}) dynamic_shared_memory_size %c9216_i32
// CHECK: gpu.dynamic_shared_memory
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (vector<16xf32>)
// CHECK: gpu.barrier
// CHECK: vector.store {{.*}} : memref<64x36xf16, #gpu.address_space<workgroup>>, vector<8xf16>
// CHECK: gpu.barrier
// CHECK-COUNT-4: amdgpu.mfma 32x32x8 {{.*}} : vector<4xf16>, vector<4xf16>, vector<16xf32>
// CHECK-NOT: linalg.generic
// CHECK-LABEL: func.func @conv
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1{{.*}}) threads({{.*}}) in ({{.*}} = %c256, {{.*}}) dynamic_shared_memory_size %c9216_i32
// CHECK: affine.apply
// CHECK: vector.load {{.*}} : memref<1x10x10x16xf16>, vector<8xf16>
// CHECK: amdgpu.mfma 32x32x8
// CHECK-NOT: linalg.conv_2d_nhwc_hwcf

func.func @mm(%a: tensor<64x64xf16>, %b: tensor<64x96xf16>) -> tensor<64x96xf32> {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<64x96xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<64x96xf32>) -> tensor<64x96xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<64x64xf16>, tensor<64x96xf16>) outs(%acc : tensor<64x96xf32>) {
  ^bb0(%x: f16, %y: f16, %c: f32):
    %xe = arith.extf %x : f16 to f32
    %ye = arith.extf %y : f16 to f32
    %p = arith.mulf %xe, %ye : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<64x96xf32>
  return %r : tensor<64x96xf32>
}

func.func @conv(%x: tensor<1x10x10x16xf16>, %w: tensor<3x3x16x32xf16>) -> tensor<1x8x8x32xf16> {
  %zero = arith.constant 0.0 : f16
  %init = tensor.empty() : tensor<1x8x8x32xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%init : tensor<1x8x8x32xf16>) -> tensor<1x8x8x32xf16>
  %r = linalg.conv_2d_nhwc_hwcf ins(%x, %w : tensor<1x10x10x16xf16>, tensor<3x3x16x32xf16>) outs(%acc : tensor<1x8x8x32xf16>) -> tensor<1x8x8x32xf16>
  return %r : tensor<1x8x8x32xf16>
}
