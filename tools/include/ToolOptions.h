//===- ToolOptions.h - What the tools' --help lists ------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef PB_TOOLS_TOOLOPTIONS_H
#define PB_TOOLS_TOOLOPTIONS_H

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/CommandLine.h"

namespace pbtools {

/// Lists only `category`'s options (and --help, --version) in --help. The
/// options of the libraries linked in (LLVM's back ends register hundreds)
/// move to --help-hidden, unlike llvm::cl::HideUnrelatedOptions, which hides
/// them from every listing.
inline void showOnlyInHelp(llvm::cl::OptionCategory &category) {
  auto &options = llvm::cl::getRegisteredOptions();
  llvm::SmallPtrSet<llvm::cl::Option *, 32> reallyHidden;
  for (auto &entry : options)
    if (entry.second->getOptionHiddenFlag() == llvm::cl::ReallyHidden)
      reallyHidden.insert(entry.second);
  llvm::cl::HideUnrelatedOptions(category);
  for (auto &entry : options)
    if (entry.second->getOptionHiddenFlag() == llvm::cl::ReallyHidden &&
        !reallyHidden.contains(entry.second))
      entry.second->setHiddenFlag(llvm::cl::Hidden);
}

} // namespace pbtools

#endif // PB_TOOLS_TOOLOPTIONS_H
