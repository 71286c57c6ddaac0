// RUN: pb-opt %s --split-input-file --target=cpu-x86-64-v4 --pb-map-matrix-units --pb-explain 2>&1 | FileCheck %s

// M known only at run time: the micro-kernel's plan for 256 rows, the
// number of M blocks from the run-time extent (ceildiv by MC), no linalg op
// left.
// CHECK: remark: pb-explain: matrix units: M known only at run time
// CHECK: remark: pb-explain: matrix units: linalg.matmul MxNxK 256x64x64
// CHECK-LABEL: func.func @rows(
// CHECK-SAME: %[[A:[^:]*]]: memref<?x64xf32>
// CHECK: %[[M:.*]] = memref.dim %[[A]], %{{.*}} : memref<?x64xf32>
// CHECK: %[[BLOCKS:.*]] = arith.ceildivsi %[[M]], %{{.*}} : index
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%{{.*}}, %{{.*}}) to (%[[BLOCKS]], %{{.*}})
// CHECK-NOT: linalg.matmul
func.func @rows(%a: memref<?x64xf32>, %b: memref<64x64xf32>, %c: memref<?x64xf32>) {
  linalg.matmul ins(%a, %b : memref<?x64xf32>, memref<64x64xf32>) outs(%c : memref<?x64xf32>)
  return
}

// -----

// N and K known only at run time (attention's q @ k^T and p @ v, per head):
// the NC and KC blocks counted at run time.
// CHECK: remark: pb-explain: matrix units: N known only at run time
// CHECK: remark: pb-explain: matrix units: K known only at run time
// CHECK-LABEL: func.func @keys(
// CHECK-NOT: linalg.batch_matmul
func.func @keys(%q: memref<8x64x32xf32>, %kt: memref<8x32x?xf32>, %s: memref<8x64x?xf32>,
                %v: memref<8x?x32xf32>, %o: memref<8x64x32xf32>) {
  linalg.batch_matmul ins(%q, %kt : memref<8x64x32xf32>, memref<8x32x?xf32>) outs(%s : memref<8x64x?xf32>)
  linalg.batch_matmul ins(%s, %v : memref<8x64x?xf32>, memref<8x?x32xf32>) outs(%o : memref<8x64x32xf32>)
  return
}

// -----

// A batch loop of run-time size: left to loop tiling.
// CHECK: remark: pb-explain: matrix units: linalg.batch_matmul left to loop tiling: a batch or outer K loop has a size known only at run time
func.func @batch(%a: memref<?x8x16xf32>, %b: memref<?x16x32xf32>, %c: memref<?x8x32xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<?x8x16xf32>, memref<?x16x32xf32>) outs(%c : memref<?x8x32xf32>)
  return
}
