// RUN: pb-opt --target=amd-gfx942 %s -pb-amd-lower-matrix-units --pb-explain 2>&1 | FileCheck %s
// C's zero fill that S3 fused into a nest doing other work (here a copy of
// the input into %x2) goes by itself: the nest keeps its other store, the
// MFMA kernel's accumulators start at 0 and C is not read by the kernel.
// A C that a statement before the contraction reads keeps its fill.

// CHECK: remark: pb-explain: matrix units: linalg.matmul on MFMA_F32_16x16x4_F32
// CHECK: remark: pb-explain: matrix units: accumulators start at 0; 1 zero fill(s) of C removed
// CHECK-NOT: accumulators start at 0
// CHECK-LABEL: func.func @fused_fill
// CHECK: affine.for
// CHECK: affine.for
// CHECK-NEXT: affine.load %arg0
// CHECK-NEXT: affine.store {{.*}}, %arg2
// CHECK-NEXT: }
// CHECK: gpu.launch
// CHECK-NOT: memref.load %alloc
// CHECK: amdgpu.mfma
// CHECK-LABEL: func.func @read_before
// CHECK: affine.store %cst, %alloc
// CHECK: gpu.launch
func.func @fused_fill(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %x2: memref<64x64xf32>, %out: memref<64x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<64x64xf32>
  affine.for %i = 0 to 64 {
    affine.for %j = 0 to 64 {
      %v = affine.load %a[%i, %j] : memref<64x64xf32>
      affine.store %v, %x2[%i, %j] : memref<64x64xf32>
      affine.store %zero, %c[%i, %j] : memref<64x64xf32>
    }
  }
  linalg.matmul {pb.matrix_unit = "MFMA_F32_16x16x4_F32"} ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>)
  memref.copy %c, %out : memref<64x64xf32> to memref<64x64xf32>
  return
}

func.func @read_before(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %x2: memref<64x64xf32>, %out: memref<64x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<64x64xf32>
  affine.for %i = 0 to 64 {
    affine.for %j = 0 to 64 {
      affine.store %zero, %c[%i, %j] : memref<64x64xf32>
      %v = affine.load %c[%i, %j] : memref<64x64xf32>
      affine.store %v, %x2[%i, %j] : memref<64x64xf32>
    }
  }
  linalg.matmul {pb.matrix_unit = "MFMA_F32_16x16x4_F32"} ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>)
  memref.copy %c, %out : memref<64x64xf32> to memref<64x64xf32>
  return
}
