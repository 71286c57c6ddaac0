// RUN: pb-opt %s --split-input-file --pb-lower-to-affine | FileCheck %s
// RUN: pb-opt %s --split-input-file --pass-pipeline='builtin.module(pb-attach-target{target=cpu-x86-64-v4},func.func(pb-lower-to-affine))' | FileCheck %s --check-prefix=CORE

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

// -----

// A loop of tasks formed on tensors (pb-fuse-attention), bufferized: an
// scf.parallel on the target's level of threads, its body lowered as any.
// CORE-LABEL: func.func @tasks
// CORE-NOT:   scf.forall
// CORE:       scf.parallel (%[[T:.*]]) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// CORE:         memref.subview %{{.*}}[%[[T]], 0] [1, 16] [1, 1]
// CORE:         affine.for
// CORE:       } {pb.level = "Core"}
func.func @tasks(%x: memref<8x16xf32>) {
  %z = arith.constant 0.0 : f32
  scf.forall (%t) in (8) {
    %row = memref.subview %x[%t, 0] [1, 16] [1, 1]
        : memref<8x16xf32> to memref<1x16xf32, strided<[16, 1], offset: ?>>
    linalg.fill ins(%z : f32) outs(%row : memref<1x16xf32, strided<[16, 1], offset: ?>>)
  }
  return
}
