// RUN: pb-compile %s --target=cpu-host -o %t.opt
// RUN: pb-compile %s --target=cpu-host --options=pipeline=reference -o %t.ref
// RUN: pb-run %t.opt --check-against=%t.ref --atol=1e-4 | FileCheck %s
// RUN: pb-opt %s --target=cpu-x86-64-v4 --pb-pipeline=s1,s2,s3 --pb-explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: pb-opt %s --target=cpu-x86-64-v3 --pb-pipeline=s1,s2,s3 --pb-explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=AVX2
// Channels-last convolutions with a window read A (the pixels) in place
// through a flattened M (image, oh, ow): on 32 vector registers their
// register tile is 6 rows x 4 vectors instead of 12 x 2, each row's index
// into A live across the K loop and each 64-column panel reading A once.
// With 16 registers the tile stays 6 x 2 (a 3 x 4 tile would have fewer
// rows than vectors across).
//
// @conv3x3: 2 x 8 x 7 = 112 pixels (18 full tiles and one of 4 rows), 128
// filters (two panels), nine window positions of 64 channels, the fill
// folded into the first K block and bias + ReLU fused into the stores.
// EXPLAIN: matrix units: C's fill folded into the first K block
// EXPLAIN: matrix units: linalg.generic MxNxK 112x128x64 -> VFMA_F32_1x16x1_F32 register tile 6x64 (24 accumulators of 32 registers)
// EXPLAIN: matrix units: epilogue of 2 ops fused
// AVX2: matrix units: linalg.generic MxNxK 112x128x64 -> VFMA_F32_1x8x1_F32 register tile 6x16 (12 accumulators of 16 registers)
// CHECK: OK conv3x3: 14336 values match the reference
//
// @pointwise_k200: a 1x1 convolution over 200 channels into 64 filters,
// 35 pixels, added to C's earlier contents (no fill). Its pixels are one
// contiguous run of rows (n, oh, ow index the input directly), so A is
// read through them collapsed, one base address per tile as in a 2-D A,
// and the tile stays 12 x 2: 3 M blocks (two full tiles and one of 11
// rows), K blocks of 112 and 88.
// EXPLAIN: matrix units: linalg.generic MxNxK 35x64x200 -> VFMA_F32_1x16x1_F32 register tile 12x32 (24 accumulators of 32 registers), KC=112 (l1d)
// CHECK: OK pointwise_k200: 2240 values match the reference
//
// @matmul: a plain 2-D matmul (one M loop: its rows are a fixed stride
// apart) keeps the 12 x 2 tile.
// EXPLAIN: matrix units: linalg.matmul MxNxK 40x128x64 -> VFMA_F32_1x16x1_F32 register tile 12x32 (24 accumulators of 32 registers)
// CHECK: OK matmul: 5120 values match the reference

#in = affine_map<(n, oh, ow, f, kh, kw, c) -> (n, oh + kh, ow + kw, c)>
#hwcf = affine_map<(n, oh, ow, f, kh, kw, c) -> (kh, kw, c, f)>
#out = affine_map<(n, oh, ow, f, kh, kw, c) -> (n, oh, ow, f)>
#bias = affine_map<(n, h, w, f) -> (f)>
#id4 = affine_map<(n, h, w, f) -> (n, h, w, f)>
func.func @conv3x3(%x: tensor<2x10x9x64xf32>, %w: tensor<3x3x64x128xf32>,
                   %b: tensor<128xf32>) -> tensor<2x8x7x128xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x8x7x128xf32>
  %o = linalg.fill ins(%z : f32) outs(%e : tensor<2x8x7x128xf32>) -> tensor<2x8x7x128xf32>
  %c = linalg.generic {indexing_maps = [#in, #hwcf, #out],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel",
                                         "reduction", "reduction", "reduction"]}
       ins(%x, %w : tensor<2x10x9x64xf32>, tensor<3x3x64x128xf32>)
       outs(%o : tensor<2x8x7x128xf32>) {
  ^bb0(%a: f32, %bb: f32, %acc: f32):
    %m = arith.mulf %a, %bb : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x8x7x128xf32>
  %r = linalg.generic {indexing_maps = [#id4, #bias, #id4],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%c, %b : tensor<2x8x7x128xf32>, tensor<128xf32>)
       outs(%e : tensor<2x8x7x128xf32>) {
  ^bb0(%v: f32, %bv: f32, %out: f32):
    %s = arith.addf %v, %bv : f32
    %relu = arith.maximumf %s, %z : f32
    linalg.yield %relu : f32
  } -> tensor<2x8x7x128xf32>
  return %r : tensor<2x8x7x128xf32>
}

#in1 = affine_map<(n, oh, ow, f, c) -> (n, oh, ow, c)>
#cf = affine_map<(n, oh, ow, f, c) -> (c, f)>
#out1 = affine_map<(n, oh, ow, f, c) -> (n, oh, ow, f)>
func.func @pointwise_k200(%x: tensor<1x7x5x200xf32>, %w: tensor<200x64xf32>,
                          %acc: tensor<1x7x5x64xf32>) -> tensor<1x7x5x64xf32> {
  %r = linalg.generic {indexing_maps = [#in1, #cf, #out1],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel",
                                         "reduction"]}
       ins(%x, %w : tensor<1x7x5x200xf32>, tensor<200x64xf32>)
       outs(%acc : tensor<1x7x5x64xf32>) {
  ^bb0(%a: f32, %bb: f32, %s0: f32):
    %m = arith.mulf %a, %bb : f32
    %s = arith.addf %s0, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x7x5x64xf32>
  return %r : tensor<1x7x5x64xf32>
}

func.func @matmul(%a: tensor<40x64xf32>, %b: tensor<64x128xf32>) -> tensor<40x128xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<40x128xf32>
  %o = linalg.fill ins(%z : f32) outs(%e : tensor<40x128xf32>) -> tensor<40x128xf32>
  %r = linalg.matmul ins(%a, %b : tensor<40x64xf32>, tensor<64x128xf32>)
                     outs(%o : tensor<40x128xf32>) -> tensor<40x128xf32>
  return %r : tensor<40x128xf32>
}
