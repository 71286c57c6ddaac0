// RUN: pb-compile %s --target=nvidia-sm80 -o %t.pbart
// RUN: %nvidia_artifact %t.pbart --plan --ptx | FileCheck %s
// RUN: %nvidia_artifact %t.pbart --plan --ptx | FileCheck %s --check-prefix=BF16
// RUN: %if ptxas %{ %nvidia_artifact %t.pbart --ptxas sm_80 | FileCheck %s --check-prefix=PTXAS %}
// RUN: pb-compile %s --target=nvidia-sm80 --options=allow-tf32=1 -o %t.tf32.pbart
// RUN: %nvidia_artifact %t.tf32.pbart --plan --ptx | FileCheck %s --check-prefix=TF32
// RUN: %if ptxas %{ %nvidia_artifact %t.tf32.pbart --ptxas sm_80 | FileCheck %s --check-prefix=PTXAS %}
// RUN: pb-compile %s --target=cpu-host --options=pipeline=reference -o %t.ref.pbart
// RUN: pb-run --emulate %t.pbart --entry=mm_f16 --check-against=%t.ref.pbart --rtol=1e-2 --atol=5e-2 \
// RUN:   | FileCheck %s --check-prefix=EMU-F16
// RUN: pb-run --emulate %t.pbart --entry=mm_f32 --check-against=%t.ref.pbart \
// RUN:   | FileCheck %s --check-prefix=EMU-F32
// RUN: pb-run --emulate %t.tf32.pbart --entry=mm_f16 --check-against=%t.ref.pbart --rtol=1e-2 --atol=5e-2 \
// RUN:   | FileCheck %s --check-prefix=EMU-F16
// RUN: pb-run --emulate %t.tf32.pbart --entry=mm_f32 --check-against=%t.ref.pbart --rtol=1e-3 --atol=2e-2 \
// RUN:   | FileCheck %s --check-prefix=EMU-F32
// Matmuls through S1-S5 on the tensor cores: f16 (f32 accumulation, f16
// result) and, with allow-tf32, f32 on tf32 units. The product is one
// kernel of 256 threads (64 x 64 tiles: 128 x 128 would leave SMs idle)
// with the operand tiles in dynamic shared memory,
// filled by cp.async and read by ldmatrix (f16) or ld.shared (tf32).
//
// Both builds' kernels run in the emulator against a cpu-host build
// (pipeline=reference) of the module (@linear_bf16's kernel is checked by
// ../emulate-bf16-cpu-reference.mlir against this reference, and by
// ../emulate-bf16.mlir against f32 sums). The CPU's f16 product rounds
// every partial sum to f16 (the kernel accumulates in f32): over 128
// products of inputs in [-1, 1], sums up to about 17, it drifts by a few
// f16 ulps (2^-6 there), hence 5e-2. f32 on the CUDA cores matches within
// pb-run's default tolerances; tf32 within 2e-2 (10-bit mantissas: each
// product off by up to 2^-9 of its magnitude, either sign, over 64).

// CHECK: arch sm_80
// CHECK: entry mm_f16
// CHECK: launch mm_f16_kernel grid [{{[0-9]+}}, 1, 1] block [{{[0-9]+}}, 1, 1] shared 0 args [2]
// CHECK: launch mm_f16_kernel grid [12, 1, 1] block [256, 1, 1] shared 29184 args [2, 0, 1]
// CHECK: .target sm_80
// CHECK: .shared .align 16 .b8 __dynamic_shmem__0
// CHECK: cp.async.cg.shared.global [{{.*}}], [{{.*}}], 16, {{.*}};
// CHECK: cp.async.commit_group;
// CHECK: cp.async.wait_group 1;
// CHECK: bar.sync 0;
// CHECK: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK: ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16
// CHECK: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// CHECK: cp.async.wait_group 0;
// CHECK: cvt.rn.f16.f32
// CHECK: st.global.b16

// x @ W^T in bf16 over (batch, sequence) rows, odd sizes: W is kept n-major
// (ldmatrix without .trans) and the mma is nvvm's (bf16 types).
// BF16: entry linear_bf16
// BF16: launch linear_bf16_kernel grid [4, 1, 1] block [256, 1, 1] shared 30720 args [2, 0, 1]
// BF16: ldmatrix.sync.aligned.m8n8.x2.shared.b16
// BF16: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32

// TF32: entry mm_f32
// TF32: launch mm_f32_kernel grid [8, 1, 1] block [256, 1, 1] shared 29184 args [2, 0, 1]
// TF32: cp.async.cg.shared.global [{{.*}}], [{{.*}}], 16, {{.*}};
// TF32: ld.shared.b32
// TF32: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// TF32: st.global.b32

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

func.func @mm_f32(%a: tensor<96x64xf32>, %b: tensor<64x200xf32>) -> tensor<96x200xf32> {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<96x200xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<96x200xf32>) -> tensor<96x200xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<96x64xf32>, tensor<64x200xf32>)
                      outs(%acc : tensor<96x200xf32>) -> tensor<96x200xf32>
  return %mm : tensor<96x200xf32>
}

func.func @linear_bf16(%x: tensor<2x50x72xbf16>, %w: tensor<100x72xbf16>) -> tensor<2x50x100xbf16> {
  %zero = arith.constant 0.0 : bf16
  %init = tensor.empty() : tensor<2x50x100xbf16>
  %acc = linalg.fill ins(%zero : bf16) outs(%init : tensor<2x50x100xbf16>) -> tensor<2x50x100xbf16>
  %r = linalg.generic {indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<2x50x72xbf16>, tensor<100x72xbf16>) outs(%acc : tensor<2x50x100xbf16>) {
  ^bb0(%a: bf16, %b: bf16, %c: bf16):
    %p = arith.mulf %a, %b : bf16
    %s = arith.addf %c, %p : bf16
    linalg.yield %s : bf16
  } -> tensor<2x50x100xbf16>
  return %r : tensor<2x50x100xbf16>
}
