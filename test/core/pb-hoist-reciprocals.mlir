// RUN: pb-opt --pass-pipeline="builtin.module(func.func(pb-hoist-reciprocals))" %s | FileCheck %s

// A softmax row divided by its sum: the reciprocal is computed once, right
// after the divisor, and the loop multiplies. Two divisions by the same
// divisor share one reciprocal.
// CHECK-LABEL: func.func @normalize_row
// CHECK: %[[SUM:.*]] = vector.broadcast
// CHECK-NEXT: %[[ONE:.*]] = arith.constant dense<1.000000e+00> : vector<16xf32>
// CHECK-NEXT: %[[R:.*]] = arith.divf %[[ONE]], %[[SUM]] : vector<16xf32>
// CHECK: affine.for
// CHECK-NOT: arith.divf
// CHECK: arith.mulf %{{.*}}, %[[R]] : vector<16xf32>
// CHECK: arith.mulf %{{.*}}, %[[R]] : vector<16xf32>
// CHECK: return
func.func @normalize_row(%x: memref<1024xf32>, %y: memref<1024xf32>, %s: f32) {
  %pad = ub.poison : f32
  %sum = vector.broadcast %s : f32 to vector<16xf32>
  affine.for %j = 0 to 1024 step 16 {
    %v = vector.transfer_read %x[%j], %pad {in_bounds = [true]} : memref<1024xf32>, vector<16xf32>
    %q = arith.divf %v, %sum : vector<16xf32>
    %q2 = arith.divf %q, %sum : vector<16xf32>
    vector.transfer_write %q2, %y[%j] {in_bounds = [true]} : vector<16xf32>, memref<1024xf32>
  }
  return
}

// A scalar divisor that is a block argument of an outer loop's body: the
// reciprocal goes to the start of that body.
// CHECK-LABEL: func.func @divisor_iter_arg
// CHECK: affine.for %{{.*}} = 0 to 8 iter_args(%[[D:.*]] = %{{.*}})
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[R:.*]] = arith.divf %[[ONE]], %[[D]] : f32
// CHECK: affine.for
// CHECK: arith.mulf %{{.*}}, %[[R]] : f32
func.func @divisor_iter_arg(%x: memref<8x64xf32>, %d0: f32) -> f32 {
  %r = affine.for %i = 0 to 8 iter_args(%d = %d0) -> (f32) {
    affine.for %j = 0 to 64 {
      %v = affine.load %x[%i, %j] : memref<8x64xf32>
      %q = arith.divf %v, %d : f32
      affine.store %q, %x[%i, %j] : memref<8x64xf32>
    }
    %n = arith.addf %d, %d : f32
    affine.yield %n : f32
  }
  return %r : f32
}

// Left as divisions: a divisor that varies with the loop, a loop of one
// iteration, and a division outside any loop.
// CHECK-LABEL: func.func @left_alone
// CHECK: affine.for %[[J:.*]] = 0 to 64 {
// CHECK: arith.divf %{{.*}}, %{{.*}} : f32
// CHECK: affine.for %{{.*}} = 0 to 1 {
// CHECK: arith.divf %{{.*}}, %{{.*}} : f32
// CHECK: arith.divf %{{.*}}, %{{.*}} : f32
// CHECK-NOT: arith.mulf
// CHECK: return
func.func @left_alone(%x: memref<64xf32>, %s: f32) -> f32 {
  affine.for %j = 0 to 64 {
    %v = affine.load %x[%j] : memref<64xf32>
    %w = arith.addf %v, %s : f32
    %q = arith.divf %s, %w : f32
    affine.store %q, %x[%j] : memref<64xf32>
  }
  affine.for %j = 0 to 1 {
    %v = affine.load %x[%j] : memref<64xf32>
    %q = arith.divf %v, %s : f32
    affine.store %q, %x[%j] : memref<64xf32>
  }
  %t = arith.divf %s, %s : f32
  return %t : f32
}
