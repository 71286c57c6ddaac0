// RUN: pb-opt %s --split-input-file --pb-write-results-in-place | FileCheck %s

// An allocation of the out-parameter's run-time sizes, copied into it as
// its last use: the out-parameter takes its place.
// CHECK-LABEL: func.func @in_place(
// CHECK-SAME: %[[X:[^:]*]]: memref<?x4xf32> {pb.dim_args = array<i64: 1, -1>}, %[[N:[^:]*]]: index, %[[OUT:[^:]*]]: memref<?x4xf32> {pb.dim_args = array<i64: 1, -1>}
// CHECK-NOT: memref.alloc
// CHECK: linalg.copy ins(%[[X]] : memref<?x4xf32>) outs(%[[OUT]] : memref<?x4xf32>)
// CHECK-NOT: memref.copy
// CHECK: return
func.func @in_place(%x: memref<?x4xf32> {pb.dim_args = array<i64: 1, -1>}, %n: index,
                    %out: memref<?x4xf32> {pb.dim_args = array<i64: 1, -1>}) {
  %a = memref.alloc(%n) : memref<?x4xf32>
  linalg.copy ins(%x : memref<?x4xf32>) outs(%a : memref<?x4xf32>)
  memref.copy %a, %out : memref<?x4xf32> to memref<?x4xf32>
  return
}

// -----

// Other sizes than the out-parameter's, a use after the copy, an
// out-parameter read elsewhere: the copy stays.
// CHECK-LABEL: func.func @kept(
// CHECK-COUNT-3: memref.copy
func.func @kept(%x: memref<?x4xf32> {pb.dim_args = array<i64: 1, -1>}, %n: index, %m: index,
                %o1: memref<?x4xf32> {pb.dim_args = array<i64: 1, -1>},
                %o2: memref<?x4xf32> {pb.dim_args = array<i64: 1, -1>},
                %o3: memref<?x4xf32> {pb.dim_args = array<i64: 1, -1>}) {
  %a = memref.alloc(%m) : memref<?x4xf32>
  memref.copy %a, %o1 : memref<?x4xf32> to memref<?x4xf32>
  %b = memref.alloc(%n) : memref<?x4xf32>
  memref.copy %b, %o2 : memref<?x4xf32> to memref<?x4xf32>
  linalg.copy ins(%b : memref<?x4xf32>) outs(%x : memref<?x4xf32>)
  %c = memref.alloc(%n) : memref<?x4xf32>
  linalg.copy ins(%o3 : memref<?x4xf32>) outs(%x : memref<?x4xf32>)
  memref.copy %c, %o3 : memref<?x4xf32> to memref<?x4xf32>
  return
}
