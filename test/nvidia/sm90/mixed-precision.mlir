// RUN: pb-opt --target=nvidia-sm90 --pb-pipeline=s1,s2,s3 --pb-explain %s 2>%t.explain | FileCheck %s --check-prefix=S3
// RUN: FileCheck %s --check-prefix=EXPLAIN < %t.explain
// RUN: pb-opt --target=nvidia-sm90 --pb-pipeline=s1,s2,s3,s4 --pb-explain %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=S4
// RUN: pb-compile %s --target=nvidia-sm90 -o %t.pbart
// RUN: %nvidia_artifact %t.pbart --plan --ptx | FileCheck %s
// RUN: pb-compile %s --target=nvidia-sm80 -o %t80.pbart
// RUN: %nvidia_artifact %t80.pbart --ptx | FileCheck %s --check-prefix=SM80
// RUN: pb-compile %s --target=cpu-host --options=pipeline=reference -o %t.ref.pbart
// RUN: pb-run --emulate %t.pbart --entry=mm_f16 --check-against=%t.ref.pbart --rtol=2e-3 --atol=2e-3 \
// RUN:   | FileCheck %s --check-prefix=EMU-F16
// RUN: pb-run --emulate %t.pbart --entry=bmm_bf16 --check-against=%t.ref.pbart \
// RUN:   | FileCheck %s --check-prefix=EMU-BF16
// RUN: pb-run --emulate %t.pbart --entry=mm_i8 --check-against=%t.ref.pbart --rtol=0 --atol=0 \
// RUN:   | FileCheck %s --check-prefix=EMU-I8
// RUN: pb-run --emulate %t80.pbart --entry=mm_f16 --check-against=%t.ref.pbart --rtol=2e-3 --atol=2e-3 \
// RUN:   | FileCheck %s --check-prefix=EMU-F16
// RUN: pb-run --emulate %t80.pbart --entry=bmm_bf16 --check-against=%t.ref.pbart \
// RUN:   | FileCheck %s --check-prefix=EMU-BF16
// RUN: pb-run --emulate %t80.pbart --entry=mm_i8 --check-against=%t.ref.pbart --rtol=0 --atol=0 \
// RUN:   | FileCheck %s --check-prefix=EMU-I8
// Mixed-precision contractions as the torch frontend emits f16 and bf16
// models (and as autocast produces them): 16-bit operands widened to an f32
// accumulator inside the contraction, the result truncated afterwards.
// Tensor cores take the 16-bit operands as they are and accumulate in f32,
// so S2 keeps these contractions and S3 maps them like plain ones; the
// truncation is the epilogue S4 fuses into the kernel's stores. Before,
// S2 lowered them to loops: a scalar kernel of 1024 threads.
//
// Both chips' kernels, run in the emulator, match a cpu-host build
// (pipeline=reference), which accumulates in f32 as well: the f16 result
// within two f16 ulps (2^-10 relative each; the f32 sums differ only in
// their order), the f32 one within pb-run's default tolerances, the i8
// loops exactly.

// EMU-F16: mm_f16: output 0 f16 [256,256]
// EMU-F16: OK mm_f16: 65536 values match the reference
// EMU-BF16: bmm_bf16: output 0 f32 [4,128,128]
// EMU-BF16: OK bmm_bf16: 65536 values match the reference
// EMU-I8: mm_i8: output 0 i32 [64,64]
// EMU-I8: OK mm_i8: 4096 values match the reference

// S3-LABEL: func.func @mm_f16
// S3: linalg.matmul {pb.matrix_unit = "WGMMA_F32_64x128x16_F16"} ins(%{{.*}}, %{{.*}} : memref<256x128xf16>, memref<128x256xf16>) outs(%{{.*}} : memref<256x256xf32>)
// S3: linalg.generic {{.*}}pb.matrix_unit_epilogue
// S3: arith.truncf
// S3-LABEL: func.func @bmm_bf16
// S3: linalg.batch_matmul {pb.matrix_unit = "WGMMA_F32_64x128x16_BF16"}
// The i8 x i8 -> i32 form is recognized too, but no unit of the chip
// accumulates i8 into i32 for the kernels S4 builds (f32 accumulators
// only): it stays loops, and --pb-explain says why.
// S3-LABEL: func.func @mm_i8
// S3-NOT: pb.matrix_unit
// S3: return
// EXPLAIN: matrix units: linalg.matmul not on a subgroup- or warpgroup-scope unit: no subgroup- or warpgroup-scope unit for i8 x i8 -> i32 with an f32 accumulator
//
// One launch: the wgmma kernel (one warpgroup per 64 x 128 tile) starts its
// accumulators at 0 (the f32 buffer was only zero-filled, and nothing else
// reads it: the fill and its launch are gone) and its stores truncate to
// f16; it takes A, B and the f16 result only.
// S4: matrix units: accumulators start at 0; 1 zero fill(s) of C removed
// CHECK: entry mm_f16
// CHECK-NEXT: launch mm_f16_kernel grid [8, 1, 1] block [128, 1, 1] shared 74752 args [0, 1, 2]
// CHECK-NOT: launch mm_f16
// The batched product returns C itself: its fill stays a launch.
// CHECK: entry bmm_bf16
// CHECK: launch bmm_bf16_kernel grid [128, 1, 1] block [512, 1, 1]
// CHECK-NEXT: launch bmm_bf16_kernel grid [8, 1, 1] block [128, 1, 1]
// CHECK: .entry mm_f16_kernel
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
// CHECK: cvt.rn.f16.f32
// SM80: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
func.func @mm_f16(%a: tensor<256x128xf16>, %b: tensor<128x256xf16>) -> tensor<256x256xf16> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x256xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
  %m = linalg.matmul ins(%a, %b : tensor<256x128xf16>, tensor<128x256xf16>)
                     outs(%f : tensor<256x256xf32>) -> tensor<256x256xf32>
  %e16 = tensor.empty() : tensor<256x256xf16>
  %t = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%m : tensor<256x256xf32>) outs(%e16 : tensor<256x256xf16>) {
  ^bb0(%x: f32, %o: f16):
    %y = arith.truncf %x : f32 to f16
    linalg.yield %y : f16
  } -> tensor<256x256xf16>
  return %t : tensor<256x256xf16>
}

func.func @bmm_bf16(%a: tensor<4x128x64xbf16>, %b: tensor<4x64x128xbf16>) -> tensor<4x128x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x128x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x128x128xf32>) -> tensor<4x128x128xf32>
  %m = linalg.batch_matmul ins(%a, %b : tensor<4x128x64xbf16>, tensor<4x64x128xbf16>)
                           outs(%f : tensor<4x128x128xf32>) -> tensor<4x128x128xf32>
  return %m : tensor<4x128x128xf32>
}

func.func @mm_i8(%a: tensor<64x128xi8>, %b: tensor<128x64xi8>) -> tensor<64x64xi32> {
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<64x64xi32>
  %f = linalg.fill ins(%zero : i32) outs(%e : tensor<64x64xi32>) -> tensor<64x64xi32>
  %m = linalg.matmul ins(%a, %b : tensor<64x128xi8>, tensor<128x64xi8>)
                     outs(%f : tensor<64x64xi32>) -> tensor<64x64xi32>
  return %m : tensor<64x64xi32>
}
