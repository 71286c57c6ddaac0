// RUN: pb-compile %s --target=nvidia-sm80 --options=codegen=tile-ir,allow-tf32=1 -o %t.sm80.pbart
// RUN: pb-compile %s --target=nvidia-sm90 --options=codegen=tile-ir,allow-tf32=1 -o %t.sm90.pbart
// RUN: pb-compile %s --target=cpu-host --options=pipeline=reference -o %t.ref.pbart
// RUN: %nvidia_artifact %t.sm80.pbart --plan | FileCheck %s --check-prefix=PLAN80
// RUN: %nvidia_artifact %t.sm90.pbart --tile-ir | FileCheck %s --check-prefix=TILE
// RUN: %if tileiras %{ %nvidia_artifact %t.sm80.pbart --sass | FileCheck %s --check-prefix=SASS80 %}
// RUN: %if tileiras %{ %nvidia_artifact %t.sm90.pbart --sass | FileCheck %s --check-prefix=SASS90 %}
// RUN: %if tileiras %{ %nvidia_artifact %t.sm90.pbart --plan | FileCheck %s --check-prefix=PLAN90 %}
// RUN: pb-run --emulate %t.sm80.pbart --entry=mm_f16 --check-against=%t.ref.pbart --rtol=2e-2 --atol=5e-2 | FileCheck %s --check-prefix=EMU-F16
// RUN: pb-run --emulate %t.sm90.pbart --entry=mm_f16 --check-against=%t.ref.pbart --rtol=2e-2 --atol=5e-2 | FileCheck %s --check-prefix=EMU-F16
// RUN: pb-run --emulate %t.sm80.pbart --entry=bmm_bf16 --check-against=%t.ref.pbart --rtol=2e-2 --atol=5e-2 | FileCheck %s --check-prefix=EMU-BMM
// RUN: pb-run --emulate %t.sm90.pbart --entry=bmm_bf16 --check-against=%t.ref.pbart --rtol=2e-2 --atol=5e-2 | FileCheck %s --check-prefix=EMU-BMM
// RUN: pb-run --emulate %t.sm80.pbart --entry=linear_relu --check-against=%t.ref.pbart --rtol=2e-2 --atol=5e-2 | FileCheck %s --check-prefix=EMU-LIN
// RUN: pb-run --emulate %t.sm90.pbart --entry=linear_relu --check-against=%t.ref.pbart --rtol=2e-2 --atol=5e-2 | FileCheck %s --check-prefix=EMU-LIN
// RUN: pb-run --emulate %t.sm80.pbart --entry=mm_tf32 --check-against=%t.ref.pbart --rtol=1e-3 --atol=2e-2 | FileCheck %s --check-prefix=EMU-TF32
// RUN: pb-run --emulate %t.sm80.pbart --entry=dense_gelu --check-against=%t.ref.pbart --rtol=1e-3 --atol=2e-2 | FileCheck %s --check-prefix=EMU-GELU
// RUN: pb-run --emulate %t.sm90.pbart --entry=dense_gelu --check-against=%t.ref.pbart --rtol=1e-3 --atol=2e-2 | FileCheck %s --check-prefix=EMU-GELU
// RUN: pb-run --emulate %t.sm90.pbart --entry=mm_tf32 --check-against=%t.ref.pbart --rtol=1e-3 --atol=2e-2 | FileCheck %s --check-prefix=EMU-TF32
// Matmuls through S1-S5 with codegen=tile-ir: each contraction is one Tile
// IR kernel (C's zero fill gone: one launch per entry), assembled by
// tileiras into a cubin whose block size and static shared memory the
// plan takes; the tile interpreter runs them against a cpu-host build.
// K = 200 is no multiple of the K tile: the last tile reads zeros. The
// bias + ReLU epilogue runs in the kernel, and so does a bias + GELU one
// (erf as the polynomial S4 makes of it, on tile operations: fma,
// cmpf, select); f32 operands with allow-tf32
// are rounded to tf32 as the tensor cores read them (10-bit mantissas:
// products off by up to 2^-9 of their magnitude; 2e-2 over 128 of them).

// PLAN80: entry mm_f16
// PLAN80-NEXT: launch mm_f16_tile0 grid [8, 12, 1] block [128, 1, 1] shared {{[0-9]+}} args [0, 1, 2]
// PLAN80-NOT: launch
// PLAN80: entry bmm_bf16
// PLAN80-NEXT: launch bmm_bf16_tile1 grid [3, 3, 4] block [128, 1, 1] shared {{[0-9]+}} args [0, 1, 2]
// PLAN80-NOT: launch
// PLAN80: entry linear_relu
// PLAN80-NEXT: launch linear_relu_tile2 grid [4, 3, 1] block [128, 1, 1] shared {{[0-9]+}} args [0, 1, 2, 3]
// PLAN80-NOT: launch
// PLAN80: entry mm_tf32

// TILE: // tile-ir module mm_f16_tile0
// TILE: padding_value=zero
// TILE: tileir.mmaf %{{.*}} : <64x32xf16>, <32x32xf16>, <64x32xf32>
// TILE: tileir.ftof %{{.*}} : <64x32xf32> -> <64x32xf16>
// TILE: // tile-ir module linear_relu_tile2
// TILE: tileir.maxf
// TILE: // tile-ir module mm_tf32_tile3
// TILE: tileir.ftof %{{.*}} : <64x16xf32> -> <64x16xtf32>
// TILE: tileir.mmaf %{{.*}} : <64x16xtf32>, <16x32xtf32>, <64x32xf32>

// Every kernel on the tensor cores (HMMA on sm_80; HGMMA on sm_90 where a
// tile has 64 rows for a warpgroup), none spilling to local memory.
// SASS80: sass mm_f16_tile0 HMMA {{[1-9][0-9]*}} HGMMA 0 {{.*}} LDL 0 STL 0
// SASS80: sass bmm_bf16_tile1 HMMA {{[1-9][0-9]*}} HGMMA 0 {{.*}} LDL 0 STL 0
// SASS80: sass linear_relu_tile2 HMMA {{[1-9][0-9]*}} HGMMA 0 {{.*}} LDL 0 STL 0
// SASS80: sass mm_tf32_tile3 HMMA {{[1-9][0-9]*}} HGMMA 0 {{.*}} LDL 0 STL 0
// SASS90: sass mm_f16_tile0 HMMA 0 HGMMA {{[1-9][0-9]*}} {{.*}} LDL 0 STL 0
// SASS90: sass bmm_bf16_tile1 {{.*}} LDL 0 STL 0
// SASS90: sass linear_relu_tile2 HMMA 0 HGMMA {{[1-9][0-9]*}} {{.*}} LDL 0 STL 0
// SASS90: sass mm_tf32_tile3 HMMA 0 HGMMA {{[1-9][0-9]*}} {{.*}} LDL 0 STL 0
// PLAN90: launch mm_f16_tile0 grid [4, 12, 1] block [128, 1, 1]

// EMU-F16: OK mm_f16: 98304 values match the reference
// EMU-BMM: OK bmm_bf16: 30720 values match the reference
// EMU-LIN: OK linear_relu: 12288 values match the reference
// EMU-TF32: OK mm_tf32: 8192 values match the reference
// EMU-GELU: OK dense_gelu: 12288 values match the reference
// PLAN80: entry dense_gelu
// PLAN80-NEXT: launch dense_gelu_tile4 grid [4, 3, 1] block [128, 1, 1] shared {{[0-9]+}} args [0, 1, 2, 3]
// PLAN80-NOT: launch
// TILE: // tile-ir module dense_gelu_tile4
// TILE-DAG: tileir.fma
// TILE-DAG: tileir.cmpf less_than ordered
// TILE-DAG: tileir.select
// SASS80: sass dense_gelu_tile4 HMMA {{[1-9][0-9]*}} HGMMA 0 {{.*}} LDL 0 STL 0
// SASS90: sass dense_gelu_tile4 HMMA 0 HGMMA {{[1-9][0-9]*}} {{.*}} LDL 0 STL 0

#id = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>
func.func @mm_f16(%a: tensor<256x200xf16>, %b: tensor<200x384xf16>) -> tensor<256x384xf16> {
  %z = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<256x384xf16>
  %f = linalg.fill ins(%z : f16) outs(%e : tensor<256x384xf16>) -> tensor<256x384xf16>
  %r = linalg.matmul ins(%a, %b : tensor<256x200xf16>, tensor<200x384xf16>) outs(%f : tensor<256x384xf16>) -> tensor<256x384xf16>
  return %r : tensor<256x384xf16>
}
func.func @bmm_bf16(%a: tensor<4x96x64xbf16>, %b: tensor<4x64x80xbf16>) -> tensor<4x96x80xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x96x80xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x96x80xf32>) -> tensor<4x96x80xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<4x96x64xbf16>, tensor<4x64x80xbf16>) outs(%f : tensor<4x96x80xf32>) -> tensor<4x96x80xf32>
  return %r : tensor<4x96x80xf32>
}
func.func @linear_relu(%x: tensor<128x64xf16>, %w: tensor<96x64xf16>, %bias: tensor<96xf32>) -> tensor<128x96xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x96xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<128x96xf32>) -> tensor<128x96xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<128x64xf16>, tensor<96x64xf16>) outs(%f : tensor<128x96xf32>) -> tensor<128x96xf32>
  %o = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%r, %bias : tensor<128x96xf32>, tensor<96xf32>) outs(%e : tensor<128x96xf32>) {
  ^bb0(%v: f32, %c: f32, %o: f32):
    %s = arith.addf %v, %c : f32
    %m = arith.maximumf %s, %z : f32
    linalg.yield %m : f32
  } -> tensor<128x96xf32>
  return %o : tensor<128x96xf32>
}
func.func @mm_tf32(%a: tensor<128x128xf32>, %b: tensor<128x64xf32>) -> tensor<128x64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<128x64xf32>) -> tensor<128x64xf32>
  %r = linalg.matmul ins(%a, %b : tensor<128x128xf32>, tensor<128x64xf32>) outs(%f : tensor<128x64xf32>) -> tensor<128x64xf32>
  return %r : tensor<128x64xf32>
}
func.func @dense_gelu(%a: tensor<128x64xf32>, %b: tensor<64x96xf32>, %bias: tensor<96xf32>) -> tensor<128x96xf32> {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %rsqrt2 = arith.constant 0.70710678 : f32
  %init = tensor.empty() : tensor<128x96xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<128x96xf32>) -> tensor<128x96xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<128x64xf32>, tensor<64x96xf32>)
                      outs(%acc : tensor<128x96xf32>) -> tensor<128x96xf32>
  %out = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %bias : tensor<128x96xf32>, tensor<96xf32>) outs(%init : tensor<128x96xf32>) {
  ^bb0(%x: f32, %c: f32, %o: f32):
    %s = arith.addf %x, %c : f32
    %t = arith.mulf %s, %rsqrt2 : f32
    %e = math.erf %t : f32
    %p = arith.addf %e, %one : f32
    %h = arith.mulf %s, %half : f32
    %g = arith.mulf %h, %p : f32
    linalg.yield %g : f32
  } -> tensor<128x96xf32>
  return %out : tensor<128x96xf32>
}
