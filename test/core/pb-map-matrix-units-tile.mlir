// RUN: pb-opt %s --split-input-file --pass-pipeline='builtin.module(pb-attach-target{target=cpu-sapphire-rapids},pb-map-matrix-units)' | FileCheck %s
// RUN: pb-opt %s --split-input-file --pb-explain --pass-pipeline='builtin.module(pb-attach-target{target=cpu-sapphire-rapids},pb-map-matrix-units)' -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: pb-opt %s --split-input-file --pb-explain --pass-pipeline='builtin.module(pb-attach-target{target=cpu-x86-64-v4},pb-map-matrix-units)' -o /dev/null 2>&1 | FileCheck %s --check-prefix=V4
// RUN: pb-opt %s --split-input-file --pass-pipeline='builtin.module(pb-attach-target{target=cpu-zen4},pb-map-matrix-units)' | FileCheck %s --check-prefix=DOT
// RUN: pb-opt %s --split-input-file --pb-explain --pass-pipeline='builtin.module(pb-attach-target{target=cpu-zen4},pb-map-matrix-units)' -o /dev/null 2>&1 | FileCheck %s --check-prefix=DOTX

// bf16 x bf16 -> f32 on a chip whose .td states an AMX unit: A read in
// place (its rows are the tiles' rows and need no padding), B packed into K
// pairs per column (VNNI: two rows of B read as vectors and interleaved),
// 2 x 2 accumulator tiles of 16x16 (8 tile registers), the first K block
// from zero tiles, C from the accumulated tiles. Each packed buffer's rows
// are one cache line longer than their data (64 B: 16 column pairs, 16
// f32). A chip without the unit keeps the widening FMA.
// EXPLAIN: remark: pb-explain: matrix units: linalg.matmul MxNxK 64x64x128 -> AMX_BF16_16x16x32_F32 tiles, 2x2 accumulator tiles of 16x16 per block, KC=128, MC=32, NC=32, 4 tasks; A read in place, B packed
// V4: matrix units: linalg.matmul MxNxK 64x64x128 -> VFMA_BF16_1x16x1_F32 register tile
// On a chip whose bf16 unit is a vector dot product (AVX512-BF16), the
// same packed B; the block of accumulator vectors (8 rows x 2 vectors of 16
// lanes) runs a loop over K's pairs: A's pair broadcast as one 32-bit lane,
// B's packed rows loaded as 16 pairs, VDPBF16PS.
// DOTX: matrix units: linalg.matmul MxNxK 64x64x128 -> VDPBF16PS_BF16_1x16x2_F32 vectors, 8x2 accumulator vectors of 1x16 per block
// DOT-LABEL: func.func @matmul_bf16
// DOT: %[[BP:.*]] = memref.alloc() {{.*}} : memref<64x80x2xbf16>
// DOT: vector.shuffle
// DOT: scf.parallel
// DOT: %[[ACC:.*]]:16 = scf.for {{.*}} iter_args({{.*}}) -> (vector<16xf32>,
// DOT: %[[PAIR:.*]] = vector.load %{{.*}} : memref<64x128xbf16>, vector<2xbf16>
// DOT: %[[WORD:.*]] = vector.bitcast %[[PAIR]] : vector<2xbf16> to vector<1xi32>
// DOT: %[[W:.*]] = vector.extract %[[WORD]][0]
// DOT: %[[BC:.*]] = vector.broadcast %[[W]] : i32 to vector<16xi32>
// DOT: %[[AV:.*]] = vector.bitcast %[[BC]] : vector<16xi32> to vector<32xbf16>
// DOT: %[[BV:.*]] = vector.load %{{.*}} : memref<64x160xbf16>, vector<32xbf16>
// DOT: x86vector.avx512.dot %{{.*}}, %[[AV]], %[[BV]] : vector<32xbf16> -> vector<16xf32>
// DOT: scf.yield
// DOT: vector.store %[[ACC]]#0
// CHECK-LABEL: func.func @matmul_bf16
// CHECK-SAME: (%[[A:.*]]: memref<64x128xbf16>,
// CHECK-NOT: linalg.matmul
// CHECK: %[[CP:.*]] = memref.alloc() {{.*}} : memref<64x80xf32>
// CHECK-NOT: linalg.generic
// CHECK: %[[BP:.*]] = memref.alloc() {{.*}} : memref<64x80x2xbf16>
// CHECK: %[[BR:.*]] = memref.collapse_shape %[[BP]] {{\[}}[0], [1, 2]] : memref<64x80x2xbf16> into memref<64x160xbf16>
// CHECK: scf.parallel
// CHECK: %[[R0:.*]] = vector.transfer_read %{{.*}} : memref<128x64xbf16>, vector<16xbf16>
// CHECK: %[[R1:.*]] = vector.transfer_read %{{.*}} : memref<128x64xbf16>, vector<16xbf16>
// CHECK: %[[PAIRS:.*]] = vector.shuffle %[[R0]], %[[R1]] [0, 16, 1, 17, 2, 18
// CHECK: vector.transfer_write %[[PAIRS]], %[[BR]]
// CHECK: scf.parallel
// CHECK: amx.tile_zero : !amx.tile<16x16xf32>
// CHECK: amx.tile_load %[[A]]{{.*}} into !amx.tile<16x32xbf16>
// CHECK: amx.tile_load %[[BR]]{{.*}} into !amx.tile<16x32xbf16>
// CHECK: amx.tile_mulf {{.*}} : !amx.tile<16x32xbf16>, !amx.tile<16x32xbf16>, !amx.tile<16x16xf32>
// CHECK: amx.tile_store %[[CP]]
// CHECK: } {pb.level = "Core"}
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : memref<64x64xf32{{.*}}>) outs(%{{.*}} : memref<64x64xf32>)
// CHECK: arith.addf
// CHECK: memref.dealloc %[[CP]]
func.func @matmul_bf16(%a: memref<64x128xbf16>, %b: memref<128x64xbf16>,
                       %c: memref<64x64xf32>) {
  linalg.matmul ins(%a, %b : memref<64x128xbf16>, memref<128x64xbf16>)
                outs(%c : memref<64x64xf32>)
  return
}

// -----

// Sizes that are no multiple of a tile: the packed operands are zero past M,
// N and K (a fill first), later K blocks read the accumulators back.
// K's 94 steps of 32 make 2 K blocks of 47 (at most 64 steps, unrolled).
// EXPLAIN: MxNxK 33x47x3000 -> AMX_BF16_16x16x32_F32 tiles, {{.*}} KC=1504,
// CHECK-LABEL: func.func @matmul_edges
// CHECK: memref.alloc() {{.*}} : memref<64x3040xbf16>
// CHECK: linalg.fill
// CHECK: memref.alloc() {{.*}} : memref<1504x80x2xbf16>
// CHECK: linalg.fill
// CHECK: scf.for %{{.*}} = %c1504{{.*}} to %c3008 step %c1504
// CHECK: amx.tile_load {{.*}} into !amx.tile<16x16xf32>
func.func @matmul_edges(%a: memref<33x3000xbf16>, %b: memref<3000x47xbf16>,
                        %c: memref<33x47xf32>) {
  linalg.matmul ins(%a, %b : memref<33x3000xbf16>, memref<3000x47xbf16>)
                outs(%c : memref<33x47xf32>)
  return
}

// -----

// A K that is no multiple of the quads, on the chip's only int8 unit:
// padded, A packed with zeros past K, B's full quads packed by one generic
// and its last two rows into the first lanes of packed row 32 by another
// (the fill leaves the other lanes zero).
// EXPLAIN: MxNxK 64x64x130 -> AMX_I8_16x16x64_I32 tiles, {{.*}}, KC=192, {{.*}}; A packed, B packed
// CHECK: #[[ROW128:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d2 + 128, d1)>
// CHECK-LABEL: func.func @odd_k
// CHECK: %[[AP:.*]] = memref.alloc() {{.*}} : memref<64x256xi8>
// CHECK: linalg.fill {{.*}} outs(%[[AP]] : memref<64x256xi8>)
// CHECK: %[[BP:.*]] = memref.alloc() {{.*}} : memref<48x80x4xi8>
// CHECK: linalg.fill {{.*}} outs(%[[BP]] : memref<48x80x4xi8>)
// CHECK: %[[QUADS:.*]] = memref.subview %[[BP]][0, 0, 0] [32, 64, 4]
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : memref<130x64xi8>) outs(%[[QUADS]] :
// CHECK: %[[LAST:.*]] = memref.subview %[[BP]][32, 0, 0] [1, 64, 2]
// CHECK: linalg.generic {indexing_maps = [#[[ROW128]], #{{.*}}], {{.*}} ins(%{{.*}} : memref<130x64xi8>) outs(%[[LAST]] :
// CHECK: amx.tile_muli
func.func @odd_k(%a: memref<64x130xi8>, %b: memref<130x64xi8>,
                 %c: memref<64x64xi32>) {
  linalg.matmul ins(%a, %b : memref<64x130xi8>, memref<130x64xi8>)
                outs(%c : memref<64x64xi32>)
  return
}

// -----

// Where the unit does not fit, the FMA micro-kernel: a K that is odd (the
// FMA reads it as it is), fewer rows than a tile, f32 operands.
// EXPLAIN: matrix units: not on AMX_BF16_16x16x32_F32: K (129) is not a multiple of the 2 elements that share a 32-bit lane of B's tile (padded only where no other unit takes these types)
// EXPLAIN: MxNxK 64x64x129 -> VFMA_BF16_1x16x1_F32 register tile
// EXPLAIN: matrix units: not on AMX_BF16_16x16x32_F32: M x N x K 8x64x128 is smaller than the unit's 16x16x32 tile
// EXPLAIN: MxNxK 8x64x128 -> VFMA_BF16_1x16x1_F32 register tile
// EXPLAIN: MxNxK 64x64x128 -> VFMA_F32_1x16x1_F32 register tile
func.func @refused(%a: memref<64x129xbf16>, %b: memref<129x64xbf16>,
                   %c: memref<64x64xf32>, %a8: memref<8x128xbf16>,
                   %b8: memref<128x64xbf16>, %c8: memref<8x64xf32>,
                   %af: memref<64x128xf32>, %bf: memref<128x64xf32>,
                   %cf: memref<64x64xf32>) {
  linalg.matmul ins(%a, %b : memref<64x129xbf16>, memref<129x64xbf16>)
                outs(%c : memref<64x64xf32>)
  linalg.matmul ins(%a8, %b8 : memref<8x128xbf16>, memref<128x64xbf16>)
                outs(%c8 : memref<8x64xf32>)
  linalg.matmul ins(%af, %bf : memref<64x128xf32>, memref<128x64xf32>)
                outs(%cf : memref<64x64xf32>)
  return
}

// -----

// Batch loops index the packed buffers and are tasks beside the M and N
// blocks; B stored (N, K) (x @ W^T, k of attention scores) is read as
// 32-bit pairs along K, 16 x 16 of them transposed in registers.
// EXPLAIN: linalg.batch_matmul MxNxK 48x64x64 -> AMX_BF16_16x16x32_F32 tiles
// CHECK-LABEL: func.func @batch_transposed
// CHECK-DAG: memref.alloc() {{.*}} : memref<4x64x96xbf16>
// CHECK-DAG: memref.alloc() {{.*}} : memref<4x64x80xf32>
// CHECK: memref.alloc() {{.*}} : memref<4x32x80x2xbf16>
// CHECK: scf.parallel
// CHECK-COUNT-16: vector.transfer_read %{{.*}} : memref<4x64x64xbf16>, vector<32xbf16>
// CHECK: vector.bitcast %{{.*}} : vector<32xbf16> to vector<16xi32>
// CHECK-COUNT-64: vector.shuffle
// CHECK-COUNT-16: vector.transfer_write %{{.*}} : vector<32xbf16>, memref<4x32x160xbf16>
// CHECK: scf.parallel
// CHECK: amx.tile_load %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] : memref<4x32x160xbf16> into !amx.tile<16x32xbf16>
// CHECK: amx.tile_mulf
func.func @batch_transposed(%a: memref<4x48x64xbf16>, %b: memref<4x64x64xbf16>,
                            %c: memref<4x48x64xf32>) {
  linalg.batch_matmul
      indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>,
                       affine_map<(b, m, n, k) -> (b, n, k)>,
                       affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%a, %b : memref<4x48x64xbf16>, memref<4x64x64xbf16>)
      outs(%c : memref<4x48x64xf32>)
  return
}

// -----

// A convolution: K runs over (kh, kw, c), flattened in that order; A is
// packed through its window map (an im2col copy), B through K's
// delinearized pairs.
// EXPLAIN: linalg.conv_2d_nhwc_hwcf MxNxK 32x24x144 -> AMX_BF16_16x16x32_F32 tiles
// CHECK-LABEL: func.func @conv
// CHECK: memref.alloc() {{.*}} : memref<32x192xbf16>
// CHECK: memref.expand_shape %{{.*}} {{\[}}[0, 1, 2], [3, 4, 5]] output_shape [2, 4, 4, 3, 3, 16]
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : memref<2x9x9x16xbf16>) outs(%{{.*}} : memref<2x4x4x3x3x16xbf16, strided<[3072, 768, 192, 48, 16, 1]>>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : memref<3x3x16x24xbf16>) outs(%{{.*}} : memref<72x24x2xbf16, strided<[96, 2, 1]>>)
// CHECK: amx.tile_mulf
func.func @conv(%in: memref<2x9x9x16xbf16>, %f: memref<3x3x16x24xbf16>,
                %out: memref<2x4x4x24xf32>) {
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>,
                            strides = dense<2> : tensor<2xi64>}
      ins(%in, %f : memref<2x9x9x16xbf16>, memref<3x3x16x24xbf16>)
      outs(%out : memref<2x4x4x24xf32>)
  return
}

// -----

// int8 x int8 -> int32 on the chip's int8 unit: K in quads (16 rows of 16
// column quads per B tile), signed products (tile_muli: tdpbssd).
// EXPLAIN: linalg.matmul MxNxK 64x64x128 -> AMX_I8_16x16x64_I32 tiles, 2x2 accumulator tiles of 16x16 per block, KC=128
// CHECK-LABEL: func.func @matmul_i8
// CHECK: memref.alloc() {{.*}} : memref<64x80xi32>
// CHECK: %[[BP:.*]] = memref.alloc() {{.*}} : memref<32x80x4xi8>
// CHECK: memref.collapse_shape %[[BP]] {{\[}}[0], [1, 2]] : memref<32x80x4xi8> into memref<32x320xi8>
// B's quads packed in registers: four rows interleaved by bytes, then by
// byte pairs.
// CHECK: %[[Q01:.*]] = vector.shuffle %{{.*}}, %{{.*}} [0, 16, 1, 17, {{.*}}] : vector<16xi8>, vector<16xi8>
// CHECK: %[[Q23:.*]] = vector.shuffle %{{.*}}, %{{.*}} [0, 16, 1, 17, {{.*}}] : vector<16xi8>, vector<16xi8>
// CHECK: vector.shuffle %[[Q01]], %[[Q23]] [0, 1, 32, 33, 2, 3, 34, 35, {{.*}}, 30, 31, 62, 63] : vector<32xi8>, vector<32xi8>
// CHECK: vector.transfer_write {{.*}} : vector<64xi8>, memref<32x320xi8>
// CHECK: amx.tile_load {{.*}} into !amx.tile<16x64xi8>
// CHECK: amx.tile_muli {{.*}} : !amx.tile<16x64xi8>, !amx.tile<16x64xi8>, !amx.tile<16x16xi32>
// CHECK: linalg.generic
// CHECK: arith.addi
func.func @matmul_i8(%a: memref<64x128xi8>, %b: memref<128x64xi8>,
                     %c: memref<64x64xi32>) {
  linalg.matmul ins(%a, %b : memref<64x128xi8>, memref<128x64xi8>)
                outs(%c : memref<64x64xi32>)
  return
}

// -----

// Rows of A 4 KiB apart (K = 2048 bf16) start in one set of the 48 KiB,
// 12-way L1 (a 4 KiB set span): a tile's 16 rows would evict each other, so
// A is packed into rows one line longer.
// EXPLAIN: linalg.matmul MxNxK 32x32x2048 -> AMX_BF16_16x16x32_F32 tiles, {{.*}}; A packed, B packed
// CHECK-LABEL: func.func @aliasing_rows
// CHECK: memref.alloc() {{.*}} : memref<32x2080xbf16>
func.func @aliasing_rows(%a: memref<32x2048xbf16>, %b: memref<2048x32xbf16>,
                         %c: memref<32x32xf32>) {
  linalg.matmul ins(%a, %b : memref<32x2048xbf16>, memref<2048x32xbf16>)
                outs(%c : memref<32x32xf32>)
  return
}

// -----

// Inside a task of an enclosing parallel loop (pb-fuse-attention's blocks
// of rows), the FMA micro-kernel, which runs as one task.
// EXPLAIN: matrix units: not on AMX_BF16_16x16x32_F32: inside a task of an enclosing parallel loop
// EXPLAIN: MxNxK 32x64x128 -> VFMA_BF16_1x16x1_F32 register tile {{.*}}, inside a task of the enclosing loop
func.func @inside_task(%a: memref<2x32x128xbf16>, %b: memref<128x64xbf16>,
                       %c: memref<2x32x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  scf.parallel (%i) = (%c0) to (%c2) step (%c1) {
    %ai = memref.subview %a[%i, 0, 0] [1, 32, 128] [1, 1, 1]
        : memref<2x32x128xbf16> to memref<32x128xbf16, strided<[128, 1], offset: ?>>
    %ci = memref.subview %c[%i, 0, 0] [1, 32, 64] [1, 1, 1]
        : memref<2x32x64xf32> to memref<32x64xf32, strided<[64, 1], offset: ?>>
    linalg.matmul ins(%ai, %b : memref<32x128xbf16, strided<[128, 1], offset: ?>>, memref<128x64xbf16>)
                  outs(%ci : memref<32x64xf32, strided<[64, 1], offset: ?>>)
    scf.reduce
  }
  return
}

// -----

// A constant int8 B (a frozen weight) on VPDPBUSD: packed at compile time,
// and its column sums too (column n sums n - 8 + k over k < 8, 8n - 36).
// K is one block: its micro-kernels store C themselves, 128 x the column
// sums subtracted and C's old value added on the way, with no buffer and
// no copy.
// DOTX: MxNxK 24x16x8 -> VPDPBUSD_I8_1x16x4_I32 vectors, {{.*}}; A read in place, B packed at compile time (in 4-element groups along K), C stored by the micro-kernels (K is one block)
// DOT: memref.global "private" constant @w_column_sums : memref<16xi32> = dense<[-36, -28, -20, -12, -4, 4, 12, 20, 28, 36, 44, 52, 60, 68, 76, 84]>
// DOT-LABEL: func.func @constant_int8
// DOT-NOT: memref.alloc
// DOT: %[[SUMS:.*]] = memref.get_global @w_column_sums : memref<16xi32>
// DOT: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// DOT: %[[COLUMN:.*]] = vector.load %[[SUMS]][%{{.*}}] : memref<16xi32>, vector<16xi32>
// DOT: %[[OFFSET:.*]] = arith.muli %[[COLUMN]], %{{.*}} : vector<16xi32>
// DOT: %[[SUM:.*]] = arith.subi %{{.*}}, %[[OFFSET]] : vector<16xi32>
// C has no fill here: its old value is added.
// DOT: %[[OLD:.*]] = vector.transfer_read %arg1[%{{.*}}, %{{.*}}], %{{.*}} {in_bounds = [true]} : memref<24x16xi32>, vector<16xi32>
// DOT: %[[C:.*]] = arith.addi %[[SUM]], %[[OLD]] : vector<16xi32>
// DOT: vector.transfer_write %[[C]], %arg1[%{{.*}}, %{{.*}}] {in_bounds = [true]} : vector<16xi32>, memref<24x16xi32>
// DOT-NOT: linalg.generic
// DOT-NOT: memref.dealloc
// DOT: return
memref.global "private" constant @w : memref<8x16xi8> = dense<[[-8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7], [-7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8], [-6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [-5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10], [-4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], [-3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], [-2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13], [-1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]]>
func.func @constant_int8(%a: memref<24x8xi8>, %c: memref<24x16xi32>) {
  %b = memref.get_global @w : memref<8x16xi8>
  linalg.matmul ins(%a, %b : memref<24x8xi8>, memref<8x16xi8>)
                outs(%c : memref<24x16xi32>)
  return
}

// -----

// A bias + tanh epilogue rounding to bf16, on a temporary f32 result of a
// bf16 contraction on VDPBF16PS whose K (64) is one block: the
// micro-kernels apply the epilogue to their sums and store its output
// themselves (C's rows past M = 53 skipped), with no accumulated buffer and
// no copy to C.
// DOTX: MxNxK 53x32x64 -> VDPBF16PS_BF16_1x16x2_F32 vectors, {{.*}}, C stored by the micro-kernels (K is one block) through the epilogue
// DOTX: matrix units: epilogue of 3 ops fused into the last stores of the dot products
// DOT-LABEL: func.func @dot_epilogue
// DOT-SAME: %[[OUT:[a-z0-9]+]]: memref<53x32xbf16>) {
// DOT-NOT: memref.alloc() {{.*}} : memref<{{[0-9]+}}x{{[0-9]+}}xf32>
// DOT: x86vector.avx512.dot
// DOT: %[[ROW:.*]] = arith.cmpi ult, %{{.*}}, %c53 : index
// DOT: scf.if %[[ROW]] {
// DOT: %[[BIAS:.*]] = vector.load %{{.*}} : memref<32xf32>, vector<16xf32>
// DOT: %[[S:.*]] = arith.addf %{{.*}}, %[[BIAS]] : vector<16xf32>
// DOT: %[[T:.*]] = math.tanh %[[S]] : vector<16xf32>
// DOT: %[[H:.*]] = arith.truncf %[[T]] : vector<16xf32> to vector<16xbf16>
// DOT: vector.transfer_write %[[H]], %[[OUT]][{{.*}}] {in_bounds = [true]} : vector<16xbf16>, memref<53x32xbf16>
// DOT-NOT: linalg.generic
// DOT: return
func.func @dot_epilogue(%a: memref<53x64xbf16>, %b: memref<64x32xbf16>,
                        %bias: memref<32xf32>, %out: memref<53x32xbf16>) {
  %z = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<53x32xf32>
  linalg.fill ins(%z : f32) outs(%c : memref<53x32xf32>)
  linalg.matmul ins(%a, %b : memref<53x64xbf16>, memref<64x32xbf16>)
                outs(%c : memref<53x32xf32>)
  linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>,
                       affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias : memref<53x32xf32>, memref<32xf32>)
      outs(%out : memref<53x32xbf16>) {
  ^bb0(%v: f32, %bb: f32, %o: bf16):
    %s = arith.addf %v, %bb : f32
    %t = math.tanh %s : f32
    %h = arith.truncf %t : f32 to bf16
    linalg.yield %h : bf16
  }
  memref.dealloc %c : memref<53x32xf32>
  return
}

// -----

// K of several blocks (4096): the sums go through the accumulated buffer
// and a copy to C; the epilogue stays for S4.
// DOTX: MxNxK 53x32x4096 -> VDPBF16PS_BF16_1x16x2_F32 vectors, {{.*}}, C through a {{[0-9]+}}x32 buffer
// DOT-LABEL: func.func @dot_long_k
// DOT: memref.alloc() {{.*}} : memref<{{[0-9]+}}x48xf32>
// DOT: linalg.generic
func.func @dot_long_k(%a: memref<53x4096xbf16>, %b: memref<4096x32xbf16>,
                      %out: memref<53x32xf32>) {
  %z = arith.constant 0.0 : f32
  linalg.fill ins(%z : f32) outs(%out : memref<53x32xf32>)
  linalg.matmul ins(%a, %b : memref<53x4096xbf16>, memref<4096x32xbf16>)
                outs(%out : memref<53x32xf32>)
  return
}
