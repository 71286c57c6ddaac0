// RUN: pb-opt %s --split-input-file --pb-cpu-entry-buffers --verify-diagnostics | FileCheck %s

// A public function's buffer of dynamic shape becomes a rank-0 memref (a
// bare pointer) viewed with its size arguments and row-major strides; a
// static buffer and a private function stay as they are.
// CHECK-LABEL: func.func @entry(
// CHECK-SAME: %[[X:[^:]*]]: memref<f32> {pb.dim_args = array<i64: 2, -1, 3>}, %[[W:[^:]*]]: memref<4x4xf32>, %[[N:[^:]*]]: index, %[[K:[^:]*]]: index, %[[O:[^:]*]]: memref<bf16> {pb.dim_args = array<i64: 2, -1>}
// CHECK: %[[S0:.*]] = arith.muli %[[K]], %{{.*}} : index
// CHECK-NOT: arith.muli
// CHECK: %[[XV:.*]] = memref.reinterpret_cast %[[X]] to offset: [0], sizes: [%[[N]], 4, %[[K]]], strides: [%[[S0]], %[[K]], 1] : memref<f32> to memref<?x4x?xf32>
// CHECK-NOT: arith.muli
// CHECK: %[[OV:.*]] = memref.reinterpret_cast %[[O]] to offset: [0], sizes: [%[[N]], 8], strides: [8, 1] : memref<bf16> to memref<?x8xbf16>
// CHECK: call @use(%[[XV]], %[[W]], %[[OV]])
func.func private @use(%x: memref<?x4x?xf32>, %w: memref<4x4xf32>, %o: memref<?x8xbf16>) {
  return
}
func.func @entry(%x: memref<?x4x?xf32> {pb.dim_args = array<i64: 2, -1, 3>},
                 %w: memref<4x4xf32>, %n: index, %k: index,
                 %o: memref<?x8xbf16> {pb.dim_args = array<i64: 2, -1>}) {
  call @use(%x, %w, %o) : (memref<?x4x?xf32>, memref<4x4xf32>, memref<?x8xbf16>) -> ()
  return
}

// -----

// expected-error @+1 {{argument 0 of entry 'unnamed' has a dynamic dimension 0 that no size argument holds (pb.dim_args)}}
func.func @unnamed(%x: memref<?xf32>) {
  return
}
