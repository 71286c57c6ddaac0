// RUN: pb-opt --target=amd-gfx942 %s -pb-amd-lower-matrix-units --pb-explain 2>&1 | FileCheck %s
// A contraction tagged for an MFMA unit that the kernel cannot take (A
// indexed (k, m): its rows do not run along K) loses its tag and stays a
// linalg op for the loop mapping, with the reason as a remark.

// CHECK: remark: pb-explain: matrix units: MFMA_F32_32x32x8_F16 not used: A's innermost dimension is not the innermost K loop
// CHECK-LABEL: func.func @a_transposed
// CHECK-NOT: gpu.launch
// CHECK: linalg.generic
// CHECK-NOT: pb.matrix_unit
func.func @a_transposed(%a: memref<64x64xf16>, %b: memref<64x96xf16>, %c: memref<64x96xf32>) {
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<64x64xf16>, memref<64x96xf16>) outs(%c : memref<64x96xf32>)
      attrs = {pb.matrix_unit = "MFMA_F32_32x32x8_F16"} {
  ^bb0(%x: f16, %y: f16, %acc: f32):
    %xe = arith.extf %x : f16 to f32
    %ye = arith.extf %y : f16 to f32
    %p = arith.mulf %xe, %ye : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
