//===- Passes.td - NVIDIA target passes --------------------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef PB_NVIDIA_PASSES_TD
#define PB_NVIDIA_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// NVIDIA passes (keep alphabetical)
//===----------------------------------------------------------------------===//

def PBNVIDIAEmitTileIRPass : Pass<"pb-nvidia-emit-tile-ir", "ModuleOp"> {
  let summary = "Emit the contractions S3 tagged for matrix units as CUDA "
                "Tile IR kernels";
  let description = [{
    Stage S4, first, with `codegen=tile-ir` (docs/TileIR.md). Each linalg
    contraction that S3 tagged with a matrix unit (`pb.matrix_unit`), with
    static shapes, f16 or bf16 operands and f16 or f32 results (f32 on
    tf32 units with allow-tf32), becomes a `tileir.entry` kernel in a
    `tileir.module` of its own and a `tileir.launch` in its place: a grid
    of M x N (x batch) tiles, a loop over K tiles that loads operand tiles
    through partition views of tensor views (the operands' strides:
    transposed operands need no copy; past K, zeros) and accumulates with
    `tileir.mmaf` in f32, C added (unless S3's zero fill of C is all it
    holds, which then goes), the tagged epilogue applied on the tile (erf
    as upstream's polynomial), and the result stored in C's type. Tagged
    channels-last convolutions become implicit GEMMs: per filter offset an
    input view advanced by `tileir.offset`, one loop over (offset, C tile)
    pairs. Tile shapes come from the chip's `TileIRPath` (.td): M x N
    within the accumulator registers of a tile block, halved while the
    grid has fewer tiles than SMs, K from the operand row bytes; NVIDIA's
    tileiras maps the tiles onto threads, shared memory and tensor cores.
    An op it cannot express keeps its tag for `pb-nvidia-lower-matrix-units`
    (the PTX path), with the reason under `--pb-explain`.
  }];
  let dependentDialects = ["tileir::TileIRDialect", "memref::MemRefDialect"];
}

def PBNVIDIALowerMatrixUnitsPass
    : Pass<"pb-nvidia-lower-matrix-units", "func::FuncOp"> {
  let summary = "Lower contractions tagged pb.matrix_unit into tensor-core "
                "kernels (cp.async, ldmatrix, mma.sync)";
  let description = [{
    Stage S4, first. Each linalg contraction that S3 tagged with a
    warp-level (mma.sync) unit of the chip becomes one `gpu.launch`: a 1-d
    grid of block tiles (batch x M tiles x N tiles, N fastest; 128 x 128,
    halved down to 64 x 64 while there are fewer blocks than SMs), eight
    warps per block as 2 x 4 warp tiles, operands addressed through their
    indexing maps (a convolution's input gathered as an implicit GEMM),
    operand tiles multi-buffered in dynamic
    shared memory (2 or 3 stages, as many as the chip's scratchpad holds,
    at most 3) filled by `nvgpu.device_async_copy` (cp.async, zero-filled
    outside the operands; element-wise copies when a row's extent is not
    a multiple of 4 bytes), fragments read with `nvgpu.ldmatrix` (f16,
    bf16) or `memref.load` (tf32), `nvgpu.mma.sync` (`nvvm.mma.sync` for
    bf16, which upstream's nvgpu lowering does not type) accumulating in f32
    registers from C's values, and C written back (converted to its
    type). Sizes come from the unit, the chip's warp size, vector width
    and scratchpad (capacity, banks); the shared row padding minimizes the
    simulated bank conflicts of the fragment reads. A tagged op it cannot
    lower loses its tag and is lowered as loops like any other (see
    `--pb-explain`).
  }];
  let dependentDialects = ["gpu::GPUDialect", "nvgpu::NVGPUDialect",
                           "NVVM::NVVMDialect", "LLVM::LLVMDialect",
                           "affine::AffineDialect",
                           "scf::SCFDialect", "vector::VectorDialect",
                           "memref::MemRefDialect", "arith::ArithDialect"];
}

def PBNVIDIASetOccupancyPass
    : Pass<"pb-nvidia-set-occupancy", "gpu::GPUModuleOp"> {
  let summary = "Let every kernel use the registers of one block per SM";
  let description = [{
    Stage S4, after kernel outlining. Sets `nvvm.minctasm = 1` (PTX
    `.minnctapersm 1`) on every kernel that states no minimum, so that
    ptxas gives each thread the registers of a single resident block
    instead of capping them for several (which spilled a 1024-thread
    loop-mapped kernel at 32 registers).

      gpu.func @k() kernel  ->  gpu.func @k() kernel attributes {nvvm.minctasm = 1 : i32}
  }];
  let dependentDialects = ["gpu::GPUDialect"];
}

#endif // PB_NVIDIA_PASSES_TD
