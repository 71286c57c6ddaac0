//===- Emulator.h - Running GPU kernels on the host ------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// An emulator of S4's kernels: it runs the GPU modules as they are before
// NVVM or ROCDL lowering (gpu, nvgpu, nvvm and amdgpu operations on
// arith/math/memref/vector/scf) on the CPU with CUDA's semantics (a warp is
// the chip's Lane count: 32 lanes, or an AMD wavefront of 64), one fiber per
// GPU thread, and
// checks what compute-sanitizer checks: out-of-bounds global and shared
// accesses, shared-memory races, misaligned vector/cp.async/ldmatrix
// addresses, barriers not reached by every thread, cp.async destinations
// read before their wait. The warp- and warpgroup-collective operations
// (ldmatrix, mma.sync, wgmma.mma_async) are implemented from the PTX ISA
// text, independently of the code that generates the kernels; amdgpu.mfma
// from AMD's register layouts of the single-block MFMA shapes, which the
// MFMA kernels of targets/amd follow too (docs/AMD.md).
//
//===----------------------------------------------------------------------===//

#ifndef PB_GPU_EMULATOR_H
#define PB_GPU_EMULATOR_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>

namespace mlir::pb::emulator {

/// A kernel module: its name in the launch plan and its MLIR text (a
/// gpu.module, as S4's pb-gpu-keep-emulation-ir recorded it).
struct ModuleText {
  llvm::StringRef name;
  llvm::StringRef text;
};

/// Limits of the chip the kernels were compiled for.
struct DeviceLimits {
  /// Shared memory one block may use, static and dynamic (bytes).
  int64_t sharedBytesPerBlock = 0;
  /// Threads of a warp (lanes).
  unsigned warpSize = 32;
};

/// A buffer passed to a kernel: its host address and its size in bytes.
struct Buffer {
  void *data;
  size_t bytes;
};

class Program {
public:
  /// Parses the modules and prepares every kernel. Fails on text that does
  /// not parse and on operations the emulator does not implement (naming
  /// the operation and the kernel).
  static llvm::Expected<std::unique_ptr<Program>>
  create(llvm::ArrayRef<ModuleText> modules, const DeviceLimits &limits);
  ~Program();

  /// Runs kernel `kernel` of module `module` over `grid` blocks of `block`
  /// threads with `dynamicSharedBytes` of dynamic shared memory on
  /// `buffers` (the kernel's arguments, in order). Blocks are independent
  /// and run on every core; the error of the first block (in block order)
  /// whose check fails (or a fault of the program such as an unknown
  /// kernel) is returned, naming the kernel, the block, the thread and the
  /// address.
  llvm::Error launch(llvm::StringRef module, llvm::StringRef kernel,
                     const unsigned grid[3], const unsigned block[3],
                     unsigned dynamicSharedBytes,
                     llvm::ArrayRef<Buffer> buffers);

  struct Impl;

private:
  explicit Program(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl;
};

} // namespace mlir::pb::emulator

#endif // PB_GPU_EMULATOR_H
