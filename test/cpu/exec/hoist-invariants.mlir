// RUN: %check_cpu | FileCheck %s
// RUN: pb-opt %s --target=cpu-host --pb-pipeline=s1 | FileCheck %s --check-prefix=S1
// A batch norm with ReLU over NHWC (1 / sqrt(var + eps) per channel) and a
// row-wise scale exp(sum + row index) per row: pb-hoist-invariants computes
// each once per channel or row (S1 shows one math op per hoisted generic,
// none in the elementwise bodies); the reference pipeline leaves the
// rewrite out.
// S1-LABEL: func.func @batch_norm
// S1: iterator_types = ["parallel"]
// S1-NEXT: ^bb0
// S1-NEXT: math.absf
// S1-NEXT: arith.addf
// S1-NEXT: math.sqrt
// S1: iterator_types = ["parallel", "parallel", "parallel", "parallel"]
// S1-NOT: math.sqrt
// S1-LABEL: func.func @per_row
// CHECK: OK batch_norm: 6160 values match the reference
// CHECK: OK per_row: 1200 values match the reference
#x = affine_map<(n, h, w, c) -> (n, h, w, c)>
#c = affine_map<(n, h, w, c) -> (c)>
func.func @batch_norm(%x: tensor<2x7x11x40xf32>, %mean: tensor<40xf32>, %var: tensor<40xf32>,
                      %gamma: tensor<40xf32>, %beta: tensor<40xf32>) -> tensor<2x7x11x40xf32> {
  %eps = arith.constant 1.0e-5 : f32
  %one = arith.constant 1.0 : f32
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x7x11x40xf32>
  %r = linalg.generic {indexing_maps = [#x, #c, #c, #c, #c, #x], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %mean, %var, %gamma, %beta : tensor<2x7x11x40xf32>, tensor<40xf32>, tensor<40xf32>, tensor<40xf32>, tensor<40xf32>)
      outs(%e : tensor<2x7x11x40xf32>) {
  ^bb0(%in: f32, %m: f32, %v: f32, %g: f32, %b: f32, %out: f32):
    %va = math.absf %v : f32
    %s = arith.addf %va, %eps : f32
    %q = math.sqrt %s : f32
    %i = arith.divf %one, %q : f32
    %d = arith.subf %in, %m : f32
    %n = arith.mulf %d, %i : f32
    %y = arith.mulf %n, %g : f32
    %t = arith.addf %y, %b : f32
    %relu = arith.maximumf %t, %z : f32
    linalg.yield %relu : f32
  } -> tensor<2x7x11x40xf32>
  return %r : tensor<2x7x11x40xf32>
}

#rc = affine_map<(i, j) -> (i, j)>
#r = affine_map<(i, j) -> (i)>
func.func @per_row(%x: tensor<12x100xf32>) -> tensor<12x100xf32> {
  %z = arith.constant 0.0 : f32
  %scale = arith.constant 0.01 : f32
  %se = tensor.empty() : tensor<12xf32>
  %sf = linalg.fill ins(%z : f32) outs(%se : tensor<12xf32>) -> tensor<12xf32>
  %sum = linalg.generic {indexing_maps = [#rc, #r], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<12x100xf32>) outs(%sf : tensor<12xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.addf %in, %acc : f32
    linalg.yield %a : f32
  } -> tensor<12xf32>
  %e = tensor.empty() : tensor<12x100xf32>
  %r = linalg.generic {indexing_maps = [#rc, #r, #rc], iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum : tensor<12x100xf32>, tensor<12xf32>) outs(%e : tensor<12x100xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i32
    %fi = arith.sitofp %ii : i32 to f32
    %ss = arith.mulf %s, %scale : f32
    %t = arith.addf %ss, %fi : f32
    %ex = math.exp %t : f32
    %o = arith.divf %in, %ex : f32
    linalg.yield %o : f32
  } -> tensor<12x100xf32>
  return %r : tensor<12x100xf32>
}
