// RUN: pb-opt --pass-pipeline='builtin.module(func.func(pb-gpu-prepare-parallel))' %s | FileCheck %s
// Nests that S4 makes itself from linalg ops (an epilogue or a contraction
// the tensor-core kernels did not take: convert-linalg-to-affine-loops)
// have no grid loop. Their outermost parallel band, coalesced, becomes one
// (pb-gpu-map-to-gpu then spreads it over blocks x threads); before,
// such a nest was a one-thread kernel.

// CHECK-LABEL: func.func @epilogue
// CHECK: affine.parallel (%{{.*}}) = (0) to (786432) {
// CHECK-NOT: affine.for
// CHECK: return
func.func @epilogue(%a: memref<8x128x768xf32>, %b: memref<768xf16>, %c: memref<8x128x768xf16>) {
  affine.for %i = 0 to 8 {
    affine.for %j = 0 to 128 {
      affine.for %k = 0 to 768 {
        %x = affine.load %a[%i, %j, %k] : memref<8x128x768xf32>
        %y = affine.load %b[%k] : memref<768xf16>
        %z = arith.extf %y : f16 to f32
        %s = arith.addf %x, %z : f32
        %t = arith.truncf %s : f32 to f16
        affine.store %t, %c[%i, %j, %k] : memref<8x128x768xf16>
      }
    }
  }
  return
}

// A contraction: the parallel M x N band is the grid, K stays a loop.
// CHECK-LABEL: func.func @matmul
// CHECK: affine.parallel (%{{.*}}) = (0) to (6144) {
// CHECK: affine.for %{{.*}} = 0 to 64 {
func.func @matmul(%a: memref<96x64xf32>, %b: memref<64x64xf32>, %c: memref<96x64xf32>) {
  affine.for %i = 0 to 96 {
    affine.for %j = 0 to 64 {
      affine.for %k = 0 to 64 {
        %x = affine.load %a[%i, %k] : memref<96x64xf32>
        %y = affine.load %b[%k, %j] : memref<64x64xf32>
        %z = affine.load %c[%i, %j] : memref<96x64xf32>
        %p = arith.mulf %x, %y : f32
        %s = arith.addf %z, %p : f32
        affine.store %s, %c[%i, %j] : memref<96x64xf32>
      }
    }
  }
  return
}

// A nest carrying a dependence stays as it is (a one-thread kernel).
// CHECK-LABEL: func.func @prefix_sum
// CHECK-NOT: affine.parallel
// CHECK: return
func.func @prefix_sum(%a: memref<1024xf32>) {
  affine.for %i = 1 to 1024 {
    %x = affine.load %a[%i - 1] : memref<1024xf32>
    %y = affine.load %a[%i] : memref<1024xf32>
    %s = arith.addf %x, %y : f32
    affine.store %s, %a[%i] : memref<1024xf32>
  }
  return
}
