// RUN: pb-compile %s --target=amd-gfx90a -o %t.pbart
// RUN: %amd_artifact %t.pbart --plan --isa | FileCheck %s
// RUN: %amd_artifact %t.pbart --notes | FileCheck %s --check-prefix=NOTES
// RUN: pb-compile %s --target=cpu-host --options=pipeline=reference -o %t.ref.pbart
// RUN: pb-run --emulate %t.pbart --entry=mm_f16 --check-against=%t.ref.pbart --rtol=1e-2 --atol=5e-2 \
// RUN:   | FileCheck %s --check-prefix=EMU-F16
// RUN: pb-run --emulate %t.pbart --entry=mm_f32 --check-against=%t.ref.pbart \
// RUN:   | FileCheck %s --check-prefix=EMU-F32
// RUN: pb-run --emulate %t.pbart --entry=linear_bf16 --check-against=%t.ref.pbart --rtol=2e-2 --atol=1e-1 \
// RUN:   | FileCheck %s --check-prefix=EMU-BF16
// Contractions S3 tagged for MFMA units (AMDMatrixUnits.td) through S1-S5
// for amd-gfx90a: the f16 matmul and the bf16 linear layer (x @ W^T, a
// batch loop B does not use, K = 72: a partial last K tile) become MFMA
// kernels of four wavefronts whose operand tiles are staged in LDS by
// 16-byte stores (ds_write_b128) between barriers and read as the units'
// fragments (ds_read_b64, ds_read2_b64); the f32 matmul runs on the f32
// unit, which multiplies f32 exactly (no allow-tf32 needed). The code
// objects use no
// scratch. In the emulator, whose amdgpu.mfma implements the units'
// register layouts over 64 lanes, all three match a cpu-host build
// (pipeline=reference) within the f16 and bf16 tolerances.

// CHECK: arch gfx90a
// CHECK: entry mm_f16
// CHECK: launch mm_f16_kernel grid [768, 1, 1] block [64, 1, 1] shared 0 args [2]
// CHECK-NEXT: launch mm_f16_kernel grid [12, 1, 1] block [256, 1, 1] shared 9216 args [2, 0, 1]
// CHECK: entry mm_f32
// CHECK: launch mm_f32_kernel grid [21, 1, 1] block [256, 1, 1] shared 9216 args [2, 0, 1]
// CHECK: entry linear_bf16
// CHECK: launch linear_bf16_kernel grid [4, 1, 1] block [256, 1, 1] shared 9216 args [2, 0, 1]
// CHECK: // module mm_f16_kernel
// CHECK: // module mm_f16_kernel_0
// CHECK: ds_write_b128
// CHECK: s_barrier
// CHECK: ds_read{{2?}}_b64
// CHECK: v_mfma_f32_32x32x8f16
// CHECK: // module mm_f32_kernel
// CHECK: // module mm_f32_kernel_{{[0-9]+}}
// CHECK: v_mfma_f32_16x16x4f32
// CHECK: // module linear_bf16_kernel_{{[0-9]+}}
// CHECK: v_mfma_f32_32x32x8bf16_1k

// NOTES: amdhsa.kernels:
// NOTES-NOT: .private_segment_fixed_size: {{[1-9]}}
// NOTES: .private_segment_fixed_size: 0

// EMU-F16: OK mm_f16: 49152 values match the reference
// EMU-F32: OK mm_f32: 19200 values match the reference
// EMU-BF16: OK linear_bf16: 10000 values match the reference

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
