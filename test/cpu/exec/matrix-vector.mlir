// RUN: %check_cpu | FileCheck %s
// Contractions with fewer rows than half the register tile run as
// matrix-vector products that read B in place (pb-map-matrix-units,
// Gemv.cpp): B along N (x @ W) with N not a multiple of the panels or of the
// vector lanes (K of 129 and 300 split into the tasks, K of 50 by panels), B along K (x @ W^T) with K not a multiple of the lanes and
// N not a multiple of the row groups, two and three rows, C accumulated
// into (no fill), unit batch loops; compared with the reference pipeline.
// CHECK: OK along_n: 1000 values match the reference
// CHECK: OK along_n_rows: 2103 values match the reference
// CHECK: OK along_k: 1000 values match the reference
// CHECK: OK along_k_rows: 1011 values match the reference
// CHECK: OK accumulate: 300 values match the reference
// CHECK: OK unit_batch: 2304 values match the reference

func.func @along_n(%a: tensor<1x300xf32>, %b: tensor<300x1000xf32>) -> tensor<1x1000xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x1000xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x1000xf32>) -> tensor<1x1000xf32>
  %r = linalg.matmul ins(%a, %b : tensor<1x300xf32>, tensor<300x1000xf32>) outs(%f : tensor<1x1000xf32>) -> tensor<1x1000xf32>
  return %r : tensor<1x1000xf32>
}

func.func @along_n_rows(%a: tensor<3x129xf32>, %b: tensor<129x701xf32>) -> tensor<3x701xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x701xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<3x701xf32>) -> tensor<3x701xf32>
  %r = linalg.matmul ins(%a, %b : tensor<3x129xf32>, tensor<129x701xf32>) outs(%f : tensor<3x701xf32>) -> tensor<3x701xf32>
  return %r : tensor<3x701xf32>
}

func.func @along_k(%a: tensor<1x777xf32>, %w: tensor<1000x777xf32>) -> tensor<1x1000xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x1000xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x1000xf32>) -> tensor<1x1000xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
       ins(%a, %w : tensor<1x777xf32>, tensor<1000x777xf32>) outs(%f : tensor<1x1000xf32>) -> tensor<1x1000xf32>
  return %r : tensor<1x1000xf32>
}

func.func @along_k_rows(%a: tensor<3x64xf32>, %w: tensor<337x64xf32>) -> tensor<3x337xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x337xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<3x337xf32>) -> tensor<3x337xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
       ins(%a, %w : tensor<3x64xf32>, tensor<337x64xf32>) outs(%f : tensor<3x337xf32>) -> tensor<3x337xf32>
  return %r : tensor<3x337xf32>
}

func.func @accumulate(%a: tensor<2x50xf32>, %b: tensor<50x150xf32>, %c: tensor<2x150xf32>) -> tensor<2x150xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<2x50xf32>, tensor<50x150xf32>) outs(%c : tensor<2x150xf32>) -> tensor<2x150xf32>
  return %r : tensor<2x150xf32>
}

func.func @unit_batch(%a: tensor<1x1x768xf32>, %b: tensor<1x768x2304xf32>) -> tensor<1x1x2304xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x1x2304xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x1x2304xf32>) -> tensor<1x1x2304xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<1x1x768xf32>, tensor<1x768x2304xf32>) outs(%f : tensor<1x1x2304xf32>) -> tensor<1x1x2304xf32>
  return %r : tensor<1x1x2304xf32>
}
