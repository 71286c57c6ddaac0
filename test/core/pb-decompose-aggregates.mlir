// RUN: pb-opt --pass-pipeline="builtin.module(func.func(pb-decompose-aggregates))" %s | FileCheck %s

// linalg.softmax becomes a max reduction, exp of the difference, a sum
// reduction and a division.
// CHECK-LABEL: func.func @softmax
// CHECK-NOT: linalg.softmax
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: arith.maxnumf
// CHECK: math.exp
// CHECK: arith.addf
// CHECK: arith.divf
func.func @softmax(%x: tensor<2x16xf32>) -> tensor<2x16xf32> {
  %e = tensor.empty() : tensor<2x16xf32>
  %y = linalg.softmax dimension(1) ins(%x : tensor<2x16xf32>)
                      outs(%e : tensor<2x16xf32>) -> tensor<2x16xf32>
  return %y : tensor<2x16xf32>
}
