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
// A constant B: packed, and its column sums taken, at compile time.
// EXPLAIN: MxNxK 20x24x40 -> VPDPBUSD_I8_1x16x4_I32 vectors, {{.*}}, B packed at compile time
// ASM: vpdpbusd
// ASM-NOT: tdpbssd
// CHECK: OK odd: 1551 values match the reference
// CHECK: OK long_k: 4096 values match the reference
// CHECK: OK transposed_b: 3072 values match the reference
// CHECK: OK small: 140 values match the reference
// CHECK: OK odd_k: 840 values match the reference
// CHECK: OK odd_k_transposed: 2048 values match the reference
// CHECK: OK stem: 576 values match the reference
// CHECK: OK frozen: 480 values match the reference

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

// A frozen weight: B packed and its column sums taken at compile time.
func.func @frozen(%a: tensor<20x40xi8>) -> tensor<20x24xi32> {
  %b = arith.constant dense<[[37, -51, 74, -104, -91, -80, 59, -99, -19, -109, -84, 94, 86, -93, -5, -82, 89, -98, -65, -14, -97, 75, -103, -15], [-105, -60, 20, 86, -55, -68, 29, -36, -76, -32, 62, -79, -96, -98, -23, 126, 90, 32, 110, 104, 57, 25, -1, -36], [-4, -87, 25, 125, 47, 101, 19, -91, -68, 86, -44, 47, -51, 122, 87, -108, -89, 32, 46, 51, 126, 105, -93, -81], [10, 114, -95, -97, 30, 100, 17, 69, 49, -117, 108, 53, -42, -69, 124, -98, -17, 19, -62, -2, 75, 72, 126, -87], [-43, 101, 77, 14, -58, 92, 14, 84, 55, 66, -10, -51, -86, -38, -51, -10, -9, -122, 120, -35, 6, 16, -126, -54], [86, 61, 35, -64, -101, 105, 72, 75, 76, 73, -75, 118, 77, -97, -31, -94, -22, 97, -45, -72, 46, -102, -76, -128], [-51, -77, 58, -115, -92, -22, 64, -52, 1, 49, 58, 114, -66, -69, 121, 110, 117, 119, 31, -85, -55, -76, 47, 7], [117, -46, -117, -23, 57, -53, -115, 24, -82, 5, 59, -43, 54, -14, 40, -14, -29, -6, 77, -12, -26, 124, 54, -114], [-114, 15, 113, 4, -29, 48, 100, 50, 58, -87, -16, -76, -12, 112, -28, 44, -24, 119, -128, 117, 48, -85, -67, 70], [-26, 116, -37, 94, 42, -84, 74, 109, 77, -85, -47, -41, -63, -114, -51, 110, -54, 114, 51, -49, -61, -118, -121, -76], [-57, 94, -29, -20, -114, 0, -20, 21, -5, 38, 4, 86, -61, -97, 53, 106, 87, -62, -51, -119, 97, -35, -126, -52], [-40, -56, 114, -67, -97, 38, 119, -74, -99, -1, -31, 13, -107, -78, 103, -114, -96, 98, 38, -26, 13, 103, 116, -2], [4, -25, 101, -58, 85, -66, 72, 98, 33, -91, -5, 91, -91, -20, 27, -66, -49, 59, -55, 1, -58, 111, -16, -80], [75, 121, -45, -14, -46, 92, 78, 45, 87, -28, 54, 35, -81, 59, -119, 45, 106, 97, -119, 68, 41, 23, -96, -71], [-11, -75, -85, 7, 11, -108, -36, 10, -62, 88, 4, 79, -52, 125, 39, -83, 14, -99, -35, 89, -91, 9, -120, -83], [5, -86, -15, -94, 7, -66, 104, -123, 45, 85, 9, -62, -106, -6, -72, -46, 6, -103, -36, -25, 31, 28, -23, 20], [100, -37, 10, 49, -119, 0, -110, -121, -119, -31, 115, -3, 100, -74, 93, 125, 73, 29, -18, -11, 47, -27, -57, 79], [49, -101, -62, -121, -92, 2, 92, -45, -100, -85, 67, 16, -4, 22, -105, 107, -34, -48, 9, 100, -127, 6, 58, 40], [37, -3, -111, 30, -17, 54, -35, -128, 43, 67, -86, 115, 14, -26, -1, -126, -82, 7, -83, -55, 76, -107, 73, -117], [25, 27, -9, -85, -49, 71, 38, 125, -52, 17, -54, -106, 91, -57, -120, -11, -85, -113, -107, -60, 56, -75, 64, 103], [-103, -119, -3, 122, 7, -127, 105, -93, -81, -95, 114, 1, -90, 7, -8, -23, -10, 107, 124, 67, -89, 117, 19, -105], [-27, -89, -53, 41, 2, 27, -60, -122, 118, -97, 120, 9, -78, -17, 122, 20, 18, 109, 110, 110, -68, -26, 31, -85], [114, -120, 20, 106, -89, 102, 9, 70, -21, -21, -90, -82, -56, 6, 56, -61, 15, -71, 58, -10, 126, 120, 73, -116], [-47, -127, 123, 102, 79, 26, -56, 85, 48, 64, 33, -67, 41, -128, 38, 45, 75, -67, -28, -122, 20, 1, 62, -95], [73, 71, -89, 56, 91, 12, -104, 15, -76, -102, 18, -52, -1, 8, 95, 33, -31, 63, 91, -114, 76, -24, -87, -103], [82, 102, -58, 18, 120, -103, -63, -41, 113, 84, 47, 16, 24, 2, 5, 79, -6, 26, 119, 73, -67, -43, -46, -90], [-22, 126, -16, 103, 42, 102, 90, -57, -30, -4, -82, -39, 47, -82, 35, -6, 60, 4, -25, -118, 83, 68, 83, -21], [64, 10, 45, -97, 127, 14, 56, -64, -18, -81, 10, -1, 68, 76, 100, 93, 31, -117, -63, -112, 89, 114, 122, -128], [-91, 72, 111, 101, -1, -73, -14, -49, -51, -73, 106, -85, -108, -128, -64, -9, -109, 27, -63, 0, 95, -71, -78, -92], [25, -30, 70, 5, -14, -128, -123, 26, 107, 14, 33, -4, 115, -8, -2, -114, 82, 29, -100, -117, -29, 127, 87, -87], [3, -12, 89, 61, -12, 124, -111, 45, 87, 57, 74, -27, -125, 21, -94, -23, 125, -26, 31, -29, -10, 110, -15, 7], [23, -73, 125, -33, -14, 120, 85, -100, -54, 73, -101, -19, -116, -56, 84, -102, -98, -34, 73, 102, 32, -71, -88, -44], [40, -31, -34, 111, -112, 31, 65, 63, 41, 98, -42, -73, -127, -88, 15, -87, 51, 87, -65, -22, 66, 54, 30, 93], [-84, -103, 114, -28, 62, 100, -30, 37, 58, 114, -113, 82, -2, 79, -108, 64, -111, 109, -96, -97, 3, -29, -96, 45], [57, 11, 43, -106, 6, 34, 13, 24, -127, -95, -116, -9, -74, 115, 110, 69, 0, 92, 124, -61, 126, -35, -124, 27], [-51, -8, 39, 35, 107, 57, -88, -27, 72, -47, -2, 80, -95, -111, 118, 38, -46, 90, -75, -92, 7, -85, -22, -79], [87, 127, 100, -40, -9, -60, 85, 107, -8, -66, 22, 22, 15, 9, 62, 2, 5, -27, 96, -2, -33, -3, -8, -50], [16, -32, 39, -95, 74, 0, -3, -10, -77, 109, -110, -76, -126, 115, -10, 101, 63, -108, 22, -9, -67, -103, -31, -29], [-90, 62, -37, 101, 5, -125, -74, 51, -17, -109, 60, 46, -56, -106, -24, 2, -109, -24, -123, 39, 81, 62, -34, 31], [-89, -24, -112, 125, 119, -96, 80, -77, 74, -49, -82, -45, 75, 10, 81, 17, 29, 85, -102, 31, 54, 84, 85, -119]]> : tensor<40x24xi8>
  %z = arith.constant 0 : i32
  %e = tensor.empty() : tensor<20x24xi32>
  %f = linalg.fill ins(%z : i32) outs(%e : tensor<20x24xi32>) -> tensor<20x24xi32>
  %r = linalg.matmul ins(%a, %b : tensor<20x40xi8>, tensor<40x24xi8>)
                     outs(%f : tensor<20x24xi32>) -> tensor<20x24xi32>
  return %r : tensor<20x24xi32>
}
