// RUN: pb-opt %s --split-input-file --pass-pipeline='builtin.module(pb-attach-target{target=nvidia-sm90},func.func(pb-nvidia-lower-matrix-units))' | FileCheck %s
// RUN: pb-opt %s --split-input-file --pb-explain --pass-pipeline='builtin.module(pb-attach-target{target=nvidia-sm90},func.func(pb-nvidia-lower-matrix-units))' -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// A contraction tagged for a warpgroup unit (wgmma) becomes one launch of
// one or two warpgroups per block: cp.async copies into 128-byte-swizzled
// shared tiles (16-byte chunk XOR row % 8) at a 1024-byte-aligned base, and
// per K tile a proxy fence, a barrier, the prefetch of the next tile, then
// wgmma.mma_async on matrix descriptors, one per unit K step, committed and
// waited for.

// B indexed (n, k) is K-major like A; 2 warpgroups of 64 x 128 rows keep
// 144 blocks busy on 132 SMs.
// EXPLAIN: remark: pb-explain: matrix units: linalg.generic on WGMMA_F32_64x128x16_BF16: batch 1, MxNxK 2048x1152x256; block tile 128x128x64 (144 blocks of 256 threads), 2 warpgroups of 64x128, 3 stages in 99328 B of shared memory (128-byte swizzled rows; B n-major); copies of 8 and 8 elements (matrix descriptors)
// CHECK-LABEL: func.func @bf16_bt
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c144{{.*}}) threads({{.*}}) in ({{.*}} = %c256{{.*}}) dynamic_shared_memory_size %c99328_i32
// CHECK: %[[SMEM:.*]] = gpu.dynamic_shared_memory
// CHECK: %[[ADDRESS:.*]] = memref.extract_aligned_pointer_as_index %[[SMEM]]
// CHECK: arith.remui %[[ADDRESS]], %c1024
// CHECK: memref.view {{.*}} to memref<3x128x64xbf16, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<3x128x64xbf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_create_group
// CHECK: %[[TOKEN:.*]] = nvgpu.device_async_create_group
// CHECK: llvm.mlir.undef : !llvm.struct<(f32, f32,
// CHECK: scf.for {{.*}} -> (!llvm.struct<(f32,
// CHECK: nvgpu.device_async_wait %[[TOKEN]] {numGroups = 1 : i32}
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: gpu.barrier
// CHECK: arith.xori
// CHECK: nvgpu.device_async_copy
// CHECK: nvgpu.device_async_create_group
// CHECK: arith.constant 4611686293305360384 : i64
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: scf.yield
// CHECK: nvgpu.device_async_wait %[[TOKEN]] {numGroups = 0 : i32}
// CHECK: llvm.extractvalue
// CHECK: arith.truncf {{.*}} : f32 to bf16
// CHECK: memref.store {{.*}}, %arg2
func.func @bf16_bt(%a: memref<2048x256xbf16>, %b: memref<1152x256xbf16>, %c: memref<2048x1152xbf16>) {
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<2048x256xbf16>, memref<1152x256xbf16>) outs(%c : memref<2048x1152xbf16>)
      attrs = {pb.matrix_unit = "WGMMA_F32_64x128x16_BF16"} {
  ^bb0(%x: bf16, %y: bf16, %z: bf16):
    %p = arith.mulf %x, %y : bf16
    %s = arith.addf %z, %p : bf16
    linalg.yield %s : bf16
  }
  return
}

// -----

// B indexed (k, n) is kept in column blocks of 64 n and read MN-major
// (B's layout `row`, imm-trans-b 1; leading offset 64 rows x 128 bytes);
// with fewer blocks than SMs, one warpgroup per block.
// EXPLAIN: remark: pb-explain: matrix units: linalg.matmul on WGMMA_F32_64x128x16_F16: batch 1, MxNxK 512x384x256; block tile 64x128x64 (24 blocks of 128 threads), 1 warpgroups of 64x128, 3 stages in 74752 B of shared memory (128-byte swizzled rows; B k-major); copies of 8 and 8 elements (matrix descriptors)
// CHECK-LABEL: func.func @f16_mn_major
// CHECK: memref.view {{.*}} to memref<3x64x64xf16, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<3x128x64xf16, #gpu.address_space<workgroup>>
// CHECK: arith.constant 4611686293338849280 : i64
// CHECK: nvvm.wgmma.mma_async {{.*}}, A[<f16>, <one>, <row>], B[<f16>, <one>, <row>]
func.func @f16_mn_major(%a: memref<512x256xf16>, %b: memref<256x384xf16>, %c: memref<512x384xf32>) {
  linalg.matmul {pb.matrix_unit = "WGMMA_F32_64x128x16_F16"} ins(%a, %b : memref<512x256xf16>, memref<256x384xf16>) outs(%c : memref<512x384xf32>)
  return
}

// -----

// tf32 operands are read K-major only: B indexed (k, n) goes to the
// warp-level tf32 unit.
// EXPLAIN: remark: pb-explain: matrix units: WGMMA_F32_64x128x8_TF32 not used: B is indexed (k, n) and wgmma reads 32-bit operands K-major only
// EXPLAIN: remark: pb-explain: matrix units: linalg.matmul on MMA_F32_16x8x8_TF32
// CHECK-LABEL: func.func @tf32_mn_major
// CHECK: nvgpu.mma.sync
// CHECK-NOT: nvvm.wgmma
func.func @tf32_mn_major(%a: memref<512x256xf32>, %b: memref<256x384xf32>, %c: memref<512x384xf32>) {
  linalg.matmul {pb.matrix_unit = "WGMMA_F32_64x128x8_TF32"} ins(%a, %b : memref<512x256xf32>, memref<256x384xf32>) outs(%c : memref<512x384xf32>)
  return
}
