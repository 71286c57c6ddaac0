// REQUIRES: pb-vendor-cpu
// RUN: pb-compile %s --target=nvidia-sm80 -o %t.sm80.pbart
// RUN: pb-compile %s --target=nvidia-sm90 -o %t.sm90.pbart
// RUN: pb-compile %s --target=cpu-host -o %t.cpu.pbart
// RUN: pb-run %t.sm80.pbart --emulate --check-against=%t.cpu.pbart --entry=softmax | FileCheck %s --check-prefix=SOFTMAX
// RUN: pb-run %t.sm90.pbart --emulate --check-against=%t.cpu.pbart --entry=softmax | FileCheck %s --check-prefix=SOFTMAX
// RUN: pb-run %t.sm80.pbart --emulate --check-against=%t.cpu.pbart --entry=mm --rtol=2e-2 --atol=2e-2 | FileCheck %s --check-prefix=MM
// RUN: pb-run %t.sm90.pbart --emulate --check-against=%t.cpu.pbart --entry=mm --rtol=2e-2 --atol=2e-2 | FileCheck %s --check-prefix=MM
// RUN: not pb-run %t.cpu.pbart --emulate 2>&1 | FileCheck %s --check-prefix=CPU
// RUN: pb-compile %s --target=nvidia-sm80 --options=emulation-ir=0 -o %t.off.pbart
// RUN: not pb-run %t.off.pbart --emulate 2>&1 | FileCheck %s --check-prefix=OFF
// pb-run --emulate runs an NVIDIA artifact's kernels on the CPU in the
// emulator, on host buffers, and --check-against compares each output
// with a CPU build of the same module: f32 (softmax) and f16 (a matmul on
// the tensor cores, f32-accumulated, compared in double within what f16
// sums of 64 products round to, as the CPU's kernel may accumulate in
// f16).

// SOFTMAX: softmax: output 0 f32 [16,128]
// SOFTMAX: OK softmax: 2048 values match the reference
// MM: mm: output 0 f16 [64,64]
// MM: OK mm: 4096 values match the reference

// CPU: pb-run: error: only NVIDIA and AMD artifacts (format nvidia-ptx+plan or amd-hsaco+plan) run in the emulator; this artifact's format is 'elf-shared-object'

// OFF: pb-run: error: kernel module '{{.*}}' of the GPU artifact has no IR for the emulator ('emulation_mlir'): the artifact was compiled with emulation-ir=0

func.func @softmax(%x: tensor<16x128xf32>) -> tensor<16x128xf32> {
  %e = tensor.empty() : tensor<16x128xf32>
  %y = linalg.softmax dimension(1) ins(%x : tensor<16x128xf32>)
                      outs(%e : tensor<16x128xf32>) -> tensor<16x128xf32>
  return %y : tensor<16x128xf32>
}

func.func @mm(%a: tensor<64x64xf16>, %b: tensor<64x64xf16>) -> tensor<64x64xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<64x64xf16>
  %z = linalg.fill ins(%zero : f16) outs(%e : tensor<64x64xf16>) -> tensor<64x64xf16>
  %c = linalg.matmul ins(%a, %b : tensor<64x64xf16>, tensor<64x64xf16>)
                     outs(%z : tensor<64x64xf16>) -> tensor<64x64xf16>
  return %c : tensor<64x64xf16>
}
