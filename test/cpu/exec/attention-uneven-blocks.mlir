// RUN: %check_cpu | FileCheck %s
// RUN: pb-opt %s --target=cpu-x86-64-v3 --pb-pipeline=s1,s2,s3 --pb-explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// softmax(q @ k^T * scale) @ v over four heads of 17 tokens: the eight
// tasks cut each head's 17 query rows into blocks of 9, which do not divide
// them. The rows after the last full block are a block of their own, in a
// second parallel loop, so that every block is static (a shorter last
// block bounded S2's loops by a value computed in the task, and the module
// did not compile) and no two tasks write the same rows (a last block moved
// up to row 8 zeroed and accumulated row 8 while its predecessor did: the
// outputs changed from run to run).
// CHECK: OK attention: 1088 values match the reference
// EXPLAIN: fuse-attention: q @ k^T, 5 ops of the softmax and @ v in two parallel loops: 4 batch x 1 block of 9 rows, then 4 batch x the last 8 rows (17 keys;
// EXPLAIN: matrix units: linalg.batch_matmul MxNxK 9x17x16 {{.*}}inside a task of the enclosing loop
// EXPLAIN: matrix units: linalg.batch_matmul MxNxK 9x16x17 {{.*}}inside a task of the enclosing loop
// EXPLAIN: matrix units: linalg.batch_matmul MxNxK 8x17x16 {{.*}}inside a task of the enclosing loop
// EXPLAIN: matrix units: linalg.batch_matmul MxNxK 8x16x17 {{.*}}inside a task of the enclosing loop
#bmn = affine_map<(b, i, j) -> (b, i, j)>
#bm = affine_map<(b, i, j) -> (b, i)>
func.func @attention(%q: tensor<4x17x16xf32>, %kt: tensor<4x16x17xf32>,
                     %v: tensor<4x17x16xf32>) -> tensor<4x17x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant -1.0e+30 : f32
  %scale = arith.constant 0.25 : f32
  %e3 = tensor.empty() : tensor<4x17x17xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<4x17x17xf32>) -> tensor<4x17x17xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<4x17x16xf32>, tensor<4x16x17xf32>)
      outs(%f3 : tensor<4x17x17xf32>) -> tensor<4x17x17xf32>
  %ss = linalg.generic {indexing_maps = [#bmn, #bmn], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<4x17x17xf32>) outs(%e3 : tensor<4x17x17xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %scale : f32
    linalg.yield %y : f32
  } -> tensor<4x17x17xf32>
  %e2 = tensor.empty() : tensor<4x17xf32>
  %fm = linalg.fill ins(%ninf : f32) outs(%e2 : tensor<4x17xf32>) -> tensor<4x17xf32>
  %max = linalg.generic {indexing_maps = [#bmn, #bm], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%ss : tensor<4x17x17xf32>) outs(%fm : tensor<4x17xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %m = arith.maximumf %acc, %x : f32
    linalg.yield %m : f32
  } -> tensor<4x17xf32>
  %exp = linalg.generic {indexing_maps = [#bmn, #bm, #bmn], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ss, %max : tensor<4x17x17xf32>, tensor<4x17xf32>) outs(%e3 : tensor<4x17x17xf32>) {
  ^bb0(%x: f32, %m: f32, %o: f32):
    %d = arith.subf %x, %m : f32
    %y = math.exp %d : f32
    linalg.yield %y : f32
  } -> tensor<4x17x17xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x17xf32>) -> tensor<4x17xf32>
  %sum = linalg.generic {indexing_maps = [#bmn, #bm], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%exp : tensor<4x17x17xf32>) outs(%fs : tensor<4x17xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %a = arith.addf %acc, %x : f32
    linalg.yield %a : f32
  } -> tensor<4x17xf32>
  %p = linalg.generic {indexing_maps = [#bmn, #bm, #bmn], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%exp, %sum : tensor<4x17x17xf32>, tensor<4x17xf32>) outs(%e3 : tensor<4x17x17xf32>) {
  ^bb0(%x: f32, %t: f32, %o: f32):
    %y = arith.divf %x, %t : f32
    linalg.yield %y : f32
  } -> tensor<4x17x17xf32>
  %eo = tensor.empty() : tensor<4x17x16xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x17x16xf32>) -> tensor<4x17x16xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<4x17x17xf32>, tensor<4x17x16xf32>)
      outs(%fo : tensor<4x17x16xf32>) -> tensor<4x17x16xf32>
  return %o : tensor<4x17x16xf32>
}
