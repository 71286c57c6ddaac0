//===- NVIDIABackend.cpp - S4 for NVIDIA GPUs and registration ------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// S4 lowers the contractions S3 tagged for a warp-level matrix unit into
// tensor-core kernels (pb-nvidia-lower-matrix-units), maps S3's parallel
// loops onto blocks and threads with the shared GPU layer (targets/gpu:
// pb-gpu-prepare-parallel, pb-gpu-map-to-gpu), outlines every launch
// into a kernel of its own GPU module (upstream gpu-kernel-outlining),
// attaches the chip's NVVM target (chip and PTX features from the .td),
// keeps each kernel module's IR for the emulator when asked to
// (pb-gpu-keep-emulation-ir) and lowers the kernels to the NVVM/LLVM
// dialects with bare-pointer arguments.
// The host functions stay as they are: buffers, views and gpu.launch_func in
// order, which S5 describes as the launch plan (Emit.cpp).
//
//===----------------------------------------------------------------------===//

#include "pb/NVIDIA/NVIDIABackend.h"

#include "pb/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::pb;

static std::string getS4Pipeline(const ChipDesc &chip,
                                 const PipelineOptions &options) {
  // Options of nvvm-attach-target come from the chip (LLVMCPU such as
  // "sm_90a", LLVMFeatures such as "+ptx80"); without a chip (the
  // registered `pb-nvidia-s4` pipeline) upstream's defaults apply.
  std::string attach = "nvvm-attach-target{O=3";
  if (!chip.llvmCPU.empty())
    attach += (" chip=" + chip.llvmCPU).str();
  if (!chip.llvmFeatures.empty())
    attach += (" features=" + chip.llvmFeatures).str();
  attach += "}";
  // The kernels' IR for the emulator is taken once the vector accesses
  // state their alignment (which the emulator checks) and before NVVM
  // lowering turns nvgpu/nvvm operations into inline PTX.
  llvm::StringRef keepEmulationIR =
      options.emulationIR ? "pb-gpu-keep-emulation-ir," : "";
  // The Tile IR path takes the contractions first (before the math
  // approximations, which its epilogues do not need).
  llvm::StringRef tileIR =
      options.codegen == "tile-ir" ? "pb-nvidia-emit-tile-ir," : "";
  return llvm::formatv(
             "{2}pb-approximate-math,"
             "func.func(pb-nvidia-lower-matrix-units),"
             "convert-linalg-to-affine-loops,"
             "func.func(pb-gpu-prepare-parallel),lower-affine,"
             "func.func(pb-gpu-map-to-gpu,pb-gpu-estimate-launches),"
             "gpu-kernel-outlining,"
             "pb-gpu-check-launch-limits,{0},"
             // A parallel loop left inside a kernel (a thread's own loop)
             // runs sequentially: nested scf.for, as convert-scf-to-cf
             // would make it, before the emulator's copy is taken.
             "gpu.module(pb-nvidia-set-occupancy,pb-gpu-align-vector-"
             "accesses,scf-parallel-for-to-nested-fors,{1}"
             "convert-nvgpu-to-nvvm,"
             "convert-vector-to-scf,convert-scf-to-cf,convert-vector-to-llvm,"
             "expand-strided-metadata,lower-affine,"
             "convert-gpu-to-nvvm{{use-bare-ptr-memref-call-conv=1},"
             // NVVM ops without an LLVM intrinsic (wgmma.mma_async) become
             // inline PTX.
             "convert-nvvm-to-llvm,"
             "canonicalize,cse,reconcile-unrealized-casts),"
             // S5 reads the launches' work and the kernels' IR for the
             // emulator (Emit.cpp).
             "pb-strip-annotations{{keep=pb.launch_work,pb.emulation_ir,"
             "pb.kernel_launch}",
             attach, keepEmulationIR, tileIR)
      .str();
}

static void addNVIDIAS4Pipeline(OpPassManager &pm, const ChipDesc &chip,
                                const PipelineOptions &options) {
  if (failed(parsePassPipeline(getS4Pipeline(chip, options), pm, llvm::errs())))
    llvm::report_fatal_error("invalid built-in NVIDIA S4 pipeline");
}

void mlir::pb::nvidia::registerNVIDIABackend() {
  static bool registered = [] {
    gpucommon::registerGPUCommonPasses();
    registerPBNVIDIAPasses();
    PassPipelineRegistration<>(
        "pb-nvidia-s4",
        "Stage S4 for NVIDIA GPUs: blocks, threads, kernels, NVVM (needs "
        "#pb.target on the module)",
        [](OpPassManager &pm) {
          addNVIDIAS4Pipeline(pm, ChipDesc(), PipelineOptions());
        });
    registerTargetBackend({Vendor::NVIDIA, addNVIDIAS4Pipeline, emitNVIDIA});
    return true;
  }();
  (void)registered;
}
