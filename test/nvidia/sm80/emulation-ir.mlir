// RUN: pb-compile %s --target=nvidia-sm80 -o %t.pbart
// RUN: %nvidia_artifact %t.pbart --plan --emulation-ir | FileCheck %s
// RUN: %nvidia_artifact %t.pbart --emulation-ir | pb-opt | FileCheck %s --check-prefix=PARSED
// RUN: pb-compile %s --target=nvidia-sm80 --options=emulation-ir=0 -o %t.off.pbart
// RUN: %nvidia_artifact %t.off.pbart --plan --emulation-ir | FileCheck %s --check-prefix=OFF
// RUN: pb-compile %s --target=cpu-host --options=pipeline=reference -o %t.ref.pbart
// RUN: pb-run --emulate %t.pbart --check-against=%t.ref.pbart | FileCheck %s --check-prefix=EMU
// Every kernel module of the payload keeps its MLIR before NVVM lowering
// ("emulation_mlir", for pbExecutableLoadEmulated): a gpu.module of gpu,
// nvgpu and vector operations (the f16 matmul's tensor-core kernel:
// cp.async, ldmatrix, mma.sync) that parses on its own; emulation-ir=0
// leaves it out (pb-run-emulate.mlir: such an artifact is refused). The
// kernels, run in the emulator, match a cpu-host build (pipeline=reference;
// f16 operands, f32 accumulation on both sides) within pb-run's default
// tolerances.
// EMU: mm: output 0 f32 [64,32]
// EMU: OK mm: 2048 values match the reference

// The fill, then the tensor-core kernel (a module of its own).
// CHECK: launch mm_kernel grid [64, 1, 1]
// CHECK: launch mm_kernel grid [1, 1, 1]
// CHECK-NOT: launch
// CHECK-NOT: has no emulation IR
// CHECK: // emulation module mm_kernel
// CHECK-NEXT: gpu.module @mm_kernel [#nvvm.target<O = 3, chip = "sm_80", features = "+ptx70">] {
// CHECK-NEXT: gpu.func @mm_kernel(%arg0: memref<64x32xf32>) kernel
// CHECK-NOT: llvm.
// CHECK: // emulation module mm_kernel_0
// CHECK-NEXT: gpu.module @mm_kernel_0
// CHECK-NEXT: gpu.func @mm_kernel(%arg0: memref<64x32xf32>, %arg1: memref<64x48xf16>, %arg2: memref<48x32xf16>) kernel
// CHECK-NOT: llvm.
// CHECK: nvgpu.device_async_copy
// CHECK-NOT: llvm.
// CHECK: nvgpu.ldmatrix
// CHECK-NOT: llvm.
// CHECK: nvgpu.mma.sync
// CHECK-NOT: llvm.
// CHECK-NOT: pb.
// CHECK-NOT: has no emulation IR

// PARSED: gpu.module @mm_kernel
// PARSED: gpu.module @mm_kernel_0
// PARSED: nvgpu.mma.sync

// OFF: launch mm_kernel grid [64, 1, 1]
// OFF: launch mm_kernel grid [1, 1, 1]
// OFF: // module mm_kernel has no emulation IR
// OFF: // module mm_kernel_0 has no emulation IR
// OFF-NOT: gpu.module

func.func @mm(%a: tensor<64x48xf16>, %b: tensor<48x32xf16>) -> tensor<64x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x32xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32>
  %c = linalg.matmul ins(%a, %b : tensor<64x48xf16>, tensor<48x32xf16>)
                     outs(%z : tensor<64x32xf32>) -> tensor<64x32xf32>
  return %c : tensor<64x32xf32>
}
