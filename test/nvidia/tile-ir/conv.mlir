// RUN: pb-compile %s --target=nvidia-sm80 --options=codegen=tile-ir -o %t.sm80.pbart
// RUN: pb-compile %s --target=nvidia-sm90 --options=codegen=tile-ir -o %t.sm90.pbart
// RUN: pb-compile %s --target=cpu-host --options=pipeline=reference -o %t.ref.pbart
// RUN: pb-opt %s --target=nvidia-sm90 --pb-pipeline=s1,s2,s3 | pb-opt --pb-explain --pass-pipeline='builtin.module(pb-nvidia-emit-tile-ir)' -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: %nvidia_artifact %t.sm90.pbart --plan --tile-ir | FileCheck %s --check-prefix=TILE
// RUN: %if tileiras %{ %nvidia_artifact %t.sm80.pbart --sass | FileCheck %s --check-prefix=SASS80 %}
// RUN: %if tileiras %{ %nvidia_artifact %t.sm90.pbart --sass | FileCheck %s --check-prefix=SASS90 %}
// RUN: pb-run --emulate %t.sm80.pbart --entry=c1x1 --check-against=%t.ref.pbart --rtol=2e-2 --atol=5e-2 | FileCheck %s --check-prefix=EMU1
// RUN: pb-run --emulate %t.sm90.pbart --entry=c1x1 --check-against=%t.ref.pbart --rtol=2e-2 --atol=5e-2 | FileCheck %s --check-prefix=EMU1
// RUN: pb-run --emulate %t.sm80.pbart --entry=c3x3 --check-against=%t.ref.pbart --rtol=2e-2 --atol=5e-2 | FileCheck %s --check-prefix=EMU3
// RUN: pb-run --emulate %t.sm90.pbart --entry=c3x3 --check-against=%t.ref.pbart --rtol=2e-2 --atol=5e-2 | FileCheck %s --check-prefix=EMU3
// RUN: pb-run --emulate %t.sm80.pbart --entry=c3x3s2 --check-against=%t.ref.pbart --rtol=2e-2 --atol=5e-2 | FileCheck %s --check-prefix=EMU3S2
// RUN: pb-run --emulate %t.sm90.pbart --entry=c3x3s2 --check-against=%t.ref.pbart --rtol=2e-2 --atol=5e-2 | FileCheck %s --check-prefix=EMU3S2
// RUN: pb-run --emulate %t.sm80.pbart --entry=conv_bias_relu_add --check-against=%t.ref.pbart --rtol=2e-2 --atol=5e-2 | FileCheck %s --check-prefix=EMUEPI
// RUN: pb-run --emulate %t.sm90.pbart --entry=conv_bias_relu_add --check-against=%t.ref.pbart --rtol=2e-2 --atol=5e-2 | FileCheck %s --check-prefix=EMUEPI
// Channels-last convolutions as Tile IR implicit GEMMs without gathers:
// per filter offset a view of the input whose base is advanced
// (tileir.offset) and whose strides step by the convolution's strides; one
// loop over (filter offset, C tile) pairs, one product per iteration. 1x1, 3x3 and a strided 3x3
// on two images with C and F no multiples of the tiles (zero padding),
// against a cpu-host build in the tile interpreter.

// EXPLAIN: tile-ir: kernel @c1x1_tile0: convolution 1x1 over 28x28x256 -> 28x28x64 (batch 1) as an implicit GEMM
// EXPLAIN: tile-ir: kernel @c3x3_tile1: convolution 3x3 over 30x30x64 -> 28x28x64 (batch 1) as an implicit GEMM
// EXPLAIN: tile-ir: kernel @c3x3s2_tile2: convolution 3x3 over 29x29x48 -> 14x14x40 (batch 2) as an implicit GEMM; tiles 4x16 pixels x 32 features x 32 channels, grid [4, 2, 2]; accumulators start at 0 (C's zero fill removed)

// TILE: entry c3x3s2
// TILE-NEXT: launch c3x3s2_tile2 grid [4, 2, 2] block [{{[0-9]+}}, 1, 1]
// The fused residual block: one launch.
// TILE-NEXT: entry conv_bias_relu_add
// TILE-NEXT: launch conv_bias_relu_add_tile3 grid
// TILE-NOT: launch
// TILE: // tile-ir module c3x3s2_tile2
// 9 filter offsets x 2 C tiles: iteration t * 2 + cb advances the input by
// (t / 3) x 29 x 48 + (t % 3) x 48 elements, the filter by t x 48 x 40.
// TILE: %[[NINE2:.*]] = tileir.constant dense<18> : tensor<i32>
// TILE: tileir.for %[[IV:.*]] = %{{.*}} to %[[NINE2]] step
// TILE: %[[TAP:.*]] = tileir.divi %[[IV]], %{{.*}} : <i32>
// TILE: tileir.remi %[[IV]]
// TILE-DAG: tileir.constant dense<1392> : tensor<i32>
// TILE-DAG: tileir.constant dense<48> : tensor<i32>
// TILE-DAG: tileir.constant dense<1920> : tensor<i32>
// TILE: tileir.offset
// TILE: <2x14x14x48xbf16, strides=[40368,2784,96,1]>, padding_value=zero>
// TILE: tileir.offset
// TILE: tileir.reshape %{{.*}} : <1x4x16x32xbf16> -> <64x32xbf16>
// TILE-COUNT-1: tileir.mmaf %{{.*}} : <64x32xbf16>, <32x32xbf16>, <64x32xf32>
// TILE-NOT: tileir.mmaf
// TILE: // tile-ir module conv_bias_relu_add_tile3
// TILE: tileir.mmaf
// TILE: tileir.reshape %{{.*}} : <64x32xf16> -> <1x4x16x32xf16>
// TILE: tileir.broadcast %{{.*}} : <1x1x1x32xf16> -> <1x4x16x32xf16>
// TILE: tileir.load_view_tko %{{.*}} -> <1x4x16x32xf16>
// TILE: tileir.maxf
// TILE: tileir.addf
// TILE: tileir.store_view_tko

// SASS80: sass c1x1_tile0 HMMA {{[1-9][0-9]*}} HGMMA 0 {{.*}} LDL 0 STL 0
// sm_80's channel tiles of 16 keep these short loops from being unrolled
// whole (with 32 they spilled, docs/TileIR.md).
// SASS80: sass c3x3_tile1 HMMA {{[1-9][0-9]*}} HGMMA 0 {{.*}} LDL 0 STL 0
// SASS80: sass c3x3s2_tile2 HMMA {{[1-9][0-9]*}} HGMMA 0 {{.*}} LDL 0 STL 0
// SASS90: sass c1x1_tile0 HMMA 0 HGMMA {{[1-9][0-9]*}} {{.*}} LDL 0 STL 0
// SASS90: sass c3x3_tile1 HMMA 0 HGMMA {{[1-9][0-9]*}} {{.*}} LDL 0 STL 0
// SASS90: sass c3x3s2_tile2 HMMA 0 HGMMA {{[1-9][0-9]*}} {{.*}} LDL 0 STL 0

// EMU1: OK c1x1: 50176 values match the reference
// EMU3: OK c3x3: 50176 values match the reference
// EMU3S2: OK c3x3s2: 15680 values match the reference
// EMUEPI: OK conv_bias_relu_add: 12288 values match the reference

// A residual block's convolution with its bias, ReLU and residual add
// fused: one launch, the bias a row broadcast over the tile, the residual
// a tile of its own.
// EXPLAIN: tile-ir: kernel @conv_bias_relu_add_tile3: convolution 3x3 over 18x18x32 -> 16x16x48 (batch 1) as an implicit GEMM{{.*}}; accumulators start at 0 (C's zero fill removed); epilogue of {{[0-9]+}} ops fused


func.func @c1x1(%x: tensor<1x28x28x256xf16>, %w: tensor<1x1x256x64xf16>) -> tensor<1x28x28x64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x28x28x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x28x28x64xf32>) -> tensor<1x28x28x64xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x28x28x256xf16>, tensor<1x1x256x64xf16>) outs(%f : tensor<1x28x28x64xf32>) -> tensor<1x28x28x64xf32>
  return %r : tensor<1x28x28x64xf32>
}
func.func @c3x3(%x: tensor<1x30x30x64xf16>, %w: tensor<3x3x64x64xf16>) -> tensor<1x28x28x64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x28x28x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x28x28x64xf32>) -> tensor<1x28x28x64xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x30x30x64xf16>, tensor<3x3x64x64xf16>) outs(%f : tensor<1x28x28x64xf32>) -> tensor<1x28x28x64xf32>
  return %r : tensor<1x28x28x64xf32>
}
func.func @c3x3s2(%x: tensor<2x29x29x48xbf16>, %w: tensor<3x3x48x40xbf16>) -> tensor<2x14x14x40xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x14x14x40xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<2x14x14x40xf32>) -> tensor<2x14x14x40xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<2x29x29x48xbf16>, tensor<3x3x48x40xbf16>) outs(%f : tensor<2x14x14x40xf32>) -> tensor<2x14x14x40xf32>
  return %r : tensor<2x14x14x40xf32>
}
#nhwc = affine_map<(n, h, w, f) -> (n, h, w, f)>
#feature = affine_map<(n, h, w, f) -> (f)>
func.func @conv_bias_relu_add(%x: tensor<1x18x18x32xf16>, %w: tensor<3x3x32x48xf16>, %bias: tensor<48xf16>, %res: tensor<1x16x16x48xf16>) -> tensor<1x16x16x48xf16> {
  %z = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<1x16x16x48xf16>
  %f = linalg.fill ins(%z : f16) outs(%e : tensor<1x16x16x48xf16>) -> tensor<1x16x16x48xf16>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x18x18x32xf16>, tensor<3x3x32x48xf16>) outs(%f : tensor<1x16x16x48xf16>) -> tensor<1x16x16x48xf16>
  %o = linalg.generic {indexing_maps = [#nhwc, #feature, #nhwc, #nhwc], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c, %bias, %res : tensor<1x16x16x48xf16>, tensor<48xf16>, tensor<1x16x16x48xf16>) outs(%e : tensor<1x16x16x48xf16>) {
  ^bb0(%v: f16, %b: f16, %r: f16, %out: f16):
    %s = arith.addf %v, %b : f16
    %m = arith.maximumf %s, %z : f16
    %a = arith.addf %m, %r : f16
    linalg.yield %a : f16
  } -> tensor<1x16x16x48xf16>
  return %o : tensor<1x16x16x48xf16>
}
