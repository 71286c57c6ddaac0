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
// ASM: vpdpbusd
// ASM-NOT: tdpbssd
// CHECK: OK odd: 1551 values match the reference
// CHECK: OK long_k: 4096 values match the reference
// CHECK: OK transposed_b: 3072 values match the reference
// CHECK: OK small: 140 values match the reference

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
