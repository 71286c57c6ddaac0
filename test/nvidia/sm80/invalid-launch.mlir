// RUN: pb-opt --target=nvidia-sm80 %s -pb-gpu-check-launch-limits -split-input-file -verify-diagnostics
// Launches beyond the A100's limits (targets/nvidia/SM80.td) are errors.

// 2048 threads per block: 32 warps x 32 lanes is the most.
func.func @too_many_threads() {
  %c1 = arith.constant 1 : index
  %c2048 = arith.constant 2048 : index
  // expected-error @+1 {{the launch has 2048 threads per block; nvidia-sm80 allows 1024}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c2048, %sy = %c1, %sz = %c1) {
    gpu.terminator
  }
  return
}

// -----

// 200 KiB of shared memory: the A100 gives a block at most 163 KiB.
func.func @too_much_shared_memory() {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  // expected-error @+1 {{the kernel uses 204800 bytes of shared memory; nvidia-sm80 allows 166912 per block}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             workgroup(%buf : memref<51200xf32, #gpu.address_space<workgroup>>) {
    gpu.terminator
  }
  return
}

// -----

func.func @dynamic_sizes(%n: index) {
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{grid and block sizes must be constants}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %n, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    gpu.terminator
  }
  return
}
