// RUN: rm -rf %t && split-file %s %t
// RUN: pb-compile %t/kernels.mlir --target=nvidia-sm80 -o %t/sm80.pbart
// RUN: pb-compile %t/kernels.mlir --target=nvidia-sm80 --options=allow-tf32=1 -o %t/sm80-tf32.pbart
// RUN: pb-compile %t/kernels.mlir --target=nvidia-sm90 -o %t/sm90.pbart
// RUN: pb-compile %t/kernels.mlir --target=nvidia-sm90 --options=allow-tf32=1 -o %t/sm90-tf32.pbart
// RUN: pb-compile %t/kernels.mlir --target=nvidia-sm90 --options=warpgroup-units=0 -o %t/warp.pbart
// RUN: pb-compile %t/reference.mlir --target=cpu-host --options=pipeline=reference -o %t/ref.pbart
// RUN: pb-run --emulate %t/sm80.pbart --entry=linear_bf16 --check-against=%t/ref.pbart --rtol=1e-2 --atol=1e-2 \
// RUN:   | FileCheck %s --check-prefix=LINEAR
// RUN: pb-run --emulate %t/sm80-tf32.pbart --entry=linear_bf16 --check-against=%t/ref.pbart --rtol=1e-2 --atol=1e-2 \
// RUN:   | FileCheck %s --check-prefix=LINEAR
// RUN: pb-run --emulate %t/sm90.pbart --entry=mm_bf16_bt --check-against=%t/ref.pbart --rtol=1e-2 --atol=1e-2 \
// RUN:   | FileCheck %s --check-prefix=BT
// RUN: pb-run --emulate %t/sm90-tf32.pbart --entry=mm_bf16_bt --check-against=%t/ref.pbart --rtol=1e-2 --atol=1e-2 \
// RUN:   | FileCheck %s --check-prefix=BT
// RUN: pb-run --emulate %t/warp.pbart --entry=mm_bf16_bt --check-against=%t/ref.pbart --rtol=1e-2 --atol=1e-2 \
// RUN:   | FileCheck %s --check-prefix=BT
// RUN: pb-run --emulate %t/sm90.pbart --entry=linear_bf16 --check-against=%t/ref.pbart --rtol=1e-2 --atol=1e-2 \
// RUN:   | FileCheck %s --check-prefix=LINEAR
//
// The bf16 kernels of sm80/matmul-tensor-cores.mlir (@linear_bf16, x @ W^T
// over (batch, sequence) rows at odd sizes, on mma.sync) and of
// sm90/matmul-tensor-cores.mlir (@mm_bf16_bt, B indexed (n, k): K-major
// wgmma, and mma.sync with warpgroup-units=0), built with the options those
// tests use, run in the emulator; @mm_bf16_bt at 256 x 256 x 256 rather
// than 512 x 512 x 256 (the warp-level build of the full size takes about
// 5 s), still several blocks and K tiles. A cpu-host build of the same
// functions rounds every product and partial sum to bf16, as the program
// says, and differs from the kernels by several bf16 ulps
// (emulate-bf16-cpu-reference.mlir checks against it), so the reference
// here is the same contraction with bf16 operands extended to f32, f32
// products and sums, and one rounding to bf16 at the end, which is what the
// tensor cores compute: it matches within about one bf16 ulp (2^-8
// relative; the f32 sums differ only in their order).

// LINEAR: linear_bf16: output 0 bf16 [2,50,100]
// LINEAR: OK linear_bf16: 10000 values match the reference
// BT: mm_bf16_bt: output 0 bf16 [256,256]
// BT: OK mm_bf16_bt: 65536 values match the reference

//--- kernels.mlir
func.func @linear_bf16(%x: tensor<2x50x72xbf16>, %w: tensor<100x72xbf16>) -> tensor<2x50x100xbf16> {
  %zero = arith.constant 0.0 : bf16
  %init = tensor.empty() : tensor<2x50x100xbf16>
  %acc = linalg.fill ins(%zero : bf16) outs(%init : tensor<2x50x100xbf16>) -> tensor<2x50x100xbf16>
  %r = linalg.generic {indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<2x50x72xbf16>, tensor<100x72xbf16>) outs(%acc : tensor<2x50x100xbf16>) {
  ^bb0(%a: bf16, %b: bf16, %c: bf16):
    %p = arith.mulf %a, %b : bf16
    %s = arith.addf %c, %p : bf16
    linalg.yield %s : bf16
  } -> tensor<2x50x100xbf16>
  return %r : tensor<2x50x100xbf16>
}

func.func @mm_bf16_bt(%a: tensor<256x256xbf16>, %b: tensor<256x256xbf16>) -> tensor<256x256xbf16> {
  %zero = arith.constant 0.0 : bf16
  %init = tensor.empty() : tensor<256x256xbf16>
  %acc = linalg.fill ins(%zero : bf16) outs(%init : tensor<256x256xbf16>) -> tensor<256x256xbf16>
  %mm = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                       affine_map<(m, n, k) -> (n, k)>,
                                       affine_map<(m, n, k) -> (m, n)>]
                      ins(%a, %b : tensor<256x256xbf16>, tensor<256x256xbf16>)
                      outs(%acc : tensor<256x256xbf16>) -> tensor<256x256xbf16>
  return %mm : tensor<256x256xbf16>
}

//--- reference.mlir
func.func @linear_bf16(%x: tensor<2x50x72xbf16>, %w: tensor<100x72xbf16>) -> tensor<2x50x100xbf16> {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<2x50x100xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<2x50x100xf32>) -> tensor<2x50x100xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<2x50x72xbf16>, tensor<100x72xbf16>) outs(%acc : tensor<2x50x100xf32>) {
  ^bb0(%a: bf16, %b: bf16, %c: f32):
    %a32 = arith.extf %a : bf16 to f32
    %b32 = arith.extf %b : bf16 to f32
    %p = arith.mulf %a32, %b32 : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x50x100xf32>
  %init16 = tensor.empty() : tensor<2x50x100xbf16>
  %t = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, m, n)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%r : tensor<2x50x100xf32>) outs(%init16 : tensor<2x50x100xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %y = arith.truncf %v : f32 to bf16
    linalg.yield %y : bf16
  } -> tensor<2x50x100xbf16>
  return %t : tensor<2x50x100xbf16>
}

func.func @mm_bf16_bt(%a: tensor<256x256xbf16>, %b: tensor<256x256xbf16>) -> tensor<256x256xbf16> {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<256x256xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<256x256xf32>) -> tensor<256x256xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<256x256xbf16>, tensor<256x256xbf16>) outs(%acc : tensor<256x256xf32>) {
  ^bb0(%x: bf16, %y: bf16, %c: f32):
    %x32 = arith.extf %x : bf16 to f32
    %y32 = arith.extf %y : bf16 to f32
    %p = arith.mulf %x32, %y32 : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<256x256xf32>
  %init16 = tensor.empty() : tensor<256x256xbf16>
  %t = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%r : tensor<256x256xf32>) outs(%init16 : tensor<256x256xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %y = arith.truncf %v : f32 to bf16
    linalg.yield %y : bf16
  } -> tensor<256x256xbf16>
  return %t : tensor<256x256xbf16>
}
