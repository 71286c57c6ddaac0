//===- pb-tblgen.cpp - PolyBlocks TableGen driver
//--------------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Reads chip descriptions written in the schema of targets/Target.td and runs
// the generator named on the command line (-gen-target-enums,
// -gen-target-registry, -gen-target-descriptors, -gen-matrix-units,
// -gen-cost-model, -gen-target-docs). Each generator registers itself in its
// own file.
//
//===----------------------------------------------------------------------===//

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/TableGen/Main.h"
#include "llvm/TableGen/Record.h"

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  llvm::cl::ParseCommandLineOptions(argc, argv, "PolyBlocks TableGen\n");
  return llvm::TableGenMain(argv[0], llvm::TableGenMainFn(nullptr));
}
