//===- ToolOptions.h - What the tools' --help lists ------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef PB_TOOLS_TOOLOPTIONS_H
#define PB_TOOLS_TOOLOPTIONS_H

#include "llvm/ADT/STLExtras.h"
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

/// For a tool that keeps MLIR's options in --help (pb-opt, as mlir-opt):
/// moves to --help-hidden the options that libLLVM registers in every tool
/// but that no MLIR pipeline reads: its back ends' (--amdgpu-*,
/// --aarch64-*, ...) and the Polly, IR2Vec and MIR2Vec categories.
inline void hideLLVMBackEndOptions() {
  static const llvm::StringRef prefixes[] = {
      "aarch64-", "amdgpu-", "arm-",       "avr-",   "bpf-",   "csky-",
      "hexagon-", "lanai-",  "loongarch-", "m68k-",  "mips-",  "msp430-",
      "nvptx-",   "ppc-",    "r600-",      "riscv-", "sparc-", "systemz-",
      "ve-",      "wasm-",   "x86-",       "xcore-", "spirv-"};
  static const llvm::StringRef categories[] = {
      "Polly Options", "IR2Vec Options", "MIR2Vec Options"};
  for (auto &entry : llvm::cl::getRegisteredOptions()) {
    llvm::cl::Option *option = entry.second;
    if (option->getOptionHiddenFlag() != llvm::cl::NotHidden)
      continue;
    bool backEnd = llvm::any_of(prefixes, [&](llvm::StringRef prefix) {
      return entry.first.starts_with(prefix);
    });
    bool otherCategory =
        llvm::any_of(option->Categories, [](llvm::cl::OptionCategory *c) {
          return llvm::is_contained(categories, c->getName());
        });
    if (backEnd || otherCategory)
      option->setHiddenFlag(llvm::cl::Hidden);
  }
}

} // namespace pbtools

#endif // PB_TOOLS_TOOLOPTIONS_H
