// RUN: pb-opt %s --split-input-file --pb-bind-dims --verify-diagnostics | FileCheck %s

// tensor.dim of an argument's dynamic dimension becomes the size argument
// pb.dim_args names; a static dimension's and an unannotated value's stay.
// CHECK-LABEL: func.func @tensors(
// CHECK-SAME: %[[X:[^:]*]]: tensor<?x?xf32> {pb.dim_args = array<i64: 2, 1>}, %[[N:[^:]*]]: index, %[[B:[^:]*]]: index
// CHECK-NOT: tensor.dim %[[X]]
// CHECK: %[[E:.*]] = tensor.empty(%[[B]], %[[N]]) : tensor<?x?xf32>
// CHECK: tensor.dim %[[E]]
func.func @tensors(%x: tensor<?x?xf32> {pb.dim_args = array<i64: 2, 1>},
                   %n: index, %b: index) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d0 = tensor.dim %x, %c0 : tensor<?x?xf32>
  %d1 = tensor.dim %x, %c1 : tensor<?x?xf32>
  %e = tensor.empty(%d0, %d1) : tensor<?x?xf32>
  %d2 = tensor.dim %e, %c0 : tensor<?x?xf32>
  return %d2 : index
}

// -----

// After bufferization: memref.dim of an argument and of an out-parameter
// (which keeps its result's pb.dim_args).
// CHECK-LABEL: func.func @buffers(
// CHECK-SAME: %[[N:[^:]*]]: index
// CHECK-NOT: memref.dim
// CHECK: memref.alloc(%[[N]])
// CHECK: affine.for %{{.*}} = 0 to %[[N]]
func.func @buffers(%x: memref<?x4xf32> {pb.dim_args = array<i64: 1, -1>},
                   %n: index,
                   %out: memref<?x4xf32> {pb.dim_args = array<i64: 1, -1>}) {
  %c0 = arith.constant 0 : index
  %d = memref.dim %x, %c0 : memref<?x4xf32>
  %t = memref.alloc(%d) : memref<?x4xf32>
  %o = memref.dim %out, %c0 : memref<?x4xf32>
  affine.for %i = 0 to %o {
    affine.for %j = 0 to 4 {
      %v = affine.load %x[%i, %j] : memref<?x4xf32>
      affine.store %v, %out[%i, %j] : memref<?x4xf32>
    }
  }
  memref.dealloc %t : memref<?x4xf32>
  return
}

// -----

// expected-error @+1 {{argument 0 of 'malformed' has a pb.dim_args whose element 0 (3) is no position of an index argument of 'malformed'}}
func.func @malformed(%x: tensor<?xf32> {pb.dim_args = array<i64: 3>}, %n: index) {
  return
}
