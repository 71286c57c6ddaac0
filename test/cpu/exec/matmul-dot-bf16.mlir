// REQUIRES: host-avx512-bf16
// RUN: pb-compile %s --target=cpu-zen4 -o %t.opt
// RUN: pb-compile %s --target=cpu-zen4 --options=pipeline=reference -o %t.ref
// RUN: pb-run %t.opt --check-against=%t.ref --rtol=1e-3 --atol=1e-3 | FileCheck %s
// RUN: pb-opt %s --target=cpu-zen4 --pb-pipeline=s1,s2,s3 --pb-explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// The artifact's code multiplies with VDPBF16PS:
// RUN: python3 -c "import sys; sys.path.insert(0, sys.argv[1]); import artifact_file as a; open(sys.argv[3], 'wb').write(a.split(open(sys.argv[2], 'rb').read())[1])" %pb_test_lib %t.opt %t.opt.so
// RUN: llvm-objdump -d %t.opt.so | FileCheck %s --check-prefix=ASM
//
// bf16 contractions with f32 accumulation on AVX512-BF16 dot products
// (cpu-zen4's VDPBF16PS_BF16_1x16x2_F32), at sizes that are no multiple of
// a register block, with a fill, an accumulation into C and an epilogue,
// against the reference lowering (f32 sums of the same bf16 products, in
// another order).
// EXPLAIN-COUNT-6: -> VDPBF16PS_BF16_1x16x2_F32 vectors
// ASM: vdpbf16ps
// ASM-NOT: ldtilecfg
// CHECK: OK decode: 300 values match the reference
// CHECK: OK odd: 1551 values match the reference
// CHECK: OK accumulate: 2048 values match the reference
// CHECK: OK linear_gelu: 3072 values match the reference
// CHECK: OK batched: 8192 values match the reference
// CHECK: OK conv: 768 values match the reference

// One row (a token's decode), N no multiple of the register block.
func.func @decode(%a: tensor<1x256xbf16>, %b: tensor<256x300xbf16>) -> tensor<1x300xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x300xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x300xf32>) -> tensor<1x300xf32>
  %r = linalg.matmul ins(%a, %b : tensor<1x256xbf16>, tensor<256x300xbf16>)
                     outs(%f : tensor<1x300xf32>) -> tensor<1x300xf32>
  return %r : tensor<1x300xf32>
}

// K = 3000: several K blocks, the later ones reading the accumulators back.
func.func @odd(%a: tensor<33x3000xbf16>, %b: tensor<3000x47xbf16>) -> tensor<33x47xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<33x47xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<33x47xf32>) -> tensor<33x47xf32>
  %r = linalg.matmul ins(%a, %b : tensor<33x3000xbf16>, tensor<3000x47xbf16>)
                     outs(%f : tensor<33x47xf32>) -> tensor<33x47xf32>
  return %r : tensor<33x47xf32>
}

func.func @accumulate(%a: tensor<64x96xbf16>, %b: tensor<96x32xbf16>,
                      %c: tensor<64x32xf32>) -> tensor<64x32xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<64x96xbf16>, tensor<96x32xbf16>)
                     outs(%c : tensor<64x32xf32>) -> tensor<64x32xf32>
  return %r : tensor<64x32xf32>
}

// x @ W^T + bias, then tanh, back to bf16 (a transformer's projection).
func.func @linear_gelu(%x: tensor<48x256xbf16>, %w: tensor<64x256xbf16>,
                       %bias: tensor<64xf32>) -> tensor<48x64xbf16> {
  %z = arith.constant 0.5 : f32
  %e = tensor.empty() : tensor<48x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<48x64xf32>) -> tensor<48x64xf32>
  %r = linalg.matmul
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                       affine_map<(m, n, k) -> (n, k)>,
                       affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<48x256xbf16>, tensor<64x256xbf16>)
      outs(%f : tensor<48x64xf32>) -> tensor<48x64xf32>
  %o = tensor.empty() : tensor<48x64xbf16>
  %g = linalg.generic
      {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (n)>,
                        affine_map<(m, n) -> (m, n)>],
       iterator_types = ["parallel", "parallel"]}
      ins(%r, %bias : tensor<48x64xf32>, tensor<64xf32>) outs(%o : tensor<48x64xbf16>) {
  ^bb0(%s: f32, %bb: f32, %out: bf16):
    %y = arith.addf %s, %bb : f32
    %t = math.tanh %y : f32
    %h = arith.truncf %t : f32 to bf16
    linalg.yield %h : bf16
  } -> tensor<48x64xbf16>
  return %g : tensor<48x64xbf16>
}

func.func @batched(%a: tensor<4x64x32xbf16>, %b: tensor<4x32x32xbf16>) -> tensor<4x64x32xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x64x32xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x64x32xf32>) -> tensor<4x64x32xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<4x64x32xbf16>, tensor<4x32x32xbf16>)
                           outs(%f : tensor<4x64x32xf32>) -> tensor<4x64x32xf32>
  return %r : tensor<4x64x32xf32>
}

// A stride-2 3x3 convolution, K = (kh, kw, c) = 144.
func.func @conv(%in: tensor<2x9x9x16xbf16>, %f: tensor<3x3x16x24xbf16>) -> tensor<2x4x4x24xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x4x24xf32>
  %o = linalg.fill ins(%z : f32) outs(%e : tensor<2x4x4x24xf32>) -> tensor<2x4x4x24xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>,
                                 strides = dense<2> : tensor<2xi64>}
      ins(%in, %f : tensor<2x9x9x16xbf16>, tensor<3x3x16x24xbf16>)
      outs(%o : tensor<2x4x4x24xf32>) -> tensor<2x4x4x24xf32>
  return %r : tensor<2x4x4x24xf32>
}
