// RUN: pb-opt --target=cpu-x86-64-v3 --pb-explain --pb-outline-kernels --pb-kernel-sites=cores=4 %s 2>&1 | FileCheck %s
// RUN: pb-opt --target=cpu-x86-64-v3 --pb-outline-kernels "--pb-kernel-sites=cores=4 profile=1" %s | FileCheck %s --check-prefix=PROFILE
// RUN: pb-opt --pb-outline-kernels --pb-kernel-sites %s | FileCheck %s --check-prefix=NOTARGET

// Three calls of two kernels: a serial sum (on one core) and a parallel
// product (on `cores` cores, plus the chip's fork-and-join overhead),
// estimated from x86-64-v3's per-core figures: 3 GB/s of DRAM, 78 GFLOP/s
// f32, 2000 ns per parallel call.
// Serial: 3 buffers x 4 KiB = 12288 B / 3 GB/s = 4.096 us; 1024 FLOPs.
// Parallel: 12288 B / (4 x 3 GB/s) = 1.024 us, + 2 us.
// CHECK: remark: pb-explain: 3 kernel calls; estimated with 4 cores for a parallel call
// CHECK: module attributes {pb.kernel_sites = {chip = "cpu-x86-64-v3", cores = 4 : i64, profiled = false, sites = [
// CHECK-SAME: {bound = "memory", bytes = 1.228800e+04 : f64, compute_us = {{0\.0131[0-9]*}} : f64, entry = "two_nests", estimate_us = 4.096000e+00 : f64, kernel = "[[K0:kernel_[0-9a-f]+]]", loc = "{{.*}}pb-kernel-sites.mlir:{{[0-9]+}}:3", matrix_flops = {}, memory_us = 4.096000e+00 : f64, overhead_us = 0.000000e+00 : f64, parallel = false, site = 0 : i64, vector_flops = {f32 = 1.024000e+03 : f64}, work_exact = true}
// CHECK-SAME: {bound = "memory", {{.*}}, estimate_us = 3.024000e+00 : f64, kernel = "[[K1:kernel_[0-9a-f]+]]", {{.*}}, memory_us = 1.024000e+00 : f64, overhead_us = {{2\.0[0-9e+]*}} : f64, parallel = true, site = 1 : i64
// CHECK-SAME: {{.*}}kernel = "[[K0]]", {{.*}} site = 2 : i64
// CHECK-LABEL: func.func @two_nests
// CHECK: call @[[K0]](
// CHECK-NEXT: call @[[K1]](
// CHECK-NEXT: call @[[K0]](
// CHECK: func.func private @[[K0]]({{.*}}) attributes {pb.kernel}

// With profile=1 each call is bracketed by the timer calls, with its site.
// PROFILE: profiled = true
// PROFILE-LABEL: func.func @two_nests
// PROFILE: %[[T0:.*]] = call @__pb_profile_now() : () -> i64
// PROFILE-NEXT: call @kernel_
// PROFILE-NEXT: %[[S0:.*]] = arith.constant 0 : i32
// PROFILE-NEXT: call @__pb_profile_add(%[[S0]], %[[T0]]) : (i32, i64) -> ()
// PROFILE-NEXT: call @__pb_profile_now()
// PROFILE-NEXT: call @kernel_
// PROFILE-NEXT: arith.constant 1 : i32
// PROFILE-NEXT: call @__pb_profile_add(
// PROFILE-NEXT: %[[T2:.*]] = call @__pb_profile_now() : () -> i64
// PROFILE-NEXT: call @kernel_
// PROFILE-NEXT: %[[S2:.*]] = arith.constant 2 : i32
// PROFILE-NEXT: call @__pb_profile_add(%[[S2]], %[[T2]])
// PROFILE: func.func private @__pb_profile_now() -> i64
// PROFILE: func.func private @__pb_profile_add(i32, i64)

// Without a target the work is counted and the estimate is missing, said.
// NOTARGET: no_estimate = "the module has no #pb.target"
// NOTARGET-SAME: vector_flops = {f32 = 1.024000e+03 : f64}
// NOTARGET-NOT: estimate_us
func.func @two_nests(%a: memref<1024xf32>, %b: memref<1024xf32>,
                     %c: memref<1024xf32>, %d: memref<1024xf32>) {
  affine.for %i = 0 to 1024 {
    %x = affine.load %a[%i] : memref<1024xf32>
    %y = affine.load %b[%i] : memref<1024xf32>
    %s = arith.addf %x, %y : f32
    affine.store %s, %c[%i] : memref<1024xf32>
  }
  affine.parallel (%i) = (0) to (1024) {
    %x = affine.load %a[%i] : memref<1024xf32>
    %y = affine.load %b[%i] : memref<1024xf32>
    %p = arith.mulf %x, %y : f32
    affine.store %p, %d[%i] : memref<1024xf32>
  }
  affine.for %i = 0 to 1024 {
    %x = affine.load %a[%i] : memref<1024xf32>
    %y = affine.load %b[%i] : memref<1024xf32>
    %s = arith.addf %x, %y : f32
    affine.store %s, %c[%i] : memref<1024xf32>
  }
  return
}
