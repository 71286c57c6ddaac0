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
#include "llvm/Support/FormatVariadic.h"
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
                "pack-constants=0|1, emulation-ir=0|1, timing=0|1, "
                "verify-each=0|1, threads=N, "
                "kernel-cache=DIR, codegen=ptx|tile-ir, "
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

static llvm::cl::opt<bool> estimate(
    "estimate",
    llvm::cl::desc("Print the roofline estimate of every GPU launch or CPU "
                   "kernel call (a "
                   "model from the chip's .td, not a measurement; kept in "
                   "the metadata's \"estimate\")"),
    llvm::cl::cat(toolCategory));

/// The sum of a launch's or call's FLOPs over units and element types.
static double getFlops(const llvm::json::Object &launch) {
  double flops = 0;
  for (llvm::StringRef key : {"vector_flops", "matrix_flops"})
    if (const llvm::json::Object *byType = launch.getObject(key))
      for (const auto &entry : *byType)
        flops += entry.second.getAsNumber().value_or(0);
  return flops;
}

/// A CPU estimate (pb-kernel-sites): the kernel calls of each entry.
static void printCallEstimate(const llvm::json::Object &estimate) {
  llvm::outs() << "estimate for " << estimate.getString("chip").value_or("?")
               << ", " << estimate.getInteger("cores").value_or(0)
               << " cores for a parallel call ("
               << estimate.getString("model").value_or("") << ")\n";
  if (std::optional<llvm::StringRef> why = estimate.getString("no_estimate"))
    llvm::outs() << "  some calls have no estimate: " << *why << "\n";
  const llvm::json::Array *entries = estimate.getArray("entries");
  for (const llvm::json::Value &entryValue :
       entries ? *entries : llvm::json::Array()) {
    const llvm::json::Object &entry = *entryValue.getAsObject();
    const llvm::json::Array *calls = entry.getArray("launches");
    llvm::outs() << llvm::formatv(
        "entry {0}: {1} kernel calls, {2:F2} us; {3:F0} B, {4:F0} FLOPs\n",
        entry.getString("name").value_or("?"), calls ? calls->size() : 0,
        entry.getNumber("estimate_us").value_or(0),
        entry.getNumber("bytes").value_or(0),
        entry.getNumber("flops").value_or(0));
    llvm::outs() << llvm::formatv(
        "  {0,4} {1,-24} {2,-8} {3,12} {4,14} {5,9} {6,9} {7,9} {8,-7} {9}\n",
        "site", "kernel", "threads", "bytes", "FLOPs", "mem us", "comp us",
        "est us", "bound", "location");
    for (const llvm::json::Value &value :
         calls ? *calls : llvm::json::Array()) {
      const llvm::json::Object &call = *value.getAsObject();
      llvm::outs() << llvm::formatv(
          "  {0,4} {1,-24} {2,-8} {3,12:F0} {4,14:F0} {5,9:F2} {6,9:F2} "
          "{7,9:F2} {8,-7} {9}\n",
          call.getInteger("site").value_or(0),
          call.getString("kernel").value_or("?"),
          call.getBoolean("parallel").value_or(false) ? "parallel" : "serial",
          call.getNumber("bytes").value_or(0), getFlops(call),
          call.getNumber("memory_us").value_or(0),
          call.getNumber("compute_us").value_or(0),
          call.getNumber("estimate_us").value_or(0),
          call.getString("bound").value_or(""),
          call.getString("loc").value_or(""));
    }
  }
}

/// The metadata's "estimate" as a table per entry.
static void printEstimate(const llvm::json::Object &metadata) {
  const llvm::json::Object *estimate = metadata.getObject("estimate");
  if (!estimate) {
    llvm::outs() << "no estimate: the target's back end makes none\n";
    return;
  }
  if (estimate->get("cores")) {
    printCallEstimate(*estimate);
    return;
  }
  llvm::outs() << "estimate for " << estimate->getString("chip").value_or("?")
               << " (" << estimate->getString("model").value_or("") << ")\n";
  const llvm::json::Array *entries = estimate->getArray("entries");
  for (const llvm::json::Value &entryValue :
       entries ? *entries : llvm::json::Array()) {
    const llvm::json::Object &entry = *entryValue.getAsObject();
    const llvm::json::Array *launches = entry.getArray("launches");
    double total = entry.getNumber("estimate_us").value_or(0);
    double roofline = entry.getNumber("roofline_us").value_or(0);
    llvm::outs() << llvm::formatv(
        "entry {0}: {1} launches, {2:F2} us; roofline {3:F2} us ({4:P0}); "
        "{5:F0} B, {6:F0} FLOPs{7}\n",
        entry.getString("name").value_or("?"), launches ? launches->size() : 0,
        total, roofline, total > 0 ? roofline / total : 0.0,
        entry.getNumber("bytes").value_or(0),
        entry.getNumber("flops").value_or(0),
        entry.getBoolean("complete").value_or(false)
            ? ""
            : " (some launches have no estimate)");
    llvm::outs() << llvm::formatv(
        "  {0,-32} {1,13} {2,4} {3,-18} {4,5} {5,5} {6,12} {7,14} {8,9} "
        "{9,9} {10,9} {11}\n",
        "kernel", "blocks x thr", "regs", "blocks/SM (limit)", "waves", "chip",
        "bytes", "FLOPs", "mem us", "comp us", "est us", "bound");
    for (const llvm::json::Value &value :
         launches ? *launches : llvm::json::Array()) {
      const llvm::json::Object &launch = *value.getAsObject();
      double flops = getFlops(launch);
      std::optional<int64_t> registers =
          launch.getInteger("registers_per_thread");
      llvm::outs() << llvm::formatv(
          "  {0,-32} {1,13} {2,4} {3,-18} {4,5} {5,5:P0} {6,12:F0} "
          "{7,14:F0} {8,9:F2} {9,9:F2} {10,9:F2} {11}\n",
          launch.getString("kernel").value_or("?"),
          llvm::formatv("{0} x {1}", launch.getInteger("blocks").value_or(0),
                        launch.getInteger("threads_per_block").value_or(0))
              .str(),
          registers ? std::to_string(*registers) : std::string("?"),
          llvm::formatv(
              "{0} ({1})",
              launch.getInteger("resident_blocks_per_unit").value_or(0),
              launch.getString("occupancy_limit").value_or(""))
              .str(),
          launch.getInteger("waves").value_or(0),
          launch.getNumber("chip_fraction").value_or(0),
          launch.getNumber("bytes").value_or(0), flops,
          launch.getNumber("memory_us").value_or(0),
          launch.getNumber("compute_us").value_or(0),
          launch.getNumber("estimate_us").value_or(0),
          launch.getString("bound").value_or(""));
    }
  }
}

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
  if (estimate) {
    llvm::Expected<llvm::json::Value> metadata =
        llvm::json::parse(pbArtifactGetMetadata(artifact));
    if (!metadata)
      llvm::consumeError(metadata.takeError());
    else if (metadata->getAsObject())
      printEstimate(*metadata->getAsObject());
  }
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
