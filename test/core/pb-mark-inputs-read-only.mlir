// RUN: pb-opt %s --pb-mark-inputs-read-only | FileCheck %s

// Tensor arguments of public functions become read-only for bufferization;
// private functions are left alone.
// CHECK-LABEL: func.func @entry(%{{.*}}: tensor<4xf32> {bufferization.writable = false}, %{{.*}}: tensor<4xf32> {bufferization.writable = false})
func.func @entry(%a: tensor<4xf32>, %c: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.add ins(%a, %a : tensor<4xf32>, tensor<4xf32>)
                  outs(%c : tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// CHECK-LABEL: func.func private @helper(%{{.*}}: tensor<4xf32>) -> tensor<4xf32>
func.func private @helper(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}

// An argument that a result updates in place (pb.in_place) is writable:
// bufferization may write the update into its buffer.
// CHECK-LABEL: func.func @update(%{{.*}}: tensor<8x4xf32> {bufferization.writable = true}, %{{.*}}: tensor<1x4xf32> {bufferization.writable = false})
func.func @update(%cache: tensor<8x4xf32>, %row: tensor<1x4xf32>) -> (tensor<8x4xf32> {pb.in_place = 0 : i64}) {
  %r = tensor.insert_slice %row into %cache[3, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}
