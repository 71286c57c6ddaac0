// RUN: %check_cpu | FileCheck %s
// RUN: pb-opt %s --target=cpu-x86-64-v3 --pb-pipeline=s1,s2,s3 | FileCheck %s --check-prefix=S3
// RUN: pb-opt %s --target=cpu-x86-64-v3 --pb-pipeline=s1,s2,s3 --pb-explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// A matmul with a SiLU epilogue (x / (1 + exp(-x)) after a bias): the
// epilogue has a math function, so the micro-kernel stores its tile's sums
// to a small buffer and applies the epilogue in a loop over the tile's
// rows. M = 37 and N = 45 leave edge tiles in both dimensions (the masked
// path, with rows past M skipped).
// CHECK: OK matmul_silu: 1665 values match the reference
// EXPLAIN: register tile 6x16
// EXPLAIN: epilogue of 5 ops fused into the micro-kernel's final stores, applied by a loop over the tile's rows
// The code has NR / lanes = 2 copies of exp in each of the full and the
// edge paths, not MR x NR / lanes = 12:
// S3-LABEL: func.func @matmul_silu
// S3-COUNT-4: math.exp
// S3-NOT: math.exp
// S3: return
#mk = affine_map<(m, n) -> (m, n)>
#n = affine_map<(m, n) -> (n)>
func.func @matmul_silu(%a: tensor<37x64xf32>, %b: tensor<64x45xf32>,
                       %bias: tensor<45xf32>) -> tensor<37x45xf32> {
  %z = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<37x45xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<37x45xf32>) -> tensor<37x45xf32>
  %c = linalg.matmul ins(%a, %b : tensor<37x64xf32>, tensor<64x45xf32>)
                     outs(%f : tensor<37x45xf32>) -> tensor<37x45xf32>
  %r = linalg.generic {indexing_maps = [#mk, #n, #mk],
                       iterator_types = ["parallel", "parallel"]}
       ins(%c, %bias : tensor<37x45xf32>, tensor<45xf32>) outs(%e : tensor<37x45xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    %n = arith.negf %s : f32
    %x2 = math.exp %n : f32
    %d = arith.addf %one, %x2 : f32
    %q = arith.divf %s, %d : f32
    linalg.yield %q : f32
  } -> tensor<37x45xf32>
  return %r : tensor<37x45xf32>
}
