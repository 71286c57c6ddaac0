// RUN: pb-compile %s --target=nvidia-sm80 --options=codegen=tile-ir -o %t.sm80.pbart
// RUN: pb-compile %s --target=nvidia-sm90 --options=codegen=tile-ir -o %t.sm90.pbart
// RUN: %if tileiras %{ %nvidia_artifact %t.sm80.pbart --sass | FileCheck %s --check-prefix=SASS80 %}
// RUN: %if tileiras %{ %nvidia_artifact %t.sm90.pbart --sass | FileCheck %s --check-prefix=SASS90 %}
// RUN: %nvidia_artifact %t.sm90.pbart --plan | FileCheck %s --check-prefix=PLAN
// The shapes the Tile IR path must take (compile only): f16 and bf16
// matmuls with f32 accumulation from 256^3 to 4096^3, the projections of
// BERT-base's layers at 128 tokens, and attention's two batched products
// for 12 heads at sequence 128 and 1024. Each is one Tile IR kernel that
// tileiras assembles onto the tensor cores (HMMA on sm_80; HGMMA on sm_90
// where a tile has a warpgroup's 64 rows: the batched products use HMMA),
// with no local-memory spills.

// SASS80-COUNT-18: sass {{.*}}_tile{{[0-9]+}} HMMA {{[1-9][0-9]*}} HGMMA 0 {{.*}} LDL 0 STL 0
// SASS80-NOT: sass
// SASS90-COUNT-14: sass {{.*}}_tile{{[0-9]+}} HMMA 0 HGMMA {{[1-9][0-9]*}} {{.*}} LDL 0 STL 0
// SASS90-COUNT-4: sass attn_{{.*}} HMMA {{[1-9][0-9]*}} HGMMA 0 {{.*}} LDL 0 STL 0
// SASS90-NOT: sass
// One launch per entry.
// PLAN-COUNT-18: launch {{.*}}_tile{{[0-9]+}} grid
// PLAN-NOT: launch
func.func @mm256_f16(%a: tensor<256x256xf16>, %b: tensor<256x256xf16>) -> tensor<256x256xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x256xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
  %r = linalg.matmul ins(%a, %b : tensor<256x256xf16>, tensor<256x256xf16>) outs(%f : tensor<256x256xf32>) -> tensor<256x256xf32>
  return %r : tensor<256x256xf32>
}
func.func @mm256_bf16(%a: tensor<256x256xbf16>, %b: tensor<256x256xbf16>) -> tensor<256x256xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x256xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
  %r = linalg.matmul ins(%a, %b : tensor<256x256xbf16>, tensor<256x256xbf16>) outs(%f : tensor<256x256xf32>) -> tensor<256x256xf32>
  return %r : tensor<256x256xf32>
}
func.func @mm512_f16(%a: tensor<512x512xf16>, %b: tensor<512x512xf16>) -> tensor<512x512xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<512x512xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<512x512xf32>) -> tensor<512x512xf32>
  %r = linalg.matmul ins(%a, %b : tensor<512x512xf16>, tensor<512x512xf16>) outs(%f : tensor<512x512xf32>) -> tensor<512x512xf32>
  return %r : tensor<512x512xf32>
}
func.func @mm512_bf16(%a: tensor<512x512xbf16>, %b: tensor<512x512xbf16>) -> tensor<512x512xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<512x512xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<512x512xf32>) -> tensor<512x512xf32>
  %r = linalg.matmul ins(%a, %b : tensor<512x512xbf16>, tensor<512x512xbf16>) outs(%f : tensor<512x512xf32>) -> tensor<512x512xf32>
  return %r : tensor<512x512xf32>
}
func.func @mm1024_f16(%a: tensor<1024x1024xf16>, %b: tensor<1024x1024xf16>) -> tensor<1024x1024xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1024x1024xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  %r = linalg.matmul ins(%a, %b : tensor<1024x1024xf16>, tensor<1024x1024xf16>) outs(%f : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  return %r : tensor<1024x1024xf32>
}
func.func @mm1024_bf16(%a: tensor<1024x1024xbf16>, %b: tensor<1024x1024xbf16>) -> tensor<1024x1024xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1024x1024xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  %r = linalg.matmul ins(%a, %b : tensor<1024x1024xbf16>, tensor<1024x1024xbf16>) outs(%f : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  return %r : tensor<1024x1024xf32>
}
func.func @mm2048_f16(%a: tensor<2048x2048xf16>, %b: tensor<2048x2048xf16>) -> tensor<2048x2048xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2048x2048xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
  %r = linalg.matmul ins(%a, %b : tensor<2048x2048xf16>, tensor<2048x2048xf16>) outs(%f : tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
  return %r : tensor<2048x2048xf32>
}
func.func @mm2048_bf16(%a: tensor<2048x2048xbf16>, %b: tensor<2048x2048xbf16>) -> tensor<2048x2048xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2048x2048xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
  %r = linalg.matmul ins(%a, %b : tensor<2048x2048xbf16>, tensor<2048x2048xbf16>) outs(%f : tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
  return %r : tensor<2048x2048xf32>
}
func.func @mm4096_f16(%a: tensor<4096x4096xf16>, %b: tensor<4096x4096xf16>) -> tensor<4096x4096xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4096x4096xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  %r = linalg.matmul ins(%a, %b : tensor<4096x4096xf16>, tensor<4096x4096xf16>) outs(%f : tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  return %r : tensor<4096x4096xf32>
}
func.func @mm4096_bf16(%a: tensor<4096x4096xbf16>, %b: tensor<4096x4096xbf16>) -> tensor<4096x4096xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4096x4096xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  %r = linalg.matmul ins(%a, %b : tensor<4096x4096xbf16>, tensor<4096x4096xbf16>) outs(%f : tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  return %r : tensor<4096x4096xf32>
}
func.func @bert_128x768x768(%a: tensor<128x768xf16>, %b: tensor<768x768xf16>) -> tensor<128x768xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x768xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<128x768xf32>) -> tensor<128x768xf32>
  %r = linalg.matmul ins(%a, %b : tensor<128x768xf16>, tensor<768x768xf16>) outs(%f : tensor<128x768xf32>) -> tensor<128x768xf32>
  return %r : tensor<128x768xf32>
}
func.func @bert_128x3072x768(%a: tensor<128x768xf16>, %b: tensor<768x3072xf16>) -> tensor<128x3072xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x3072xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<128x3072xf32>) -> tensor<128x3072xf32>
  %r = linalg.matmul ins(%a, %b : tensor<128x768xf16>, tensor<768x3072xf16>) outs(%f : tensor<128x3072xf32>) -> tensor<128x3072xf32>
  return %r : tensor<128x3072xf32>
}
func.func @bert_128x768x3072(%a: tensor<128x3072xf16>, %b: tensor<3072x768xf16>) -> tensor<128x768xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x768xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<128x768xf32>) -> tensor<128x768xf32>
  %r = linalg.matmul ins(%a, %b : tensor<128x3072xf16>, tensor<3072x768xf16>) outs(%f : tensor<128x768xf32>) -> tensor<128x768xf32>
  return %r : tensor<128x768xf32>
}
func.func @bert_128x2304x768(%a: tensor<128x768xf16>, %b: tensor<768x2304xf16>) -> tensor<128x2304xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x2304xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<128x2304xf32>) -> tensor<128x2304xf32>
  %r = linalg.matmul ins(%a, %b : tensor<128x768xf16>, tensor<768x2304xf16>) outs(%f : tensor<128x2304xf32>) -> tensor<128x2304xf32>
  return %r : tensor<128x2304xf32>
}
func.func @attn_qk_128(%a: tensor<12x128x64xf16>, %b: tensor<12x64x128xf16>) -> tensor<12x128x128xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<12x128x128xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<12x128x128xf32>) -> tensor<12x128x128xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<12x128x64xf16>, tensor<12x64x128xf16>) outs(%f : tensor<12x128x128xf32>) -> tensor<12x128x128xf32>
  return %r : tensor<12x128x128xf32>
}
func.func @attn_pv_128(%a: tensor<12x128x128xf16>, %b: tensor<12x128x64xf16>) -> tensor<12x128x64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<12x128x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<12x128x64xf32>) -> tensor<12x128x64xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<12x128x128xf16>, tensor<12x128x64xf16>) outs(%f : tensor<12x128x64xf32>) -> tensor<12x128x64xf32>
  return %r : tensor<12x128x64xf32>
}
func.func @attn_qk_1024(%a: tensor<12x1024x64xbf16>, %b: tensor<12x64x1024xbf16>) -> tensor<12x1024x1024xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<12x1024x1024xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<12x1024x1024xf32>) -> tensor<12x1024x1024xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<12x1024x64xbf16>, tensor<12x64x1024xbf16>) outs(%f : tensor<12x1024x1024xf32>) -> tensor<12x1024x1024xf32>
  return %r : tensor<12x1024x1024xf32>
}
func.func @attn_pv_1024(%a: tensor<12x1024x1024xbf16>, %b: tensor<12x1024x64xbf16>) -> tensor<12x1024x64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<12x1024x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<12x1024x64xf32>) -> tensor<12x1024x64xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<12x1024x1024xbf16>, tensor<12x1024x64xbf16>) outs(%f : tensor<12x1024x64xf32>) -> tensor<12x1024x64xf32>
  return %r : tensor<12x1024x64xf32>
}
