// RUN: %check_cpu | FileCheck %s
// RUN: pb-opt %s --target=cpu-x86-64-v3 --pb-pipeline=s1,s2,s3 --pb-explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// 1x1 convolutions over NCHW inputs (DenseNet's concatenated feature
// maps): consecutive pixels, the GEMM's rows, are consecutive in memory,
// so A's row panels are packed MR rows per vector load
// (GemmPlan::aAlongM). 7x7 pixels leave a partial last panel (masked
// loads, the rows past M zeros); 6x8 pixels fill every panel.
// EXPLAIN: matrix units: linalg.generic MxNxK 49x32x40 {{.*}}, A packed MR rows per load,
// EXPLAIN: matrix units: linalg.generic MxNxK 48x32x40 {{.*}}, A packed MR rows per load,
// CHECK: OK partial: 1568 values match the reference
// CHECK: OK full: 1536 values match the reference

func.func @partial(%x: tensor<1x40x7x7xf32>, %w: tensor<32x40x1x1xf32>)
    -> tensor<1x32x7x7xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x32x7x7xf32>
  %o = linalg.fill ins(%z : f32) outs(%e : tensor<1x32x7x7xf32>) -> tensor<1x32x7x7xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>,
                                 strides = dense<1> : tensor<2xi64>}
       ins(%x, %w : tensor<1x40x7x7xf32>, tensor<32x40x1x1xf32>)
       outs(%o : tensor<1x32x7x7xf32>) -> tensor<1x32x7x7xf32>
  return %r : tensor<1x32x7x7xf32>
}

func.func @full(%x: tensor<1x40x6x8xf32>, %w: tensor<32x40x1x1xf32>)
    -> tensor<1x32x6x8xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x32x6x8xf32>
  %o = linalg.fill ins(%z : f32) outs(%e : tensor<1x32x6x8xf32>) -> tensor<1x32x6x8xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>,
                                 strides = dense<1> : tensor<2xi64>}
       ins(%x, %w : tensor<1x40x6x8xf32>, tensor<32x40x1x1xf32>)
       outs(%o : tensor<1x32x6x8xf32>) -> tensor<1x32x6x8xf32>
  return %r : tensor<1x32x6x8xf32>
}
