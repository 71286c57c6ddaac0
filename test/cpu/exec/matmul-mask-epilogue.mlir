// RUN: %check_cpu | FileCheck %s
// RUN: pb-opt %s --target=cpu-x86-64-v3 --pb-pipeline=s1,s2,s3 --pb-explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// Attention scores with a boolean mask applied after the product (as
// GPT-2's causal mask): an i1 buffer holds a byte per element, so the
// micro-kernel must not read it with vector<Nxi1> loads. The epilogue stays
// a separate loop nest (it gave wrong scores when fused).
// CHECK: OK masked: 3072 values match the reference
// EXPLAIN: matrix units: linalg.matmul MxNxK 48x64x32
// EXPLAIN-NOT: epilogue of
#id = affine_map<(i, j) -> (i, j)>
func.func @masked(%a: tensor<48x32xf32>, %b: tensor<32x64xf32>, %mask: tensor<48x64xi1>) -> tensor<48x64xf32> {
  %z = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<48x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<48x64xf32>) -> tensor<48x64xf32>
  %m = linalg.matmul ins(%a, %b : tensor<48x32xf32>, tensor<32x64xf32>) outs(%f : tensor<48x64xf32>) -> tensor<48x64xf32>
  %e2 = tensor.empty() : tensor<48x64xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m, %mask : tensor<48x64xf32>, tensor<48x64xi1>) outs(%e2 : tensor<48x64xf32>) {
  ^bb0(%x: f32, %k: i1, %o: f32):
    %s = arith.select %k, %z, %ninf : f32
    %v = arith.addf %x, %s : f32
    linalg.yield %v : f32
  } -> tensor<48x64xf32>
  return %r : tensor<48x64xf32>
}
