// RUN: %check_cpu | FileCheck %s
// f32 matmul at an awkward size and at a size that tiles evenly, through
// threads and vectors, against the unoptimized lowering.
// CHECK: OK odd: 903 values match the reference
// CHECK: OK even: 16384 values match the reference

func.func @odd(%a: tensor<7x129xf32>, %b: tensor<129x129xf32>) -> tensor<7x129xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<7x129xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<7x129xf32>) -> tensor<7x129xf32>
  %r = linalg.matmul ins(%a, %b : tensor<7x129xf32>, tensor<129x129xf32>)
                     outs(%f : tensor<7x129xf32>) -> tensor<7x129xf32>
  return %r : tensor<7x129xf32>
}

func.func @even(%a: tensor<128x64xf32>, %b: tensor<64x128xf32>) -> tensor<128x128xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x128xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<128x128xf32>) -> tensor<128x128xf32>
  %r = linalg.matmul ins(%a, %b : tensor<128x64xf32>, tensor<64x128xf32>)
                     outs(%f : tensor<128x128xf32>) -> tensor<128x128xf32>
  return %r : tensor<128x128xf32>
}
