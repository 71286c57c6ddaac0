// RUN: %check_cpu | FileCheck %s
// GEMMs whose N is one or one and a half vectors of a 16-lane target (16
// and 24 output channels: MobileNet's and EfficientNet's first blocks),
// which the register tile covers with rows of one vector (24 x 16 on
// x86-64-v4), with M not a multiple of the tile's rows and a bias + ReLU
// epilogue, compared with the reference pipeline.
// CHECK: OK narrow_n: 2400 values match the reference
// CHECK: OK narrow_n_epilogue: 1600 values match the reference

func.func @narrow_n(%a: tensor<100x70xf32>, %b: tensor<70x24xf32>) -> tensor<100x24xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<100x24xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<100x24xf32>) -> tensor<100x24xf32>
  %r = linalg.matmul ins(%a, %b : tensor<100x70xf32>, tensor<70x24xf32>) outs(%f : tensor<100x24xf32>) -> tensor<100x24xf32>
  return %r : tensor<100x24xf32>
}

func.func @narrow_n_epilogue(%a: tensor<100x40xf32>, %b: tensor<40x16xf32>, %bias: tensor<16xf32>) -> tensor<100x16xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<100x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<100x16xf32>) -> tensor<100x16xf32>
  %r = linalg.matmul ins(%a, %b : tensor<100x40xf32>, tensor<40x16xf32>) outs(%f : tensor<100x16xf32>) -> tensor<100x16xf32>
  %o = tensor.empty() : tensor<100x16xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%r, %bias : tensor<100x16xf32>, tensor<16xf32>) outs(%o : tensor<100x16xf32>) {
  ^bb0(%v: f32, %bb: f32, %out: f32):
    %s = arith.addf %v, %bb : f32
    %m = arith.maximumf %s, %z : f32
    linalg.yield %m : f32
  } -> tensor<100x16xf32>
  return %y : tensor<100x16xf32>
}
