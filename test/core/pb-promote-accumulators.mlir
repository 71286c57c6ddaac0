// RUN: pb-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(pb-promote-accumulators))' | FileCheck %s

// A row maximum accumulated in memory: loaded once before the loop over
// columns, carried by iter_args, stored once after it.
// CHECK-LABEL: func.func @row_max
// CHECK:      affine.for %[[I:.*]] = 0 to 4 {
// CHECK-NEXT:   %[[INIT:.*]] = affine.load %[[M:.*]][%[[I]]]
// CHECK-NEXT:   %[[R:.*]] = affine.for %{{.*}} = 0 to 16 iter_args(%[[A:.*]] = %[[INIT]]) -> (f32) {
// CHECK-NEXT:     %[[V:.*]] = affine.load
// CHECK-NEXT:     %[[MAX:.*]] = arith.maximumf %[[A]], %[[V]]
// CHECK-NEXT:     affine.yield %[[MAX]]
// CHECK-NEXT:   }
// CHECK-NEXT:   affine.store %[[R]], %[[M]][%[[I]]]
func.func @row_max(%x: memref<4x16xf32>, %m: memref<4xf32>) {
  affine.for %i = 0 to 4 {
    affine.for %j = 0 to 16 {
      %v = affine.load %x[%i, %j] : memref<4x16xf32>
      %a = affine.load %m[%i] : memref<4xf32>
      %r = arith.maximumf %a, %v : f32
      affine.store %r, %m[%i] : memref<4xf32>
    }
  }
  return
}

// -----

// A sum over two loops (a pooling window) is carried through both.
// CHECK-LABEL: func.func @window_sum
// CHECK:      affine.for %[[I:.*]] = 0 to 4 {
// CHECK-NEXT:   affine.load %{{.*}}[%[[I]]]
// CHECK-NEXT:   affine.for %{{.*}} = 0 to 3 iter_args
// CHECK-NEXT:     affine.for %{{.*}} = 0 to 3 iter_args
// CHECK:        affine.store %{{.*}}, %{{.*}}[%[[I]]]
// CHECK-NEXT: }
func.func @window_sum(%x: memref<6x3xf32>, %s: memref<4xf32>) {
  affine.for %i = 0 to 4 {
    affine.for %k = 0 to 3 {
      affine.for %l = 0 to 3 {
        %v = affine.load %x[%i + %k, %l] : memref<6x3xf32>
        %a = affine.load %s[%i] : memref<4xf32>
        %r = arith.addf %a, %v : f32
        affine.store %r, %s[%i] : memref<4xf32>
      }
    }
  }
  return
}

// -----

// Left in memory: the loop also reads the accumulator's buffer at another
// element, which the promoted value would not update.
// CHECK-LABEL: func.func @other_read
// CHECK-NOT: iter_args
func.func @other_read(%x: memref<16xf32>, %m: memref<4xf32>) {
  affine.for %i = 0 to 3 {
    affine.for %j = 0 to 16 {
      %v = affine.load %x[%j] : memref<16xf32>
      %a = affine.load %m[%i] : memref<4xf32>
      %b = affine.load %m[%i + 1] : memref<4xf32>
      %c = arith.addf %a, %b : f32
      %r = arith.addf %c, %v : f32
      affine.store %r, %m[%i] : memref<4xf32>
    }
  }
  return
}

// -----

// Left in memory: the subscript changes with the loop (a column sum is not
// a reduction of the inner loop).
// CHECK-LABEL: func.func @varying
// CHECK-NOT: iter_args
func.func @varying(%x: memref<4x16xf32>, %s: memref<16xf32>) {
  affine.for %i = 0 to 4 {
    affine.for %j = 0 to 16 {
      %v = affine.load %x[%i, %j] : memref<4x16xf32>
      %a = affine.load %s[%j] : memref<16xf32>
      %r = arith.addf %a, %v : f32
      affine.store %r, %s[%j] : memref<16xf32>
    }
  }
  return
}
