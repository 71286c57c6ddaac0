// RUN: pb-opt %s --split-input-file --pass-pipeline='builtin.module(pb-attach-target{target=cpu-x86-64-v4},func.func(pb-fuse-attention))' | FileCheck %s
// RUN: pb-opt %s --split-input-file --pb-explain --pass-pipeline='builtin.module(pb-attach-target{target=cpu-x86-64-v4},func.func(pb-fuse-attention))' -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: pb-opt %s --split-input-file --pass-pipeline='builtin.module(pb-attach-target{target=nvidia-sm90},func.func(pb-fuse-attention))' | FileCheck %s --check-prefix=GPU

#bmn = affine_map<(b, i, j) -> (b, i, j)>
#red = affine_map<(b, i, j) -> (b, i)>
// Eight heads of 128 queries and 128 keys: a row of scores and one of
// probabilities take 1 KiB, so a head's 128 rows are one block and the heads
// are the eight tasks. Inside: the scores of the head (from zero), the row
// maximum (from its fill), the exponentials and @ v into the task's slice
// of the result. Nothing of 8 x 128 x 128 is left outside the loop. Not on
// a GPU (no thread-scope matrix unit: S4 maps the loops itself).
// CHECK-LABEL: func.func @softmax_attention
// CHECK-NOT:   tensor<8x128x128xf32>
// CHECK:       scf.forall (%[[H:.*]]) in (8) shared_outs(%[[OUT:.*]] = %{{.*}}) -> (tensor<8x128x32xf32>)
// CHECK:         %[[Q:.*]] = tensor.extract_slice %{{.*}}[%[[H]], 0, 0] [1, 128, 32]
// CHECK:         %[[K:.*]] = tensor.extract_slice %{{.*}}[%[[H]], 0, 0] [1, 32, 128]
// CHECK:         %[[Z:.*]] = linalg.fill {{.*}} -> tensor<1x128x128xf32>
// CHECK:         %[[S:.*]] = linalg.batch_matmul ins(%[[Q]], %[[K]] : {{.*}}) outs(%[[Z]] : tensor<1x128x128xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[S]] : tensor<1x128x128xf32>) outs(%{{.*}} : tensor<1x128xf32>)
// CHECK:         math.exp
// CHECK:         %[[V:.*]] = tensor.extract_slice %{{.*}}[%[[H]], 0, 0] [1, 128, 32]
// CHECK:         %[[O:.*]] = tensor.extract_slice %[[OUT]][%[[H]], 0, 0] [1, 128, 32]
// CHECK:         %[[OZ:.*]] = linalg.fill {{.*}} outs(%[[O]] : tensor<1x128x32xf32>)
// CHECK:         %[[R:.*]] = linalg.batch_matmul ins(%{{.*}}, %[[V]] : tensor<1x128x128xf32>, tensor<1x128x32xf32>) outs(%[[OZ]] :
// CHECK:         tensor.parallel_insert_slice %[[R]] into %[[OUT]][%[[H]], 0, 0] [1, 128, 32]
// CHECK-NOT:   linalg.batch_matmul
// EXPLAIN: fuse-attention: q @ k^T, 2 ops of the softmax and @ v in one parallel loop of 8 tasks: 8 batch x 1 block of 128 rows (128 keys; 'l2' holds 512 rows of scores and probabilities)
// GPU-LABEL: func.func @softmax_attention
// GPU-NOT:   scf.forall
func.func @softmax_attention(%q: tensor<8x128x32xf32>, %kt: tensor<8x32x128xf32>,
                             %v: tensor<8x128x32xf32>) -> tensor<8x128x32xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant -1.0e+30 : f32
  %e3 = tensor.empty() : tensor<8x128x128xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<8x128x128xf32>) -> tensor<8x128x128xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x128x32xf32>, tensor<8x32x128xf32>)
      outs(%f3 : tensor<8x128x128xf32>) -> tensor<8x128x128xf32>
  %e2 = tensor.empty() : tensor<8x128xf32>
  %fm = linalg.fill ins(%ninf : f32) outs(%e2 : tensor<8x128xf32>) -> tensor<8x128xf32>
  %max = linalg.generic {indexing_maps = [#bmn, #red], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%s : tensor<8x128x128xf32>) outs(%fm : tensor<8x128xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %m = arith.maximumf %acc, %x : f32
    linalg.yield %m : f32
  } -> tensor<8x128xf32>
  %p = linalg.generic {indexing_maps = [#bmn, #red, #bmn], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %max : tensor<8x128x128xf32>, tensor<8x128xf32>) outs(%e3 : tensor<8x128x128xf32>) {
  ^bb0(%x: f32, %m: f32, %o: f32):
    %d = arith.subf %x, %m : f32
    %y = math.exp %d : f32
    linalg.yield %y : f32
  } -> tensor<8x128x128xf32>
  %eo = tensor.empty() : tensor<8x128x32xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x128x32xf32>) -> tensor<8x128x32xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x128x128xf32>, tensor<8x128x32xf32>)
      outs(%fo : tensor<8x128x32xf32>) -> tensor<8x128x32xf32>
  return %o : tensor<8x128x32xf32>
}

// -----

#bmn = affine_map<(b, i, j) -> (b, i, j)>
#red = affine_map<(b, i, j) -> (b, i)>
// Two heads of 300 queries over 512 keys: 4 KiB per row, so half the
// 1 MiB 'l2' holds 128 rows: three blocks of 100 rows, which leave two
// heads six tasks; four blocks of 75 make the eight the cores are cut for.
// Each task's slices start at its block's first row.
// CHECK-LABEL: func.func @row_blocks
// CHECK:       scf.forall (%[[H:.*]], %[[R:.*]]) = (0, 0) to (2, 300) step (1, 75)
// CHECK:         tensor.extract_slice %{{.*}}[%[[H]], %[[R]], 0] [1, 75, 32]
// CHECK:         tensor.extract_slice %{{.*}}[%[[H]], 0, 0] [1, 32, 512]
// CHECK:         linalg.batch_matmul {{.*}} -> tensor<1x75x512xf32>
// CHECK:         tensor.parallel_insert_slice %{{.*}}[%[[H]], %[[R]], 0] [1, 75, 32]
// EXPLAIN: fuse-attention: q @ k^T, 2 ops of the softmax and @ v in one parallel loop of 8 tasks: 2 batch x 4 blocks of 75 rows (512 keys; 'l2' holds 128 rows of scores and probabilities)
func.func @row_blocks(%q: tensor<2x300x32xf32>, %kt: tensor<2x32x512xf32>,
                             %v: tensor<2x512x32xf32>) -> tensor<2x300x32xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant -1.0e+30 : f32
  %e3 = tensor.empty() : tensor<2x300x512xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<2x300x512xf32>) -> tensor<2x300x512xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x300x32xf32>, tensor<2x32x512xf32>)
      outs(%f3 : tensor<2x300x512xf32>) -> tensor<2x300x512xf32>
  %e2 = tensor.empty() : tensor<2x300xf32>
  %fm = linalg.fill ins(%ninf : f32) outs(%e2 : tensor<2x300xf32>) -> tensor<2x300xf32>
  %max = linalg.generic {indexing_maps = [#bmn, #red], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%s : tensor<2x300x512xf32>) outs(%fm : tensor<2x300xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %m = arith.maximumf %acc, %x : f32
    linalg.yield %m : f32
  } -> tensor<2x300xf32>
  %p = linalg.generic {indexing_maps = [#bmn, #red, #bmn], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %max : tensor<2x300x512xf32>, tensor<2x300xf32>) outs(%e3 : tensor<2x300x512xf32>) {
  ^bb0(%x: f32, %m: f32, %o: f32):
    %d = arith.subf %x, %m : f32
    %y = math.exp %d : f32
    linalg.yield %y : f32
  } -> tensor<2x300x512xf32>
  %eo = tensor.empty() : tensor<2x300x32xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x300x32xf32>) -> tensor<2x300x32xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x300x512xf32>, tensor<2x512x32xf32>)
      outs(%fo : tensor<2x300x32xf32>) -> tensor<2x300x32xf32>
  return %o : tensor<2x300x32xf32>
}

// -----

#bmn = affine_map<(b, i, j) -> (b, i, j)>
#red = affine_map<(b, i, j) -> (b, i)>
// The probabilities are a result too: they are needed whole, and the
// blocks would compute them a second time. Not fused.
// EXPLAIN: fuse-attention: not fused: linalg.generic has a use outside the attention (func.return)
// CHECK-LABEL: func.func @probabilities_returned
// CHECK-NOT:   scf.forall
// CHECK:       linalg.batch_matmul
// CHECK:       linalg.batch_matmul
func.func @probabilities_returned(%q: tensor<8x128x32xf32>, %kt: tensor<8x32x128xf32>,
                             %v: tensor<8x128x32xf32>) -> (tensor<8x128x32xf32>, tensor<8x128x128xf32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant -1.0e+30 : f32
  %e3 = tensor.empty() : tensor<8x128x128xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<8x128x128xf32>) -> tensor<8x128x128xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x128x32xf32>, tensor<8x32x128xf32>)
      outs(%f3 : tensor<8x128x128xf32>) -> tensor<8x128x128xf32>
  %e2 = tensor.empty() : tensor<8x128xf32>
  %fm = linalg.fill ins(%ninf : f32) outs(%e2 : tensor<8x128xf32>) -> tensor<8x128xf32>
  %max = linalg.generic {indexing_maps = [#bmn, #red], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%s : tensor<8x128x128xf32>) outs(%fm : tensor<8x128xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %m = arith.maximumf %acc, %x : f32
    linalg.yield %m : f32
  } -> tensor<8x128xf32>
  %p = linalg.generic {indexing_maps = [#bmn, #red, #bmn], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %max : tensor<8x128x128xf32>, tensor<8x128xf32>) outs(%e3 : tensor<8x128x128xf32>) {
  ^bb0(%x: f32, %m: f32, %o: f32):
    %d = arith.subf %x, %m : f32
    %y = math.exp %d : f32
    linalg.yield %y : f32
  } -> tensor<8x128x128xf32>
  %eo = tensor.empty() : tensor<8x128x32xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x128x32xf32>) -> tensor<8x128x32xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x128x128xf32>, tensor<8x128x32xf32>)
      outs(%fo : tensor<8x128x32xf32>) -> tensor<8x128x32xf32>
  return %o, %p : tensor<8x128x32xf32>, tensor<8x128x128xf32>
}

// -----

#bmn = affine_map<(b, i, j) -> (b, i, j)>
#red = affine_map<(b, i, j) -> (b, i)>
// Two contractions with only elementwise ops between them (an MLP): no
// softmax; left to the GEMMs, which block N and K for the caches.
// EXPLAIN: fuse-attention: not fused: no row reduction (softmax) between the contractions
// CHECK-LABEL: func.func @mlp
// CHECK-NOT:   scf.forall
func.func @mlp(%x: tensor<8x128x32xf32>, %w1: tensor<8x32x128xf32>,
               %w2: tensor<8x128x32xf32>) -> tensor<8x128x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e3 = tensor.empty() : tensor<8x128x128xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<8x128x128xf32>) -> tensor<8x128x128xf32>
  %h = linalg.batch_matmul ins(%x, %w1 : tensor<8x128x32xf32>, tensor<8x32x128xf32>)
      outs(%f3 : tensor<8x128x128xf32>) -> tensor<8x128x128xf32>
  %r = linalg.generic {indexing_maps = [#bmn, #bmn], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%h : tensor<8x128x128xf32>) outs(%e3 : tensor<8x128x128xf32>) {
  ^bb0(%a: f32, %o: f32):
    %y = arith.maximumf %a, %zero : f32
    linalg.yield %y : f32
  } -> tensor<8x128x128xf32>
  %eo = tensor.empty() : tensor<8x128x32xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x128x32xf32>) -> tensor<8x128x32xf32>
  %o = linalg.batch_matmul ins(%r, %w2 : tensor<8x128x128xf32>, tensor<8x128x32xf32>)
      outs(%fo : tensor<8x128x32xf32>) -> tensor<8x128x32xf32>
  return %o : tensor<8x128x32xf32>
}

// -----

#bmn = affine_map<(b, i, j) -> (b, i, j)>
#red = affine_map<(b, i, j) -> (b, i)>
// A pooling between a convolution (here a batch matmul over 49 pixels) and
// a classifier is a reduction between two contractions, but no softmax: it
// does not keep the scores' shape. Not fused.
// CHECK-LABEL: func.func @pooled_classifier
// CHECK-NOT:   scf.forall
func.func @pooled_classifier(%x: tensor<1x49x64xf32>, %w: tensor<1x64x128xf32>,
                             %fc: tensor<128x10xf32>) -> tensor<1x10xf32> {
  %zero = arith.constant 0.0 : f32
  %e3 = tensor.empty() : tensor<1x49x128xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<1x49x128xf32>) -> tensor<1x49x128xf32>
  %h = linalg.batch_matmul ins(%x, %w : tensor<1x49x64xf32>, tensor<1x64x128xf32>)
      outs(%f3 : tensor<1x49x128xf32>) -> tensor<1x49x128xf32>
  %e2 = tensor.empty() : tensor<1x128xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x128xf32>) -> tensor<1x128xf32>
  %pool = linalg.generic {indexing_maps = [affine_map<(b, c, p) -> (b, p, c)>, affine_map<(b, c, p) -> (b, c)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%h : tensor<1x49x128xf32>) outs(%f2 : tensor<1x128xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<1x128xf32>
  %eo = tensor.empty() : tensor<1x10xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x10xf32>) -> tensor<1x10xf32>
  %o = linalg.matmul ins(%pool, %fc : tensor<1x128xf32>, tensor<128x10xf32>)
      outs(%fo : tensor<1x10xf32>) -> tensor<1x10xf32>
  return %o : tensor<1x10xf32>
}

// -----

#bmn = affine_map<(b, i, j) -> (b, i, j)>
#red = affine_map<(b, i, j) -> (b, i)>
// Four heads of 17 queries: the eight tasks need two blocks per head, of 9
// rows, and the rows do not divide. The contraction is split after row 9:
// the first 9 rows of each head are one loop of blocks, the last 8 a second
// loop, every block's slices and intermediates static (a shorter last block
// would size them by a value computed in the task, which bounds no affine
// loop) and no row written by two tasks. Each part fills its own rows of C,
// C is one empty tensor that both loops write in place, and the scores of
// all rows are computed nowhere but in the blocks.
// CHECK-LABEL: func.func @uneven_rows
// CHECK-DAG:   %[[NINE:.*]] = arith.constant 9 : index
// CHECK:       %[[C:.*]] = tensor.empty() : tensor<4x17x16xf32>
// CHECK-NOT:   tensor<4x17x17xf32>
// CHECK:       %[[HEADC:.*]] = tensor.extract_slice %[[C]][0, 0, 0] [4, 9, 16]
// CHECK:       %[[HEAD:.*]] = scf.forall (%[[H:.*]], %[[R:.*]]) = (0, 0) to (4, 9) step (1, 9) shared_outs(%[[OUT:.*]] = %[[HEADC]])
// CHECK-NOT:     tensor<1x?
// CHECK:         tensor.extract_slice %{{.*}}[%[[H]], %[[R]], 0] [1, 9, 16]
// CHECK:         linalg.batch_matmul {{.*}} -> tensor<1x9x17xf32>
// CHECK:         %[[O:.*]] = tensor.extract_slice %[[OUT]][%[[H]], %[[R]], 0] [1, 9, 16]
// CHECK:         %[[Z:.*]] = linalg.fill {{.*}} outs(%[[O]] : tensor<1x9x16xf32>)
// CHECK:         linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<1x9x17xf32>, tensor<1x17x16xf32>) outs(%[[Z]] : tensor<1x9x16xf32>)
// CHECK:         tensor.parallel_insert_slice %{{.*}} into %[[OUT]][%[[H]], %[[R]], 0] [1, 9, 16]
// CHECK:       %[[WITHHEAD:.*]] = tensor.insert_slice %[[HEAD]] into %[[C]][0, 0, 0] [4, 9, 16]
// CHECK:       %[[TAILC:.*]] = tensor.extract_slice %[[WITHHEAD]][0, 9, 0] [4, 8, 16]
// CHECK:       %[[TAIL:.*]] = scf.forall (%[[H2:.*]], %[[R2:.*]]) = (0, 0) to (4, 8) step (1, 8) shared_outs(%[[OUT2:.*]] = %[[TAILC]])
// CHECK:         %[[ROW:.*]] = arith.addi %[[R2]], %[[NINE]] : index
// CHECK:         tensor.extract_slice %{{.*}}[%[[H2]], %[[ROW]], 0] [1, 8, 16]
// CHECK:         linalg.batch_matmul {{.*}} -> tensor<1x8x17xf32>
// CHECK:         linalg.fill {{.*}} -> tensor<1x8x16xf32>
// CHECK:         linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<1x8x17xf32>, tensor<1x17x16xf32>)
// CHECK:         tensor.parallel_insert_slice %{{.*}} into %[[OUT2]][%[[H2]], %[[R2]], 0] [1, 8, 16]
// CHECK:       %[[ALL:.*]] = tensor.insert_slice %[[TAIL]] into %[[WITHHEAD]][0, 9, 0] [4, 8, 16]
// CHECK:       return %[[ALL]]
// EXPLAIN: fuse-attention: q @ k^T, 2 ops of the softmax and @ v in two parallel loops: 4 batch x 1 block of 9 rows, then 4 batch x the last 8 rows (17 keys; 'l2' holds
func.func @uneven_rows(%q: tensor<4x17x16xf32>, %kt: tensor<4x16x17xf32>,
                       %v: tensor<4x17x16xf32>) -> tensor<4x17x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant -1.0e+30 : f32
  %e3 = tensor.empty() : tensor<4x17x17xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<4x17x17xf32>) -> tensor<4x17x17xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<4x17x16xf32>, tensor<4x16x17xf32>)
      outs(%f3 : tensor<4x17x17xf32>) -> tensor<4x17x17xf32>
  %e2 = tensor.empty() : tensor<4x17xf32>
  %fm = linalg.fill ins(%ninf : f32) outs(%e2 : tensor<4x17xf32>) -> tensor<4x17xf32>
  %max = linalg.generic {indexing_maps = [#bmn, #red], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%s : tensor<4x17x17xf32>) outs(%fm : tensor<4x17xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %m = arith.maximumf %acc, %x : f32
    linalg.yield %m : f32
  } -> tensor<4x17xf32>
  %p = linalg.generic {indexing_maps = [#bmn, #red, #bmn], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %max : tensor<4x17x17xf32>, tensor<4x17xf32>) outs(%e3 : tensor<4x17x17xf32>) {
  ^bb0(%x: f32, %m: f32, %o: f32):
    %d = arith.subf %x, %m : f32
    %y = math.exp %d : f32
    linalg.yield %y : f32
  } -> tensor<4x17x17xf32>
  %eo = tensor.empty() : tensor<4x17x16xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x17x16xf32>) -> tensor<4x17x16xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<4x17x17xf32>, tensor<4x17x16xf32>)
      outs(%fo : tensor<4x17x16xf32>) -> tensor<4x17x16xf32>
  return %o : tensor<4x17x16xf32>
}

// -----

#bmn = affine_map<(b, i, j) -> (b, i, j)>
#red = affine_map<(b, i, j) -> (b, i)>
// Queries and keys known only at run time (dynamic shapes): blocks of rows
// sized for 512 keys, over the largest multiple of them (counted at run
// time, each block full: its height a constant), then the rows after it as
// one block per head, untiled, in a second loop. The scores are computed
// once per block (the copies that fusion made for each consumer, whose
// sizes were different values of one size, are one).
// CHECK-LABEL: func.func @run_time_rows
// CHECK:     %[[SPLIT:[^ ]*]] = affine.min
// CHECK:     scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (8, %[[SPLIT]]) step (1, 128)
// CHECK:       linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<1x?x32xf32>, tensor<1x32x?xf32>)
// CHECK-NOT:   linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<1x?x32xf32>, tensor<1x32x?xf32>)
// CHECK:       linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<1x?x?xf32>, tensor<1x?x32xf32>)
// CHECK:       scf.forall.in_parallel
// CHECK:     scf.forall (%{{.*}}) in (8)
// CHECK:       linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<1x?x32xf32>, tensor<1x32x?xf32>)
// CHECK-NOT:   linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<1x?x32xf32>, tensor<1x32x?xf32>)
// CHECK:       linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<1x?x?xf32>, tensor<1x?x32xf32>)
// EXPLAIN: fuse-attention: q @ k^T, 2 ops of the softmax and @ v in two parallel loops: 8 batch x blocks of 128 rows, counted at run time, then 8 batch x the rows after the last full block (a run-time number of keys; 'l2' holds 128 rows of scores and probabilities of 512 keys)
func.func @run_time_rows(%q: tensor<8x?x32xf32>, %kt: tensor<8x32x?xf32>,
                         %v: tensor<8x?x32xf32>) -> tensor<8x?x32xf32> {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %m = tensor.dim %q, %c1 : tensor<8x?x32xf32>
  %n = tensor.dim %kt, %c2 : tensor<8x32x?xf32>
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant -1.0e+30 : f32
  %e3 = tensor.empty(%m, %n) : tensor<8x?x?xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<8x?x?xf32>) -> tensor<8x?x?xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x?x32xf32>, tensor<8x32x?xf32>)
      outs(%f3 : tensor<8x?x?xf32>) -> tensor<8x?x?xf32>
  %e2 = tensor.empty(%m) : tensor<8x?xf32>
  %fm = linalg.fill ins(%ninf : f32) outs(%e2 : tensor<8x?xf32>) -> tensor<8x?xf32>
  %max = linalg.generic {indexing_maps = [#bmn, #red], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%s : tensor<8x?x?xf32>) outs(%fm : tensor<8x?xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %mx = arith.maximumf %acc, %x : f32
    linalg.yield %mx : f32
  } -> tensor<8x?xf32>
  %p = linalg.generic {indexing_maps = [#bmn, #red, #bmn], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %max : tensor<8x?x?xf32>, tensor<8x?xf32>) outs(%e3 : tensor<8x?x?xf32>) {
  ^bb0(%x: f32, %mx: f32, %o: f32):
    %d = arith.subf %x, %mx : f32
    %y = math.exp %d : f32
    linalg.yield %y : f32
  } -> tensor<8x?x?xf32>
  %eo = tensor.empty(%m) : tensor<8x?x32xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x?x32xf32>) -> tensor<8x?x32xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x?x?xf32>, tensor<8x?x32xf32>)
      outs(%fo : tensor<8x?x32xf32>) -> tensor<8x?x32xf32>
  return %o : tensor<8x?x32xf32>
}
