//===- ParallelCodegen.h - S5 per kernel on a thread pool --------*- C++
//-*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef PB_CPU_PARALLELCODEGEN_H
#define PB_CPU_PARALLELCODEGEN_H

#include "llvm/ADT/StringSet.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"
#include "llvm/Target/TargetMachine.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace mlir::pb::cpu {

/// One part of a module compiled on its own: a kernel with the functions
/// only it uses, or the rest (entries, wrappers, shared globals).
struct CompiledPart {
  /// The kernel's name, or "" for the rest.
  std::string kernel;
  /// The part's object file.
  std::string object;
  /// Wall-clock seconds its optimization and code generation took (or
  /// reading it from the cache).
  double seconds = 0;
  /// Whether the object came from the kernel cache.
  bool cached = false;
};

/// What, besides LLVM's version and the chip, decides a part's object: the
/// pipeline of compilePart. Change it whenever that pipeline changes, so
/// that objects cached before are not reused.
inline constexpr const char *kCodegenRecipe =
    "O3 without loop/SLP vectorizers and unroller; PIC; CodeGenOpt "
    "Aggressive; v1";

/// Where compiled parts are kept between compilations: one file per part,
/// named by a SHA-256 of `fingerprint` (compiler version, chip) and the
/// part's bitcode. Each file is checked whole (size, digest) when read; a
/// damaged one is ignored and rewritten. Files are written to a temporary
/// name and renamed, so readers never see half a file.
struct KernelCache {
  std::string directory; // "" for no cache.
  std::string fingerprint;
};

using TargetMachineFactory =
    std::function<std::unique_ptr<llvm::TargetMachine>()>;

/// Splits `module` into one part per kernel (named in `kernels`) and one
/// for the rest, then optimizes each (LLVM's O3 without the vectorizers and
/// the unroller) and compiles it to an object on `threads` threads (0: one
/// per core). The parts, and so the objects, do not depend on `threads`.
/// Local symbols used across parts become hidden globals; small local
/// constants are copied into each part that reads them. `module` is left
/// changed (externalized) but otherwise whole. Parts found in `cache` are
/// read from it; the others are compiled and stored there.
llvm::Expected<std::vector<CompiledPart>>
compileInParts(llvm::Module &module, const llvm::StringSet<> &kernels,
               const TargetMachineFactory &createMachine, unsigned threads,
               const KernelCache &cache);

} // namespace mlir::pb::cpu

#endif // PB_CPU_PARALLELCODEGEN_H
