// RUN: %check_cpu | FileCheck %s
// RUN: pb-opt %s --target=cpu-x86-64-v4 --pb-pipeline=s1,s2,s3 --pb-explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: pb-opt %s --target=cpu-x86-64-v4 --pb-pipeline=s1,s2,s3 -o - | FileCheck %s --check-prefix=S3
// A 1x1 convolution of 16 channels (K shorter than the blocked K that the
// micro-kernel flattens window loops into) after a 3x3 convolution, with a
// ReLU before a third convolution: its unit window loops are not flattened into K, so A, the
// channels-last rows of the first convolution's result, is read in place
// instead of packed through a table of K offsets with a division per
// element. The second GEMM runs in one K block after a fill and stores
// through its epilogue (the ReLU): it neither reads nor writes its C, and
// no C tile of it is prefetched (the first GEMM's C, which it writes, is).
// EXPLAIN: matrix units: linalg.generic MxNxK 392x48x16 {{.*}}, A read in place,
// S3: memref.prefetch {{.*}} : memref<392x16xf32>
// S3-NOT: memref.prefetch {{.*}}x48xf32>
// CHECK: OK pointwise: 6272 values match the reference

func.func @pointwise(%x: tensor<2x3x16x16xf32>, %w1: tensor<16x3x3x3xf32>,
                     %w2: tensor<48x16x1x1xf32>, %w3: tensor<16x48x1x1xf32>)
    -> tensor<2x16x14x14xf32> {
  %z = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<2x16x14x14xf32>
  %f1 = linalg.fill ins(%z : f32) outs(%e1 : tensor<2x16x14x14xf32>) -> tensor<2x16x14x14xf32>
  %c1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>,
                                  strides = dense<1> : tensor<2xi64>}
       ins(%x, %w1 : tensor<2x3x16x16xf32>, tensor<16x3x3x3xf32>)
       outs(%f1 : tensor<2x16x14x14xf32>) -> tensor<2x16x14x14xf32>
  %e2 = tensor.empty() : tensor<2x48x14x14xf32>
  %f2 = linalg.fill ins(%z : f32) outs(%e2 : tensor<2x48x14x14xf32>) -> tensor<2x48x14x14xf32>
  %c2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>,
                                  strides = dense<1> : tensor<2xi64>}
       ins(%c1, %w2 : tensor<2x16x14x14xf32>, tensor<48x16x1x1xf32>)
       outs(%f2 : tensor<2x48x14x14xf32>) -> tensor<2x48x14x14xf32>
  %e3 = tensor.empty() : tensor<2x48x14x14xf32>
  %r = linalg.generic {
      indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>,
                       affine_map<(n, c, h, w) -> (n, c, h, w)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c2 : tensor<2x48x14x14xf32>) outs(%e3 : tensor<2x48x14x14xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.maximumf %v, %z : f32
    linalg.yield %m : f32
  } -> tensor<2x48x14x14xf32>
  %e4 = tensor.empty() : tensor<2x16x14x14xf32>
  %f4 = linalg.fill ins(%z : f32) outs(%e4 : tensor<2x16x14x14xf32>) -> tensor<2x16x14x14xf32>
  %c3 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>,
                                  strides = dense<1> : tensor<2xi64>}
       ins(%r, %w3 : tensor<2x48x14x14xf32>, tensor<16x48x1x1xf32>)
       outs(%f4 : tensor<2x16x14x14xf32>) -> tensor<2x16x14x14xf32>
  return %c3 : tensor<2x16x14x14xf32>
}
