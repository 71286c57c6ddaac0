// RUN: %check_cpu | FileCheck %s
// Softmax along rows and a bias+relu epilogue, compiled for the CPU.
// CHECK: OK softmax: 4000 values match the reference
// CHECK: OK bias_relu: 2048 values match the reference

func.func @softmax(%x: tensor<40x100xf32>) -> tensor<40x100xf32> {
  %e = tensor.empty() : tensor<40x100xf32>
  %y = linalg.softmax dimension(1) ins(%x : tensor<40x100xf32>)
                      outs(%e : tensor<40x100xf32>) -> tensor<40x100xf32>
  return %y : tensor<40x100xf32>
}

func.func @bias_relu(%x: tensor<32x64xf32>, %b: tensor<64xf32>) -> tensor<32x64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x64xf32>
  %r = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>,
                       affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : tensor<32x64xf32>, tensor<64xf32>) outs(%e : tensor<32x64xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    %m = arith.maximumf %s, %z : f32
    linalg.yield %m : f32
  } -> tensor<32x64xf32>
  return %r : tensor<32x64xf32>
}
