// RUN: pb-compile %s --target=nvidia-sm80 -o %t.pbart
// RUN: %nvidia_artifact %t.pbart --plan --ptx | FileCheck %s
// RUN: %if ptxas %{ %nvidia_artifact %t.pbart --ptxas sm_80 | FileCheck %s --check-prefix=PTXAS %}
// RUN: pb-compile %s --target=cpu-host --options=pipeline=reference -o %t.ref.pbart
// RUN: pb-run --emulate %t.pbart --check-against=%t.ref.pbart | FileCheck %s --check-prefix=EMU
// A matmul through S1-S5 for the A100: the fill joins the product's row and
// column loops (S3's pb-fuse-reductions), so one kernel zeroes each output
// element and accumulates it in a register; the 4 x 3 tiles of 64 x 64
// (both tile loops parallel, merged into the grid loop), fewer than the
// SMs, are split in two along rows (the intra-tile loop of 32-row halves
// joins the grid loop): 24 blocks of 1024 threads. Each block copies its
// 32 x 128 tile of A and 128 x 64 tile of B into shared memory (S3's
// pb-promote-to-scratchpad; rows padded by 4 f32: 51712 B of dynamic shared
// memory), synchronizes, and reads the copies. Run in the emulator (no
// race between the copies and the reads, no access out of bounds), the
// kernel matches a cpu-host build (pipeline=reference) within pb-run's
// default f32 tolerances.

// CHECK: arch sm_80
// CHECK: entry matmul
// CHECK: launch matmul_kernel grid [24, 1, 1] block [1024, 1, 1] shared 51712 args [0, 1, 2]
// CHECK-NOT: launch
// CHECK: .target sm_80
// CHECK: .entry matmul_kernel
// CHECK: .minnctapersm 1
// CHECK: %ctaid.x
// CHECK: %tid.x
// CHECK-DAG: ld.global
// CHECK-DAG: st.shared.b32
// CHECK-DAG: bar.sync 0;
// CHECK-DAG: ld.shared.b32
// CHECK-DAG: mul.rn.f32
// CHECK-DAG: add.rn.f32
// CHECK-DAG: st.global
// PTXAS-NOT: error
// PTXAS: 0 bytes spill stores, 0 bytes spill loads
// PTXAS-NOT: bytes spill

// EMU: matmul: output 0 f32 [256,192]
// EMU: OK matmul: 49152 values match the reference

func.func @matmul(%a: tensor<256x128xf32>, %b: tensor<128x192xf32>) -> tensor<256x192xf32> {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<256x192xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<256x192xf32>) -> tensor<256x192xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<256x128xf32>, tensor<128x192xf32>)
                      outs(%acc : tensor<256x192xf32>) -> tensor<256x192xf32>
  return %mm : tensor<256x192xf32>
}
