// RUN: pb-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(pb-attach-target{target=nvidia-sm80},func.func(pb-nvidia-lower-matrix-units))'
// RUN: not pb-opt %s --split-input-file --pb-explain --pass-pipeline='builtin.module(pb-attach-target{target=nvidia-sm90},func.func(pb-nvidia-lower-matrix-units))' 2>&1 | FileCheck %s --check-prefix=SM90

// A tag naming a unit the chip does not have is an error (sm80 has no
// wgmma). On sm90, where it exists, a problem narrower than one warpgroup
// unit goes to the warp-level unit of the same types.
// SM90: remark: pb-explain: matrix units: WGMMA_F32_64x128x16_F16 not used: M x N 64x64 is smaller than one unit (64x128)
// SM90: remark: pb-explain: matrix units: linalg.matmul on MMA_F32_16x8x16_F16: batch 1, MxNxK 64x64x64
func.func @wgmma(%a: memref<64x64xf16>, %b: memref<64x64xf16>, %c: memref<64x64xf32>) {
  // expected-error @below {{matrix unit 'WGMMA_F32_64x128x16_F16' is not one of nvidia-sm80's}}
  linalg.matmul {pb.matrix_unit = "WGMMA_F32_64x128x16_F16"} ins(%a, %b : memref<64x64xf16>, memref<64x64xf16>) outs(%c : memref<64x64xf32>)
  return
}

// -----

// A unit whose types are not the operands' (and with no warp-level unit of
// its types) leaves the op to the loop mapping.
// SM90: remark: pb-explain: matrix units: WGMMA_F32_64x128x32_F8E4M3FN not used: the unit does not match the operands' element type
// SM90-NOT: on MMA
// SM90: error: 'pb.matrix_unit' is a string attribute
func.func @fp8_unit(%a: memref<256x256xf16>, %b: memref<256x256xf16>, %c: memref<256x256xf32>) {
  // expected-error @below {{matrix unit 'WGMMA_F32_64x128x32_F8E4M3FN' is not one of nvidia-sm80's}}
  linalg.matmul {pb.matrix_unit = "WGMMA_F32_64x128x32_F8E4M3FN"} ins(%a, %b : memref<256x256xf16>, memref<256x256xf16>) outs(%c : memref<256x256xf32>)
  return
}

// -----

func.func @not_a_string(%a: memref<64x64xf16>, %b: memref<64x64xf16>, %c: memref<64x64xf32>) {
  // expected-error @below {{'pb.matrix_unit' is a string attribute of a linalg op}}
  linalg.matmul {pb.matrix_unit = 3 : i32} ins(%a, %b : memref<64x64xf16>, memref<64x64xf16>) outs(%c : memref<64x64xf32>)
  return
}
