// RUN: pb-compile %s --target=nvidia-sm90 -o %t.pbart
// RUN: %nvidia_artifact %t.pbart --plan --ptx | FileCheck %s
// RUN: %if ptxas %{ %nvidia_artifact %t.pbart --ptxas sm_90a | FileCheck %s --check-prefix=PTXAS %}
// RUN: pb-compile %s --target=cpu-host --options=pipeline=reference -o %t.ref.pbart
// RUN: pb-run --emulate %t.pbart --check-against=%t.ref.pbart --rtol=0 --atol=0 \
// RUN:   | FileCheck %s --check-prefix=EMU
// A 1024 x 1024 f32 add fills the chip: S3's 64 x 64 tiles (256, fewer
// than 4 per SM) are split along rows in two (pb-mark-parallel widens the
// grid loop with the intra-tile loop of 32-row halves): 512 blocks; the
// half-tile's parallel loops, vectorized by 4, are the block's threads
// (32 rows x 16 vectors = 512), and each thread's accesses are 128-bit (16
// bytes at an offset that is a multiple of 4 elements). Before, this was
// one block of 256 threads and scalar loads. Run in the emulator (which
// checks the vector accesses' bounds and 16-byte alignment), the kernel
// matches a cpu-host build (pipeline=reference) exactly: one rounding
// either way.

// EMU: add: output 0 f32 [1024,1024]
// EMU: OK add: 1048576 values match the reference

// CHECK: launch add_kernel grid [512, 1, 1] block [512, 1, 1]
// CHECK-NOT: launch
// CHECK: .entry add_kernel
// CHECK-NOT: ld.global.b32
// CHECK: ld.global.v4.b32
// CHECK: ld.global.v4.b32
// CHECK: st.global.v4.b32
// CHECK-NOT: st.global.b32
// PTXAS-NOT: error
// PTXAS: 0 bytes spill stores, 0 bytes spill loads

func.func @add(%a: tensor<1024x1024xf32>, %b: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %e = tensor.empty() : tensor<1024x1024xf32>
  %r = linalg.add ins(%a, %b : tensor<1024x1024xf32>, tensor<1024x1024xf32>)
                  outs(%e : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  return %r : tensor<1024x1024xf32>
}
