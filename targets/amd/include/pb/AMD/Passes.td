//===- Passes.td - AMD target passes -----------------------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef PB_AMD_PASSES_TD
#define PB_AMD_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// AMD passes (keep alphabetical)
//===----------------------------------------------------------------------===//

def PBAMDLowerMatrixUnitsPass
    : Pass<"pb-amd-lower-matrix-units", "func::FuncOp"> {
  let summary = "Lower contractions tagged pb.matrix_unit into MFMA kernels";
  let description = [{
    Stage S4 (AMD), first. Each linalg contraction that S3 tagged with one
    of the chip's MFMA units (AMDMatrixUnits.td) becomes one `gpu.launch`:
    C indexed (batch..., M, N), A (batch..., M, K), B (batch..., K, N) or
    (batch..., N, K), where A and B may omit batch loops (a linear layer's
    weight), A and B f16, bf16 or f32 (the f32 unit multiplies exactly); a 1-d grid of block tiles (batch x M tiles x N tiles, N
    fastest), four wavefronts per block as 2 x 2 wave tiles of 2 x 2 units
    (1 along M or N when it is no larger than a unit, or while there are
    fewer blocks than the chip's compute units), K tiles of 32 elements
    copied by the whole block into LDS (loads of the chip's vector width
    where the rows allow, zero outside the operands; B kept K-contiguous), each unit's operands
    read from LDS in the unit's register layout, `amdgpu.mfma`
    accumulating in f32 registers from C's values (from 0 when C's zero
    fills can go), C written back converted to its type, or through the
    elementwise epilogue S3 tagged (bias, batch norm, activation, residual
    add), which runs in the stores. Sizes come from the unit (M, N, K from the .td), the
    chip's wavefront size and LDS capacity. A tagged op it cannot lower
    loses its tag and is lowered as loops (see `--pb-explain`).
  }];
  let dependentDialects = ["gpu::GPUDialect", "amdgpu::AMDGPUDialect",
                           "affine::AffineDialect",
                           "scf::SCFDialect", "vector::VectorDialect",
                           "memref::MemRefDialect", "arith::ArithDialect"];
}

#endif // PB_AMD_PASSES_TD
