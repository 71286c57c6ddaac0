// RUN: pb-opt %s --split-input-file --pb-pad-in-place | FileCheck %s

// The frontends' padding of an elementwise result: the generic writes the
// interior of the padded tensor (the copy goes) and only the four border
// slices are filled, on a tensor.empty of the pad's own.
// CHECK-LABEL: func.func @producer_writes_interior
// CHECK-NOT: linalg.copy
// CHECK: %[[E:.*]] = tensor.empty() : tensor<1x6x6x8xf32>
// CHECK-NEXT: %[[T:.*]] = tensor.extract_slice %[[E]][0, 0, 0, 0] [1, 1, 6, 8]
// CHECK: %[[TF:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[T]] : tensor<1x1x6x8xf32>)
// CHECK: %[[E1:.*]] = tensor.insert_slice %[[TF]] into %[[E]][0, 0, 0, 0] [1, 1, 6, 8]
// CHECK: tensor.extract_slice %[[E1]][0, 5, 0, 0] [1, 1, 6, 8]
// CHECK: %[[E2:.*]] = tensor.insert_slice %{{.*}} into %[[E1]][0, 5, 0, 0] [1, 1, 6, 8]
// CHECK: tensor.extract_slice %[[E2]][0, 1, 0, 0] [1, 4, 1, 8]
// CHECK: %[[E3:.*]] = tensor.insert_slice %{{.*}} into %[[E2]][0, 1, 0, 0] [1, 4, 1, 8]
// CHECK: tensor.extract_slice %[[E3]][0, 1, 5, 0] [1, 4, 1, 8]
// CHECK: %[[E4:.*]] = tensor.insert_slice %{{.*}} into %[[E3]][0, 1, 5, 0] [1, 4, 1, 8]
// CHECK-NOT: linalg.fill
// CHECK: %[[S:.*]] = tensor.extract_slice %[[E4]][0, 1, 1, 0] [1, 4, 4, 8]
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<1x4x4x8xf32>) outs(%[[S]] : tensor<1x4x4x8xf32>)
// CHECK: %[[P:.*]] = tensor.insert_slice %[[R]] into %[[E4]][0, 1, 1, 0] [1, 4, 4, 8]
// CHECK: return %[[P]]
#id = affine_map<(n, h, w, c) -> (n, h, w, c)>
func.func @producer_writes_interior(%x: tensor<1x4x4x8xf32>) -> tensor<1x6x6x8xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x4x8xf32>
  %relu = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x4x4x8xf32>) outs(%e : tensor<1x4x4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %z : f32
    linalg.yield %m : f32
  } -> tensor<1x4x4x8xf32>
  %pe = tensor.empty() : tensor<1x6x6x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%pe : tensor<1x6x6x8xf32>) -> tensor<1x6x6x8xf32>
  %s = tensor.extract_slice %f[0, 1, 1, 0] [1, 4, 4, 8] [1, 1, 1, 1] : tensor<1x6x6x8xf32> to tensor<1x4x4x8xf32>
  %c = linalg.copy ins(%relu : tensor<1x4x4x8xf32>) outs(%s : tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %p = tensor.insert_slice %c into %f[0, 1, 1, 0] [1, 4, 4, 8] [1, 1, 1, 1] : tensor<1x4x4x8xf32> into tensor<1x6x6x8xf32>
  return %p : tensor<1x6x6x8xf32>
}

// -----

// A function argument has no producer to write the interior: the copy
// stays; two pads share one fill (CSE): each gets its own padded tensor,
// filled on the padded side only (rows 0 and 5), and the shared fill goes.
// CHECK-LABEL: func.func @shared_fill
// CHECK-COUNT-2: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x8xf32>)
// CHECK: linalg.copy ins(%arg0
// CHECK-COUNT-2: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x8xf32>)
// CHECK: linalg.copy ins(%arg1
// CHECK-NOT: linalg.fill
func.func @shared_fill(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<6x8xf32>, tensor<6x8xf32>) {
  %z = arith.constant 0.0 : f32
  %pe = tensor.empty() : tensor<6x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%pe : tensor<6x8xf32>) -> tensor<6x8xf32>
  %s = tensor.extract_slice %f[1, 0] [4, 8] [1, 1] : tensor<6x8xf32> to tensor<4x8xf32>
  %c = linalg.copy ins(%x : tensor<4x8xf32>) outs(%s : tensor<4x8xf32>) -> tensor<4x8xf32>
  %p = tensor.insert_slice %c into %f[1, 0] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<6x8xf32>
  %s2 = tensor.extract_slice %f[1, 0] [4, 8] [1, 1] : tensor<6x8xf32> to tensor<4x8xf32>
  %c2 = linalg.copy ins(%y : tensor<4x8xf32>) outs(%s2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %p2 = tensor.insert_slice %c2 into %f[1, 0] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<6x8xf32>
  return %p, %p2 : tensor<6x8xf32>, tensor<6x8xf32>
}

// -----

// The producer reads its destination (an accumulation): it cannot write
// the interior, the copy stays. The interior is still not filled: the copy
// does not read it.
// CHECK-LABEL: func.func @producer_reads_init
// CHECK: %[[ACC:.*]] = linalg.generic
// CHECK: linalg.copy ins(%[[ACC]]
// CHECK-LABEL: func.func @interior_read
#a = affine_map<(i, j) -> (i, j)>
func.func @producer_reads_init(%x: tensor<4x8xf32>, %acc: tensor<4x8xf32>) -> tensor<6x8xf32> {
  %z = arith.constant 0.0 : f32
  %sum = linalg.generic {indexing_maps = [#a, #a], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%acc : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = arith.addf %in, %out : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %pe = tensor.empty() : tensor<6x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%pe : tensor<6x8xf32>) -> tensor<6x8xf32>
  %s = tensor.extract_slice %f[1, 0] [4, 8] [1, 1] : tensor<6x8xf32> to tensor<4x8xf32>
  %c = linalg.copy ins(%sum : tensor<4x8xf32>) outs(%s : tensor<4x8xf32>) -> tensor<4x8xf32>
  %p = tensor.insert_slice %c into %f[1, 0] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<6x8xf32>
  return %p : tensor<6x8xf32>
}

// A writer that reads the fill's interior (an accumulation into the
// slice): the whole fill stays.
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<6x8xf32>)
// CHECK: tensor.extract_slice %[[F]][1, 0] [4, 8] [1, 1]
// CHECK-NOT: linalg.fill
func.func @interior_read(%x: tensor<4x8xf32>) -> tensor<6x8xf32> {
  %z = arith.constant 0.0 : f32
  %pe = tensor.empty() : tensor<6x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%pe : tensor<6x8xf32>) -> tensor<6x8xf32>
  %s = tensor.extract_slice %f[1, 0] [4, 8] [1, 1] : tensor<6x8xf32> to tensor<4x8xf32>
  %sum = linalg.generic {indexing_maps = [#a, #a], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%s : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = arith.addf %in, %out : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %p = tensor.insert_slice %sum into %f[1, 0] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<6x8xf32>
  return %p : tensor<6x8xf32>
}

// -----

// Two pads of one shape as CSE leaves them: one fill and one extract_slice
// of its interior, written by both pads' copies (MobileNetV2's depthwise
// inputs at batch 8). Each copy gets a slice of its own, then each pad its
// own padded tensor; both producers write their interiors and no copy and
// no fill of the whole padded tensor is left.
// CHECK-LABEL: func.func @shared_slice
// CHECK-NOT: linalg.copy
// CHECK-NOT: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<6x8xf32>)
// CHECK-DAG: %[[S1:.*]] = tensor.extract_slice %[[P1:.*]][1, 0] [4, 8] [1, 1] : tensor<6x8xf32> to tensor<4x8xf32>
// CHECK-DAG: %[[S2:.*]] = tensor.extract_slice %[[P2:.*]][1, 0] [4, 8] [1, 1] : tensor<6x8xf32> to tensor<4x8xf32>
// CHECK-DAG: linalg.generic {{.*}} ins(%arg0 : tensor<4x8xf32>) outs(%[[S2]] : tensor<4x8xf32>)
// CHECK-DAG: linalg.generic {{.*}} ins(%arg1 : tensor<4x8xf32>) outs(%[[S1]] : tensor<4x8xf32>)
// CHECK-NOT: linalg.copy
#id2 = affine_map<(i, j) -> (i, j)>
func.func @shared_slice(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<6x8xf32>, tensor<6x8xf32>) {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %rx = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %z : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %pe = tensor.empty() : tensor<6x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%pe : tensor<6x8xf32>) -> tensor<6x8xf32>
  %s = tensor.extract_slice %f[1, 0] [4, 8] [1, 1] : tensor<6x8xf32> to tensor<4x8xf32>
  %c = linalg.copy ins(%rx : tensor<4x8xf32>) outs(%s : tensor<4x8xf32>) -> tensor<4x8xf32>
  %p = tensor.insert_slice %c into %f[1, 0] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<6x8xf32>
  %ry = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %z : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %c2 = linalg.copy ins(%ry : tensor<4x8xf32>) outs(%s : tensor<4x8xf32>) -> tensor<4x8xf32>
  %p2 = tensor.insert_slice %c2 into %f[1, 0] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<6x8xf32>
  return %p, %p2 : tensor<6x8xf32>, tensor<6x8xf32>
}
