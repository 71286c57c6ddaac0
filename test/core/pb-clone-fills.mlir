// RUN: pb-opt %s --split-input-file --pb-clone-fills | FileCheck %s
// RUN: pb-opt %s --split-input-file --pb-clone-fills --mlir-print-debuginfo | FileCheck %s --check-prefix=LOC

// A fill with two users: the second gets its own fill of its own empty
// tensor (one buffer each after bufferization), right before it.
// CHECK-LABEL: func.func @shared
// CHECK: %[[E:.*]] = tensor.empty() : tensor<8x8xf32>
// CHECK: %[[F1:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<8x8xf32>)
// CHECK: linalg.matmul ins(%arg0, %arg1 : {{.*}}) outs(%[[F1]] : tensor<8x8xf32>)
// CHECK: %[[E2:.*]] = tensor.empty() : tensor<8x8xf32>
// CHECK-NEXT: %[[F2:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E2]] : tensor<8x8xf32>)
// CHECK-NEXT: linalg.matmul ins(%arg1, %arg0 : {{.*}}) outs(%[[F2]] : tensor<8x8xf32>)
func.func @shared(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %x = linalg.matmul ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%f : tensor<8x8xf32>) -> tensor<8x8xf32>
  %y = linalg.matmul ins(%b, %a : tensor<8x8xf32>, tensor<8x8xf32>) outs(%f : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %x, %y : tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// A fill with one user stays as it is.
// CHECK-LABEL: func.func @single
// CHECK-COUNT-1: linalg.fill
// CHECK-NOT: linalg.fill
func.func @single(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %x = linalg.matmul ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%f : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %x : tensor<8x8xf32>
}

// -----

// A padded tensor: the fill's interior is extracted, written and inserted
// back. Those two uses stay on the fill (bufferized in place: one buffer
// filled once); the matmul gets its own fill.
// CHECK-LABEL: func.func @padded
// CHECK: %[[F:.*]] = linalg.fill
// CHECK: %[[S:.*]] = tensor.extract_slice %[[F]][1, 1] [6, 6] [1, 1]
// CHECK: %[[C:.*]] = linalg.copy ins(%arg0 : tensor<6x6xf32>) outs(%[[S]] : tensor<6x6xf32>)
// CHECK: %[[P:.*]] = tensor.insert_slice %[[C]] into %[[F]][1, 1] [6, 6] [1, 1]
// CHECK: %[[F2:.*]] = linalg.fill
// CHECK-NEXT: linalg.matmul ins(%[[P]], %[[P]] : {{.*}}) outs(%[[F2]] : tensor<8x8xf32>)
func.func @padded(%a: tensor<6x6xf32>) -> tensor<8x8xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %s = tensor.extract_slice %f[1, 1] [6, 6] [1, 1] : tensor<8x8xf32> to tensor<6x6xf32>
  %c = linalg.copy ins(%a : tensor<6x6xf32>) outs(%s : tensor<6x6xf32>) -> tensor<6x6xf32>
  %p = tensor.insert_slice %c into %f[1, 1] [6, 6] [1, 1] : tensor<6x6xf32> into tensor<8x8xf32>
  %x = linalg.matmul ins(%p, %p : tensor<8x8xf32>, tensor<8x8xf32>) outs(%f : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %x : tensor<8x8xf32>
}

// -----

// A clone takes its user's location, not the shared fill's (which CSE
// took from the first of the fills it merged): the kernels S3 fuses from a
// fill and its user then name the user.
// LOC-LABEL: func.func @located
// LOC: linalg.fill {{.*}} loc(#[[FILL:loc[0-9]*]])
// LOC: linalg.matmul {{.*}} loc(#[[FIRST:loc[0-9]*]])
// LOC: tensor.empty() {{.*}} loc(#[[SECOND:loc[0-9]*]])
// LOC-NEXT: linalg.fill {{.*}} loc(#[[SECOND]])
// LOC-NEXT: linalg.matmul {{.*}} loc(#[[SECOND]])
// LOC-DAG: #[[FILL]] = loc("fill":1:1)
// LOC-DAG: #[[SECOND]] = loc("second":3:1)
func.func @located(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x8xf32> loc("fill":1:1)
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32> loc("fill":1:1)
  %x = linalg.matmul ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%f : tensor<8x8xf32>) -> tensor<8x8xf32> loc("first":2:1)
  %y = linalg.matmul ins(%b, %a : tensor<8x8xf32>, tensor<8x8xf32>) outs(%f : tensor<8x8xf32>) -> tensor<8x8xf32> loc("second":3:1)
  return %x, %y : tensor<8x8xf32>, tensor<8x8xf32>
}
