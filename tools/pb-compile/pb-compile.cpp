//===- pb-compile.cpp - Compile a module into an artifact -----------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
//   pb-compile in.mlir --target=cpu-host [--options=k=v,...] -o out.pbart
//
// A thin driver of the C API's pbCompile: reads the module (or stdin), writes
// the artifact, prints the compiler's diagnostics and exits 1 on any error.
//
//===----------------------------------------------------------------------===//

#include "polyblocks-c/PolyBlocks.h"

#include "ToolOptions.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

/// The options --help lists; LLVM's back-end flags, linked in with the
/// compiler, are listed by --help-hidden only.
static llvm::cl::OptionCategory toolCategory("pb-compile options");

static llvm::cl::opt<std::string> inputFile(llvm::cl::Positional,
                                            llvm::cl::desc("<input.mlir>"),
                                            llvm::cl::init("-"),
                                            llvm::cl::cat(toolCategory));
static llvm::cl::opt<std::string>
    outputFile("o", llvm::cl::desc("Artifact file to write"),
               llvm::cl::value_desc("file"), llvm::cl::Required,
               llvm::cl::cat(toolCategory));
static llvm::cl::opt<std::string>
    target("target",
           llvm::cl::desc("Target to compile for (see "
                          "pb-opt --list-targets)"),
           llvm::cl::init("cpu-host"), llvm::cl::cat(toolCategory));
static llvm::cl::opt<std::string>
    options("options",
            llvm::cl::desc(
                "Comma-separated key=value options: fusion=0|1, "
                "reduce-reduce-fusion=0|1, matrix-units=0|1, allow-tf32=0|1, "
                "allow-tf32-convolutions=0|1, warpgroup-units=0|1, "
                "pack-constants=0|1, timing=0|1, verify-each=0|1, threads=N, "
                "kernel-cache=DIR, "
                "pipeline=optimized|reference"),
            llvm::cl::init(""), llvm::cl::cat(toolCategory));
static llvm::cl::opt<bool>
    printMetadata("print-metadata",
                  llvm::cl::desc("Print the artifact's metadata (JSON)"),
                  llvm::cl::cat(toolCategory));

static llvm::cl::opt<bool>
    timing("timing",
           llvm::cl::desc("Print how long the parse, each pass and S5 took "
                          "(MLIR's timing report; the option timing=1)"),
           llvm::cl::cat(toolCategory));

static int fail(pb_status *status) {
  llvm::errs() << "pb-compile: error: " << pbStatusGetMessage(status) << "\n";
  pbStatusDestroy(status);
  return 1;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::cl::AddExtraVersionPrinter([](llvm::raw_ostream &os) {
    os << "PolyBlocks " << pbVersion() << "\n";
  });
  pbtools::showOnlyInHelp(toolCategory);
  llvm::cl::ParseCommandLineOptions(argc, argv,
                                    "PolyBlocks compiler: MLIR to artifact\n");
  auto input = llvm::MemoryBuffer::getFileOrSTDIN(inputFile, /*IsText=*/true);
  if (!input) {
    llvm::errs() << "pb-compile: error: cannot read '" << inputFile
                 << "': " << input.getError().message() << "\n";
    return 1;
  }
  llvm::StringRef text = (*input)->getBuffer();
  std::string optionText = options;
  if (timing)
    optionText += optionText.empty() ? "timing=1" : ",timing=1";
  pb_artifact *artifact = nullptr;
  if (pb_status *status = pbCompile(text.data(), text.size(), target.c_str(),
                                    optionText.c_str(), &artifact))
    return fail(status);
  if (printMetadata)
    llvm::outs() << pbArtifactGetMetadata(artifact) << "\n";
  if (timing) {
    llvm::Expected<llvm::json::Value> metadata =
        llvm::json::parse(pbArtifactGetMetadata(artifact));
    if (metadata && metadata->getAsObject())
      if (std::optional<llvm::StringRef> report =
              metadata->getAsObject()->getString("compile_timing"))
        llvm::errs() << *report;
    if (!metadata)
      llvm::consumeError(metadata.takeError());
  }
  pb_status *status = pbArtifactSave(artifact, outputFile.c_str());
  pbArtifactDestroy(artifact);
  if (status)
    return fail(status);
  return 0;
}
