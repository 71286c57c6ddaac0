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

def PBNVIDIACheckLaunchLimitsPass
    : Pass<"pb-nvidia-check-launch-limits", "ModuleOp"> {
  let summary = "Reject GPU launches that exceed the chip's limits";
  let description = [{
    Stage S4 (NVIDIA). Every `gpu.launch` and `gpu.launch_func` must have
    constant grid and block sizes within the chip's limits: threads per
    block at most warps-per-block x warp size (the Subgroup and Lane levels
    of the chip's .td), blocks along x at most the Block level's maximum,
    and the workgroup (shared-memory) buffers of a kernel within the
    Scratchpad level's capacity. Anything else is an error naming the limit
    and the chip:

      gpu.launch blocks(...) in (%c1, %c1, %c1)
                 threads(...) in (%c2048, %c1, %c1)
      error: the launch has 2048 threads per block; nvidia-sm80 allows 1024
  }];
  let dependentDialects = ["gpu::GPUDialect"];
}

def PBNVIDIAKeepEmulationIRPass
    : Pass<"pb-nvidia-keep-emulation-ir", "gpu::GPUModuleOp"> {
  let summary = "Record each kernel module's IR for running it in the "
                "emulator";
  let description = [{
    Stage S4, after `pb-nvidia-align-vector-accesses`, before the kernels
    are lowered to NVVM and LLVM; only when the pipeline option
    `emulationIR` asks for it (pbCompile's default, `emulation-ir=1`;
    pb-opt's `--pb-emulation-ir`). The GPU module is printed in its custom
    form, without locations and with every attribute in full, into the
    string attribute `pb.emulation_ir` on the module. S5 moves it into the
    payload (`emulation_mlir` of the module), where
    `pbExecutableLoadEmulated` reads it to run the kernels on the CPU:
    their gpu, nvgpu and nvvm operations still have CUDA's semantics there,
    which the LLVM dialect's inline PTX and intrinsics no longer state.

      gpu.module @k_kernel [#nvvm.target<...>] {
        gpu.func @k_kernel(...) kernel { ... }
      }
    ->
      gpu.module @k_kernel [#nvvm.target<...>]
          attributes {pb.emulation_ir = "gpu.module @k_kernel ..."} {
        gpu.func @k_kernel(...) kernel { ... }
      }
  }];
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

def PBNVIDIAMapToGPUPass : Pass<"pb-nvidia-map-to-gpu", "func::FuncOp"> {
  let summary = "Turn every top-level statement of an entry into a GPU "
                "launch: parallel loops onto blocks and threads";
  let description = [{
    Stage S4 (NVIDIA), after `pb-nvidia-prepare-parallel` and
    `lower-affine`. Each top-level `scf.parallel` becomes a `gpu.launch`:

    * its iterations are distributed over the blocks of a 1-d grid
      (cyclically when there are more iterations than the chip allows
      blocks); the `scf.parallel` loops nested in its body are distributed
      over the block's threads (cyclically, the iteration space flattened
      with the innermost dimension fastest, so that consecutive threads
      touch consecutive elements), each followed by a `gpu.barrier`;
      statements between them that write memory run on thread 0, followed
      by a barrier; statements that only compute or read run on every
      thread; buffers allocated per iteration become shared memory
      (workgroup attributions), or thread-private memory inside a thread
      loop;
    * when its body has no nested parallel loop, its iterations are
      distributed over blocks x threads instead, one iteration per thread.

    The block size is the largest nested trip count rounded up to a whole
    number of warps, capped at the chip's threads per block (both from the
    .td). Other top-level statements that write memory (loop nests that are
    not parallel, `memref.copy`) run as single-thread kernels, so that every
    statement is still executed, and executed once. Allocations, views,
    constants and `func.return` stay on the host; the views and constants a
    kernel uses are cloned into it.

      scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
        scf.parallel (%j) = (%c0) to (%c4096) step (%c1) { ... }
      }
    ->
      gpu.launch blocks(%bx, ...) in (%c4, %c1, %c1)
                 threads(%tx, ...) in (%c1024, %c1, %c1) {
        scf.for %i = %bx to %c4 step %c4 {
          scf.for %j = %tx to %c4096 step %c1024 { ... }
          gpu.barrier
        }
      }
  }];
  let dependentDialects = ["gpu::GPUDialect", "scf::SCFDialect",
                           "arith::ArithDialect", "memref::MemRefDialect"];
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

def PBNVIDIAPrepareParallelPass
    : Pass<"pb-nvidia-prepare-parallel", "func::FuncOp"> {
  let summary = "Choose the loops that run on a block's threads and turn "
                "them into affine.parallel";
  let description = [{
    Stage S4 (NVIDIA), on S3's output. Inside each top-level
    `affine.parallel` (the loops S3 marked for the grid level):

    * a perfectly nested band whose memory accesses are all affine is
    * the outermost loop that the dependence analysis proves parallel on
      each path, with the parallel loops perfectly nested under it that have
      constant trip counts, is normalized, coalesced into one loop and
      turned into a 1-d `affine.parallel`: the thread-level loop.

    Loops inside a thread-level loop stay sequential (each thread runs
    them). Loops whose accesses the analysis cannot see (vector transfers)
    are parallel only when S3 marked them so (`pb.parallel`: pb-tile's
    intra-tile loops, pb-mark-parallel's, kept through vectorization).

      affine.parallel (%i0) = (0) to (256) step (64) {
        affine.for %i = #lb(%i0) to #ub(%i0) {      // parallel
          affine.for %j = 0 to 192 {                // parallel
            affine.for %k = 0 to 128 { ... }        // reduction
    ->
      affine.parallel (%i0) = (0) to (256) step (64) {
        affine.parallel (%t) = (0) to (12288) {     // i x j, coalesced
          affine.for %k = 0 to 128 { ... }
  }];
  let dependentDialects = ["affine::AffineDialect"];
}

def PBNVIDIAAlignVectorAccessesPass
    : Pass<"pb-nvidia-align-vector-accesses", "gpu::GPUModuleOp"> {
  let summary = "State the alignment of the kernels' vector accesses, so "
                "that they become 128-bit loads and stores";
  let description = [{
    Stage S4, after kernel outlining, before the vector dialect is lowered.
    A one-dimensional, in-bounds, unmasked vector transfer along a buffer's
    innermost, unit-stride dimension becomes a `vector.load`/`vector.store`
    with the alignment its address is proven to have: the base (kernel
    arguments and the launch's dynamic shared memory are aligned to the
    chip's vector width; views of it keep what their byte shift keeps) and
    the offset (a divisor of each index, from constants, loop bounds and
    steps, sums, products, remainders and exact divisions, times the
    layout's strides). Without it NVPTX splits a vector<4xf32> access into
    four 32-bit ones.

      %v = vector.transfer_read %a[%i, %j], %pad {in_bounds = [true]}
          : memref<1024x1024xf32>, vector<4xf32>     // %j: a multiple of 4
    ->
      %v = vector.load %a[%i, %j] {alignment = 16 : i64}
          : memref<1024x1024xf32>, vector<4xf32>
  }];
  let dependentDialects = ["vector::VectorDialect"];
}

def PBNVIDIAEstimateLaunchesPass
    : Pass<"pb-nvidia-estimate-launches", "func::FuncOp"> {
  let summary = "Keep each launch's work for S5's roofline estimate and "
                "explain the estimate";
  let description = [{
    Stage S4, after pb-nvidia-map-to-gpu, before kernel outlining (which
    drops the launches' attributes). The `pb.work` of the entry's launches
    (bytes and FLOPs, set by the passes that built them) becomes the
    entry's `pb.launch_work`, in launch order; S5 adds ptxas's register
    counts and writes the estimate into the plan and the metadata. With
    --pb-explain each launch gets the estimate S4 can make: bytes, FLOPs,
    blocks, occupancy from threads and shared memory, waves, time.
  }];
}

#endif // PB_NVIDIA_PASSES_TD
