//===- AMDBackend.cpp - S4 for AMD GPUs and registration ------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// S4 maps S3's parallel loops onto workgroups and work-items with the shared
// GPU layer (targets/gpu: pb-gpu-prepare-parallel, pb-gpu-map-to-gpu, sizes
// from the chip's compute levels: wavefronts of 64 on gfx9), outlines every
// launch into a kernel of its own GPU module (upstream gpu-kernel-outlining),
// checks the launches against the chip's limits, attaches the chip's ROCDL
// target, keeps each kernel module's IR for the emulator when asked to
// (pb-gpu-keep-emulation-ir) and lowers the kernels to the ROCDL/LLVM dialects
// with bare-pointer arguments. The host functions stay as they are: buffers,
// views and gpu.launch_func in order, which S5 describes as the launch plan.
//
// First, the contractions S3 tagged for one of the chip's MFMA units become
// MFMA kernels (pb-amd-lower-matrix-units); the rest, including the
// epilogues S3 tagged for fusion, are loops like any other statement.
//
//===----------------------------------------------------------------------===//

#include "pb/AMD/AMDBackend.h"

#include "pb/GPU/GPUCommon.h"
#include "pb/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::pb;

static std::string getS4Pipeline(const ChipDesc &chip,
                                 const PipelineOptions &options) {
  // Without a chip (the registered `pb-amd-s4` pipeline) upstream's
  // defaults apply.
  std::string attach = "rocdl-attach-target{O=3";
  std::string toROCDL =
      "convert-gpu-to-rocdl{use-bare-ptr-memref-call-conv=1 runtime=HIP";
  if (!chip.llvmCPU.empty()) {
    attach += (" chip=" + chip.llvmCPU).str();
    toROCDL += (" chipset=" + chip.llvmCPU).str();
  }
  if (!chip.llvmFeatures.empty())
    attach += (" features=" + chip.llvmFeatures).str();
  attach += "}";
  toROCDL += "}";
  return llvm::formatv(
             "pb-approximate-math,"
             "func.func(pb-amd-lower-matrix-units),"
             "convert-linalg-to-affine-loops,"
             "func.func(pb-gpu-prepare-parallel),lower-affine,"
             "func.func(pb-gpu-map-to-gpu,pb-gpu-estimate-launches),"
             "gpu-kernel-outlining,"
             "pb-gpu-check-launch-limits,{0},"
             // A parallel loop left inside a kernel (a work-item's own loop)
             // runs sequentially.
             "gpu.module(pb-gpu-align-vector-accesses,"
             "scf-parallel-for-to-nested-fors,{2}"
             "convert-vector-to-scf,convert-scf-to-cf,convert-vector-to-llvm,"
             "expand-strided-metadata,lower-affine,{1},"
             "canonicalize,cse,reconcile-unrealized-casts),"
             // S5 reads the launches' work (the estimate) and the kernels'
             // IR for the emulator.
             "pb-strip-annotations{{keep=pb.launch_work,pb.emulation_ir}",
             attach, toROCDL,
             options.emulationIR ? "pb-gpu-keep-emulation-ir," : "")
      .str();
}

static void addAMDS4Pipeline(OpPassManager &pm, const ChipDesc &chip,
                             const PipelineOptions &options) {
  if (failed(parsePassPipeline(getS4Pipeline(chip, options), pm, llvm::errs())))
    llvm::report_fatal_error("invalid built-in AMD S4 pipeline");
}

void mlir::pb::amd::registerAMDBackend() {
  static bool registered = [] {
    gpucommon::registerGPUCommonPasses();
    registerPBAMDPasses();
    PassPipelineRegistration<>(
        "pb-amd-s4",
        "Stage S4 for AMD GPUs: workgroups, work-items, kernels, ROCDL "
        "(needs #pb.target on the module)",
        [](OpPassManager &pm) {
          addAMDS4Pipeline(pm, ChipDesc(), PipelineOptions());
        });
    registerTargetBackend({Vendor::AMD, addAMDS4Pipeline, emitAMD});
    return true;
  }();
  (void)registered;
}
