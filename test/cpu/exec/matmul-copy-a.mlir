// RUN: pb-compile %s --target=cpu-host -o %t.opt
// RUN: pb-compile %s --target=cpu-host --options=pipeline=reference -o %t.ref
// RUN: pb-run %t.opt --check-against=%t.ref --atol=2e-3 | FileCheck %s
// RUN: pb-opt %s --target=cpu-x86-64-v4 --pb-pipeline=s1,s2,s3 --pb-explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: pb-opt %s --target=cpu-x86-64-v4 --pb-pipeline=s1,s2,s3 -o - | FileCheck %s --check-prefix=S3
// A's rows read in place are a multiple of L1's set span (4 KiB on the
// 8-way 32 KiB L1 of cpu-x86-64-v4) apart: a register tile's 12 rows would
// share one set, so each task copies its rows, one K block at a time, into
// rows one line longer (KC = 128 -> 144 floats), and the micro-kernel reads
// the copy. Rows 1040 floats apart spread over the sets and are read in
// place. Each GEMM has edge tiles in M and N; @strided's A is a view 1000
// columns wide of rows 1024 floats apart, so its last K block (104) ends
// inside a vector (masked at A's edge). The channels-last 3x3 convolution
// over 1024 channels to 32 reads its window rows (pixels 4 KiB apart: the
// 12 rows of its 12 x 32 tile in one set) through the copy too; over 512
// channels to 64 (2 KiB apart, the 6 rows of a 6 x 64 tile in 2 sets) in
// place. Their sums of 9 x 1024 and
// 9 x 512 products (up to ~120) differ from the reference's, summed in
// another order, by up to 5e-4; against float64 the optimized sums are the
// closer ones (4e-5 vs 4e-4), hence the absolute tolerance.
// EXPLAIN: matrix units: linalg.matmul MxNxK 100x80x1024 {{.*}}, A copied by rows (its rows overflow sets of 'l1d'),
// EXPLAIN: matrix units: linalg.matmul MxNxK 100x80x1040 {{.*}}, A read in place,
// EXPLAIN: matrix units: linalg.matmul MxNxK 100x80x1000 {{.*}}, A copied by rows (its rows overflow sets of 'l1d'),
// EXPLAIN: matrix units: linalg.conv_2d_nhwc_hwcf MxNxK 18x32x1024 {{.*}}, A copied by rows (its rows overflow sets of 'l1d'),
// EXPLAIN: matrix units: linalg.conv_2d_nhwc_hwcf MxNxK 50x64x512 {{.*}}, A read in place,
// S3-LABEL: func.func @square
// S3: memref.alloc() {alignment = 64 : i64} : memref<{{[0-9]+}}x144xf32>
// S3-LABEL: func.func @spread
// S3-NOT: x144xf32>
// S3-LABEL: func.func @strided
// S3: vector.transfer_read {{.*}} : memref<100x1000xf32, strided<[1024, 1]>>, vector<16xf32>
// CHECK: OK square: 8000 values match the reference
// CHECK: OK spread: 8000 values match the reference
// CHECK: OK strided: 8000 values match the reference
// CHECK: OK conv: 576 values match the reference
// CHECK: OK conv512: 3200 values match the reference

func.func @square(%a: tensor<100x1024xf32>, %b: tensor<1024x80xf32>)
    -> tensor<100x80xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<100x80xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<100x80xf32>) -> tensor<100x80xf32>
  %r = linalg.matmul ins(%a, %b : tensor<100x1024xf32>, tensor<1024x80xf32>)
                     outs(%f : tensor<100x80xf32>) -> tensor<100x80xf32>
  return %r : tensor<100x80xf32>
}

func.func @spread(%a: tensor<100x1040xf32>, %b: tensor<1040x80xf32>)
    -> tensor<100x80xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<100x80xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<100x80xf32>) -> tensor<100x80xf32>
  %r = linalg.matmul ins(%a, %b : tensor<100x1040xf32>, tensor<1040x80xf32>)
                     outs(%f : tensor<100x80xf32>) -> tensor<100x80xf32>
  return %r : tensor<100x80xf32>
}

func.func @strided(%a: tensor<100x1024xf32>, %b: tensor<1000x80xf32>)
    -> tensor<100x80xf32> {
  %z = arith.constant 0.0 : f32
  %s = tensor.extract_slice %a[0, 0] [100, 1000] [1, 1]
      : tensor<100x1024xf32> to tensor<100x1000xf32>
  %e = tensor.empty() : tensor<100x80xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<100x80xf32>) -> tensor<100x80xf32>
  %r = linalg.matmul ins(%s, %b : tensor<100x1000xf32>, tensor<1000x80xf32>)
                     outs(%f : tensor<100x80xf32>) -> tensor<100x80xf32>
  return %r : tensor<100x80xf32>
}

func.func @conv(%x: tensor<2x5x5x1024xf32>, %w: tensor<3x3x1024x32xf32>)
    -> tensor<2x3x3x32xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x3x32xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<2x3x3x32xf32>) -> tensor<2x3x3x32xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>,
                                 strides = dense<1> : tensor<2xi64>}
       ins(%x, %w : tensor<2x5x5x1024xf32>, tensor<3x3x1024x32xf32>)
       outs(%f : tensor<2x3x3x32xf32>) -> tensor<2x3x3x32xf32>
  return %r : tensor<2x3x3x32xf32>
}

func.func @conv512(%x: tensor<2x7x7x512xf32>, %w: tensor<3x3x512x64xf32>)
    -> tensor<2x5x5x64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x5x5x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<2x5x5x64xf32>) -> tensor<2x5x5x64xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>,
                                 strides = dense<1> : tensor<2xi64>}
       ins(%x, %w : tensor<2x7x7x512xf32>, tensor<3x3x512x64xf32>)
       outs(%f : tensor<2x5x5x64xf32>) -> tensor<2x5x5x64xf32>
  return %r : tensor<2x5x5x64xf32>
}
