//===- Pipelines.cpp - The stage pipelines S1, S2, S3 and host lowering
//----===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The stages read in one place, in order:
//   pb-s1  graph: canonicalize, decompose aggregates, fuse elementwise ops,
//          hoist loop-invariant subexpressions
//   pb-s2  buffers and loops: bufferize, deallocate, affine loop nests
//   pb-s3  mid-level: fusion, multi-level tiling, vectorization, parallel
//          loops marked with their hardware level (all from the target)
//   s4     the target's mapping (threads, GPU levels) down to LLVM: each
//          vendor registers its own (pb/Target/Backend.h)
//   pb-lower-to-host  the reference lowering of any stage's output to the
//          LLVM dialect for the host, so that S3 output for every target
//          runs on a CPU (DESIGN.md, S3 invariant)
//
// The stages canonicalize bottom-up (canonicalize{top-down=false}): the
// same IR as the default top-down walk, in about half its time on the GEMM
// builder's output (resnet50's batch-1 graph: 0.67 -> 0.35 s after S3's
// contraction lowering).
//
//===----------------------------------------------------------------------===//

#include "pb/Transforms/Passes.h"

#include "pb/Target/Backend.h"
#include "pb/Target/TileIRPath.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

static std::string getS1Spec(const pb::PipelineOptions &options) {
  return std::string("func.func(pb-bind-dims),canonicalize{top-down=false},"
                     "func.func(pb-decompose-aggregates,"
                     "pb-conv-to-channels-last,pb-fold-transposes),"
                     "pb-fuse-elementwise,func.func(pb-propagate-layouts") +
         (options.optionalRewrites ? ",pb-hoist-invariants" : "") +
         // Extents of reshapes' and fused ops' results: the sizes they
         // were computed from (dynamic shapes).
         "),resolve-ranked-shaped-type-result-dims,"
         "canonicalize{top-down=false},cse,"
         // Reshape fusion leaves affine.apply on linalg.index in bodies; once
         // S2 turns the indices into loop IVs they are no valid affine
         // symbols.
         "lower-affine";
}

static std::string getS2Spec(const pb::PipelineOptions &options,
                             const pb::ChipDesc *chip) {
  // A tile-level code generator (codegen=tile-ir) takes attention as its
  // contractions and a row kernel for the softmax, and the row kernels as
  // linalg ops (pb-group-row-kernels): two rows within its tile blocks'
  // registers (a row and its result).
  bool tileCode = options.codegen == "tile-ir" && chip && chip->tileIR;
  std::string rowKernels;
  if (tileCode)
    rowKernels = llvm::formatv("pb-group-row-kernels{{max-row-elements={0}},",
                               getRowKernelMaxElements(*chip->tileIR))
                     .str();
  return std::string("func.func(") +
         (options.fusion && !tileCode ? "pb-fuse-attention," : "") +
         "pb-distinct-results," +
         (options.optionalRewrites ? "pb-pad-in-place," : "") +
         "pb-clone-fills,pb-mark-inputs-read-only),"
         "one-shot-bufferize{"
         "bufferize-function-boundaries "
         "function-boundary-type-conversion=identity-layout-map},"
         "buffer-results-to-out-params{hoist-static-allocs "
         "modify-public-functions},"
         "func.func(pb-bind-dims,pb-write-results-in-place,buffer-hoisting),"
         "buffer-deallocation-pipeline,"
         "func.func(" +
         rowKernels +
         "pb-lower-to-affine,pb-fold-views,pb-bind-dims,"
         // The loops' run-time bounds: the sizes the views' extents were
         // computed from, one SSA value per size (their nests then fuse).
         "resolve-ranked-shaped-type-result-dims),fold-memref-alias-ops,"
         "canonicalize{top-down=false},cse,"
         "func.func(affine-scalrep)";
}

static std::string getS3Spec(const pb::PipelineOptions &options) {
  std::string spec;
  if (options.matrixUnits)
    spec += llvm::formatv("pb-map-matrix-units{{allow-tf32={0} "
                          "allow-tf32-convolutions={1} warpgroup-units={2} "
                          "pack-constants={3}},",
                          options.allowTF32 ? 1 : 0,
                          options.allowTF32Convolutions ? 1 : 0,
                          options.warpgroupUnits ? 1 : 0,
                          options.packConstants ? 1 : 0)
                .str();
  // Contractions left for the target's warp- or warpgroup-level units stay
  // linalg ops (tagged pb.matrix_unit) for S4; the rest become loops.
  spec += "func.func(pb-lower-to-affine{contractions=1},pb-fold-views,"
          "pb-bind-dims,resolve-ranked-shaped-type-result-dims),"
          "canonicalize{top-down=false},"
          "func.func(";
  // Row-wise nests (softmax, layernorm) fuse at their rows first; their
  // reductions then leave memory for iter_args, which affine-scalrep
  // forwards to the inner loops that read them.
  if (options.fusion && options.reduceFusion)
    spec += "pb-fuse-reductions,";
  if (options.fusion)
    spec += "pb-affine-fusion,";
  spec += "pb-promote-accumulators,affine-scalrep,pb-tile,pb-mark-parallel,"
          "pb-promote-to-scratchpad,pb-vectorize";
  if (options.optionalRewrites)
    spec += ",pb-register-accumulators,pb-interleave-reductions,"
            "pb-hoist-reciprocals";
  spec += "),"
          "canonicalize{top-down=false},cse";
  return spec;
}

// bf16 arithmetic in f32 first (pb-emulate-bf16) and masked bf16 vector
// accesses as i16 ones last (pb-bf16-memory-as-i16), as in the CPU's S4:
// nothing in mlir-runner's process defines __truncsfbf2 either, and its JIT,
// compiling for the host's CPU, needs none only where that has AVX512-BF16.
static const char *const kHost =
    "pb-emulate-bf16,"
    "convert-linalg-to-affine-loops,lower-affine,convert-scf-to-cf,"
    "convert-vector-to-scf,lower-affine,convert-scf-to-cf,"
    "convert-vector-to-llvm,expand-strided-metadata,"
    "lower-affine,finalize-memref-to-llvm,convert-math-to-llvm,"
    "convert-math-to-libm,convert-arith-to-llvm,convert-index-to-llvm,"
    "convert-cf-to-llvm,convert-func-to-llvm,convert-ub-to-llvm,"
    "reconcile-unrealized-casts,llvm.func(pb-bf16-memory-as-i16),"
    "pb-strip-annotations";

bool mlir::pb::isKnownStage(llvm::StringRef stage) {
  return llvm::is_contained(getStageNames(), stage);
}

llvm::ArrayRef<llvm::StringRef> mlir::pb::getStageNames() {
  static const llvm::StringRef names[] = {"s1", "s2", "s3", "s4", "host"};
  return names;
}

LogicalResult mlir::pb::addStagePipeline(OpPassManager &pm,
                                         llvm::StringRef stage,
                                         const ChipDesc *chip,
                                         const PipelineOptions &options) {
  std::string spec;
  if (stage == "s1")
    spec = getS1Spec(options);
  else if (stage == "s2")
    spec = getS2Spec(options, chip);
  else if (stage == "s3")
    spec = getS3Spec(options);
  else if (stage == "host")
    spec = kHost;
  else if (stage == "s4") {
    const TargetBackend *backend =
        chip ? lookupTargetBackend(chip->vendor) : nullptr;
    if (!backend)
      return failure();
    backend->addS4Pipeline(pm, *chip, options);
    return success();
  } else
    return failure();
  if (failed(parsePassPipeline(spec, pm, llvm::errs())))
    llvm::report_fatal_error("invalid built-in pipeline for stage " + stage);
  return success();
}

void mlir::pb::registerPBPipelines() {
  struct Stage {
    const char *arg, *stage, *description;
  };
  static const Stage stages[] = {
      {"pb-s1", "s1", "Stage S1 (graph) of PolyBlocks"},
      {"pb-s2", "s2", "Stage S2 (buffers and loops) of PolyBlocks"},
      {"pb-s3", "s3", "Stage S3 (target-driven mid-level optimizer)"},
      {"pb-lower-to-host", "host",
       "Reference lowering of any stage's output to LLVM for the host"},
  };
  for (const Stage &stage : stages)
    PassPipelineRegistration<>(stage.arg, stage.description,
                               [stage](OpPassManager &pm) {
                                 (void)addStagePipeline(pm, stage.stage);
                               });
}
