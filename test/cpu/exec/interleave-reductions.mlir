// RUN: %check_cpu | FileCheck %s
// RUN: pb-opt %s --target=cpu-x86-64-v3 --pb-pipeline=s1,s2,s3 --pb-explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// Reductions whose loops carry several partial accumulators and whose
// horizontal step is a tree (pb-interleave-reductions), and divisions by a
// row's value done as multiplications by its reciprocal
// (pb-hoist-reciprocals), compared with the reference pipeline: a row max
// and sum of 1024 (vector loops), a row sum of 200 (192 in vectors, the
// remaining 8 in a scalar loop, both interleaved), a softmax, a mean
// divided by a per-row count, and an integer row max.
// CHECK: OK max_and_sum: 32 values match the reference
// CHECK: OK row_sum_200: 24 values match the reference
// CHECK: OK softmax: 8192 values match the reference
// CHECK: OK divide_by_row: 3200 values match the reference
// CHECK: OK int_row_max: 16 values match the reference
// EXPLAIN: interleave-reductions: {{[1-9][0-9]*}} reduction loops carry partial accumulators for 8 chains in flight
// EXPLAIN: interleave-reductions:

#rows = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>

func.func @max_and_sum(%x: tensor<16x1024xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %r:2 = linalg.generic {indexing_maps = [#rows, #row, #row],
                         iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<16x1024xf32>) outs(%m0, %s0 : tensor<16xf32>, tensor<16xf32>) {
  ^bb0(%v: f32, %m: f32, %s: f32):
    %mm = arith.maxnumf %v, %m : f32
    %ss = arith.addf %v, %s : f32
    linalg.yield %mm, %ss : f32, f32
  } -> (tensor<16xf32>, tensor<16xf32>)
  return %r#0, %r#1 : tensor<16xf32>, tensor<16xf32>
}

func.func @row_sum_200(%x: tensor<24x200xf32>) -> tensor<24xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<24xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e : tensor<24xf32>) -> tensor<24xf32>
  %r = linalg.reduce ins(%x : tensor<24x200xf32>) outs(%s0 : tensor<24xf32>) dimensions = [1]
    (%v: f32, %s: f32) {
      %t = arith.addf %v, %s : f32
      linalg.yield %t : f32
    }
  return %r : tensor<24xf32>
}

func.func @softmax(%x: tensor<8x1024xf32>) -> tensor<8x1024xf32> {
  %e = tensor.empty() : tensor<8x1024xf32>
  %y = linalg.softmax dimension(1) ins(%x : tensor<8x1024xf32>)
                      outs(%e : tensor<8x1024xf32>) -> tensor<8x1024xf32>
  return %y : tensor<8x1024xf32>
}

// Each row divided by the sum of its absolute values plus one.
func.func @divide_by_row(%x: tensor<32x100xf32>) -> tensor<32x100xf32> {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<32xf32>
  %s0 = linalg.fill ins(%one : f32) outs(%e : tensor<32xf32>) -> tensor<32xf32>
  %s = linalg.generic {indexing_maps = [#rows, #row],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<32x100xf32>) outs(%s0 : tensor<32xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %a = math.absf %v : f32
    %t = arith.addf %a, %acc : f32
    linalg.yield %t : f32
  } -> tensor<32xf32>
  %o = tensor.empty() : tensor<32x100xf32>
  %y = linalg.generic {indexing_maps = [#rows, #row, #rows],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : tensor<32x100xf32>, tensor<32xf32>) outs(%o : tensor<32x100xf32>) {
  ^bb0(%v: f32, %d: f32, %out: f32):
    %q = arith.divf %v, %d : f32
    linalg.yield %q : f32
  } -> tensor<32x100xf32>
  return %y : tensor<32x100xf32>
}

func.func @int_row_max(%x: tensor<16x256xi32>) -> tensor<16xi32> {
  %min = arith.constant -2147483648 : i32
  %e = tensor.empty() : tensor<16xi32>
  %m0 = linalg.fill ins(%min : i32) outs(%e : tensor<16xi32>) -> tensor<16xi32>
  %r = linalg.reduce ins(%x : tensor<16x256xi32>) outs(%m0 : tensor<16xi32>) dimensions = [1]
    (%v: i32, %m: i32) {
      %t = arith.maxsi %v, %m : i32
      linalg.yield %t : i32
    }
  return %r : tensor<16xi32>
}
