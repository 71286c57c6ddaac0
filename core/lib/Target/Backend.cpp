//===- Backend.cpp - Per-vendor S4/S5 hooks
//---------------------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "pb/Target/Backend.h"

#include "llvm/ADT/SmallVector.h"

#include <mutex>

using namespace mlir;
using namespace mlir::pb;

namespace {
struct BackendTable {
  std::mutex mutex;
  llvm::SmallVector<TargetBackend, 4> backends;
};
} // namespace

static BackendTable &getBackendTable() {
  static BackendTable table;
  return table;
}

void mlir::pb::registerTargetBackend(const TargetBackend &backend) {
  BackendTable &table = getBackendTable();
  std::lock_guard<std::mutex> lock(table.mutex);
  for (TargetBackend &existing : table.backends) {
    if (existing.vendor == backend.vendor) {
      existing = backend;
      return;
    }
  }
  table.backends.push_back(backend);
}

const TargetBackend *mlir::pb::lookupTargetBackend(Vendor vendor) {
  BackendTable &table = getBackendTable();
  std::lock_guard<std::mutex> lock(table.mutex);
  for (const TargetBackend &backend : table.backends)
    if (backend.vendor == vendor)
      return &backend;
  return nullptr;
}
