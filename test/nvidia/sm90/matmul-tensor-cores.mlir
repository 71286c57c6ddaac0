// RUN: pb-compile %s --target=nvidia-sm90 -o %t.pbart
// RUN: %nvidia_artifact %t.pbart --plan --ptx | FileCheck %s
// RUN: %if ptxas %{ %nvidia_artifact %t.pbart --ptxas sm_90a | FileCheck %s --check-prefix=PTXAS %}
// RUN: pb-compile %s --target=nvidia-sm90 --options=allow-tf32=1 -o %t.tf32.pbart
// RUN: %nvidia_artifact %t.tf32.pbart --plan --ptx | FileCheck %s --check-prefix=TF32
// RUN: %if ptxas %{ %nvidia_artifact %t.tf32.pbart --ptxas sm_90a | FileCheck %s --check-prefix=PTXAS %}
// RUN: pb-compile %s --target=nvidia-sm90 --options=warpgroup-units=0 -o %t.warp.pbart
// RUN: %nvidia_artifact %t.warp.pbart --plan --ptx | FileCheck %s --check-prefix=WARP
// RUN: pb-compile %s --target=cpu-host --options=pipeline=reference -o %t.ref.pbart
// RUN: pb-run --emulate %t.pbart --entry=mm_f16 --check-against=%t.ref.pbart --rtol=1e-2 --atol=5e-2 \
// RUN:   | FileCheck %s --check-prefix=EMU-F16
// RUN: pb-run --emulate %t.pbart --entry=mm_f32 --check-against=%t.ref.pbart \
// RUN:   | FileCheck %s --check-prefix=EMU-F32
// RUN: pb-run --emulate %t.tf32.pbart --entry=mm_f16 --check-against=%t.ref.pbart --rtol=1e-2 --atol=5e-2 \
// RUN:   | FileCheck %s --check-prefix=EMU-F16
// RUN: pb-run --emulate %t.tf32.pbart --entry=mm_f32 --check-against=%t.ref.pbart --rtol=1e-3 --atol=2e-2 \
// RUN:   | FileCheck %s --check-prefix=EMU-F32
// RUN: pb-run --emulate %t.warp.pbart --entry=mm_f16 --check-against=%t.ref.pbart --rtol=1e-2 --atol=5e-2 \
// RUN:   | FileCheck %s --check-prefix=EMU-F16
// RUN: pb-run --emulate %t.warp.pbart --entry=mm_f32 --check-against=%t.ref.pbart \
// RUN:   | FileCheck %s --check-prefix=EMU-F32
// Matmuls through S1-S5 on the H200's tensor cores. f16 and bf16 run on the
// chip's largest unit, the warpgroup's wgmma: a kernel of one warpgroup per
// 64 x 128 block tile (two warpgroups, 128 x 128, would leave SMs idle),
// operand tiles in 128-byte-swizzled dynamic shared memory filled by
// cp.async, made visible to wgmma's async proxy by a proxy fence, and read
// through matrix descriptors: A K-major; B K-major when indexed (n, k)
// (imm-trans-b 0), MN-major when indexed (k, n) (imm-trans-b 1). f32 with
// allow-tf32 has B indexed (k, n), which wgmma reads only for 16-bit types:
// it runs on the warp-level tf32 mma.sync. With warpgroup-units=0, f16 runs
// on mma.sync as well.
//
// The three builds' kernels run in the emulator against a cpu-host build
// (pipeline=reference) of the module (@mm_bf16_bt's kernel, whose
// emulation at this size takes seconds, is checked at 256^3 on both unit
// families by ../emulate-bf16.mlir). The
// CPU's f16 product rounds every partial sum to f16 (the kernels accumulate
// in f32): over 128 products of inputs in [-1, 1], sums up to about 17, it
// drifts by a few f16 ulps (2^-6 there), hence 5e-2. f32 on the CUDA cores
// matches within pb-run's default tolerances; tf32 within 2e-2 (10-bit
// mantissas: each product off by up to 2^-9 of its magnitude, either sign,
// over 64).

// CHECK: arch sm_90a
// CHECK: entry mm_f16
// CHECK: launch mm_f16_kernel grid [{{[0-9]+}}, 1, 1] block [{{[0-9]+}}, 1, 1] shared 0 args [2]
// CHECK: launch mm_f16_kernel grid [8, 1, 1] block [128, 1, 1] shared 74752 args [2, 0, 1]
// CHECK: entry mm_bf16_bt
// CHECK: launch mm_bf16_bt_kernel grid [32, 1, 1] block [128, 1, 1] shared 74752 args [2, 0, 1]
// CHECK: .target sm_90a
// CHECK: .entry mm_f16_kernel
// CHECK: .shared .align 16 .b8 __dynamic_shmem__0
// CHECK: cp.async.cg.shared.global [{{.*}}], [{{.*}}], 16, {{.*}};
// CHECK: cp.async.commit_group;
// CHECK: cp.async.wait_group 1;
// CHECK-NEXT: fence.proxy.async.shared::cta;
// CHECK-NEXT: bar.sync 0;
// CHECK: wgmma.fence.sync.aligned;
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {{.*}}, p, 1, 1, 0, 1;
// CHECK: wgmma.commit_group.sync.aligned;
// CHECK-NEXT: wgmma.wait_group.sync.aligned 0;
// CHECK: cp.async.wait_group 0;
// CHECK: cvt.rn.f16.f32
// CHECK: st.global.b16
// CHECK: .entry mm_bf16_bt_kernel
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{.*}}, p, 1, 1, 0, 0;
// CHECK: cvt.rn.bf16.f32
// CHECK: st.global.b16

// TF32: entry mm_f32
// TF32: launch mm_f32_kernel grid [8, 1, 1] block [256, 1, 1] shared 29184 args [2, 0, 1]
// TF32: cp.async.cg.shared.global [{{.*}}], [{{.*}}], 16, {{.*}};
// TF32: ld.shared.b32
// TF32: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// TF32: st.global.b32

// WARP: launch mm_f16_kernel grid [12, 1, 1] block [256, 1, 1] shared 29184 args [2, 0, 1]
// WARP: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// WARP: ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16
// WARP: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// WARP-NOT: wgmma

// EMU-F16: mm_f16: output 0 f16 [256,192]
// EMU-F16: OK mm_f16: 49152 values match the reference
// EMU-F32: mm_f32: output 0 f32 [96,200]
// EMU-F32: OK mm_f32: 19200 values match the reference

// PTXAS-NOT: error
// PTXAS: 0 bytes spill stores, 0 bytes spill loads
// PTXAS: 0 bytes spill stores, 0 bytes spill loads

func.func @mm_f16(%a: tensor<256x128xf16>, %b: tensor<128x192xf16>) -> tensor<256x192xf16> {
  %zero = arith.constant 0.0 : f16
  %init = tensor.empty() : tensor<256x192xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%init : tensor<256x192xf16>) -> tensor<256x192xf16>
  %mm = linalg.matmul ins(%a, %b : tensor<256x128xf16>, tensor<128x192xf16>)
                      outs(%acc : tensor<256x192xf16>) -> tensor<256x192xf16>
  return %mm : tensor<256x192xf16>
}

func.func @mm_bf16_bt(%a: tensor<512x256xbf16>, %b: tensor<512x256xbf16>) -> tensor<512x512xbf16> {
  %zero = arith.constant 0.0 : bf16
  %init = tensor.empty() : tensor<512x512xbf16>
  %acc = linalg.fill ins(%zero : bf16) outs(%init : tensor<512x512xbf16>) -> tensor<512x512xbf16>
  %mm = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                       affine_map<(m, n, k) -> (n, k)>,
                                       affine_map<(m, n, k) -> (m, n)>]
                      ins(%a, %b : tensor<512x256xbf16>, tensor<512x256xbf16>)
                      outs(%acc : tensor<512x512xbf16>) -> tensor<512x512xbf16>
  return %mm : tensor<512x512xbf16>
}

func.func @mm_f32(%a: tensor<96x64xf32>, %b: tensor<64x200xf32>) -> tensor<96x200xf32> {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<96x200xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<96x200xf32>) -> tensor<96x200xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<96x64xf32>, tensor<64x200xf32>)
                      outs(%acc : tensor<96x200xf32>) -> tensor<96x200xf32>
  return %mm : tensor<96x200xf32>
}
