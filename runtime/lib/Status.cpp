//===- Status.cpp - Status objects and version of the C API
//----------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include "pb/Target/TargetRegistry.h"

#include "llvm/Config/llvm-config.h"

pb_status_code pbStatusGetCode(const pb_status *status) {
  return status ? status->code : PB_STATUS_OK;
}

const char *pbStatusGetMessage(const pb_status *status) {
  return status ? status->message.c_str() : "";
}

void pbStatusDestroy(pb_status *status) { delete status; }

const char *pbVersion(void) {
  return PB_VERSION " (LLVM " LLVM_VERSION_STRING ")";
}

const char *pbTargetNames(void) {
  static const std::string names = mlir::pb::getValidTargetNames();
  return names.c_str();
}
