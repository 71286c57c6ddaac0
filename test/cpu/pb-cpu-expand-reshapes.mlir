// RUN: pb-opt %s --split-input-file --pb-cpu-expand-reshapes | FileCheck %s
// RUN: pb-opt %s --split-input-file --pb-cpu-expand-reshapes --expand-strided-metadata | FileCheck %s --check-prefix=LOWERED

// A symbolic batch and sequence length: [s0 * s1, 256] split into
// [s0, s1, 16, 16] becomes a view of the source's base buffer: sizes from
// the output shape, the inner dimension of each group with the source's
// stride, the outer ones times the sizes to their right (the static
// strides as the type states them).
// CHECK-LABEL: func.func @two_run_time_sizes(
// CHECK-SAME: %[[M:[^:]*]]: memref<?x256xf32>, %[[B:[^:]*]]: index, %[[S:[^:]*]]: index
// CHECK: %[[BASE:.*]], %[[OFFSET:.*]], %{{.*}}:2, %[[STRIDES:.*]]:2 = memref.extract_strided_metadata %[[M]]
// CHECK: %[[T:.*]] = arith.muli %[[STRIDES]]#0, %[[S]] : index
// CHECK: memref.reinterpret_cast %[[BASE]] to offset: [0], sizes: [%[[B]], %[[S]], 16, 16], strides: [%[[T]], 256, 16, 1] : memref<f32> to memref<?x?x16x16xf32>
// CHECK-NOT: memref.expand_shape
// LOWERED-LABEL: func.func @two_run_time_sizes(
// LOWERED-NOT: memref.expand_shape
// LOWERED: memref.reinterpret_cast
func.func @two_run_time_sizes(%m: memref<?x256xf32>, %b: index, %s: index, %i: index) -> f32 {
  %e = memref.expand_shape %m [[0, 1], [2, 3]] output_shape [%b, %s, 16, 16] : memref<?x256xf32> into memref<?x?x16x16xf32>
  %v = memref.load %e[%i, %i, %i, %i] : memref<?x?x16x16xf32>
  return %v : f32
}

// -----

// One run-time size per group: left to expand-strided-metadata.
// CHECK-LABEL: func.func @one_run_time_size(
// CHECK: memref.expand_shape
func.func @one_run_time_size(%m: memref<?x256xf32>, %b: index, %i: index) -> f32 {
  %e = memref.expand_shape %m [[0, 1], [2]] output_shape [%b, 4, 256] : memref<?x256xf32> into memref<?x4x256xf32>
  %v = memref.load %e[%i, %i, %i] : memref<?x4x256xf32>
  return %v : f32
}

// -----

// A strided source (a column block of a wider buffer) with an offset: the
// view keeps the source's offset and row stride.
// CHECK-LABEL: func.func @strided_source(
// CHECK: %[[BASE:.*]], %[[OFFSET:.*]], %{{.*}}:2, %[[STRIDES:.*]]:2 = memref.extract_strided_metadata
// CHECK: %[[T:.*]] = arith.muli %[[STRIDES]]#0, %{{.*}} : index
// CHECK: memref.reinterpret_cast %[[BASE]] to offset: [%[[OFFSET]]], sizes: [%{{.*}}, %{{.*}}, 8], strides: [%[[T]], 32, 1]
func.func @strided_source(%m: memref<?x8xf32, strided<[32, 1], offset: ?>>, %b: index, %s: index, %i: index) -> f32 {
  %e = memref.expand_shape %m [[0, 1], [2]] output_shape [%b, %s, 8] : memref<?x8xf32, strided<[32, 1], offset: ?>> into memref<?x?x8xf32, strided<[?, 32, 1], offset: ?>>
  %v = memref.load %e[%i, %i, %i] : memref<?x?x8xf32, strided<[?, 32, 1], offset: ?>>
  return %v : f32
}
