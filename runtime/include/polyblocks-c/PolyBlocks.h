/*===- PolyBlocks.h - The PolyBlocks C API ------------------------*- C -*-===*
 *
 * SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
 *
 *===----------------------------------------------------------------------===*
 *
 * Compile an input-contract MLIR module for a target into an artifact, save
 * and load artifacts, load an artifact as an executable and run its entries
 * on caller-owned buffers. Library: libPolyBlocks.so.
 *
 * Errors: every call that can fail returns a pb_status: NULL means success;
 * otherwise it holds a code and a message and the caller releases it with
 * pbStatusDestroy. No call aborts the caller on bad input.
 *
 * Calling convention of an entry: the module's public function `f` taking
 * tensors and returning tensors becomes entry "f"; pbExecutableRun gets one
 * pointer per input, then one per output, each to a dense row-major buffer
 * of the shape and element type the artifact's metadata states. Outputs are
 * written, never allocated, by the callee. Buffers need no alignment.
 * An entry whose function also takes `index` arguments (dynamic shapes,
 * docs/DynamicShapes.md) takes their values, its "sizes", through
 * pbExecutableRunWithSizes: the metadata lists their names in order
 * ("sizes": ["s0", ...]) and a dynamic extent of a shape is such a name.
 *
 *===----------------------------------------------------------------------===*/

#ifndef POLYBLOCKS_C_POLYBLOCKS_H
#define POLYBLOCKS_C_POLYBLOCKS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PB_API __attribute__((visibility("default")))

/*===----------------------------------------------------------------------===*
 * Status
 *===----------------------------------------------------------------------===*/

typedef enum pb_status_code {
  PB_STATUS_OK = 0,
  /* A bad argument to the API itself (null pointer, unknown entry...). */
  PB_STATUS_INVALID_ARGUMENT = 1,
  /* The module is malformed or outside the input contract, or a stage
   * failed; the message holds the compiler's diagnostics. */
  PB_STATUS_COMPILE_ERROR = 2,
  /* A feature, op, type or target that PolyBlocks does not support yet. */
  PB_STATUS_UNSUPPORTED = 3,
  /* A file could not be read or written, or is not an artifact. */
  PB_STATUS_IO_ERROR = 4,
  /* Loading or running compiled code failed. */
  PB_STATUS_RUNTIME_ERROR = 5,
  /* An artifact's bytes are damaged, truncated, of another format version
   * or not an artifact at all (its digest or its structure does not
   * check); nothing of it was loaded. */
  PB_STATUS_INVALID_ARTIFACT = 6,
} pb_status_code;

typedef struct pb_status pb_status;

PB_API pb_status_code pbStatusGetCode(const pb_status *status);
/* The message; valid until pbStatusDestroy. "" for NULL (success). */
PB_API const char *pbStatusGetMessage(const pb_status *status);
PB_API void pbStatusDestroy(pb_status *status);

/*===----------------------------------------------------------------------===*
 * Version and targets
 *===----------------------------------------------------------------------===*/

/* "0.1.0 (LLVM 22.x)". Part of the compile cache key. */
PB_API const char *pbVersion(void);
/* Names of the targets this build knows, comma-separated. */
PB_API const char *pbTargetNames(void);

/*===----------------------------------------------------------------------===*
 * Compilation and artifacts
 *===----------------------------------------------------------------------===*/

typedef struct pb_artifact pb_artifact;

/* Compiles `module_text` (MLIR, `size` bytes) for `target` ("cpu-host",
 * "cpu-x86-64-v4", ...). `options` is NULL or a comma-separated list of
 * key=value pairs:
 *   fusion=0|1         S3 fusion (default 1)
 *   matrix-units=0|1   S3 matrix-unit mapping (default 1)
 *   timing=0|1         time the parse, every pass and S5: MLIR's timing
 *                      report, as text, in the metadata's "compile_timing"
 *                      (with S5's time per kernel after it)
 *   verify-each=0|1    verify the IR after every pass (default 0: after
 *                      every stage; a stage that breaks it is an error
 *                      naming the stage); the artifact is the same and
 *                      "options" leave it out
 *   threads=N          threads S4's per-kernel passes and S5 run on
 *                      (default 0: one per core); the artifact is the same
 *                      for every N and the metadata's "options" leave it out
 *   kernel-cache=DIR   CPU targets: keep each compiled kernel in DIR and
 *                      reuse it when the same kernel (same code, chip and
 *                      LLVM) is compiled again, in this or another model;
 *                      damaged files are ignored and rewritten; the
 *                      artifact is the same and "options" leave it out
 *   emulation-ir=0|1   NVIDIA targets: keep each kernel module's MLIR
 *                      (before NVVM lowering) in the payload, for
 *                      pbExecutableLoadEmulated (default 1; 0 makes smaller
 *                      artifacts that only run on a GPU)
 *   pipeline=optimized|reference  `reference` skips S3 and the S1/S2
 *                      rewrites that only make code faster
 *                      (pb-hoist-invariants, pb-pad-in-place): the
 *                      unoptimized lowering, used to check optimized results
 * Unknown keys are an error. */
PB_API pb_status *pbCompile(const char *module_text, size_t size,
                            const char *target, const char *options,
                            pb_artifact **out_artifact);

/* JSON: {"format", "target", "compiler", "entries": [{"name", "inputs":
 * [{"shape": [...], "dtype": "f32"}], "outputs": [...]}]}. Valid until the
 * artifact is destroyed. */
PB_API const char *pbArtifactGetMetadata(const pb_artifact *artifact);
PB_API pb_status *pbArtifactSave(const pb_artifact *artifact, const char *path);
/* Loading checks the file's format version, its SHA-256 digest and its
 * metadata before anything else is read: a damaged, truncated or foreign
 * file is PB_STATUS_INVALID_ARTIFACT, with the file and the failed check in
 * the message. */
PB_API pb_status *pbArtifactLoad(const char *path, pb_artifact **out_artifact);
/* The same from the `size` bytes of an artifact file at `data`. */
PB_API pb_status *pbArtifactLoadFromMemory(const void *data, size_t size,
                                           pb_artifact **out_artifact);
PB_API void pbArtifactDestroy(pb_artifact *artifact);

/*===----------------------------------------------------------------------===*
 * Execution
 *===----------------------------------------------------------------------===*/

typedef struct pb_executable pb_executable;

/* Loads the artifact's code into the process. The artifact may be destroyed
 * afterwards. NVIDIA artifacts (format "nvidia-ptx+plan") are loaded through
 * the CUDA driver, opened with dlopen("libcuda.so.1") at the first such load
 * (an error status when there is no driver or no device), into the calling
 * thread's current CUDA context, else device 0's primary context. */
PB_API pb_status *pbExecutableLoad(const pb_artifact *artifact,
                                   pb_executable **out_executable);
/* Loads an NVIDIA artifact (format "nvidia-ptx+plan") to run on the CPU
 * through the kernel emulator, which checks what compute-sanitizer checks
 * (out-of-bounds and misaligned accesses, shared-memory races, barriers not
 * reached by every thread...); no CUDA driver or GPU is needed. The
 * executable's pbExecutableRun then takes host pointers (inputs, then
 * outputs, aligned to the metadata's "buffer_alignment") and a NULL
 * stream, and runs the plan's launches in order, synchronously: the
 * outputs are written when it returns. Temporaries are allocated in host
 * memory filled with 0xFF bytes (NaN in every float type), not zeroed, so
 * that a kernel reading memory nothing wrote shows. A failed check is
 * PB_STATUS_RUNTIME_ERROR with the emulator's message (the kernel, block,
 * thread and address). Runs of one executable are serialized. Artifacts of
 * other formats are PB_STATUS_UNSUPPORTED, as is a library built without the
 * emulator; an NVIDIA artifact compiled with emulation-ir=0 (no kernel IR in
 * its payload) is PB_STATUS_RUNTIME_ERROR saying so. Slow (blocks run one after
 * another, every GPU thread emulated): meant for testing kernels on small
 * programs. */
PB_API pb_status *pbExecutableLoadEmulated(const pb_artifact *artifact,
                                           pb_executable **out_executable);
/* Runs `entry` with `num_buffers` buffers (inputs, then outputs). `stream`
 * is the caller's GPU stream for GPU targets and must be NULL on CPUs.
 * NVIDIA executables take device pointers and a CUstream (NULL: the default
 * stream); the kernels are enqueued on it in order and the call returns
 * without waiting for them, except when temporaries are freed without
 * stream-ordered allocation (then it synchronizes the stream). CUDA errors
 * become PB_STATUS_RUNTIME_ERROR with the driver's error name and message.
 * Executables of pbExecutableLoadEmulated take host pointers and a NULL
 * stream (see there). An output that updates an input in place (the
 * metadata's "in_place" pairs {"output": r, "input": n}, from a result's
 * pb.in_place) is written into input n's buffer; its own buffer is not
 * written (pass input n's buffer for it too). */
PB_API pb_status *pbExecutableRun(pb_executable *executable, const char *entry,
                                  void *const *buffers, size_t num_buffers,
                                  void *stream);
/* pbExecutableRun for an entry that takes sizes: `sizes` holds the
 * `num_sizes` values the metadata's "sizes" name, in that order; each buffer
 * has the shape the metadata states with those values put in. A size below
 * zero is PB_STATUS_INVALID_ARGUMENT, as is a count other than the entry's
 * (pbExecutableRun passes none). CPU executables only: GPU entries take no
 * sizes. */
PB_API pb_status *
pbExecutableRunWithSizes(pb_executable *executable, const char *entry,
                         void *const *buffers, size_t num_buffers,
                         const int64_t *sizes, size_t num_sizes, void *stream);
PB_API void pbExecutableDestroy(pb_executable *executable);
/* The kernel timers of a CPU artifact compiled with the option profile=1:
 * for each of the first `count` kernel call sites (the metadata's
 * "estimate" lists them, numbered by "site"), the wall-clock nanoseconds
 * spent in its calls and how many calls there were, summed since the load
 * or the last reset. Sites the artifact does not have read as 0.
 * PB_STATUS_UNSUPPORTED for artifacts compiled without profiling and for
 * GPU executables. */
PB_API pb_status *pbExecutableReadProfile(pb_executable *executable,
                                          uint64_t *nanoseconds,
                                          uint64_t *calls, size_t count);
/* Sets the kernel timers of a profiled CPU executable to zero (as above). */
PB_API pb_status *pbExecutableResetProfile(pb_executable *executable);

#ifdef __cplusplus
}
#endif

#endif /* POLYBLOCKS_C_POLYBLOCKS_H */
