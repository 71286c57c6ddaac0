// RUN: pb-opt --target=nvidia-sm90 --pb-pipeline=s1,s2,s3 %s | pb-opt --pass-pipeline='builtin.module(pb-approximate-math,convert-linalg-to-affine-loops,func.func(pb-gpu-prepare-parallel),lower-affine,func.func(pb-gpu-map-to-gpu),canonicalize,cse)' | FileCheck %s

// Row softmax of 128 x 1024: one row per block (128 blocks of 256 threads).
// The row's maximum and sum, which every thread needs, are split over the
// block's threads: thread t folds the vectors t, t + 256, ... (from the
// combiner's neutral element), then its 4 lanes (vector.reduction), and
// gpu.all_reduce combines the threads; the loop's initial value is folded
// in last. Before, each of the 256 threads ran both reductions over the
// whole row. The elementwise loops are spread over the threads as before.

// CHECK-LABEL: func.func @softmax
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c128, {{.*}}) threads(%[[TID:[^,]*]], {{.*}}) in (%{{.*}} = %c256,
// CHECK: %[[START:.*]] = arith.muli %[[TID]], %c4 : index
// CHECK: %[[PARTMAX:.*]] = scf.for %{{.*}} = %[[START]] to %c1024 step %c1024 iter_args
// CHECK: arith.maxnumf
// CHECK: %[[LANESMAX:.*]] = vector.reduction <maxnumf>, %[[PARTMAX]] : vector<4xf32> into f32
// CHECK: %[[ROWMAX:.*]] = gpu.all_reduce maxnumf %[[LANESMAX]] uniform
// CHECK: %[[INITMAX:.*]] = vector.reduction <maxnumf>, %{{.*}} : vector<4xf32> into f32
// CHECK: arith.maxnumf %[[INITMAX]], %[[ROWMAX]] : f32
// CHECK: scf.for %{{.*}} = %[[TID]] to %c256 step %c256 {
// CHECK: vector.transfer_write
// CHECK: gpu.barrier
// CHECK: %[[PARTSUM:.*]] = scf.for %{{.*}} = %[[START]] to %c1024 step %c1024 iter_args
// CHECK: arith.addf
// CHECK: %[[LANESSUM:.*]] = vector.reduction <add>, %[[PARTSUM]] : vector<4xf32> into f32
// CHECK: gpu.all_reduce add %[[LANESSUM]] uniform
// CHECK: scf.for %{{.*}} = %[[TID]] to %c256 step %c256 {
// CHECK: gpu.barrier
func.func @softmax(%x: tensor<128x1024xf32>) -> tensor<128x1024xf32> {
  %init = tensor.empty() : tensor<128x1024xf32>
  %out = linalg.softmax dimension(1) ins(%x : tensor<128x1024xf32>)
                        outs(%init : tensor<128x1024xf32>) -> tensor<128x1024xf32>
  return %out : tensor<128x1024xf32>
}

// A 4096 x 4096 softmax: S3 tiles the rows by 1024 for the cache (4 tiles,
// fewer than the SMs); pb-mark-parallel joins the rows of a tile to the
// grid loop, so each of the 4096 rows is a block of 1024 threads (one
// 4-lane vector each) instead of 4 blocks whose threads each ran a row.
// CHECK-LABEL: func.func @softmax_large
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c4096, {{.*}}) threads({{.*}}) in (%{{.*}} = %c1024,
// CHECK-COUNT-2: gpu.all_reduce
func.func @softmax_large(%x: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  %init = tensor.empty() : tensor<4096x4096xf32>
  %out = linalg.softmax dimension(1) ins(%x : tensor<4096x4096xf32>)
                        outs(%init : tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  return %out : tensor<4096x4096xf32>
}
