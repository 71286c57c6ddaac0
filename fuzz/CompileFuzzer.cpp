//===- CompileFuzzer.cpp - Fuzzes pbCompile on MLIR text
//-------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Input: one byte that selects the target (even: cpu-host, odd:
// nvidia-sm90), then MLIR text, compiled through every stage with pbCompile.
// Invariants checked: compilation either succeeds, with metadata that is a
// JSON object, or fails with a status whose message is not empty; it never
// crashes, asserts or reads out of bounds (the sanitizers watch the rest).
//
//===----------------------------------------------------------------------===//

#include "polyblocks-c/PolyBlocks.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  const char *target = data[0] & 1 ? "nvidia-sm90" : "cpu-host";
  pb_artifact *artifact = nullptr;
  pb_status *status =
      pbCompile(reinterpret_cast<const char *>(data) + 1, size - 1, target,
                /*options=*/nullptr, &artifact);
  if (status) {
    if (artifact || !std::strlen(pbStatusGetMessage(status))) {
      std::fprintf(stderr, "a failed compilation without a message\n");
      std::abort();
    }
    pbStatusDestroy(status);
    return 0;
  }
  if (pbArtifactGetMetadata(artifact)[0] != '{') {
    std::fprintf(stderr, "metadata that is not a JSON object\n");
    std::abort();
  }
  pbArtifactDestroy(artifact);
  return 0;
}
