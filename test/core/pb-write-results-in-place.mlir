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

// -----

// A result that updates argument 0 in place (pb.in_place), which
// bufferization wrote into the argument's buffer: the copy to the
// out-parameter goes (the caller passes the argument's buffer for both).
// CHECK-LABEL: func.func @update_written(
// CHECK-SAME: %[[CACHE:[^:]*]]: memref<8x4xf32>
// CHECK: %[[ROW:.*]] = memref.subview %[[CACHE]]
// CHECK: memref.copy %{{.*}}, %[[ROW]]
// CHECK-NOT: memref.copy
// CHECK: return
func.func @update_written(%cache: memref<8x4xf32>, %row: memref<1x4xf32>,
                          %out: memref<8x4xf32> {pb.in_place = 0 : i64}) {
  %s = memref.subview %cache[3, 0] [1, 4] [1, 1] : memref<8x4xf32> to memref<1x4xf32, strided<[4, 1], offset: 12>>
  memref.copy %row, %s : memref<1x4xf32> to memref<1x4xf32, strided<[4, 1], offset: 12>>
  memref.copy %cache, %out : memref<8x4xf32> to memref<8x4xf32>
  return
}

// -----

// The update computed into the out-parameter (bufferization did not write
// the argument in place): into a buffer of its own instead, copied to the
// argument's at the end, after every read of the argument.
// CHECK-LABEL: func.func @update_elsewhere(
// CHECK-SAME: %[[CACHE:[^:]*]]: memref<?x4xf32> {pb.dim_args = array<i64: 2, -1>}, %[[ROW:[^:]*]]: memref<1x4xf32>, %[[N:[^:]*]]: index, %[[OUT:[^:]*]]: memref<?x4xf32>
// CHECK: %[[BUF:.*]] = memref.alloc(%[[N]]) : memref<?x4xf32>
// CHECK: memref.copy %[[CACHE]], %[[BUF]]
// CHECK: linalg.add ins(%[[CACHE]], %[[CACHE]] : {{.*}}) outs(%[[BUF]] : memref<?x4xf32>)
// CHECK: memref.copy %[[BUF]], %[[CACHE]]
// CHECK-NEXT: return
func.func @update_elsewhere(%cache: memref<?x4xf32> {pb.dim_args = array<i64: 2, -1>}, %row: memref<1x4xf32>, %n: index,
                            %out: memref<?x4xf32> {pb.dim_args = array<i64: 2, -1>, pb.in_place = 0 : i64}) {
  memref.copy %cache, %out : memref<?x4xf32> to memref<?x4xf32>
  linalg.add ins(%cache, %cache : memref<?x4xf32>, memref<?x4xf32>) outs(%out : memref<?x4xf32>)
  return
}
