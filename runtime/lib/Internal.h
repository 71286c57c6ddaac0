//===- Internal.h - Shared definitions of the runtime library --*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef PB_RUNTIME_INTERNAL_H
#define PB_RUNTIME_INTERNAL_H

#include "polyblocks-c/PolyBlocks.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

#include "llvm/ADT/StringMap.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace llvm::json {
class Array;
class Value;
} // namespace llvm::json

struct pb_status {
  pb_status_code code;
  std::string message;
};

/// An artifact: its metadata (JSON text) and its payload (the code).
struct pb_artifact {
  std::string metadata;
  std::string payload;
};

namespace mlir::pb::runtime {

/// Checks an artifact file's bytes (magic, format version, digest, sizes,
/// then the metadata's schema) and, when they are valid, returns its
/// metadata and payload in `out`. `name` names the file in messages.
pb_status *parseArtifact(llvm::StringRef data, llvm::StringRef name,
                         std::unique_ptr<pb_artifact> &out);
/// Whether `metadata` follows the schema every consumer relies on: a JSON
/// object with "format" and "entries", each entry with a unique "name" and
/// "inputs"/"outputs" of known element types and non-negative extents. On
/// failure `why` completes "the metadata ...".
bool checkMetadata(llvm::StringRef metadata, std::string &why);
/// One entry of the metadata's "entries": its name and its tensors.
struct EntryDescription {
  llvm::StringRef name;
  const llvm::json::Array *inputs;
  const llvm::json::Array *outputs;
  /// The names of the entry's sizes ("sizes"; null when it takes none):
  /// the values of its dynamic dimensions, which shapes name in place of
  /// an extent.
  const llvm::json::Array *sizes;
  /// The caller's buffers: inputs, then outputs.
  size_t getNumBuffers() const;
  /// The caller's sizes.
  size_t getNumSizes() const;
};
/// `value` as an entry, or nullopt when it is not an object with a string
/// "name" and arrays "inputs" and "outputs".
std::optional<EntryDescription> readEntry(const llvm::json::Value &value);
/// Bytes per element of a metadata element type, 0 when it is unknown.
size_t getDTypeBytes(llvm::StringRef dtype);

inline pb_status *makeStatus(pb_status_code code, const llvm::Twine &message) {
  return new pb_status{code, message.str()};
}

/// Runs `body`, turning any C++ exception into a status, so that nothing
/// escapes through the C API.
template <typename Fn> pb_status *guard(Fn &&body) {
  try {
    return body();
  } catch (const std::exception &error) {
    return makeStatus(PB_STATUS_RUNTIME_ERROR,
                      llvm::Twine("internal error: ") + error.what());
  } catch (...) {
    return makeStatus(PB_STATUS_RUNTIME_ERROR, "internal error");
  }
}

/// A kernel launch as a GPU payload states it.
struct LaunchSpec {
  std::string module, kernel;
  unsigned grid[3], block[3];
  unsigned dynamicShared;
  std::vector<size_t> args; // buffer indices
};
/// The launch plan of one entry.
struct PlanSpec {
  /// Per buffer: the caller's buffer index (argument) or -1 (temporary).
  std::vector<int64_t> argumentIndex;
  /// Per buffer: the bytes of a temporary (0 for arguments).
  std::vector<size_t> temporaryBytes;
  std::vector<LaunchSpec> launches;
  /// The caller's buffers (inputs, then outputs): how many, and the bytes
  /// of each from the metadata's shapes and element types.
  size_t numBuffers;
  std::vector<size_t> callerBytes;
};
/// One kernel module.
struct ModuleSpec {
  std::string name;
  std::string image; // a cubin, PTX (null-terminated when used) or an
                     // AMDGPU code object
  const char *kind;
  /// Its MLIR before NVVM lowering, for the emulator; absent in artifacts
  /// compiled with emulation-ir=0.
  std::optional<std::string> emulationIR;
  /// A Tile IR module's bytecode (codegen=tile-ir): the emulator's tile
  /// interpreter runs it; `image` is its cubin when tileiras assembled it.
  std::optional<std::string> tileIRBytecode;
};
/// The payload of an nvidia-ptx+plan or amd-hsaco+plan artifact, checked.
struct GpuPayload {
  std::string arch;
  std::vector<ModuleSpec> modules;
  llvm::StringMap<PlanSpec> plans;
};
/// Reads and checks the payload (kernel modules and launch plans) of an
/// GPU artifact whose metadata lists `entries`: every index, size and
/// name it refers to is in range before anything is loaded
/// (GpuPayload.cpp).
pb_status *parseGpuPayload(const pb_artifact &artifact,
                           const llvm::json::Array &entries, GpuPayload &out);

/// A loaded nvidia-ptx+plan artifact (CudaExecutable.cpp).
struct CudaExecutable;
struct CudaExecutableDeleter {
  void operator()(CudaExecutable *executable) const;
};
using CudaExecutablePtr =
    std::unique_ptr<CudaExecutable, CudaExecutableDeleter>;

/// Opens the CUDA driver (libcuda.so.1, at the first call) and loads the
/// artifact's kernel modules and launch plans; `entries` are the metadata's.
pb_status *loadCudaExecutable(const pb_artifact &artifact,
                              const llvm::json::Array &entries,
                              CudaExecutablePtr &out);
/// Whether `entry` exists, and how many buffers (inputs, then outputs) it
/// takes.
bool hasCudaEntry(const CudaExecutable &executable, llvm::StringRef entry,
                  size_t &numBuffers);
/// Launches the plan of `entry` (which exists) on the caller's device
/// buffers, in order on `stream` (a CUstream; NULL is the default stream).
pb_status *runCudaExecutable(CudaExecutable &executable, llvm::StringRef entry,
                             void *const *buffers, void *stream);

/// A loaded amd-hsaco+plan artifact (HipExecutable.cpp).
struct HipExecutable;
struct HipExecutableDeleter {
  void operator()(HipExecutable *executable) const;
};
using HipExecutablePtr = std::unique_ptr<HipExecutable, HipExecutableDeleter>;

/// Opens the HIP runtime (libamdhip64, at the first call) and loads the
/// artifact's code objects and launch plans; `entries` are the metadata's.
pb_status *loadHipExecutable(const pb_artifact &artifact,
                             const llvm::json::Array &entries,
                             HipExecutablePtr &out);
/// Whether `entry` exists, and how many buffers it takes.
bool hasHipEntry(const HipExecutable &executable, llvm::StringRef entry,
                 size_t &numBuffers);
/// Launches the plan of `entry` (which exists) on the caller's device
/// buffers, in order on `stream` (a hipStream_t; NULL is the null stream).
pb_status *runHipExecutable(HipExecutable &executable, llvm::StringRef entry,
                            void *const *buffers, void *stream);

/// An nvidia-ptx+plan artifact loaded into the kernel emulator
/// (EmulatedExecutable.cpp).
struct EmulatedExecutable;
struct EmulatedExecutableDeleter {
  void operator()(EmulatedExecutable *executable) const;
};
using EmulatedExecutablePtr =
    std::unique_ptr<EmulatedExecutable, EmulatedExecutableDeleter>;

/// Prepares the artifact's kernels in the emulator (the payload's
/// "emulation_mlir" of every module) for the chip its "arch" names;
/// `entries` are the metadata's. UNSUPPORTED when the library was built
/// without the emulator.
pb_status *loadEmulatedExecutable(const pb_artifact &artifact,
                                  const llvm::json::Array &entries,
                                  EmulatedExecutablePtr &out);
/// Whether `entry` exists, and how many buffers (inputs, then outputs) it
/// takes.
bool hasEmulatedEntry(const EmulatedExecutable &executable,
                      llvm::StringRef entry, size_t &numBuffers);
/// Runs the plan of `entry` (which exists) on the caller's host buffers,
/// launch after launch, and returns when all have run.
pb_status *runEmulatedExecutable(EmulatedExecutable &executable,
                                 llvm::StringRef entry, void *const *buffers);

} // namespace mlir::pb::runtime

#endif // PB_RUNTIME_INTERNAL_H
