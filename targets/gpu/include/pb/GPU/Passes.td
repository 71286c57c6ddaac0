//===- Passes.td - GPU passes shared by the vendors ---*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef PB_GPU_PASSES_TD
#define PB_GPU_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// GPU passes (keep alphabetical)
//===----------------------------------------------------------------------===//

def PBGPUAlignVectorAccessesPass
    : Pass<"pb-gpu-align-vector-accesses", "gpu::GPUModuleOp"> {
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

def PBGPUCheckLaunchLimitsPass
    : Pass<"pb-gpu-check-launch-limits", "ModuleOp"> {
  let summary = "Reject GPU launches that exceed the chip's limits";
  let description = [{
    Stage S4 (GPUs). Every `gpu.launch` and `gpu.launch_func` must have
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

def PBGPUEstimateLaunchesPass
    : Pass<"pb-gpu-estimate-launches", "func::FuncOp"> {
  let summary = "Keep each launch's work for S5's roofline estimate and "
                "explain the estimate";
  let description = [{
    Stage S4, after pb-gpu-map-to-gpu, before kernel outlining (which
    drops the launches' attributes). The `pb.work` of the entry's launches
    (bytes and FLOPs, set by the passes that built them) becomes the
    entry's `pb.launch_work`, in launch order; S5 adds the register
    counts and writes the estimate into the plan and the metadata. With
    --pb-explain each launch gets the estimate S4 can make: bytes, FLOPs,
    blocks, occupancy from threads and shared memory, waves, time.
  }];
}

def PBGPUKeepEmulationIRPass
    : Pass<"pb-gpu-keep-emulation-ir", "gpu::GPUModuleOp"> {
  let summary = "Record each kernel module's IR for running it in the "
                "emulator";
  let description = [{
    Stage S4, after `pb-gpu-align-vector-accesses`, before the kernels
    are lowered to NVVM or ROCDL and LLVM; only when the pipeline option
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

def PBGPUMapToGPUPass : Pass<"pb-gpu-map-to-gpu", "func::FuncOp"> {
  let summary = "Turn every top-level statement of an entry into a GPU "
                "launch: parallel loops onto blocks and threads";
  let description = [{
    Stage S4 (GPUs), after `pb-gpu-prepare-parallel` and
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

def PBGPUPrepareParallelPass
    : Pass<"pb-gpu-prepare-parallel", "func::FuncOp"> {
  let summary = "Choose the loops that run on a block's threads and turn "
                "them into affine.parallel";
  let description = [{
    Stage S4 (GPUs), on S3's output. Inside each top-level
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

#endif // PB_GPU_PASSES_TD
