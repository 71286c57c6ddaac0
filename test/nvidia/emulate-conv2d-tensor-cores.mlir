// RUN: rm -rf %t && split-file %s %t
// RUN: pb-compile %t/conv.mlir --target=nvidia-sm80 -o %t/sm80.pbart
// RUN: %nvidia_artifact %t/sm80.pbart --plan --ptx | FileCheck %s --check-prefix=SM80
// RUN: pb-compile %t/conv.mlir --target=nvidia-sm90 -o %t/sm90.pbart
// RUN: %nvidia_artifact %t/sm90.pbart --plan --ptx | FileCheck %s --check-prefix=SM90
// RUN: pb-compile %t/conv.mlir --target=cpu-host --options=pipeline=reference -o %t/ref.pbart
// RUN: pb-compile %t/conv-f32-sums.mlir --target=cpu-host --options=pipeline=reference -o %t/ref-f32.pbart
// RUN: pb-run --emulate %t/sm80.pbart --check-against=%t/ref.pbart --rtol=1e-2 --atol=0.5 | FileCheck %s
// RUN: pb-run --emulate %t/sm90.pbart --check-against=%t/ref.pbart --rtol=1e-2 --atol=0.5 | FileCheck %s
// RUN: pb-run --emulate %t/sm80.pbart --check-against=%t/ref-f32.pbart --rtol=2e-3 --atol=2e-3 | FileCheck %s
// RUN: pb-run --emulate %t/sm90.pbart --check-against=%t/ref-f32.pbart --rtol=2e-3 --atol=2e-3 | FileCheck %s
//
// sm80/conv2d-tensor-cores.mlir's convolution with 128 channels instead of
// 256 (M = 2 x 14 x 14, N = 128, K = 3 x 3 x 128), run in the emulator: the
// full size takes about 11 s, this one about 1 s on sm80. It has the same
// launches (two layout copies, then the implicit GEMM gathering the padded
// input by cp.async) on mma.sync for sm80 and on wgmma for sm90 (N = 128).
//
// Against a cpu-host build of the same module (pipeline=reference), which
// rounds every partial sum to f16 over K = 1152 products of inputs in
// [-1, 1] (sums up to about 50, where an f16 ulp is 2^-5), the kernels
// (f32 sums) match only within 0.5. Against the same convolution with f32
// sums and one rounding to f16 (conv-f32-sums.mlir), they match within two
// f16 ulps.

// SM80: entry conv
// SM80: launch conv_kernel{{.*}} args [3, 0, 4]
// SM80: launch conv_kernel{{.*}} args [1, 5]
// SM80: launch conv_kernel{{.*}} block [256, 1, 1] shared 29184 args [4, 5, 2]
// SM80-NOT: launch
// SM80: cp.async.cg.shared.global
// SM80: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32

// SM90: entry conv
// SM90: launch conv_kernel{{.*}} args [3, 0, 4]
// SM90: launch conv_kernel{{.*}} args [1, 5]
// SM90: launch conv_kernel{{.*}} block [128, 1, 1] shared 74752 args [4, 5, 2]
// SM90-NOT: launch
// SM90: cp.async.cg.shared.global
// SM90: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16

// CHECK: conv: output 0 f16 [2,128,14,14]
// CHECK: OK conv: 50176 values match the reference

//--- conv.mlir
func.func @conv(%x: tensor<2x128x14x14xf16>, %w: tensor<128x128x3x3xf16>) -> tensor<2x128x14x14xf16> {
  %zero = arith.constant 0.0 : f16
  %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f16
  } : tensor<2x128x14x14xf16> to tensor<2x128x16x16xf16>
  %e = tensor.empty() : tensor<2x128x14x14xf16>
  %z = linalg.fill ins(%zero : f16) outs(%e : tensor<2x128x14x14xf16>) -> tensor<2x128x14x14xf16>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%padded, %w : tensor<2x128x16x16xf16>, tensor<128x128x3x3xf16>) outs(%z : tensor<2x128x14x14xf16>) -> tensor<2x128x14x14xf16>
  return %y : tensor<2x128x14x14xf16>
}

//--- conv-f32-sums.mlir
func.func @conv(%x: tensor<2x128x14x14xf16>, %w: tensor<128x128x3x3xf16>) -> tensor<2x128x14x14xf16> {
  %zero = arith.constant 0.0 : f16
  %zero32 = arith.constant 0.0 : f32
  %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f16
  } : tensor<2x128x14x14xf16> to tensor<2x128x16x16xf16>
  %e = tensor.empty() : tensor<2x128x14x14xf32>
  %z = linalg.fill ins(%zero32 : f32) outs(%e : tensor<2x128x14x14xf32>) -> tensor<2x128x14x14xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%padded, %w : tensor<2x128x16x16xf16>, tensor<128x128x3x3xf16>) outs(%z : tensor<2x128x14x14xf32>) -> tensor<2x128x14x14xf32>
  %e16 = tensor.empty() : tensor<2x128x14x14xf16>
  %t = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (n, c, h, w)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%y : tensor<2x128x14x14xf32>) outs(%e16 : tensor<2x128x14x14xf16>) {
  ^bb0(%v: f32, %o: f16):
    %r = arith.truncf %v : f32 to f16
    linalg.yield %r : f16
  } -> tensor<2x128x14x14xf16>
  return %t : tensor<2x128x14x14xf16>
}
