// REQUIRES: host-avx512-vnni
// RUN: pb-compile %s --target=cpu-zen4 -o %t.opt
// RUN: pb-compile %s --target=cpu-zen4 --options=pipeline=reference -o %t.ref
// RUN: pb-run %t.opt --check-against=%t.ref --rtol=0 --atol=0 | FileCheck %s
// RUN: pb-opt %s --target=cpu-zen4 --pb-pipeline=s1,s2,s3 --pb-explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: python3 -c "import sys; sys.path.insert(0, sys.argv[1]); import artifact_file as a; open(sys.argv[3], 'wb').write(a.split(open(sys.argv[2], 'rb').read())[1])" %pb_test_lib %t.opt %t.opt.so
// RUN: llvm-objdump -d %t.opt.so | FileCheck %s --check-prefix=ASM
//
// int8 x int8 -> int32 (torch._int_mm) on AVX512-VNNI dot products
// (cpu-zen4's VPDPBUSD_I8_1x16x4_I32: A's signed codes offset by 128 into
// u8, 128 x B's column sums subtracted in the copy to C), exactly equal to
// the reference lowering, at sizes that are no multiple of a register block
// and with K over several K blocks; N below the unit's 16 columns too (the
// chip has no other i8 unit).
// EXPLAIN-COUNT-3: -> VPDPBUSD_I8_1x16x4_I32 vectors
// EXPLAIN: MxNxK 7x20x16 -> VPDPBUSD_I8_1x16x4_I32 vectors
// K that is no multiple of 4 (padded with zeros to the quads):
// EXPLAIN: MxNxK 21x40x147 -> VPDPBUSD_I8_1x16x4_I32 vectors
// EXPLAIN: MxNxK 32x64x150 -> VPDPBUSD_I8_1x16x4_I32 vectors, {{.*}}; A packed
// EXPLAIN: MxNxK 18x32x147 -> VPDPBUSD_I8_1x16x4_I32 vectors
// ASM: vpdpbusd
// ASM-NOT: tdpbssd
// CHECK: OK odd: 1551 values match the reference
// CHECK: OK long_k: 4096 values match the reference
// CHECK: OK transposed_b: 3072 values match the reference
// CHECK: OK small: 140 values match the reference
// CHECK: OK odd_k: 840 values match the reference
// CHECK: OK odd_k_transposed: 2048 values match the reference
// CHECK: OK stem: 576 values match the reference

func.func @odd(%a: tensor<33x200xi8>, %b: tensor<200x47xi8>) -> tensor<33x47xi32> {
  %z = arith.constant 0 : i32
  %e = tensor.empty() : tensor<33x47xi32>
  %f = linalg.fill ins(%z : i32) outs(%e : tensor<33x47xi32>) -> tensor<33x47xi32>
  %r = linalg.matmul ins(%a, %b : tensor<33x200xi8>, tensor<200x47xi8>)
                     outs(%f : tensor<33x47xi32>) -> tensor<33x47xi32>
  return %r : tensor<33x47xi32>
}

func.func @long_k(%a: tensor<64x6000xi8>, %b: tensor<6000x64xi8>) -> tensor<64x64xi32> {
  %z = arith.constant 0 : i32
  %e = tensor.empty() : tensor<64x64xi32>
  %f = linalg.fill ins(%z : i32) outs(%e : tensor<64x64xi32>) -> tensor<64x64xi32>
  %r = linalg.matmul ins(%a, %b : tensor<64x6000xi8>, tensor<6000x64xi8>)
                     outs(%f : tensor<64x64xi32>) -> tensor<64x64xi32>
  return %r : tensor<64x64xi32>
}

// x @ W^T: B's quads along K transposed in registers as 32-bit words.
func.func @transposed_b(%x: tensor<48x256xi8>, %w: tensor<64x256xi8>) -> tensor<48x64xi32> {
  %z = arith.constant 0 : i32
  %e = tensor.empty() : tensor<48x64xi32>
  %f = linalg.fill ins(%z : i32) outs(%e : tensor<48x64xi32>) -> tensor<48x64xi32>
  %r = linalg.matmul
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                       affine_map<(m, n, k) -> (n, k)>,
                       affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<48x256xi8>, tensor<64x256xi8>)
      outs(%f : tensor<48x64xi32>) -> tensor<48x64xi32>
  return %r : tensor<48x64xi32>
}

func.func @small(%a: tensor<7x16xi8>, %b: tensor<16x20xi8>) -> tensor<7x20xi32> {
  %z = arith.constant 0 : i32
  %e = tensor.empty() : tensor<7x20xi32>
  %f = linalg.fill ins(%z : i32) outs(%e : tensor<7x20xi32>) -> tensor<7x20xi32>
  %r = linalg.matmul ins(%a, %b : tensor<7x16xi8>, tensor<16x20xi8>)
                     outs(%f : tensor<7x20xi32>) -> tensor<7x20xi32>
  return %r : tensor<7x20xi32>
}

// K = 147 = 3 x 7 x 7 (an RGB stem's), no multiple of the quads: its last
// group is padded with zeros.
func.func @odd_k(%a: tensor<21x147xi8>, %b: tensor<147x40xi8>) -> tensor<21x40xi32> {
  %z = arith.constant 0 : i32
  %e = tensor.empty() : tensor<21x40xi32>
  %f = linalg.fill ins(%z : i32) outs(%e : tensor<21x40xi32>) -> tensor<21x40xi32>
  %r = linalg.matmul ins(%a, %b : tensor<21x147xi8>, tensor<147x40xi8>)
                     outs(%f : tensor<21x40xi32>) -> tensor<21x40xi32>
  return %r : tensor<21x40xi32>
}

// x @ W^T with K = 150: B's groups along K, the last one half full.
func.func @odd_k_transposed(%x: tensor<32x150xi8>, %w: tensor<64x150xi8>) -> tensor<32x64xi32> {
  %z = arith.constant 0 : i32
  %e = tensor.empty() : tensor<32x64xi32>
  %f = linalg.fill ins(%z : i32) outs(%e : tensor<32x64xi32>) -> tensor<32x64xi32>
  %r = linalg.matmul
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                       affine_map<(m, n, k) -> (n, k)>,
                       affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<32x150xi8>, tensor<64x150xi8>)
      outs(%f : tensor<32x64xi32>) -> tensor<32x64xi32>
  return %r : tensor<32x64xi32>
}

// A 7x7 stride-2 convolution of 3 channels: K = (kh, kw, c) = 147.
func.func @stem(%in: tensor<2x11x11x3xi8>, %f: tensor<7x7x3x32xi8>) -> tensor<2x3x3x32xi32> {
  %z = arith.constant 0 : i32
  %e = tensor.empty() : tensor<2x3x3x32xi32>
  %o = linalg.fill ins(%z : i32) outs(%e : tensor<2x3x3x32xi32>) -> tensor<2x3x3x32xi32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>,
                                 strides = dense<2> : tensor<2xi64>}
      ins(%in, %f : tensor<2x11x11x3xi8>, tensor<7x7x3x32xi8>)
      outs(%o : tensor<2x3x3x32xi32>) -> tensor<2x3x3x32xi32>
  return %r : tensor<2x3x3x32xi32>
}
