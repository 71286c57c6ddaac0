// RUN: env POLYBLOCKS_PTXAS= pb-compile %s --target=nvidia-sm90 -o %t.pbart --estimate | FileCheck %s
// RUN: env POLYBLOCKS_PTXAS= pb-compile %s --target=nvidia-sm80 -o %t80.pbart --estimate | FileCheck %s --check-prefix=SM80
// RUN: env POLYBLOCKS_PTXAS= pb-compile %s --target=nvidia-sm90 -o %t.pbart --print-metadata | FileCheck %s --check-prefix=META
// RUN: %nvidia_artifact %t.pbart --plan | FileCheck %s --check-prefix=PLAN
// RUN: pb-opt --target=nvidia-sm90 --pb-pipeline=s1,s2,s3,s4 --pb-explain %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: %if ptxas %{ pb-compile %s --target=nvidia-sm90 -o %t.ptxas.pbart --estimate | FileCheck %s --check-prefix=REGS %}
// RUN: pb-compile %s --target=cpu-host --options=pipeline=reference -o %t.ref.pbart
// RUN: pb-run --emulate %t.pbart --check-against=%t.ref.pbart --rtol=0 --atol=0 \
// RUN:   | FileCheck %s --check-prefix=EMU
// RUN: pb-run --emulate %t80.pbart --check-against=%t.ref.pbart --rtol=0 --atol=0 \
// RUN:   | FileCheck %s --check-prefix=EMU
// RUN: %if ptxas %{ pb-run --emulate %t.ptxas.pbart --check-against=%t.ref.pbart --rtol=0 --atol=0 | FileCheck %s --check-prefix=EMU %}
//
// The roofline estimate of each launch, every figure from the .td, checked
// by hand (without ptxas, so registers are unknown and do not limit):
//
// @add, 1024 x 1024 f32 on sm90: 3 buffers x 4 MiB = 12582912 B and 1048576
// f32 additions; 512 blocks of 512 threads; an SM holds 2048 / 512 = 4
// (threads; 32 blocks, 228 KiB / (0 + 1 KiB reserved) shared), 132 x 4 =
// 528 slots: one wave, every SM busy. Memory 12582912 B / 4800 GB/s =
// 2.62 us, compute 1048576 / 66900 GFLOP/s = 0.02 us, plus the launch's
// 4 us: 6.62 us.
// CHECK: estimate for nvidia-sm90
// CHECK: entry add: 1 launches, 6.62 us; roofline 2.62 us (40%); 12582912 B, 1048576 FLOPs
// CHECK: add_kernel 512 x 512 ? 4 (threads) 1 100% 12582912 1048576 2.62 0.02 6.62 memory
//
// @small, 64 x 64 f32: 3 x 16 KiB = 49152 B, 4096 multiplications; 128
// blocks of 32 threads: 32 per SM (blocks), one wave on 128 of 132 SMs
// (97%): 49152 / 4800 GB/s = 0.0102 us / 0.97 + 4 us = 4.01 us.
// CHECK: entry small: 1 launches, 4.01 us; roofline 0.01 us (0%); 49152 B, 4096 FLOPs
// CHECK: small_kernel 128 x 32 ? 32 (blocks) 1 97% 49152 4096 0.01 0.00 4.01 memory
//
// On sm80 (108 SMs, 2039 GB/s): 108 x 4 = 432 slots for 512 blocks, two
// waves, the second 80 of 432 full: 512 / 864 = 59% of the chip;
// 12582912 B / 2039 GB/s = 6.17 us / 0.593 + 4 us = 14.41 us.
// SM80: estimate for nvidia-sm80
// SM80: add_kernel 512 x 512 ? 4 (threads) 2 59% 12582912 1048576 6.17 0.05 14.41 memory
//
// The metadata keeps it, and the plan's launches carry their own.
// META: "estimate": {
// META: "chip": "nvidia-sm90",
// META: "estimate_us": 6.62
// PLAN: launch add_kernel grid [512, 1, 1] block [512, 1, 1]
//
// --pb-explain states S4's estimate on each launch.
// EXPLAIN: remark: pb-explain: estimate: 12582912 B, FLOPs: 1048576 vector f32; 512 blocks x 512 threads, 0 B shared, registers unknown; 4 blocks per SM (threads), 1 wave(s), 100% of the chip; memory 2.62 us, compute 0.02 us, launch 4.00 us -> 6.62 us (memory-bound)
//
// With ptxas, its register count enters the occupancy.
//
// The kernels of every build, run in the emulator, match a cpu-host build
// (pipeline=reference) exactly (one rounding either way).
// EMU: add: output 0 f32 [1024,1024]
// EMU: OK add: 1048576 values match the reference
// EMU: small: output 0 f32 [64,64]
// EMU: OK small: 4096 values match the reference
// REGS: add_kernel 512 x 512 {{[0-9]+}} 4 (

func.func @add(%a: tensor<1024x1024xf32>, %b: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %e = tensor.empty() : tensor<1024x1024xf32>
  %r = linalg.add ins(%a, %b : tensor<1024x1024xf32>, tensor<1024x1024xf32>)
                  outs(%e : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  return %r : tensor<1024x1024xf32>
}

func.func @small(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %e = tensor.empty() : tensor<64x64xf32>
  %r = linalg.mul ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>)
                  outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}
