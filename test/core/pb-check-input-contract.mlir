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
