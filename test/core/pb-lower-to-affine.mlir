// RUN: pb-opt %s --split-input-file --pb-lower-to-affine | FileCheck %s

// Elementwise ops and copies become affine nests; the matmul stays for S3.
// CHECK-LABEL: func.func @fill_matmul_copy
// CHECK-NOT: linalg.fill
// CHECK: affine.for
// CHECK: linalg.matmul
// CHECK-NOT: memref.copy
// CHECK: affine.for
// CHECK: affine.load %{{.*}} : memref<4x4xf32, strided<[8, 1], offset: 2>>
func.func @fill_matmul_copy(%a: memref<4x4xf32>, %c: memref<4x4xf32>,
                            %big: memref<4x8xf32>, %out: memref<4x4xf32>) {
  %z = arith.constant 0.0 : f32
  linalg.fill ins(%z : f32) outs(%c : memref<4x4xf32>)
  linalg.matmul ins(%a, %a : memref<4x4xf32>, memref<4x4xf32>)
                outs(%c : memref<4x4xf32>)
  %v = memref.subview %big[0, 2] [4, 4] [1, 1]
      : memref<4x8xf32> to memref<4x4xf32, strided<[8, 1], offset: 2>>
  memref.copy %v, %out : memref<4x4xf32, strided<[8, 1], offset: 2>> to memref<4x4xf32>
  return
}
