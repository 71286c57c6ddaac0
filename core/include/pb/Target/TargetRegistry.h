//===- TargetRegistry.h - Looking up and printing targets ---*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef PB_TARGET_TARGETREGISTRY_H
#define PB_TARGET_TARGETREGISTRY_H

#include "pb/Target/TargetDesc.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlir::pb {

/// The registry entry named `name`, or null.
const TargetRegistryEntry *lookupTargetEntry(llvm::StringRef name);

/// "a, b, c": every registered target name, for error messages.
std::string getValidTargetNames();

/// The chip a host-resolved entry stands for on a CPU with `hostFeatures`
/// (LLVM host feature names), or null when no candidate matches.
const ChipDesc *
resolveHostCandidates(const TargetRegistryEntry &entry,
                      const llvm::StringMap<bool> &hostFeatures);

/// Resolves a target name to a chip. Host-resolved names are resolved
/// against the running CPU. Errors name the cause and the valid names.
llvm::Expected<const ChipDesc *> resolveTarget(llvm::StringRef name);

/// Prints every fact the target's .td file states, in a readable form.
void printTarget(llvm::raw_ostream &os, const TargetRegistryEntry &entry);

/// Prints one line per registered target.
void printTargetList(llvm::raw_ostream &os);

} // namespace mlir::pb

#endif // PB_TARGET_TARGETREGISTRY_H
