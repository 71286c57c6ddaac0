// RUN: pb-opt %s --split-input-file --pb-check-input-contract | FileCheck %s

// A matmul on static tensors is inside the contract and left unchanged.
// CHECK-LABEL: func.func @inside
// CHECK: linalg.matmul

func.func @inside(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>,
                  %c: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x2xf32>)
                     outs(%c : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %r : tensor<4x2xf32>
}

// -----

// Dynamic dimensions named by pb.dim_args, index size arguments and
// dynamically shaped values inside are inside the contract.
// CHECK-LABEL: func.func @dynamic
// CHECK: linalg.matmul
func.func @dynamic(%a: tensor<?x8xf32> {pb.dim_args = array<i64: 2, -1>},
                   %b: tensor<8x2xf32>, %m: index)
    -> (tensor<?x2xf32> {pb.dim_args = array<i64: 2, -1>}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%m) : tensor<?x2xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<?x2xf32>) -> tensor<?x2xf32>
  %r = linalg.matmul ins(%a, %b : tensor<?x8xf32>, tensor<8x2xf32>)
                     outs(%c : tensor<?x2xf32>) -> tensor<?x2xf32>
  return %r : tensor<?x2xf32>
}
