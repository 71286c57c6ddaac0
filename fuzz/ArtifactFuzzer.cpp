//===- ArtifactFuzzer.cpp - Fuzzes the artifact loader
//---------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Input: one mode byte, then an artifact file's bytes. An even mode byte
// passes the bytes as they are: nearly every mutation then fails the digest,
// which tests the framing checks. An odd mode byte first replaces the last
// 32 bytes by the SHA-256 of the others, as an intact file would have them,
// so that mutations reach what the digest protects: the size fields, the
// metadata's schema and, for NVIDIA artifacts, the payload's kernel modules
// and launch plans (pbExecutableLoad checks all of it before it opens the
// driver, and stops there on a machine without one). CPU code is never
// loaded: loading an ELF object runs its initializers, which is execution.
//
// Invariants checked: a load either fails with PB_STATUS_INVALID_ARTIFACT,
// or gives metadata that is a JSON object with "format" and "entries".
//
//===----------------------------------------------------------------------===//

#include "polyblocks-c/PolyBlocks.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/SHA256.h"

#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <string>

static bool cudaDriverPresent() {
  static const bool present = [] {
    void *handle = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (handle) {
      std::fprintf(stderr, "pb-fuzz-artifact: a CUDA driver is present; "
                           "NVIDIA payloads are not loaded\n");
      dlclose(handle);
    }
    return handle != nullptr;
  }();
  return present;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  bool seal = data[0] & 1;
  std::string bytes(reinterpret_cast<const char *>(data) + 1, size - 1);
  if (seal && bytes.size() >= 32) {
    std::array<uint8_t, 32> sum = llvm::SHA256::hash(
        llvm::arrayRefFromStringRef(llvm::StringRef(bytes).drop_back(32)));
    bytes.replace(bytes.size() - 32, 32,
                  reinterpret_cast<const char *>(sum.data()), 32);
  }
  pb_artifact *artifact = nullptr;
  if (pb_status *status =
          pbArtifactLoadFromMemory(bytes.data(), bytes.size(), &artifact)) {
    if (pbStatusGetCode(status) != PB_STATUS_INVALID_ARTIFACT || artifact) {
      std::fprintf(stderr, "unexpected status %d: %s\n",
                   int(pbStatusGetCode(status)), pbStatusGetMessage(status));
      std::abort();
    }
    pbStatusDestroy(status);
    return 0;
  }
  llvm::Expected<llvm::json::Value> metadata =
      llvm::json::parse(pbArtifactGetMetadata(artifact));
  const llvm::json::Object *root = metadata ? metadata->getAsObject() : nullptr;
  if (!root || !root->getString("format") || !root->getArray("entries")) {
    std::fprintf(stderr, "a loaded artifact's metadata breaks its schema\n");
    std::abort();
  }
  if (root->getString("format") == "nvidia-ptx+plan" && !cudaDriverPresent()) {
    pb_executable *executable = nullptr;
    pb_status *status = pbExecutableLoad(artifact, &executable);
    if (!status) {
      std::fprintf(stderr, "an NVIDIA executable loaded without a driver\n");
      std::abort();
    }
    pbStatusDestroy(status);
  }
  pbArtifactDestroy(artifact);
  return 0;
}
