// RUN: pb-opt %s --pass-pipeline='builtin.module(gpu.module(pb-gpu-keep-emulation-ir))' | FileCheck %s
// RUN: pb-opt %s --pass-pipeline='builtin.module(gpu.module(pb-gpu-keep-emulation-ir))' --mlir-print-debuginfo --mlir-elide-elementsattrs-if-larger=2 | grep -o 'pb.emulation_ir = "[^"]*"' > %t.text
// RUN: FileCheck %s --check-prefix=TEXT < %t.text
// RUN: FileCheck %s --check-prefix=NOT < %t.text
// Each kernel module records its own text, in custom form, as the string
// pb.emulation_ir (newlines escaped as \0A). The text must parse on its
// own: no locations even when the output prints them, elements attributes
// in full even when the output elides them, and attributes inline rather
// than as aliases defined outside the module. A module with a
// nvgpu.device_async_create_group of no tokens (whose custom form does not
// parse back: the next line's result would be read as a token) is printed
// in generic form.

#map = affine_map<(d0) -> (d0 * 2)>
module attributes {gpu.container_module} {
  // CHECK-LABEL: gpu.module @add_kernel
  // CHECK-SAME: pb.emulation_ir = "gpu.module @add_kernel {\0A
  // CHECK-SAME: gpu.func @add_kernel(%arg0: memref<16xf32>, %arg1: memref<16xf32>) kernel
  // CHECK-SAME: gpu.thread_id  x
  // CHECK-SAME: arith.addf
  // CHECK-SAME: gpu.return
  gpu.module @add_kernel {
    gpu.func @add_kernel(%a: memref<16xf32>, %b: memref<16xf32>) kernel {
      %t = gpu.thread_id x
      %x = memref.load %a[%t] : memref<16xf32>
      %y = memref.load %b[%t] : memref<16xf32>
      %s = arith.addf %x, %y : f32
      memref.store %s, %b[%t] : memref<16xf32>
      gpu.return
    }
  }
  // CHECK-LABEL: gpu.module @scale_kernel
  // CHECK-SAME: pb.emulation_ir = "gpu.module @scale_kernel {\0A
  // CHECK-SAME: affine.apply affine_map<(d0) -> (d0 * 2)>
  // CHECK-SAME: dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]>
  gpu.module @scale_kernel {
    gpu.func @scale_kernel(%a: memref<32xf32>) kernel {
      %t = gpu.thread_id x
      %i = affine.apply #map(%t)
      %c = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : vector<4xf32>
      %v = vector.load %a[%i] : memref<32xf32>, vector<4xf32>
      %m = arith.mulf %v, %c : vector<4xf32>
      vector.store %m, %a[%i] : memref<32xf32>, vector<4xf32>
      gpu.return
    } loc("scale.py":7:3)
  }
  // CHECK-LABEL: gpu.module @group_kernel
  // CHECK-SAME: pb.emulation_ir = "\22gpu.module\22() <{sym_name = \22group_kernel\22}>
  // CHECK-SAME: \22nvgpu.device_async_create_group\22() : () -> !nvgpu.device.async.token
  gpu.module @group_kernel {
    gpu.func @group_kernel(%a: memref<16xf32>) kernel {
      %g = nvgpu.device_async_create_group
      nvgpu.device_async_wait %g
      gpu.return
    }
  }
}

// TEXT: pb.emulation_ir = "gpu.module @add_kernel
// TEXT: pb.emulation_ir = "gpu.module @scale_kernel
// TEXT-SAME: affine_map<(d0) -> (d0 * 2)>
// TEXT-SAME: dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]>
// NOT-NOT: loc(
// NOT-NOT: #map
// NOT-NOT: __elided__
