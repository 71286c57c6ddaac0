// RUN: env POLYBLOCKS_PTXAS= pb-compile %s --target=nvidia-sm90 -o %t.pbart --estimate | FileCheck %s
// RUN: pb-compile %s --target=cpu-host --options=pipeline=reference -o %t.ref.pbart
// RUN: pb-run --emulate %t.pbart --check-against=%t.ref.pbart | FileCheck %s --check-prefix=EMU
// A batch-1 linear layer in f32 (ResNet-50's classifier: 2048 -> 1000) is
// a grid loop over the 1000 outputs with no thread loop inside (each
// output's dot product is serial): its iterations are spread over blocks x
// threads with blocks small enough that the SMs share them (32 blocks of
// 32 threads). Before, it was one block of 1000 threads on one of the 132
// SMs: 229.6 us in the estimate, now 11.05 us. Run in the emulator, the
// kernel matches a cpu-host build (pipeline=reference) within pb-run's
// default f32 tolerances.
// EMU: fc: output 0 f32 [1,1000]
// EMU: OK fc: 1000 values match the reference
// CHECK: fc_kernel 32 x 32 ? 32 (blocks) 1 24%
func.func @fc(%x: tensor<1x2048xf32>, %w: tensor<2048x1000xf32>) -> tensor<1x1000xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x1000xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x1000xf32>) -> tensor<1x1000xf32>
  %m = linalg.matmul ins(%x, %w : tensor<1x2048xf32>, tensor<2048x1000xf32>)
                     outs(%f : tensor<1x1000xf32>) -> tensor<1x1000xf32>
  return %m : tensor<1x1000xf32>
}
