// RUN: pb-opt %s --split-input-file --pass-pipeline='builtin.module(pb-attach-target{target=cpu-x86-64-v4},pb-map-matrix-units)' | FileCheck %s
// RUN: pb-opt %s --split-input-file --pb-explain --pass-pipeline='builtin.module(pb-attach-target{target=cpu-x86-64-v4},pb-map-matrix-units)' -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: pb-opt %s --split-input-file --pass-pipeline='builtin.module(pb-attach-target{target=cpu-x86-64-v3},pb-map-matrix-units)' | FileCheck %s --check-prefix=AVX2

// An f32 matmul becomes a packed, register-tiled micro-kernel. Its 256 rows
// would make 8 M blocks shorter than 24 register tiles: the 4 NC blocks of
// 32 columns are the parallel tasks on the core level, each packing its own
// panel of B (a buffer of its own) for all of K and running every M tile
// over it. The K loop carries 12 x 2 zmm accumulators (16 lanes) on
// x86-64-v4, 6 x 2 ymm on x86-64-v3.
// EXPLAIN: remark: pb-explain: matrix units: linalg.matmul MxNxK 256x128x64 -> VFMA_F32_1x16x1_F32 register tile 12x32 {{.*}} NC=32 (l2), 1 M blocks x 1 N groups (>= 8 tasks), the NC blocks as the tasks
// CHECK-LABEL: func.func @matmul
// CHECK-NOT: linalg.matmul
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c4)
// CHECK: memref.alloc() {{.*}} : memref<1x1x64x32xf32>
// CHECK-NOT: scf.parallel
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (vector<16xf32>, {{.*}}vector<16xf32>)
// CHECK-COUNT-24: vector.fma
// CHECK: } {pb.level = "Core"}
// AVX2-LABEL: func.func @matmul
// AVX2: scf.for {{.*}} -> (vector<8xf32>, {{.*}}vector<8xf32>)
func.func @matmul(%a: memref<256x64xf32>, %b: memref<64x128xf32>,
                  %c: memref<256x128xf32>) {
  linalg.matmul ins(%a, %b : memref<256x64xf32>, memref<64x128xf32>)
                outs(%c : memref<256x128xf32>)
  return
}

// -----

// No thread-scope f16 unit on this chip: the matmul is left to loop tiling.
// EXPLAIN: remark: pb-explain: matrix units: linalg.matmul left to loop tiling: the target has no thread-scope vector outer-product unit for these element types
// CHECK-LABEL: func.func @matmul_f16
// CHECK: linalg.matmul
func.func @matmul_f16(%a: memref<64x64xf16>, %b: memref<64x64xf16>,
                      %c: memref<64x64xf16>) {
  linalg.matmul ins(%a, %b : memref<64x64xf16>, memref<64x64xf16>)
                outs(%c : memref<64x64xf16>)
  return
}

// -----

// Narrower in N than the chip's narrowest vector FMA: left to loop tiling.
// EXPLAIN: remark: pb-explain: matrix units: linalg.matmul left to loop tiling: N = 4 is narrower than the register tile's 32 columns
func.func @narrow(%a: memref<64x64xf32>, %b: memref<64x4xf32>,
                  %c: memref<64x4xf32>) {
  linalg.matmul ins(%a, %b : memref<64x64xf32>, memref<64x4xf32>)
                outs(%c : memref<64x4xf32>)
  return
}

// -----

// N = 8, narrower than the 16-lane FMA but as wide as the chip's 8-lane
// one: the micro-kernel is built from the 8-lane FMA, with as many
// accumulators as the 32 architectural registers allow (24, not 48).
// EXPLAIN: remark: pb-explain: matrix units: linalg.matmul MxNxK 64x8x64 -> VFMA_F32_1x8x1_F32 register tile 24x8 (24 accumulators of 32 registers)
// CHECK-LABEL: func.func @narrow_8
// CHECK-NOT: linalg.matmul
// CHECK: vector.fma {{.*}} : vector<8xf32>
func.func @narrow_8(%a: memref<64x64xf32>, %b: memref<64x8xf32>,
                    %c: memref<64x8xf32>) {
  linalg.matmul ins(%a, %b : memref<64x64xf32>, memref<64x8xf32>)
                outs(%c : memref<64x8xf32>)
  return
}

// -----

// The epilogue's output buffer and constants were allocated between the
// contraction and the epilogue: they move above the kernel that now writes
// them (before this, the fused stores used a buffer defined after them).
// CHECK-LABEL: func.func @epilogue_later_alloc
// CHECK: linalg.fill
// CHECK-NEXT: %[[OUT:.*]] = memref.alloc() : memref<64x64xf32>
// CHECK: arith.constant 2.0
// CHECK: scf.for
// CHECK: vector.store %{{.*}}, %[[OUT]][
// CHECK: return %[[OUT]]
func.func @epilogue_later_alloc(%a: memref<64x64xf32>, %b: memref<64x64xf32>)
    -> memref<64x64xf32> {
  %z = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<64x64xf32>
  linalg.fill ins(%z : f32) outs(%c : memref<64x64xf32>)
  linalg.matmul ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>)
                outs(%c : memref<64x64xf32>)
  %out = memref.alloc() : memref<64x64xf32>
  %two = arith.constant 2.0 : f32
  linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<64x64xf32>) outs(%out : memref<64x64xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.mulf %v, %two : f32
    linalg.yield %m : f32
  }
  memref.dealloc %c : memref<64x64xf32>
  return %out : memref<64x64xf32>
}

// -----

// A bias + relu epilogue on a temporary result is fused: in the last K
// block the accumulators go through it into the epilogue's output. K (64)
// is one KC block, so every block is the last: the code has no test of
// the K block and never stores to C.
// EXPLAIN: remark: pb-explain: matrix units: epilogue of 2 ops fused into the micro-kernel's final stores
// CHECK-LABEL: func.func @epilogue
// CHECK-SAME: %[[OUT:[a-z0-9]+]]: memref<64x64xf32>) {
// CHECK: %[[C:.*]] = memref.alloc() : memref<64x64xf32>
// CHECK-NOT: linalg.generic
// CHECK: arith.addf %{{.*}} : vector<16xf32>
// CHECK: arith.maximumf %{{.*}} : vector<16xf32>
// CHECK: vector.store %{{.*}}, %[[OUT]][
// CHECK-NOT: vector.store %{{.*}}, %[[C]][
// CHECK: return
func.func @epilogue(%a: memref<64x64xf32>, %b: memref<64x64xf32>,
                    %bias: memref<64xf32>, %out: memref<64x64xf32>) {
  %z = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<64x64xf32>
  linalg.fill ins(%z : f32) outs(%c : memref<64x64xf32>)
  linalg.matmul ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>)
                outs(%c : memref<64x64xf32>)
  linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>,
                       affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias : memref<64x64xf32>, memref<64xf32>)
      outs(%out : memref<64x64xf32>) {
  ^bb0(%v: f32, %bb: f32, %o: f32):
    %s = arith.addf %v, %bb : f32
    %m = arith.maximumf %s, %z : f32
    linalg.yield %m : f32
  }
  memref.dealloc %c : memref<64x64xf32>
  return
}

// -----

// C's fill right before the contraction goes into the micro-kernel: the
// first K block (K = 512 is two blocks) adds the fill's value to the
// accumulators and stores them without reading C; later blocks add C. The
// accumulators start at zero and C's rows are prefetched before the K loop.
// EXPLAIN: remark: pb-explain: matrix units: C's fill folded into the first K block, which stores without reading C
// CHECK-LABEL: func.func @fill_folded
// CHECK-NOT: affine.for
// CHECK: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<16xf32>
// CHECK: memref.prefetch %arg2
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[ZERO]],
// CHECK: %[[FIRST:.*]]:24 = scf.if
// CHECK: %[[SPLAT:.*]] = vector.broadcast %arg3 : f32 to vector<16xf32>
// CHECK-NEXT: arith.addf %[[SPLAT]]
// CHECK: } else {
// CHECK: vector.load %arg2
// CHECK: arith.addf
// CHECK: vector.store %[[FIRST]]#0, %arg2
func.func @fill_folded(%a: memref<48x512xf32>, %b: memref<512x64xf32>,
                       %c: memref<48x64xf32>, %init: f32) {
  affine.for %i = 0 to 48 {
    affine.for %j = 0 to 64 {
      affine.store %init, %c[%i, %j] : memref<48x64xf32>
    }
  }
  linalg.matmul ins(%a, %b : memref<48x512xf32>, memref<512x64xf32>)
                outs(%c : memref<48x64xf32>)
  return
}

// -----

// A fill of part of C, or one that an op between reads, stays: the
// contraction adds what C holds.
// EXPLAIN-NOT: C's fill folded
// CHECK-LABEL: func.func @fill_kept
// CHECK: affine.for
// CHECK: affine.store
// CHECK: memref.copy
// CHECK: affine.for %{{.*}} = 0 to 47
// CHECK-NOT: scf.if
// CHECK: vector.load %arg2
func.func @fill_kept(%a: memref<48x64xf32>, %b: memref<64x64xf32>,
                     %c: memref<48x64xf32>, %copy: memref<48x64xf32>) {
  %zero = arith.constant 0.0 : f32
  affine.for %i = 0 to 48 {
    affine.for %j = 0 to 64 {
      affine.store %zero, %c[%i, %j] : memref<48x64xf32>
    }
  }
  memref.copy %c, %copy : memref<48x64xf32> to memref<48x64xf32>
  linalg.matmul ins(%a, %b : memref<48x64xf32>, memref<64x64xf32>)
                outs(%c : memref<48x64xf32>)
  affine.for %i = 0 to 47 {
    affine.for %j = 0 to 64 {
      affine.store %zero, %c[%i, %j] : memref<48x64xf32>
    }
  }
  linalg.matmul ins(%a, %b : memref<48x64xf32>, memref<64x64xf32>)
                outs(%c : memref<48x64xf32>)
  return
}

// -----

// A read in place (a linear layer's activations, 197 rows, too few for 8 M
// blocks of 24 register tiles of 12 rows): the NC blocks are the tasks,
// each packing its columns of B for all of K (as many as the per-core cache
// holds: 144 of 3072) and running all 197 rows over them, C's block staying
// in that cache across the K blocks; one fork per GEMM instead of two per K
// block. A 197x3072x768 linear layer ran 1.3x faster so than as 1 M block x
// 8 N groups per K block. N is a multiple of 48: 8 x 48 register tiles,
// blocked as the 12 x 32 tile would be. N = 480 (10 panels) makes 10 NC
// blocks of one panel, not 5 of two.
// EXPLAIN: matrix units: linalg.matmul MxNxK 197x3072x768 {{.*}} register tile 8x48 (24 accumulators of 32 registers), KC=96 (l1d), MC=200 (l2), NC=144 (l2), 1 M blocks x 1 N groups (>= 8 tasks), the NC blocks as the tasks, A read in place, all K blocks per task
// EXPLAIN: matrix units: linalg.matmul MxNxK 197x480x768 {{.*}} register tile 8x48 {{.*}} NC=48 (l2), 1 M blocks x 1 N groups (>= 8 tasks), the NC blocks as the tasks
//
// With fewer than 4 NC blocks (N = 64, 32 columns each) the M blocks stay
// the tasks.
// EXPLAIN: matrix units: linalg.matmul MxNxK 197x64x768 {{.*}} 6 M blocks x 2 N groups (>= 8 tasks), A read in place, all K blocks per task, each tile's rows over its N panels
//
// 1024 rows, more than one M block of 24 tiles holds: M blocks x N groups
// per K block, each task reading only its rows of A.
// EXPLAIN: matrix units: linalg.matmul MxNxK 1024x3072x768 {{.*}} register tile 8x48 {{.*}} MC=256 (l2), NC=3072 (l3), 4 M blocks x 2 N groups (>= 8 tasks), A read in place, one K block per task, each tile's rows over its N panels
// CHECK-LABEL: func.func @tall_direct_m_blocks
func.func @tall_direct_m_blocks(%a: memref<197x768xf32>, %b: memref<768x3072xf32>,
                                %c: memref<197x3072xf32>, %b2: memref<768x480xf32>,
                                %c2: memref<197x480xf32>, %b3: memref<768x64xf32>,
                                %c3: memref<197x64xf32>) {
  linalg.matmul ins(%a, %b : memref<197x768xf32>, memref<768x3072xf32>)
                outs(%c : memref<197x3072xf32>)
  linalg.matmul ins(%a, %b2 : memref<197x768xf32>, memref<768x480xf32>)
                outs(%c2 : memref<197x480xf32>)
  linalg.matmul ins(%a, %b3 : memref<197x768xf32>, memref<768x64xf32>)
                outs(%c3 : memref<197x64xf32>)
  %a4 = memref.alloc() : memref<1024x768xf32>
  %c4 = memref.alloc() : memref<1024x3072xf32>
  linalg.matmul ins(%a4, %b : memref<1024x768xf32>, memref<768x3072xf32>)
                outs(%c4 : memref<1024x3072xf32>)
  return
}

// -----

// x @ W^T over (batch, sequence): two M loops that index consecutive
// dimensions of x, the inner one over all of x's extent, so x's rows are
// one contiguous run. The micro-kernel reads them through x with those
// dimensions collapsed (one base address for a tile's rows, as in a 2-D x)
// and the tile is 12 x 2, not the 6 x 4 that a window's rows take. When
// x is (sequence, batch, features), a row's successor in (batch, sequence)
// order lies 4 rows further on: A is read row by row and the wide tile
// stays.
// EXPLAIN: matrix units: linalg.generic MxNxK 256x128x64 -> VFMA_F32_1x16x1_F32 register tile 12x32
// EXPLAIN: matrix units: linalg.generic MxNxK 256x128x64 -> VFMA_F32_1x16x1_F32 register tile 6x64
// C's rows (batch, sequence) are contiguous in both: it is read and
// written through them collapsed too.
// CHECK-LABEL: func.func @rows_contiguous
// CHECK: %[[ROWS:.*]] = memref.collapse_shape %arg0 {{\[\[}}0, 1], [2]] : memref<4x64x64xf32> into memref<256x64xf32>
// CHECK: %[[CROWS:.*]] = memref.collapse_shape %arg2 {{\[\[}}0, 1], [2]] : memref<4x64x128xf32> into memref<256x128xf32>
// CHECK: memref.load %[[ROWS]]
// CHECK: vector.load %[[CROWS]]
// CHECK: vector.store %{{.*}}, %[[CROWS]]
// CHECK-LABEL: func.func @rows_strided
// CHECK-NOT: memref.collapse_shape %arg0
// CHECK: %[[CROWS2:.*]] = memref.collapse_shape %arg2
// CHECK-NOT: memref.collapse_shape %arg0
// CHECK: memref.load %arg0
// CHECK: vector.store %{{.*}}, %[[CROWS2]]
#x3 = affine_map<(b, s, n, k) -> (b, s, k)>
#w3 = affine_map<(b, s, n, k) -> (n, k)>
#y3 = affine_map<(b, s, n, k) -> (b, s, n)>
func.func @rows_contiguous(%x: memref<4x64x64xf32>, %w: memref<128x64xf32>,
                           %y: memref<4x64x128xf32>) {
  linalg.generic {indexing_maps = [#x3, #w3, #y3],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<4x64x64xf32>, memref<128x64xf32>)
      outs(%y : memref<4x64x128xf32>) {
  ^bb0(%a: f32, %bv: f32, %acc: f32):
    %m = arith.mulf %a, %bv : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}
#x3t = affine_map<(b, s, n, k) -> (s, b, k)>
func.func @rows_strided(%x: memref<64x4x64xf32>, %w: memref<128x64xf32>,
                        %y: memref<4x64x128xf32>) {
  linalg.generic {indexing_maps = [#x3t, #w3, #y3],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<64x4x64xf32>, memref<128x64xf32>)
      outs(%y : memref<4x64x128xf32>) {
  ^bb0(%a: f32, %bv: f32, %acc: f32):
    %m = arith.mulf %a, %bv : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// N narrower than the tile's two vectors but one vector wide or more (16
// output channels on 16 lanes): rows of one vector, twice as many rows.
// EXPLAIN: matrix units: linalg.matmul MxNxK 256x16x64 -> VFMA_F32_1x16x1_F32 register tile 24x16 (24 accumulators of 32 registers)
// EXPLAIN: matrix units: linalg.matmul MxNxK 256x24x64 -> VFMA_F32_1x16x1_F32 register tile 24x16 (24 accumulators of 32 registers)
// CHECK-LABEL: func.func @one_vector_rows
// CHECK: vector.fma {{.*}} : vector<16xf32>
func.func @one_vector_rows(%a: memref<256x64xf32>, %b: memref<64x16xf32>,
                           %c: memref<256x16xf32>, %b2: memref<64x24xf32>,
                           %c2: memref<256x24xf32>) {
  linalg.matmul ins(%a, %b : memref<256x64xf32>, memref<64x16xf32>)
                outs(%c : memref<256x16xf32>)
  linalg.matmul ins(%a, %b2 : memref<256x64xf32>, memref<64x24xf32>)
                outs(%c2 : memref<256x24xf32>)
  return
}

// -----

// A constant B (x @ W^T with W a constant 32 x 2 global) is packed at
// compile time: the new global holds its single panel, K major (W's
// columns), and the code reads it instead of packing; W itself is erased.
// A global that is not constant is packed at run time, as an argument is.
// EXPLAIN: remark: pb-explain: matrix units: B, the constant @w, packed at compile time into @w_packed (256 bytes of 256)
// CHECK-NOT: memref.global "private" constant @w :
// CHECK: memref.global "private" constant @w_packed : memref<1x1x1x2x32xf32> = dense<{{\[\[\[\[\[}}0.000000e+00, 2.000000e+00, 4.000000e+00
// CHECK-SAME: 6.200000e+01], [1.000000e+00, 3.000000e+00
// CHECK-LABEL: func.func @constant_b
// CHECK-NOT: memref.alloc
// CHECK: memref.get_global @w_packed : memref<1x1x1x2x32xf32>
// CHECK-NOT: memref.alloc
// CHECK: return
// CHECK-LABEL: func.func @mutable_b
// CHECK: memref.alloc() {{.*}} : memref<1x1x2x32xf32>
memref.global "private" constant @w : memref<32x2xf32> = dense<[[0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [6.0, 7.0], [8.0, 9.0], [10.0, 11.0], [12.0, 13.0], [14.0, 15.0], [16.0, 17.0], [18.0, 19.0], [20.0, 21.0], [22.0, 23.0], [24.0, 25.0], [26.0, 27.0], [28.0, 29.0], [30.0, 31.0], [32.0, 33.0], [34.0, 35.0], [36.0, 37.0], [38.0, 39.0], [40.0, 41.0], [42.0, 43.0], [44.0, 45.0], [46.0, 47.0], [48.0, 49.0], [50.0, 51.0], [52.0, 53.0], [54.0, 55.0], [56.0, 57.0], [58.0, 59.0], [60.0, 61.0], [62.0, 63.0]]>
memref.global "private" @v : memref<32x2xf32> = dense<[[0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [6.0, 7.0], [8.0, 9.0], [10.0, 11.0], [12.0, 13.0], [14.0, 15.0], [16.0, 17.0], [18.0, 19.0], [20.0, 21.0], [22.0, 23.0], [24.0, 25.0], [26.0, 27.0], [28.0, 29.0], [30.0, 31.0], [32.0, 33.0], [34.0, 35.0], [36.0, 37.0], [38.0, 39.0], [40.0, 41.0], [42.0, 43.0], [44.0, 45.0], [46.0, 47.0], [48.0, 49.0], [50.0, 51.0], [52.0, 53.0], [54.0, 55.0], [56.0, 57.0], [58.0, 59.0], [60.0, 61.0], [62.0, 63.0]]>
func.func @constant_b(%a: memref<64x2xf32>, %c: memref<64x32xf32>) {
  %w = memref.get_global @w : memref<32x2xf32>
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                 affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
                ins(%a, %w : memref<64x2xf32>, memref<32x2xf32>)
                outs(%c : memref<64x32xf32>)
  return
}
func.func @mutable_b(%a: memref<64x2xf32>, %c: memref<64x32xf32>) {
  %v = memref.get_global @v : memref<32x2xf32>
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                 affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
                ins(%a, %v : memref<64x2xf32>, memref<32x2xf32>)
                outs(%c : memref<64x32xf32>)
  return
}

// -----

// M = 20 rows in 12 x 32 register tiles: the second tile of rows is an edge
// tile. Its columns still lie inside N (the tiles divide N = 64), so it
// reads and writes C a whole vector at a time, its rows past M skipped by
// their checks: no masked transfer of C, whose masks LLVM compiled for
// every edge vector. With N = 40 the tiles pass N and the edge tile's
// vectors stay masked.
// CHECK-LABEL: func.func @m_edge_whole_columns
// CHECK-NOT:   vector.transfer_read %arg2
// CHECK-NOT:   vector.transfer_write {{.*}}, %arg2
// CHECK:       return
// CHECK-LABEL: func.func @n_edge_masked_columns
// CHECK:       vector.transfer_write {{.*}}, %arg2
func.func @m_edge_whole_columns(%a: memref<20x64xf32>, %b: memref<64x64xf32>,
                                %c: memref<20x64xf32>) {
  linalg.matmul ins(%a, %b : memref<20x64xf32>, memref<64x64xf32>)
                outs(%c : memref<20x64xf32>)
  return
}
func.func @n_edge_masked_columns(%a: memref<20x64xf32>, %b: memref<64x40xf32>,
                                 %c: memref<20x40xf32>) {
  linalg.matmul ins(%a, %b : memref<20x64xf32>, memref<64x40xf32>)
                outs(%c : memref<20x40xf32>)
  return
}
