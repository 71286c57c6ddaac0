//===- Executable.cpp - Loading and running artifacts ---------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// CPU artifacts carry an ELF shared object. It is loaded from an anonymous
// in-memory file (memfd), so loading writes nothing to disk, and each entry
// is called through its packed wrapper `__pb_entry_<name>(void **buffers,
// const int64_t *sizes)`.
// NVIDIA artifacts (format nvidia-ptx+plan) are loaded and run by
// CudaExecutable.cpp, AMD ones (amd-hsaco+plan) by HipExecutable.cpp, and
// both on the CPU by EmulatedExecutable.cpp (pbExecutableLoadEmulated).
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/JSON.h"

#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

using namespace mlir::pb::runtime;

namespace {
struct Entry {
  using Fn = void (*)(void *const *, const int64_t *);
  Fn fn;
  size_t numBuffers;
  size_t numSizes;
};
} // namespace

struct pb_executable {
  void *handle = nullptr;
  /// The in-memory file the code was loaded from. It stays open while the
  /// code is loaded: dlopen identifies libraries by path, and the path
  /// names this descriptor, so no other executable may reuse its number.
  int fd = -1;
  llvm::StringMap<Entry> entries;
  /// Set for NVIDIA artifacts (then `handle` and `entries` are unused).
  CudaExecutablePtr cuda;
  /// Set for AMD artifacts (likewise).
  HipExecutablePtr hip;
  /// Set for NVIDIA artifacts loaded for the emulator (likewise).
  EmulatedExecutablePtr emulated;
  ~pb_executable() {
    if (handle)
      dlclose(handle);
    if (fd >= 0)
      close(fd);
  }
};

static pb_status *loadSharedObject(const std::string &payload, void **handle,
                                   int *fdOut) {
  int fd = memfd_create("polyblocks-kernel", MFD_CLOEXEC);
  if (fd < 0)
    return makeStatus(PB_STATUS_RUNTIME_ERROR,
                      "memfd_create failed while loading the artifact");
  size_t written = 0;
  while (written < payload.size()) {
    ssize_t n = write(fd, payload.data() + written, payload.size() - written);
    if (n <= 0) {
      close(fd);
      return makeStatus(PB_STATUS_RUNTIME_ERROR,
                        "cannot write the artifact's code to memory");
    }
    written += n;
  }
  std::string path = "/proc/self/fd/" + std::to_string(fd);
  *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (*handle) {
    // A library of this name is still loaded (never expected while every
    // loaded executable keeps its descriptor): refuse rather than run
    // another artifact's code.
    dlclose(*handle);
    *handle = nullptr;
    close(fd);
    return makeStatus(PB_STATUS_RUNTIME_ERROR,
                      "cannot load the artifact's code: " + path +
                          " names an already loaded library");
  }
  *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!*handle) {
    close(fd);
    const char *error = dlerror();
    return makeStatus(PB_STATUS_RUNTIME_ERROR,
                      llvm::Twine("cannot load the artifact's code: ") +
                          (error ? error : "unknown dlopen error"));
  }
  *fdOut = fd;
  return nullptr;
}

/// Parses the artifact's metadata into `metadata` and points `format` and
/// `entries` into it.
static pb_status *readMetadata(const pb_artifact &artifact,
                               llvm::json::Value &metadata,
                               llvm::StringRef &format,
                               const llvm::json::Array *&entries) {
  llvm::Expected<llvm::json::Value> parsed =
      llvm::json::parse(artifact.metadata);
  if (!parsed)
    return makeStatus(PB_STATUS_RUNTIME_ERROR,
                      "the artifact's metadata is not JSON: " +
                          llvm::toString(parsed.takeError()));
  metadata = std::move(*parsed);
  const llvm::json::Object *root = metadata.getAsObject();
  std::optional<llvm::StringRef> name =
      root ? root->getString("format") : std::nullopt;
  entries = root ? root->getArray("entries") : nullptr;
  if (!name || !entries)
    return makeStatus(PB_STATUS_RUNTIME_ERROR,
                      "the artifact's metadata lacks 'format' or 'entries'");
  format = *name;
  return nullptr;
}

pb_status *pbExecutableLoad(const pb_artifact *artifact, pb_executable **out) {
  return guard([&]() -> pb_status * {
    if (!artifact || !out)
      return makeStatus(PB_STATUS_INVALID_ARGUMENT,
                        "pbExecutableLoad: null artifact or output");
    *out = nullptr;
    llvm::json::Value metadata = nullptr;
    llvm::StringRef format;
    const llvm::json::Array *entries = nullptr;
    if (pb_status *status = readMetadata(*artifact, metadata, format, entries))
      return status;
    if (format == "nvidia-ptx+plan") {
      auto executable = std::make_unique<pb_executable>();
      if (pb_status *status =
              loadCudaExecutable(*artifact, *entries, executable->cuda))
        return status;
      *out = executable.release();
      return nullptr;
    }
    if (format == "amd-hsaco+plan") {
      auto executable = std::make_unique<pb_executable>();
      if (pb_status *status =
              loadHipExecutable(*artifact, *entries, executable->hip))
        return status;
      *out = executable.release();
      return nullptr;
    }
    if (format != "elf-shared-object")
      return makeStatus(PB_STATUS_UNSUPPORTED,
                        "artifacts of format '" + format +
                            "' cannot be loaded by this runtime");

    auto executable = std::make_unique<pb_executable>();
    if (pb_status *status = loadSharedObject(
            artifact->payload, &executable->handle, &executable->fd))
      return status;
    for (const llvm::json::Value &value : *entries) {
      std::optional<EntryDescription> entry = readEntry(value);
      if (!entry)
        return makeStatus(PB_STATUS_RUNTIME_ERROR,
                          "malformed entry in the artifact's metadata");
      std::string symbol = ("__pb_entry_" + entry->name).str();
      void *fn = dlsym(executable->handle, symbol.c_str());
      if (!fn)
        return makeStatus(PB_STATUS_RUNTIME_ERROR,
                          "the artifact's code lacks entry '" + entry->name +
                              "'");
      executable->entries[entry->name] = {reinterpret_cast<Entry::Fn>(fn),
                                          entry->getNumBuffers(),
                                          entry->getNumSizes()};
    }
    *out = executable.release();
    return nullptr;
  });
}

pb_status *pbExecutableLoadEmulated(const pb_artifact *artifact,
                                    pb_executable **out) {
  return guard([&]() -> pb_status * {
    if (!artifact || !out)
      return makeStatus(PB_STATUS_INVALID_ARGUMENT,
                        "pbExecutableLoadEmulated: null artifact or output");
    *out = nullptr;
    llvm::json::Value metadata = nullptr;
    llvm::StringRef format;
    const llvm::json::Array *entries = nullptr;
    if (pb_status *status = readMetadata(*artifact, metadata, format, entries))
      return status;
    if (format != "nvidia-ptx+plan" && format != "amd-hsaco+plan")
      return makeStatus(PB_STATUS_UNSUPPORTED,
                        "only NVIDIA and AMD artifacts (format "
                        "nvidia-ptx+plan or amd-hsaco+plan) run in the "
                        "emulator; this artifact's format is '" +
                            format + "' (load it with pbExecutableLoad)");
    auto executable = std::make_unique<pb_executable>();
    if (pb_status *status =
            loadEmulatedExecutable(*artifact, *entries, executable->emulated))
      return status;
    *out = executable.release();
    return nullptr;
  });
}

pb_status *pbExecutableRun(pb_executable *executable, const char *entry,
                           void *const *buffers, size_t numBuffers,
                           void *stream) {
  return pbExecutableRunWithSizes(executable, entry, buffers, numBuffers,
                                  nullptr, 0, stream);
}

pb_status *pbExecutableRunWithSizes(pb_executable *executable,
                                    const char *entry, void *const *buffers,
                                    size_t numBuffers, const int64_t *sizes,
                                    size_t numSizes, void *stream) {
  return guard([&]() -> pb_status * {
    if (!executable || !entry)
      return makeStatus(PB_STATUS_INVALID_ARGUMENT,
                        "pbExecutableRun: null executable or entry");
    auto checkSizes = [&](size_t expected) -> pb_status * {
      if (numSizes != expected)
        return makeStatus(PB_STATUS_INVALID_ARGUMENT,
                          llvm::Twine("entry '") + entry + "' takes " +
                              llvm::Twine(expected) + " sizes, not " +
                              llvm::Twine(numSizes) +
                              (expected ? " (pbExecutableRunWithSizes)" : ""));
      if (numSizes && !sizes)
        return makeStatus(PB_STATUS_INVALID_ARGUMENT,
                          llvm::Twine("the sizes of entry '") + entry +
                              "' are null");
      for (size_t i = 0; i < numSizes; ++i)
        if (sizes[i] < 0)
          return makeStatus(PB_STATUS_INVALID_ARGUMENT,
                            llvm::Twine("size ") + llvm::Twine(i) +
                                " of entry '" + entry + "' is negative (" +
                                llvm::Twine(sizes[i]) + ")");
      return nullptr;
    };
    // GPU entries take no sizes.
    if (!executable->handle)
      if (pb_status *status = checkSizes(0))
        return status;
    auto checkBuffers = [&](size_t expected) -> pb_status * {
      if (numBuffers != expected)
        return makeStatus(PB_STATUS_INVALID_ARGUMENT,
                          llvm::Twine("entry '") + entry + "' takes " +
                              llvm::Twine(expected) +
                              " buffers (inputs, then outputs), not " +
                              llvm::Twine(numBuffers));
      for (size_t i = 0; i < numBuffers; ++i)
        if (!buffers || !buffers[i])
          return makeStatus(PB_STATUS_INVALID_ARGUMENT,
                            llvm::Twine("buffer ") + llvm::Twine(i) +
                                " of entry '" + entry + "' is null");
      return nullptr;
    };
    if (executable->cuda) {
      size_t expected = 0;
      if (!hasCudaEntry(*executable->cuda, entry, expected))
        return makeStatus(PB_STATUS_INVALID_ARGUMENT,
                          llvm::Twine("no entry named '") + entry +
                              "' in this executable");
      if (pb_status *status = checkBuffers(expected))
        return status;
      return runCudaExecutable(*executable->cuda, entry, buffers, stream);
    }
    if (executable->hip) {
      size_t expected = 0;
      if (!hasHipEntry(*executable->hip, entry, expected))
        return makeStatus(PB_STATUS_INVALID_ARGUMENT,
                          llvm::Twine("no entry named '") + entry +
                              "' in this executable");
      if (pb_status *status = checkBuffers(expected))
        return status;
      return runHipExecutable(*executable->hip, entry, buffers, stream);
    }
    if (executable->emulated) {
      size_t expected = 0;
      if (!hasEmulatedEntry(*executable->emulated, entry, expected))
        return makeStatus(PB_STATUS_INVALID_ARGUMENT,
                          llvm::Twine("no entry named '") + entry +
                              "' in this executable");
      if (stream)
        return makeStatus(PB_STATUS_INVALID_ARGUMENT,
                          "emulated executables take no stream (pass NULL): "
                          "they run on the CPU, synchronously");
      if (pb_status *status = checkBuffers(expected))
        return status;
      return runEmulatedExecutable(*executable->emulated, entry, buffers);
    }
    auto it = executable->entries.find(entry);
    if (it == executable->entries.end())
      return makeStatus(PB_STATUS_INVALID_ARGUMENT,
                        llvm::Twine("no entry named '") + entry +
                            "' in this executable");
    if (stream)
      return makeStatus(PB_STATUS_INVALID_ARGUMENT,
                        "CPU executables take no stream (pass NULL)");
    if (pb_status *status = checkBuffers(it->second.numBuffers))
      return status;
    if (pb_status *status = checkSizes(it->second.numSizes))
      return status;
    it->second.fn(buffers, sizes);
    return nullptr;
  });
}

void pbExecutableDestroy(pb_executable *executable) { delete executable; }

/// The profile functions of a profiled CPU executable, or a status.
static pb_status *findProfile(pb_executable *executable, void **read,
                              void **reset) {
  if (!executable)
    return makeStatus(PB_STATUS_INVALID_ARGUMENT, "null executable");
  if (!executable->handle)
    return makeStatus(PB_STATUS_UNSUPPORTED,
                      "kernel timers exist only in CPU artifacts");
  *read = dlsym(executable->handle, "__pb_profile_read");
  *reset = dlsym(executable->handle, "__pb_profile_reset");
  if (!*read || !*reset)
    return makeStatus(PB_STATUS_UNSUPPORTED,
                      "this artifact was compiled without kernel timers "
                      "(compile with the option profile=1)");
  return nullptr;
}

pb_status *pbExecutableReadProfile(pb_executable *executable,
                                   uint64_t *nanoseconds, uint64_t *calls,
                                   size_t count) {
  return guard([&]() -> pb_status * {
    void *read = nullptr, *reset = nullptr;
    if (pb_status *status = findProfile(executable, &read, &reset))
      return status;
    if (count && (!nanoseconds || !calls))
      return makeStatus(PB_STATUS_INVALID_ARGUMENT,
                        "pbExecutableReadProfile: null output arrays");
    using ReadFn = uint64_t (*)(uint64_t *, uint64_t *, uint64_t);
    uint64_t capacity =
        reinterpret_cast<ReadFn>(read)(nanoseconds, calls, count);
    for (size_t i = capacity; i < count; ++i)
      nanoseconds[i] = calls[i] = 0;
    return nullptr;
  });
}

pb_status *pbExecutableResetProfile(pb_executable *executable) {
  return guard([&]() -> pb_status * {
    void *read = nullptr, *reset = nullptr;
    if (pb_status *status = findProfile(executable, &read, &reset))
      return status;
    reinterpret_cast<void (*)()>(reset)();
    return nullptr;
  });
}
