// RUN: %check_cpu | FileCheck %s
// RUN: pb-opt %s --target=cpu-x86-64-v3 --pb-pipeline=s1,s2,s3 --pb-explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: pb-compile %s --target=cpu-host --options=fusion=0 -o %t.nofuse && pb-run %t.nofuse --check-against=%t.opt | FileCheck %s
// Masked attention, softmax(q @ k^T + mask) @ v, over 1024 keys: a row of
// scores and one of probabilities take 8 KiB, so pb-fuse-attention cuts
// the 300 queries into blocks (the last one shorter), each computing its
// scores, softmax and @ v in one task. The mask is built from the row and
// column indices, which the blocks must offset. Checked against the
// reference pipeline and against the same module without fusion.
// CHECK: OK attention: 9600 values match the reference
// EXPLAIN: fuse-attention: q @ k^T, {{[0-9]}} ops of the softmax and @ v in one parallel loop of 20 tasks: 2 batch x 10 blocks of 30 rows (1024 keys; 'l2' holds 32 rows
// EXPLAIN: matrix units: linalg.batch_matmul MxNxK {{[0-9]+}}x1024x16 {{.*}}inside a task of the enclosing loop
// EXPLAIN: fuse-reductions: 8 nests fused at depth 1 over a 30 parallel band
#bmn = affine_map<(b, i, j) -> (b, i, j)>
#bm = affine_map<(b, i, j) -> (b, i)>
#red = affine_map<(b, i, j) -> (b, i)>
func.func @attention(%q: tensor<2x300x16xf32>, %kt: tensor<2x16x1024xf32>,
                     %v: tensor<2x1024x16xf32>) -> tensor<2x300x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant -1.0e+30 : f32
  %masked = arith.constant -1.0e+9 : f32
  %e3 = tensor.empty() : tensor<2x300x1024xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<2x300x1024xf32>) -> tensor<2x300x1024xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x300x16xf32>, tensor<2x16x1024xf32>)
      outs(%f3 : tensor<2x300x1024xf32>) -> tensor<2x300x1024xf32>
  // Keys past query i + 724 are masked.
  %sm = linalg.generic {indexing_maps = [#bmn, #bmn], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x300x1024xf32>) outs(%e3 : tensor<2x300x1024xf32>) {
  ^bb0(%x: f32, %o: f32):
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %c724 = arith.constant 724 : index
    %limit = arith.addi %i, %c724 : index
    %far = arith.cmpi ugt, %j, %limit : index
    %add = arith.select %far, %masked, %zero : f32
    %y = arith.addf %x, %add : f32
    linalg.yield %y : f32
  } -> tensor<2x300x1024xf32>
  %e2 = tensor.empty() : tensor<2x300xf32>
  %fm = linalg.fill ins(%ninf : f32) outs(%e2 : tensor<2x300xf32>) -> tensor<2x300xf32>
  %max = linalg.generic {indexing_maps = [#bmn, #red], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%sm : tensor<2x300x1024xf32>) outs(%fm : tensor<2x300xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %m = arith.maximumf %acc, %x : f32
    linalg.yield %m : f32
  } -> tensor<2x300xf32>
  %exp = linalg.generic {indexing_maps = [#bmn, #bm, #bmn], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%sm, %max : tensor<2x300x1024xf32>, tensor<2x300xf32>) outs(%e3 : tensor<2x300x1024xf32>) {
  ^bb0(%x: f32, %m: f32, %o: f32):
    %d = arith.subf %x, %m : f32
    %y = math.exp %d : f32
    linalg.yield %y : f32
  } -> tensor<2x300x1024xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x300xf32>) -> tensor<2x300xf32>
  %sum = linalg.generic {indexing_maps = [#bmn, #red], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%exp : tensor<2x300x1024xf32>) outs(%fs : tensor<2x300xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %a = arith.addf %acc, %x : f32
    linalg.yield %a : f32
  } -> tensor<2x300xf32>
  %p = linalg.generic {indexing_maps = [#bmn, #bm, #bmn], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%exp, %sum : tensor<2x300x1024xf32>, tensor<2x300xf32>) outs(%e3 : tensor<2x300x1024xf32>) {
  ^bb0(%x: f32, %t: f32, %o: f32):
    %y = arith.divf %x, %t : f32
    linalg.yield %y : f32
  } -> tensor<2x300x1024xf32>
  %eo = tensor.empty() : tensor<2x300x16xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x300x16xf32>) -> tensor<2x300x16xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x300x1024xf32>, tensor<2x1024x16xf32>)
      outs(%fo : tensor<2x300x16xf32>) -> tensor<2x300x16xf32>
  return %o : tensor<2x300x16xf32>
}
