// RUN: pb-opt %s --split-input-file --target=cpu-x86-64-v4 --pb-map-matrix-units | FileCheck %s
// RUN: pb-opt %s --split-input-file --target=cpu-x86-64-v4 --pb-map-matrix-units --pb-explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN

// One row, B along N (x @ W): panels of columns as the tasks, B loaded in
// place (no packed copy), one broadcast of A per K, the fill folded into
// the stores, the last 8 columns masked.
// EXPLAIN: remark: pb-explain: matrix units: linalg.matmul MxNxK 1x1000x64 as a matrix-vector product, B read in place along N: 8 tasks of 112 columns (7 sums in registers), 104 more columns after them
// CHECK-LABEL: func.func @along_n(
// CHECK-SAME: %[[A:[^:]*]]: memref<1x64xf32>, %[[B:[^:]*]]: memref<64x1000xf32>, %[[C:[^:]*]]: memref<1x1000xf32>
// CHECK-NOT: memref.alloc
// CHECK: scf.parallel
// CHECK: scf.for {{.*}} iter_args
// CHECK: vector.load %[[B]]
// CHECK: memref.load %[[A]]
// CHECK: vector.fma
// CHECK: vector.store {{.*}}, %[[C]]
// CHECK: vector.maskedload %[[B]]
// CHECK: vector.maskedstore %[[C]]
// CHECK-NOT: linalg.
func.func @along_n(%a: memref<1x64xf32>, %b: memref<64x1000xf32>, %c: memref<1x1000xf32>) {
  %z = arith.constant 0.0 : f32
  affine.for %i = 0 to 1 {
    affine.for %j = 0 to 1000 {
      affine.store %z, %c[%i, %j] : memref<1x1000xf32>
    }
  }
  linalg.matmul ins(%a, %b : memref<1x64xf32>, memref<64x1000xf32>) outs(%c : memref<1x1000xf32>)
  return
}

// -----

// B along K (x @ W^T, a tied embedding): groups of 8 rows of B as the
// tasks, vectors of A's and B's rows along K, one sum per row of B reduced
// across the lanes (reassociated), C's old value added (no fill); K's last
// 9 elements masked.
// EXPLAIN: remark: pb-explain: matrix units: linalg.matmul MxNxK 1x1000x777 as a matrix-vector product, B read in place along K: 125 tasks of 8 dot products of 16 lanes
// CHECK-LABEL: func.func @along_k(
// CHECK: scf.parallel
// CHECK: scf.for
// CHECK-COUNT-8: vector.fma
// CHECK: vector.maskedload
// CHECK: vector.reduction <add>, %{{.*}} fastmath<reassoc>
// CHECK: memref.load
// CHECK: arith.addf
// CHECK: memref.store
func.func @along_k(%a: memref<1x777xf32>, %w: memref<1000x777xf32>, %c: memref<1x1000xf32>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%a, %w : memref<1x777xf32>, memref<1000x777xf32>) outs(%c : memref<1x1000xf32>)
  return
}

// -----

// As many rows as half the register tile or more: the GEMM micro-kernel.
// EXPLAIN: remark: pb-explain: matrix units: linalg.matmul MxNxK 16x256x64 -> VFMA_F32_1x16x1_F32
func.func @tall(%a: memref<16x64xf32>, %b: memref<64x256xf32>, %c: memref<16x256xf32>) {
  linalg.matmul ins(%a, %b : memref<16x64xf32>, memref<64x256xf32>) outs(%c : memref<16x256xf32>)
  return
}

// -----

// Other element types than f32: the micro-kernel.
// EXPLAIN: remark: pb-explain: matrix units: not a matrix-vector product: an operand is not an f32 buffer
func.func @widened(%a: memref<1x64xbf16>, %b: memref<64x256xbf16>, %c: memref<1x256xf32>) {
  linalg.matmul ins(%a, %b : memref<1x64xbf16>, memref<64x256xbf16>) outs(%c : memref<1x256xf32>)
  return
}

// -----

// B along N with a long K: K split into the tasks, each reading its rows of
// B whole into its own sums (a 2 x N buffer per task), then the tasks'
// sums added into C, the last vector masked.
// EXPLAIN: remark: pb-explain: matrix units: linalg.matmul MxNxK 2x1000x256 as a matrix-vector product, B read in place along N: K split into 8 tasks of 32 whole rows of B, each with its own 2x1008 sums, added into C after them
// CHECK-LABEL: func.func @split_k(
// CHECK-SAME: %[[A:[^:]*]]: memref<2x256xf32>, %[[B:[^:]*]]: memref<256x1000xf32>, %[[C:[^:]*]]: memref<2x1000xf32>
// CHECK: %[[SUMS:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8x2x1008xf32>
// CHECK: scf.parallel
// CHECK: scf.for
// CHECK: memref.load %[[A]]
// CHECK: scf.for
// CHECK: vector.load %[[B]]
// CHECK: vector.load %[[SUMS]]
// CHECK: vector.fma
// CHECK: vector.store {{.*}}, %[[SUMS]]
// CHECK: vector.maskedload %[[B]]
// CHECK: scf.parallel
// CHECK: scf.if
// CHECK: vector.maskedstore %[[C]]
// CHECK: vector.store {{.*}}, %[[C]]
// CHECK: memref.dealloc %[[SUMS]]
func.func @split_k(%a: memref<2x256xf32>, %b: memref<256x1000xf32>, %c: memref<2x1000xf32>) {
  linalg.matmul ins(%a, %b : memref<2x256xf32>, memref<256x1000xf32>) outs(%c : memref<2x1000xf32>)
  return
}
