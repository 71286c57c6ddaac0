// RUN: pb-opt %s --split-input-file --pb-hoist-invariants | FileCheck %s

// A batch norm over NHWC: 1 / sqrt(var + eps) varies with the channel only
// (49 repeats per value): it becomes a generic over the channel loop at
// the start of the function, which the norm reads as a new input
// broadcast along n, h, w. The subtraction and products stay.
// CHECK-LABEL: func.func @batch_norm
// CHECK-NOT: linalg.generic
// CHECK: %[[E:.*]] = tensor.empty() : tensor<8xf32>
// CHECK-NEXT: %[[INV:.*]] = linalg.generic {indexing_maps = [#[[ID1:.*]], #[[ID1]]], iterator_types = ["parallel"]} ins(%arg2 : tensor<8xf32>) outs(%[[E]] : tensor<8xf32>)
// CHECK: arith.addf
// CHECK-NEXT: math.sqrt
// CHECK-NEXT: arith.divf
// CHECK-NEXT: linalg.yield
// CHECK: linalg.generic {{.*}} ins(%arg0, %arg1, %arg2, %[[INV]] : {{.*}})
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %[[M:.*]]: f32, %{{.*}}: f32, %[[I:.*]]: f32, %{{.*}}: f32):
// CHECK-NOT: math.sqrt
// CHECK: %[[D:.*]] = arith.subf %[[X]], %[[M]]
// CHECK-NEXT: arith.mulf %[[D]], %[[I]]
#x = affine_map<(n, h, w, c) -> (n, h, w, c)>
#c = affine_map<(n, h, w, c) -> (c)>
func.func @batch_norm(%x: tensor<1x7x7x8xf32>, %mean: tensor<8xf32>, %var: tensor<8xf32>) -> tensor<1x7x7x8xf32> {
  %eps = arith.constant 1.0e-5 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<1x7x7x8xf32>
  %r = linalg.generic {indexing_maps = [#x, #c, #c, #x], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %mean, %var : tensor<1x7x7x8xf32>, tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<1x7x7x8xf32>) {
  ^bb0(%in: f32, %m: f32, %v: f32, %out: f32):
    %s = arith.addf %v, %eps : f32
    %q = math.sqrt %s : f32
    %i = arith.divf %one, %q : f32
    %d = arith.subf %in, %m : f32
    %o = arith.mulf %d, %i : f32
    linalg.yield %o : f32
  } -> tensor<1x7x7x8xf32>
  return %r : tensor<1x7x7x8xf32>
}

// -----

// The per-row statistic is a computed value (a row sum): the new generic
// goes right after it, over the row loop, with the row index from
// linalg.index renumbered.
// CHECK-LABEL: func.func @per_row
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: %[[R:.*]] = linalg.generic {{.*}}iterator_types = ["parallel"]} ins(%[[SUM]] : tensor<4xf32>)
// CHECK: linalg.index 0 : index
// CHECK: math.exp
// CHECK: linalg.generic {{.*}} ins(%arg0, %[[SUM]], %[[R]] : {{.*}})
// CHECK-NOT: math.exp
// CHECK: return
#rc = affine_map<(i, j) -> (i, j)>
#r = affine_map<(i, j) -> (i)>
func.func @per_row(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %z = arith.constant 0.0 : f32
  %se = tensor.empty() : tensor<4xf32>
  %sf = linalg.fill ins(%z : f32) outs(%se : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#rc, #r], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x64xf32>) outs(%sf : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.addf %in, %acc : f32
    linalg.yield %a : f32
  } -> tensor<4xf32>
  %e = tensor.empty() : tensor<4x64xf32>
  %r = linalg.generic {indexing_maps = [#rc, #r, #rc], iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum : tensor<4x64xf32>, tensor<4xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i32
    %fi = arith.sitofp %ii : i32 to f32
    %t = arith.addf %s, %fi : f32
    %ex = math.exp %t : f32
    %o = arith.mulf %in, %ex : f32
    linalg.yield %o : f32
  } -> tensor<4x64xf32>
  return %r : tensor<4x64xf32>
}

// -----

// Not moved: a cheap subexpression (no division or math op), and an
// expensive one repeated fewer than 8 times per value (4 rows).
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-2: linalg.generic
// CHECK-NOT: linalg.generic
// CHECK: return
#rc = affine_map<(i, j) -> (i, j)>
#r = affine_map<(i, j) -> (i)>
func.func @kept(%x: tensor<4x64xf32>, %a: tensor<4xf32>, %b: tensor<64xf32>) -> (tensor<4x64xf32>, tensor<4x64xf32>) {
  %e = tensor.empty() : tensor<4x64xf32>
  %cheap = linalg.generic {indexing_maps = [#rc, #r, #rc], iterator_types = ["parallel", "parallel"]}
      ins(%x, %a : tensor<4x64xf32>, tensor<4xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %t = arith.mulf %s, %s : f32
    %o = arith.addf %in, %t : f32
    linalg.yield %o : f32
  } -> tensor<4x64xf32>
  %few = linalg.generic {indexing_maps = [#rc, affine_map<(i, j) -> (j)>, #rc], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : tensor<4x64xf32>, tensor<64xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %t = math.exp %s : f32
    %o = arith.addf %in, %t : f32
    linalg.yield %o : f32
  } -> tensor<4x64xf32>
  return %cheap, %few : tensor<4x64xf32>, tensor<4x64xf32>
}

// -----

// An index computed by a division (nearest upsampling's source row h / 2)
// is not floating point: it stays in the body.
// CHECK-LABEL: func.func @index_division
// CHECK-COUNT-1: linalg.generic
// CHECK-NOT: linalg.generic
// CHECK: arith.divui
// CHECK: return
func.func @index_division(%x: tensor<4x64xf32>) -> tensor<8x64xf32> {
  %c2 = arith.constant 2 : index
  %e = tensor.empty() : tensor<8x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<8x64xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %h = arith.divui %i, %c2 : index
    %v = tensor.extract %x[%h, %j] : tensor<4x64xf32>
    linalg.yield %v : f32
  } -> tensor<8x64xf32>
  return %r : tensor<8x64xf32>
}

// -----

// A value that varies with no loop (an optimizer's bias correction,
// 1 - beta ** step, from a 0-d step tensor) is computed once, by a 0-d
// generic, not once per element of the parameter it scales.
// CHECK-LABEL: func.func @zero_d
// CHECK: %[[E:.*]] = tensor.empty() : tensor<f32>
// CHECK-NEXT: %[[C:.*]] = linalg.generic {indexing_maps = [#[[S:.*]], #[[S]]], iterator_types = []} ins(%arg1 : tensor<f32>) outs(%[[E]] : tensor<f32>)
// CHECK: math.powf
// CHECK-NEXT: arith.subf
// CHECK-NEXT: linalg.yield
// CHECK: linalg.generic {{.*}} ins(%arg0, %arg1, %[[C]] : {{.*}})
// CHECK-NOT: math.powf
// CHECK: arith.divf
#p = affine_map<(i, j) -> (i, j)>
#s = affine_map<(i, j) -> ()>
func.func @zero_d(%p: tensor<16x32xf32>, %step: tensor<f32>) -> tensor<16x32xf32> {
  %beta = arith.constant 0.9 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<16x32xf32>
  %r = linalg.generic {indexing_maps = [#p, #s, #p], iterator_types = ["parallel", "parallel"]}
      ins(%p, %step : tensor<16x32xf32>, tensor<f32>) outs(%e : tensor<16x32xf32>) {
  ^bb0(%x: f32, %t: f32, %out: f32):
    %b = math.powf %beta, %t : f32
    %c = arith.subf %one, %b : f32
    %o = arith.divf %x, %c : f32
    linalg.yield %o : f32
  } -> tensor<16x32xf32>
  return %r : tensor<16x32xf32>
}
