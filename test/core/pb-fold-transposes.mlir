// RUN: pb-opt %s --pass-pipeline='builtin.module(pb-attach-target{target=nvidia-sm90},func.func(pb-fold-transposes))' | FileCheck %s
// RUN: pb-opt %s --pass-pipeline='builtin.module(pb-attach-target{target=cpu-x86-64-v3},func.func(pb-fold-transposes))' | FileCheck %s --check-prefix=CPU
// On a chip with matrix units, x @ W^T reads W in place: the matmul becomes
// a generic with B indexed (n, k) and the transpose disappears, on a GPU
// (tensor cores read either layout) and on a CPU (the micro-kernel packs
// 8x8 squares of W transposed in registers). (The S1-S3 run on the host:
// test/nvidia/sm90/s3-on-host-fold-transposes.mlir.)

// CHECK-LABEL: func.func @linear
// CHECK-NOT: linalg.transpose
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}]
// CHECK-SAME: ins(%{{.*}}, %arg1 : tensor<128x64xf32>, tensor<96x64xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CPU-LABEL: func.func @linear
// CPU-NOT: linalg.transpose
// CPU: linalg.generic
// CPU-SAME: ins(%{{.*}}, %arg1 : tensor<128x64xf32>, tensor<96x64xf32>)
func.func @linear(%x: tensor<128x64xf32>, %w: tensor<96x64xf32>) -> tensor<128x96xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x96xf32>
  %wt = linalg.transpose ins(%w : tensor<96x64xf32>) outs(%e : tensor<64x96xf32>) permutation = [1, 0]
  %init = tensor.empty() : tensor<128x96xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<128x96xf32>) -> tensor<128x96xf32>
  %y = linalg.matmul ins(%x, %wt : tensor<128x64xf32>, tensor<64x96xf32>)
                     outs(%acc : tensor<128x96xf32>) -> tensor<128x96xf32>
  return %y : tensor<128x96xf32>
}

// -----

// A transpose of other dimensions is not folded.
// CHECK-LABEL: func.func @batch_other_permutation
// CHECK: linalg.transpose
// CHECK: linalg.batch_matmul
func.func @batch_other_permutation(%x: tensor<4x8x16xf32>, %w: tensor<16x4x8xf32>) -> tensor<4x8x8xf32> {
  %e = tensor.empty() : tensor<4x16x8xf32>
  %wt = linalg.transpose ins(%w : tensor<16x4x8xf32>) outs(%e : tensor<4x16x8xf32>) permutation = [1, 0, 2]
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<4x8x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %y = linalg.batch_matmul ins(%x, %wt : tensor<4x8x16xf32>, tensor<4x16x8xf32>) outs(%acc : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  return %y : tensor<4x8x8xf32>
}
