// RUN: pb-opt %s --pass-pipeline='builtin.module(gpu.module(pb-nvidia-set-occupancy))' | FileCheck %s
// Kernels get nvvm.minctasm = 1 unless they state a minimum; other
// functions of the module are left alone.

module attributes {gpu.container_module} {
  gpu.module @m {
    // CHECK-LABEL: gpu.func @k
    // CHECK-SAME: nvvm.minctasm = 1 : i32
    gpu.func @k() kernel {
      gpu.return
    }
    // CHECK-LABEL: gpu.func @stated
    // CHECK-SAME: nvvm.minctasm = 4 : i32
    gpu.func @stated() kernel attributes {nvvm.minctasm = 4 : i32} {
      gpu.return
    }
    // CHECK-LABEL: gpu.func @helper
    // CHECK-NOT: minctasm
    gpu.func @helper() {
      gpu.return
    }
  }
}
