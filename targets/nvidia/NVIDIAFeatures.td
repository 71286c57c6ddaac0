//===- NVIDIAFeatures.td - NVIDIA GPU capabilities ---------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Capabilities of NVIDIA GPUs that NVIDIA-specific stages (S4/S5) ask about.
// A chip lists the ones it has; `Implies` links each to the target-neutral
// features of Target.td that core passes test.
//
// Sources:
//  * PTX ISA 8.0, sections "Data Movement and Conversion Instructions"
//    (cp.async, cp.async.bulk.tensor), "Warp Level Matrix Multiply-Accumulate
//    Instructions" (mma, ldmatrix, stmatrix), "Asynchronous Warpgroup Level
//    Matrix Multiply-Accumulate Instructions" (wgmma), and each instruction's
//    "Target ISA notes" (minimum sm_XX) and "PTX ISA notes" (minimum PTX).
//  * CUDA C++ Programming Guide, "Thread Block Clusters" and "Distributed
//    Shared Memory" (compute capability 9.0).
//
//===----------------------------------------------------------------------===//

/// mma.sync.aligned with the m16n8k{8,16,32} shapes (f16, bf16, tf32, s8).
/// PTX ISA: m16n8k16 bf16 / m16n8k8 tf32 / m16n8k32 s8 require sm_80.
def FeatureMMASync
    : PBFeature<"mma-sync", "warp-level mma.sync matrix multiply-accumulate "
                            "(m16n8kK shapes, sm_80+)", [FeatureMatrixUnits]>;

/// ldmatrix: warp-cooperative 8x8 b16 tile loads from shared memory (sm_75+).
def FeatureLdMatrix
    : PBFeature<"ldmatrix", "ldmatrix shared-memory-to-register tile loads">;

/// stmatrix: the store counterpart of ldmatrix (sm_90+).
def FeatureStMatrix
    : PBFeature<"stmatrix", "stmatrix register-to-shared-memory tile stores">;

/// cp.async: per-thread asynchronous global-to-shared copies of 4/8/16 bytes
/// with commit/wait groups (sm_80+).
def FeatureCpAsync
    : PBFeature<"cp-async", "cp.async global-to-shared asynchronous copies",
                [FeatureAsyncCopy]>;

/// TensorFloat-32 inputs to the tensor cores (mma .tf32, sm_80+).
def FeatureTF32 : PBFeature<"tf32", "tf32 tensor-core arithmetic">;

/// Tensor Memory Accelerator: cp.async.bulk.tensor driven by a tensor map,
/// completion tracked by mbarrier transaction counts (sm_90+, not sm_90a-only).
def FeatureTMA
    : PBFeature<"tma", "Tensor Memory Accelerator bulk tensor copies "
                       "(cp.async.bulk.tensor)", [FeatureAsyncCopy]>;

/// Warpgroup-level asynchronous MMA reading A/B from shared memory through
/// matrix descriptors (wgmma.mma_async). Also needs FeatureArchSpecific90a.
def FeatureWGMMA
    : PBFeature<"wgmma", "warpgroup-level wgmma.mma_async",
                [FeatureMatrixUnits]>;

/// Instructions that ptxas accepts only for the architecture-specific target
/// sm_90a (not for sm_90): wgmma.mma_async and setmaxnreg. A chip with this
/// feature must be compiled with LLVMCPU "sm_90a"; its cubin does not run on
/// later architectures.
def FeatureArchSpecific90a
    : PBFeature<"sm90a-features", "sm_90a architecture-specific "
                                  "instructions (wgmma, setmaxnreg)">;

/// Thread-block clusters: co-scheduled blocks that can access each other's
/// shared memory (distributed shared memory) and share TMA multicasts.
def FeatureClusters
    : PBFeature<"thread-block-clusters",
                "thread-block clusters with distributed shared memory">;
