// RUN: pb-compile %s --target=nvidia-sm90 -o %t.pbart
// RUN: %nvidia_artifact %t.pbart --plan --ptx | FileCheck %s
// RUN: %if ptxas %{ %nvidia_artifact %t.pbart --ptxas sm_90a | FileCheck %s --check-prefix=PTXAS %}
// RUN: pb-compile %s --target=nvidia-sm90 --options=allow-tf32=1 -o %t.tf32.pbart
// RUN: %nvidia_artifact %t.tf32.pbart --plan --ptx | FileCheck %s --check-prefix=TF32
// RUN: %if ptxas %{ %nvidia_artifact %t.tf32.pbart --ptxas sm_90a | FileCheck %s --check-prefix=PTXAS %}
// Matmuls through S1-S5 on the tensor cores: f16 (f32 accumulation, f16
// result) and, with allow-tf32, f32 on tf32 units. The product is one
// kernel of 256 threads (64 x 64 tiles: 128 x 128 would leave SMs idle)
// with the operand tiles in dynamic shared memory,
// filled by cp.async and read by ldmatrix (f16) or ld.shared (tf32).

// CHECK: arch sm_90a
// CHECK: entry mm_f16
// CHECK: launch mm_f16_kernel grid [{{[0-9]+}}, 1, 1] block [{{[0-9]+}}, 1, 1] shared 0 args [2]
// CHECK: launch mm_f16_kernel grid [12, 1, 1] block [256, 1, 1] shared 29184 args [2, 0, 1]
// CHECK: .target sm_90a
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

// TF32: entry mm_f32
// TF32: launch mm_f32_kernel grid [8, 1, 1] block [256, 1, 1] shared 29184 args [2, 0, 1]
// TF32: cp.async.cg.shared.global [{{.*}}], [{{.*}}], 16, {{.*}};
// TF32: ld.shared.b32
// TF32: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// TF32: st.global.b32

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
