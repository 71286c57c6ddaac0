//===- Backend.h - Per-vendor S4/S5 hooks --------------------------*- C++
//-*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// core/ never includes targets/. A vendor's S4 (target mapping) and S5
// (emission) live beside its .td files and register themselves here; the
// drivers (pb-opt, the runtime's compiler) reach them by the chip's vendor.
//
//===----------------------------------------------------------------------===//

#ifndef PB_TARGET_BACKEND_H
#define PB_TARGET_BACKEND_H

#include "pb/Target/TargetDesc.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/JSON.h"

#include <string>

namespace mlir::pb {

struct PipelineOptions;

/// What a compiled module holds for the runtime, besides its code.
struct EmittedBinary {
  /// The loadable payload: a shared object (CPUs) or a GPU module image.
  std::string payload;
  /// The payload's kind, for the artifact's metadata ("elf-shared-object").
  std::string format;
  /// Kernels (calls of pb-outline-kernels' loop-nest functions) and how
  /// many distinct ones S5 optimized and compiled after merging identical
  /// ones; 0 and 0 where the back end does not count them.
  unsigned kernels = 0;
  unsigned compiledKernels = 0;
  /// What S5 adds to the timing report (the time of each kernel), or "".
  std::string timingDetail;
  /// The roofline estimate of the launches (GPU back ends), for the
  /// artifact's metadata; null where the back end makes none.
  llvm::json::Value estimate = nullptr;
};

struct EmitOptions {
  /// Threads S5 may use; 0: one per core. The binary does not depend on it.
  unsigned threads = 0;
  /// A directory where S5 keeps compiled kernels between compilations (see
  /// the CPU back end's KernelCache), or "" for none. The binary does not
  /// depend on it.
  std::string kernelCache;
};

struct TargetBackend {
  Vendor vendor;
  /// Adds S4: the target mapping of S3's output, down to the LLVM dialect
  /// (and GPU modules where the vendor has them). `options` are the
  /// pipeline's (pb/Transforms/Passes.h); a back end reads those that
  /// concern it.
  void (*addS4Pipeline)(OpPassManager &pm, const ChipDesc &chip,
                        const PipelineOptions &options);
  /// S5: emits the binary from S4's output. Errors are reported on the
  /// module's location and return failure.
  /// `timing` is S5's scope in the timing report (disabled unless asked
  /// for).
  LogicalResult (*emit)(ModuleOp module, const ChipDesc &chip,
                        const EmitOptions &options, TimingScope &timing,
                        EmittedBinary &binary);
};

/// Registers a vendor's backend (once per vendor; later calls replace it).
void registerTargetBackend(const TargetBackend &backend);

/// The backend of `vendor`, or null when none is built in.
const TargetBackend *lookupTargetBackend(Vendor vendor);

} // namespace mlir::pb

#endif // PB_TARGET_BACKEND_H
