// RUN: pb-opt %s --split-input-file --pass-pipeline='builtin.module(pb-attach-target{target=nvidia-sm90},func.func(pb-promote-to-scratchpad))' | FileCheck %s
// RUN: pb-opt %s --split-input-file --pb-explain --pass-pipeline='builtin.module(pb-attach-target{target=nvidia-sm90},func.func(pb-promote-to-scratchpad))' -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: pb-opt %s --split-input-file --pass-pipeline='builtin.module(pb-attach-target{target=cpu-x86-64-v3},func.func(pb-promote-to-scratchpad))' | FileCheck %s --check-prefix=CPU
// Inside a block of the grid, the tiles a statement reads more often than
// they have elements are copied into scratchpad buffers before it. The
// matmul's A and B tiles of one K tile iteration fit (the whole K extent
// does not): the copies go inside the K loop, rows of 64 f32 (256 bytes, a
// multiple of 32 banks x 4 bytes) padded by one 16-byte vector. Each copy is
// one flat loop over the tile, innermost dimension fastest, marked
// pb.parallel (S4 spreads it over the block's threads). C is written and
// stays in place. A CPU target (no scratchpad level) is left unchanged.

// EXPLAIN: remark: pb-explain: scratchpad: memref<64x68xf32> tile of memref<1024x1024xf32> promoted into 'shared' (17408 B)
// EXPLAIN: remark: pb-explain: scratchpad: memref<64x68xf32> tile of memref<1024x1024xf32> promoted into 'shared' (17408 B)
// CHECK-LABEL: func.func @matmul
// CHECK: affine.parallel (%[[I:.*]], %[[J:.*]]) =
// CHECK: affine.for %[[K:.*]] = 0 to 1024 step 64 {
// CHECK: %[[TA:.*]] = memref.alloc() {pb.scratchpad} : memref<64x68xf32>
// CHECK: affine.for %[[E:.*]] = 0 to 4096 {
// CHECK: %[[V:.*]] = affine.load %arg0[%[[E]] floordiv 64 + %[[I]], %[[E]] mod 64 + %[[K]]]
// CHECK: affine.store %[[V]], %[[TA]][%[[E]] floordiv 64, %[[E]] mod 64] : memref<64x68xf32>
// CHECK: } {pb.parallel}
// CHECK: %[[TB:.*]] = memref.alloc() {pb.scratchpad} : memref<64x68xf32>
// CHECK: affine.load %arg1[%{{.*}} floordiv 64 + %[[K]], %{{.*}} mod 64 + %[[J]]]
// CHECK: affine.load %[[TA]][%{{.*}} - %[[I]], %{{.*}} - %[[K]]] : memref<64x68xf32>
// CHECK: affine.load %[[TB]][%{{.*}} - %[[K]], %{{.*}} - %[[J]]] : memref<64x68xf32>
// CHECK: affine.load %arg2
// CHECK: memref.dealloc %[[TB]]
// CHECK: memref.dealloc %[[TA]]
// CPU-LABEL: func.func @matmul
// CPU-NOT: pb.scratchpad
#map = affine_map<(d0) -> (d0)>
#map2 = affine_map<(d0) -> (d0 + 32)>
#map3 = affine_map<(d0) -> (d0 + 64)>
func.func @matmul(%arg0: memref<1024x1024xf32>, %arg1: memref<1024x1024xf32>, %arg2: memref<1024x1024xf32>) {
  affine.parallel (%arg3, %arg4) = (0, 0) to (1024, 1024) step (64, 64) {
    affine.for %arg5 = 0 to 1024 step 64 {
      affine.for %arg6 = #map(%arg3) to #map3(%arg3) step 32 {
        affine.for %arg7 = #map(%arg4) to #map3(%arg4) step 32 {
          affine.for %arg8 = #map(%arg5) to #map3(%arg5) step 32 {
            affine.for %arg9 = #map(%arg6) to #map2(%arg6) {
              affine.for %arg10 = #map(%arg7) to #map2(%arg7) {
                affine.for %arg11 = #map(%arg8) to #map2(%arg8) {
                  %0 = affine.load %arg0[%arg9, %arg11] : memref<1024x1024xf32>
                  %1 = affine.load %arg1[%arg11, %arg10] : memref<1024x1024xf32>
                  %2 = affine.load %arg2[%arg9, %arg10] : memref<1024x1024xf32>
                  %3 = arith.mulf %0, %1 : f32
                  %4 = arith.addf %2, %3 : f32
                  affine.store %4, %arg2[%arg9, %arg10] : memref<1024x1024xf32>
                }
              }
            }
          }
        }
      }
    }
  } {pb.level = "Block"}
  return
}

// -----

// Each element read once (an elementwise add): nothing to gain.
// CHECK-LABEL: func.func @elementwise
// CHECK-NOT: pb.scratchpad
func.func @elementwise(%a: memref<256x256xf32>, %b: memref<256x256xf32>, %c: memref<256x256xf32>) {
  affine.parallel (%i, %j) = (0, 0) to (256, 256) step (64, 64) {
    affine.for %ii = affine_map<(d0) -> (d0)>(%i) to affine_map<(d0) -> (d0 + 64)>(%i) {
      affine.for %jj = affine_map<(d0) -> (d0)>(%j) to affine_map<(d0) -> (d0 + 64)>(%j) {
        %x = affine.load %a[%ii, %jj] : memref<256x256xf32>
        %y = affine.load %b[%ii, %jj] : memref<256x256xf32>
        %s = arith.addf %x, %y : f32
        affine.store %s, %c[%ii, %jj] : memref<256x256xf32>
      }
    }
  } {pb.level = "Block"}
  return
}

// -----

// A buffer the statement also writes is not copied (the copy would go stale).
// CHECK-LABEL: func.func @read_write
// CHECK-NOT: pb.scratchpad
func.func @read_write(%a: memref<64x64xf32>) {
  affine.parallel (%i) = (0) to (64) step (64) {
    affine.for %k = 0 to 64 {
      affine.for %ii = affine_map<(d0) -> (d0)>(%i) to affine_map<(d0) -> (d0 + 64)>(%i) {
        %x = affine.load %a[%ii, %k] : memref<64x64xf32>
        %y = affine.load %a[%k, %ii] : memref<64x64xf32>
        %s = arith.addf %x, %y : f32
        affine.store %s, %a[%ii, %k] : memref<64x64xf32>
      }
    }
  } {pb.level = "Block"}
  return
}
