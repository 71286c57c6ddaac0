// RUN: %check_cpu | FileCheck %s
// RUN: pb-opt %s --target=cpu-x86-64-v3 --pb-pipeline=s1,s2,s3 --pb-explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: pb-opt %s --target=cpu-x86-64-v3 --pb-pipeline=s1,s2,s3 | FileCheck %s --check-prefix=PACK
// With fewer rows than 8 tall M blocks want (7, 128) and A read in place,
// the NC blocks are the parallel tasks, each packing its own columns of B
// for all of K (the last block of 129 columns holds one). Its 9 panels
// make 9 blocks of one, not 5 of two (3 blocks + 2 on two cores).
// EXPLAIN: MxNxK 7x129x129 {{.*}} NC=16 (l2), 1 M blocks x 1 N groups (>= 8 tasks), the NC blocks as the tasks, A read in place, all K blocks per task
// EXPLAIN: MxNxK 128x128x64 {{.*}} M blocks x 1 N groups (>= 8 tasks), the NC blocks as the tasks
// A single row (a batch-1 classifier) runs as a matrix-vector product, B
// read in place, its columns spread over the tasks, the 40 past the last
// full panel after them.
// EXPLAIN: MxNxK 1x1000x70 as a matrix-vector product, B read in place along N: 10 tasks of 96 columns (12 sums in registers), 40 more columns after them
// f32 matmul at an awkward size and at a size that tiles evenly, through
// threads and vectors, against the unoptimized lowering.
// CHECK: OK odd: 903 values match the reference
// CHECK: OK even: 16384 values match the reference

func.func @odd(%a: tensor<7x129xf32>, %b: tensor<129x129xf32>) -> tensor<7x129xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<7x129xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<7x129xf32>) -> tensor<7x129xf32>
  %r = linalg.matmul ins(%a, %b : tensor<7x129xf32>, tensor<129x129xf32>)
                     outs(%f : tensor<7x129xf32>) -> tensor<7x129xf32>
  return %r : tensor<7x129xf32>
}

func.func @even(%a: tensor<128x64xf32>, %b: tensor<64x128xf32>) -> tensor<128x128xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x128xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<128x128xf32>) -> tensor<128x128xf32>
  %r = linalg.matmul ins(%a, %b : tensor<128x64xf32>, tensor<64x128xf32>)
                     outs(%f : tensor<128x128xf32>) -> tensor<128x128xf32>
  return %r : tensor<128x128xf32>
}

// Edges everywhere: M and N not multiples of the register tile, K longer
// than one KC block with a remainder.
// CHECK: OK edges: 1665 values match the reference
func.func @edges(%a: tensor<37x200xf32>, %b: tensor<200x45xf32>) -> tensor<37x45xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<37x45xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<37x45xf32>) -> tensor<37x45xf32>
  %r = linalg.matmul ins(%a, %b : tensor<37x200xf32>, tensor<200x45xf32>)
                     outs(%f : tensor<37x45xf32>) -> tensor<37x45xf32>
  return %r : tensor<37x45xf32>
}

// Batched, with A transposed (A[b, k, m]) and an accumulator that is not
// zero (C starts as a copy of an input).
// CHECK: OK batched_transposed_a: 5600 values match the reference
func.func @batched_transposed_a(%a: tensor<2x40x70xf32>, %b: tensor<2x40x40xf32>,
                                %c: tensor<2x70x40xf32>) -> tensor<2x70x40xf32> {
  %r = linalg.generic {
      indexing_maps = [affine_map<(b, m, n, k) -> (b, k, m)>,
                       affine_map<(b, m, n, k) -> (b, k, n)>,
                       affine_map<(b, m, n, k) -> (b, m, n)>],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<2x40x70xf32>, tensor<2x40x40xf32>)
      outs(%c : tensor<2x70x40xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x70x40xf32>
  return %r : tensor<2x70x40xf32>
}

// CHECK: OK row: 1000 values match the reference
func.func @row(%a: tensor<1x70xf32>, %b: tensor<70x1000xf32>) -> tensor<1x1000xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x1000xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x1000xf32>) -> tensor<1x1000xf32>
  %r = linalg.matmul ins(%a, %b : tensor<1x70xf32>, tensor<70x1000xf32>)
                     outs(%f : tensor<1x1000xf32>) -> tensor<1x1000xf32>
  return %r : tensor<1x1000xf32>
}

// torch's linear (x @ W^T, W stored N x K): B is packed from 8x8 squares
// read along K and transposed in registers (log2(8) = 3 rounds of shuffles,
// 24 per square; N = 48 takes the 4 x 24 tile, three squares per panel,
// one square in the code of a loop over them);
// K = 300 runs in two blocks (160 + 140), whose last four columns are
// packed by the strided path.
// CHECK: OK linear: 1776 values match the reference
// EXPLAIN: MxNxK 37x48x300 {{.*}} register tile 4x24 (12 accumulators of 16 registers)
// PACK-LABEL: func.func @linear
// PACK: scf.for {{.*}} = %c0 to %c24 step %c8
// PACK-COUNT-24: vector.shuffle
// PACK-NOT: vector.shuffle
// PACK: return
func.func @linear(%a: tensor<37x300xf32>, %w: tensor<48x300xf32>) -> tensor<37x48xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<37x48xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<37x48xf32>) -> tensor<37x48xf32>
  %r = linalg.generic {
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                       affine_map<(m, n, k) -> (n, k)>,
                       affine_map<(m, n, k) -> (m, n)>],
      iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %w : tensor<37x300xf32>, tensor<48x300xf32>)
      outs(%f : tensor<37x48xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<37x48xf32>
  return %r : tensor<37x48xf32>
}

// A taller x @ W^T (301 rows, more than one M block of 24 register tiles):
// M blocks x N groups per K block, each tile's rows of A read in place over
// its N panels; N and K end inside a panel and a KC block.
// EXPLAIN: MxNxK 301x100x300 {{.*}} M blocks x {{[0-9]+}} N groups (>= 8 tasks), A read in place, all K blocks per task, each tile's rows over its N panels
// CHECK: OK tall_linear: 30100 values match the reference
func.func @tall_linear(%a: tensor<301x300xf32>, %w: tensor<100x300xf32>) -> tensor<301x100xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<301x100xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<301x100xf32>) -> tensor<301x100xf32>
  %r = linalg.generic {
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                       affine_map<(m, n, k) -> (n, k)>,
                       affine_map<(m, n, k) -> (m, n)>],
      iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %w : tensor<301x300xf32>, tensor<100x300xf32>)
      outs(%f : tensor<301x100xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<301x100xf32>
  return %r : tensor<301x100xf32>
}

// A classifier at batch 1 (x @ W^T, N = 45 not a multiple of the 16-column
// panel): the two full panels are packed from 8x8 squares like @linear, the
// third (13 columns) row by row with masked reads; the code has one square,
// in a loop over the panel's two.
// CHECK: OK classifier: 45 values match the reference
// PACK-LABEL: func.func @classifier
// PACK: scf.for {{.*}} = %c0 to %c16 step %c8
// PACK-COUNT-24: vector.shuffle
// PACK-NOT: vector.shuffle
// PACK: return
func.func @classifier(%a: tensor<1x300xf32>, %w: tensor<45x300xf32>) -> tensor<1x45xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x45xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x45xf32>) -> tensor<1x45xf32>
  %r = linalg.generic {
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                       affine_map<(m, n, k) -> (n, k)>,
                       affine_map<(m, n, k) -> (m, n)>],
      iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %w : tensor<1x300xf32>, tensor<45x300xf32>)
      outs(%f : tensor<1x45xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x45xf32>
  return %r : tensor<1x45xf32>
}

// Eight batch indices (attention's heads): each is one parallel task that
// runs its whole GEMM, packing included, instead of two forks per block.
// EXPLAIN: MxNxK 13x20x33 {{.*}} (>= 8 tasks), the batch loops as the tasks, A read in place, all K blocks per task, each tile's rows over its N panels, on level 'core'
// CHECK: OK batched8: 2080 values match the reference
func.func @batched8(%a: tensor<8x13x33xf32>, %b: tensor<8x33x20xf32>) -> tensor<8x13x20xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x13x20xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<8x13x20xf32>) -> tensor<8x13x20xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<8x13x33xf32>, tensor<8x33x20xf32>)
                           outs(%f : tensor<8x13x20xf32>) -> tensor<8x13x20xf32>
  return %r : tensor<8x13x20xf32>
}

// A fill that is not zero, folded into the first of several K blocks
// (K = 700), with M and N edges, and into batch-parallel tasks whose K
// runs in blocks too.
// EXPLAIN: MxNxK 29x40x700
// EXPLAIN: C's fill folded into the first K block
// CHECK: OK fill_nonzero: 1160 values match the reference
func.func @fill_nonzero(%a: tensor<29x700xf32>, %b: tensor<700x40xf32>) -> tensor<29x40xf32> {
  %z = arith.constant 1.5 : f32
  %e = tensor.empty() : tensor<29x40xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<29x40xf32>) -> tensor<29x40xf32>
  %r = linalg.matmul ins(%a, %b : tensor<29x700xf32>, tensor<700x40xf32>)
                     outs(%f : tensor<29x40xf32>) -> tensor<29x40xf32>
  return %r : tensor<29x40xf32>
}

// CHECK: OK batched_fill: 5120 values match the reference
func.func @batched_fill(%a: tensor<8x20x600xf32>, %b: tensor<8x600x32xf32>) -> tensor<8x20x32xf32> {
  %z = arith.constant -0.75 : f32
  %e = tensor.empty() : tensor<8x20x32xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<8x20x32xf32>) -> tensor<8x20x32xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<8x20x600xf32>, tensor<8x600x32xf32>)
                           outs(%f : tensor<8x20x32xf32>) -> tensor<8x20x32xf32>
  return %r : tensor<8x20x32xf32>
}

// x @ W^T + bias, ReLU over (batch, sequence) = 3 x 67 rows: A and C are
// read and written through their collapsed rows (two M loops, contiguous),
// the fill folded, the epilogue fused into the final stores, and the last
// register tile of each M block partial (201 rows).
// CHECK: OK linear_rows: 16080 values match the reference
func.func @linear_rows(%x: tensor<3x67x96xf32>, %w: tensor<80x96xf32>,
                       %bias: tensor<80xf32>) -> tensor<3x67x80xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x67x80xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<3x67x80xf32>) -> tensor<3x67x80xf32>
  %c = linalg.generic {
      indexing_maps = [affine_map<(b, s, n, k) -> (b, s, k)>,
                       affine_map<(b, s, n, k) -> (n, k)>,
                       affine_map<(b, s, n, k) -> (b, s, n)>],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<3x67x96xf32>, tensor<80x96xf32>)
      outs(%f : tensor<3x67x80xf32>) {
  ^bb0(%a: f32, %bv: f32, %acc: f32):
    %p = arith.mulf %a, %bv : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<3x67x80xf32>
  %r = linalg.generic {
      indexing_maps = [affine_map<(b, s, n) -> (b, s, n)>,
                       affine_map<(b, s, n) -> (n)>,
                       affine_map<(b, s, n) -> (b, s, n)>],
      iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%c, %bias : tensor<3x67x80xf32>, tensor<80xf32>)
      outs(%e : tensor<3x67x80xf32>) {
  ^bb0(%v: f32, %bv: f32, %o: f32):
    %s = arith.addf %v, %bv : f32
    %m = arith.maximumf %s, %z : f32
    linalg.yield %m : f32
  } -> tensor<3x67x80xf32>
  return %r : tensor<3x67x80xf32>
}

// N = 144, a multiple of three vectors: rows of three vectors (4 x 24 on
// 16 ymm registers; 8 x 48 on 32 zmm registers), A read through its
// collapsed rows, the last tile of 201 rows partial, bias + ReLU fused.
// EXPLAIN: MxNxK 201x144x40 {{.*}} register tile 4x24 (12 accumulators of 16 registers)
// CHECK: OK linear_rows_long: 28944 values match the reference
func.func @linear_rows_long(%x: tensor<3x67x40xf32>, %w: tensor<144x40xf32>,
                            %bias: tensor<144xf32>) -> tensor<3x67x144xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x67x144xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<3x67x144xf32>) -> tensor<3x67x144xf32>
  %c = linalg.generic {
      indexing_maps = [affine_map<(b, s, n, k) -> (b, s, k)>,
                       affine_map<(b, s, n, k) -> (n, k)>,
                       affine_map<(b, s, n, k) -> (b, s, n)>],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<3x67x40xf32>, tensor<144x40xf32>)
      outs(%f : tensor<3x67x144xf32>) {
  ^bb0(%a: f32, %bv: f32, %acc: f32):
    %p = arith.mulf %a, %bv : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<3x67x144xf32>
  %r = linalg.generic {
      indexing_maps = [affine_map<(b, s, n) -> (b, s, n)>,
                       affine_map<(b, s, n) -> (n)>,
                       affine_map<(b, s, n) -> (b, s, n)>],
      iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%c, %bias : tensor<3x67x144xf32>, tensor<144xf32>)
      outs(%e : tensor<3x67x144xf32>) {
  ^bb0(%v: f32, %bv: f32, %o: f32):
    %s = arith.addf %v, %bv : f32
    %m = arith.maximumf %s, %z : f32
    linalg.yield %m : f32
  } -> tensor<3x67x144xf32>
  return %r : tensor<3x67x144xf32>
}
