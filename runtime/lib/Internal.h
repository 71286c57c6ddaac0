//===- Internal.h - Shared definitions of the runtime library --*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef PB_RUNTIME_INTERNAL_H
#define PB_RUNTIME_INTERNAL_H

#include "polyblocks-c/PolyBlocks.h"

#include "llvm/ADT/Twine.h"

#include <string>

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

} // namespace mlir::pb::runtime

#endif // PB_RUNTIME_INTERNAL_H
