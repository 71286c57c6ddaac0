// RUN: pb-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(pb-fuse-reductions))' | FileCheck %s

// A decomposed softmax over rows (fill the maximum, reduce it, exponentiate,
// fill the sum, reduce it, divide): every per-row buffer is subscripted by
// the row loop's index alone, so the six nests become one loop over rows
// holding the six loops over columns, in their order.
// CHECK-LABEL: func.func @softmax
// CHECK:     affine.for %[[I:.*]] = 0 to 64 {
// CHECK-NEXT:  affine.store %{{.*}}, %[[M:.*]][%[[I]]]
// CHECK-NEXT:  affine.for %{{.*}} = 0 to 128 {
// CHECK:         arith.maximumf
// CHECK:       affine.for %{{.*}} = 0 to 128 {
// CHECK:         math.exp
// CHECK:       affine.store %{{.*}}, %[[S:.*]][%[[I]]]
// CHECK:       affine.for %{{.*}} = 0 to 128 {
// CHECK:         arith.addf
// CHECK:       affine.for %{{.*}} = 0 to 128 {
// CHECK:         arith.divf
// CHECK-NOT: affine.for
func.func @softmax(%x: memref<64x128xf32>, %y: memref<64x128xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %m = memref.alloc() : memref<64xf32>
  affine.for %i = 0 to 64 {
    affine.store %ninf, %m[%i] : memref<64xf32>
  }
  affine.for %i = 0 to 64 {
    affine.for %j = 0 to 128 {
      %v = affine.load %x[%i, %j] : memref<64x128xf32>
      %a = affine.load %m[%i] : memref<64xf32>
      %r = arith.maximumf %a, %v : f32
      affine.store %r, %m[%i] : memref<64xf32>
    }
  }
  affine.for %i = 0 to 64 {
    affine.for %j = 0 to 128 {
      %v = affine.load %x[%i, %j] : memref<64x128xf32>
      %a = affine.load %m[%i] : memref<64xf32>
      %d = arith.subf %v, %a : f32
      %e = math.exp %d : f32
      affine.store %e, %y[%i, %j] : memref<64x128xf32>
    }
  }
  %s = memref.alloc() : memref<64xf32>
  affine.for %i = 0 to 64 {
    affine.store %zero, %s[%i] : memref<64xf32>
  }
  affine.for %i = 0 to 64 {
    affine.for %j = 0 to 128 {
      %v = affine.load %y[%i, %j] : memref<64x128xf32>
      %a = affine.load %s[%i] : memref<64xf32>
      %r = arith.addf %a, %v : f32
      affine.store %r, %s[%i] : memref<64xf32>
    }
  }
  affine.for %i = 0 to 64 {
    affine.for %j = 0 to 128 {
      %v = affine.load %y[%i, %j] : memref<64x128xf32>
      %a = affine.load %s[%i] : memref<64xf32>
      %r = arith.divf %v, %a : f32
      affine.store %r, %y[%i, %j] : memref<64x128xf32>
    }
  }
  memref.dealloc %m : memref<64xf32>
  memref.dealloc %s : memref<64xf32>
  return
}

// -----

// A batch of one: the loop that runs once is promoted, and the rows of the
// 1x8x32 reduction, read through an expand_shape of its 8x32 producer,
// fuse with it at the row loop (the view folded for the check).
// CHECK-LABEL: func.func @batch_of_one
// CHECK:     affine.for %[[I:.*]] = 0 to 8 {
// CHECK-NOT: affine.for %{{.*}} = 0 to 1
// CHECK:       affine.for %{{.*}} = 0 to 32 {
// CHECK:         math.exp
// CHECK:       affine.store %{{.*}}, %{{.*}}[%{{.*}}, %[[I]]] : memref<1x8xf32>
// CHECK:       affine.for %{{.*}} = 0 to 32 {
// CHECK:         arith.addf
// CHECK-NOT: affine.for
func.func @batch_of_one(%x: memref<8x32xf32>, %out: memref<1x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %t = memref.alloc() : memref<8x32xf32>
  affine.for %i = 0 to 8 {
    affine.for %j = 0 to 32 {
      %v = affine.load %x[%i, %j] : memref<8x32xf32>
      %e = math.exp %v : f32
      affine.store %e, %t[%i, %j] : memref<8x32xf32>
    }
  }
  %tv = memref.expand_shape %t [[0, 1], [2]] output_shape [1, 8, 32] : memref<8x32xf32> into memref<1x8x32xf32>
  affine.for %n = 0 to 1 {
    affine.for %i = 0 to 8 {
      affine.store %zero, %out[%n, %i] : memref<1x8xf32>
    }
  }
  affine.for %n = 0 to 1 {
    affine.for %i = 0 to 8 {
      affine.for %j = 0 to 32 {
        %v = affine.load %tv[%n, %i, %j] : memref<1x8x32xf32>
        %a = affine.load %out[%n, %i] : memref<1x8xf32>
        %r = arith.addf %a, %v : f32
        affine.store %r, %out[%n, %i] : memref<1x8xf32>
      }
    }
  }
  return
}

// -----

// Not fused: the consumer reads its producer's row i + 1 (a shifted
// subscript), so iterations of a fused row loop would race.
// CHECK-LABEL: func.func @shifted
// CHECK: affine.for %{{.*}} = 0 to 8 {
// CHECK: affine.for %{{.*}} = 0 to 8 {
func.func @shifted(%x: memref<9xf32>, %y: memref<8xf32>) {
  %t = memref.alloc() : memref<9xf32>
  affine.for %i = 0 to 8 {
    %v = affine.load %x[%i] : memref<9xf32>
    affine.store %v, %t[%i] : memref<9xf32>
  }
  affine.for %i = 0 to 8 {
    %v = affine.load %t[%i + 1] : memref<9xf32>
    affine.store %v, %y[%i] : memref<8xf32>
  }
  return
}

// -----

// Not fused: the row loops' bounds differ (8 and 16 rows).
// CHECK-LABEL: func.func @different_bounds
// CHECK: affine.for %{{.*}} = 0 to 8 {
// CHECK: affine.for %{{.*}} = 0 to 16 {
func.func @different_bounds(%x: memref<16xf32>, %y: memref<16xf32>) {
  %one = arith.constant 1.0 : f32
  affine.for %i = 0 to 8 {
    affine.store %one, %x[%i] : memref<16xf32>
  }
  affine.for %i = 0 to 16 {
    %v = affine.load %x[%i] : memref<16xf32>
    affine.store %v, %y[%i] : memref<16xf32>
  }
  return
}

// -----

// Not fused: the first nest's loop carries a dependence (a prefix sum), so
// a fused row loop would not be parallel.
// CHECK-LABEL: func.func @serial_band
// CHECK: affine.for %{{.*}} = 1 to 8 {
// CHECK: affine.for %{{.*}} = 1 to 8 {
func.func @serial_band(%x: memref<8xf32>, %y: memref<8xf32>) {
  affine.for %i = 1 to 8 {
    %p = affine.load %x[%i - 1] : memref<8xf32>
    %v = affine.load %x[%i] : memref<8xf32>
    %s = arith.addf %p, %v : f32
    affine.store %s, %x[%i] : memref<8xf32>
  }
  affine.for %i = 1 to 8 {
    %v = affine.load %x[%i] : memref<8xf32>
    affine.store %v, %y[%i] : memref<8xf32>
  }
  return
}

// -----

// Not fused: a memref.copy between the nests writes the buffer the second
// nest reads.
// CHECK-LABEL: func.func @copy_between
// CHECK: affine.for
// CHECK: memref.copy
// CHECK: affine.for
func.func @copy_between(%x: memref<8xf32>, %y: memref<8xf32>, %z: memref<8xf32>) {
  %one = arith.constant 1.0 : f32
  affine.for %i = 0 to 8 {
    affine.store %one, %x[%i] : memref<8xf32>
  }
  memref.copy %z, %y : memref<8xf32> to memref<8xf32>
  affine.for %i = 0 to 8 {
    %v = affine.load %y[%i] : memref<8xf32>
    affine.store %v, %x[%i] : memref<8xf32>
  }
  return
}

// -----

// Rows and columns of run-time sizes (dynamic shapes): nests whose loops
// run to the same size values fuse; a nest over other sizes does not.
// CHECK-LABEL: func.func @run_time_rows
// CHECK:     affine.for %[[I:.*]] = 0 to %[[R:[^ ]*]] {
// CHECK-NEXT:  affine.store %{{.*}}, %[[M:.*]][%[[I]]]
// CHECK-NEXT:  affine.for %{{.*}} = 0 to %[[C:[^ ]*]] {
// CHECK:         arith.maximumf
// CHECK:       affine.for %{{.*}} = 0 to %[[C]] {
// CHECK:         arith.subf
// CHECK:     }
// CHECK:     affine.for %{{.*}} = 0 to %[[R2:[^ ]*]] {
// CHECK:       arith.negf
func.func @run_time_rows(%x: memref<?x?xf32>, %y: memref<?x?xf32>, %r: index, %c: index, %r2: index) {
  %ninf = arith.constant 0xFF800000 : f32
  %m = memref.alloc(%r) : memref<?xf32>
  affine.for %i = 0 to %r {
    affine.store %ninf, %m[%i] : memref<?xf32>
  }
  affine.for %i = 0 to %r {
    affine.for %j = 0 to %c {
      %v = affine.load %x[%i, %j] : memref<?x?xf32>
      %a = affine.load %m[%i] : memref<?xf32>
      %b = arith.maximumf %a, %v : f32
      affine.store %b, %m[%i] : memref<?xf32>
    }
  }
  affine.for %i = 0 to %r {
    affine.for %j = 0 to %c {
      %v = affine.load %x[%i, %j] : memref<?x?xf32>
      %a = affine.load %m[%i] : memref<?xf32>
      %d = arith.subf %v, %a : f32
      affine.store %d, %y[%i, %j] : memref<?x?xf32>
    }
  }
  affine.for %i = 0 to %r2 {
    affine.for %j = 0 to %c {
      %v = affine.load %y[%i, %j] : memref<?x?xf32>
      %n = arith.negf %v : f32
      affine.store %n, %y[%i, %j] : memref<?x?xf32>
    }
  }
  memref.dealloc %m : memref<?xf32>
  return
}
