//===- pb-opt.cpp - The PolyBlocks optimizer driver
//------------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// mlir-opt with every upstream dialect and pass, the PolyBlocks dialect and
// passes, and the target options:
//   --target=NAME        attach #pb.target<NAME> before the pipeline runs
//   --list-targets       list the registered targets
//   --print-target=NAME  print every fact the target's .td file states
//   --version            print the PolyBlocks and LLVM versions
//   --pb-pipeline=s1,s2,s3,host  run PolyBlocks stages
//   --pb-dump-after-stage=DIR    write each stage's IR to DIR
//   --pb-explain         report the optimizer's decisions
//
//===----------------------------------------------------------------------===//

#include "ToolOptions.h"

#include "pb/InitAll.h"
#include "pb/Support/OutputFile.h"
#include "pb/Target/TargetRegistry.h"
#include "pb/Targets/InitBackends.h"
#include "pb/Transforms/Passes.h"

#include "mlir/IR/Dialect.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

using namespace mlir;

static llvm::cl::OptionCategory pbCategory("PolyBlocks options");

static llvm::cl::opt<std::string>
    targetName("target",
               llvm::cl::desc("Compile for this target: attaches "
                              "#pb.target<NAME> before any pass runs"),
               llvm::cl::value_desc("name"), llvm::cl::cat(pbCategory));

static llvm::cl::opt<bool> printTiming(
    "timing",
    llvm::cl::desc("Print how long each pass took (MLIR's timing report, as "
                   "--mlir-timing; pb-compile --timing adds S5 per kernel)"),
    llvm::cl::cat(pbCategory));

static llvm::cl::opt<bool>
    listTargets("list-targets", llvm::cl::desc("List the registered targets"),
                llvm::cl::cat(pbCategory));

static llvm::cl::opt<std::string> printTargetName(
    "print-target",
    llvm::cl::desc("Print every fact the target's .td file states"),
    llvm::cl::value_desc("name"), llvm::cl::cat(pbCategory));

static llvm::cl::list<std::string> pipelineStages(
    "pb-pipeline",
    llvm::cl::desc("Run these PolyBlocks stages in order (s1, s2, s3, s4, "
                   "host); s4 is the target's own and needs --target"
                   "; they run after the command line's passes"),
    llvm::cl::CommaSeparated, llvm::cl::value_desc("stage,..."),
    llvm::cl::cat(pbCategory));

static llvm::cl::opt<std::string> dumpAfterStageDir(
    "pb-dump-after-stage",
    llvm::cl::desc("Write the IR after each --pb-pipeline stage to "
                   "DIR/<n>-<stage>.mlir"),
    llvm::cl::value_desc("dir"), llvm::cl::cat(pbCategory));

static llvm::cl::opt<bool>
    explainDecisions("pb-explain",
                     llvm::cl::desc("Report every fusion, tiling, "
                                    "vectorization and mapping decision"),
                     llvm::cl::cat(pbCategory));

static llvm::cl::opt<bool>
    enableFusion("pb-fusion", llvm::cl::init(true),
                 llvm::cl::desc("Ablation: S3 affine fusion (default on)"),
                 llvm::cl::cat(pbCategory));

static llvm::cl::opt<bool> enableReduceFusion(
    "pb-reduce-fusion", llvm::cl::init(true),
    llvm::cl::desc("Ablation: S3 reduce-reduce fusion of row-wise nests, "
                   "pb-fuse-reductions (default on; needs --pb-fusion)"),
    llvm::cl::cat(pbCategory));

static llvm::cl::opt<bool> enableMatrixUnits(
    "pb-matrix-units", llvm::cl::init(true),
    llvm::cl::desc("Ablation: S3 matrix-unit mapping (default on)"),
    llvm::cl::cat(pbCategory));

static llvm::cl::opt<bool> allowTF32(
    "pb-allow-tf32", llvm::cl::init(false),
    llvm::cl::desc("Let f32 contractions use tf32 matrix units (default off)"),
    llvm::cl::cat(pbCategory));

static llvm::cl::opt<std::string> codegen(
    "pb-codegen", llvm::cl::init("ptx"),
    llvm::cl::desc("NVIDIA code generation for --pb-pipeline's s4: ptx or "
                   "tile-ir (contraction kernels as CUDA Tile IR)"),
    llvm::cl::cat(pbCategory));

static llvm::cl::opt<bool> warpgroupUnits(
    "pb-warpgroup-units", llvm::cl::init(true),
    llvm::cl::desc("Let S3 choose warpgroup-scope matrix units (default on)"),
    llvm::cl::cat(pbCategory));

static llvm::cl::opt<bool> emulationIR(
    "pb-emulation-ir", llvm::cl::init(false),
    llvm::cl::desc("S4 keeps each GPU kernel module's IR for the emulator "
                   "(pb.emulation_ir; default off, on in pb-compile)"),
    llvm::cl::cat(pbCategory));

static int unknownTarget(llvm::StringRef name) {
  llvm::errs() << "pb-opt: error: unknown target '" << name
               << "'; valid targets: " << pb::getValidTargetNames() << "\n";
  return 1;
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  registerAllPasses();
  pb::registerAllPasses();
  pb::registerAllTargetBackends();
  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  pb::registerAllDialects(registry);
  pb::registerAllTargetDialects(registry);
  llvm::cl::AddExtraVersionPrinter([](llvm::raw_ostream &os) {
    os << "PolyBlocks version " << PB_VERSION << "\n";
  });

  pbtools::hideLLVMBackEndOptions();
  auto [inputFile, outputFile] = registerAndParseCLIOptions(
      argc, argv, "PolyBlocks optimizer driver\n", registry);

  // --timing is MLIR's --mlir-timing under the name pb-compile uses.
  if (printTiming) {
    auto &options = llvm::cl::getRegisteredOptions();
    auto it = options.find("mlir-timing");
    if (it != options.end())
      static_cast<llvm::cl::opt<bool> *>(it->second)->setValue(true);
  }
  if (listTargets) {
    pb::printTargetList(llvm::outs());
    return 0;
  }
  if (!printTargetName.empty()) {
    const pb::TargetRegistryEntry *entry =
        pb::lookupTargetEntry(printTargetName);
    if (!entry)
      return unknownTarget(printTargetName);
    pb::printTarget(llvm::outs(), *entry);
    return 0;
  }
  const pb::ChipDesc *chip = nullptr;
  if (!targetName.empty()) {
    llvm::Expected<const pb::ChipDesc *> resolved =
        pb::resolveTarget(targetName);
    if (!resolved) {
      llvm::errs() << "pb-opt: error: " << llvm::toString(resolved.takeError())
                   << "\n";
      return 1;
    }
    chip = *resolved;
  }

  pb::PipelineOptions pipelineOptions;
  pipelineOptions.fusion = enableFusion;
  pipelineOptions.reduceFusion = enableReduceFusion;
  pipelineOptions.matrixUnits = enableMatrixUnits;
  pipelineOptions.allowTF32 = allowTF32;
  pipelineOptions.warpgroupUnits = warpgroupUnits;
  if (codegen != "ptx" && codegen != "tile-ir") {
    llvm::errs() << "pb-opt: --pb-codegen takes ptx or tile-ir, not '"
                 << codegen << "'\n";
    return 1;
  }
  pipelineOptions.codegen = codegen;
  pipelineOptions.emulationIR = emulationIR;
  std::vector<std::string> stages(pipelineStages.begin(), pipelineStages.end());
  for (const std::string &stage : stages) {
    if (!pb::isKnownStage(stage)) {
      llvm::errs() << "pb-opt: error: unknown stage '" << stage
                   << "'; valid stages: "
                   << llvm::join(pb::getStageNames(), ", ") << "\n";
      return 1;
    }
    OpPassManager probe;
    if (failed(pb::addStagePipeline(probe, stage, chip, pipelineOptions))) {
      if (!chip)
        llvm::errs() << "pb-opt: error: stage '" << stage
                     << "' needs --target\n";
      else
        llvm::errs() << "pb-opt: error: no " << stringifyVendor(chip->vendor)
                     << " backend is built into this pb-opt (stage '" << stage
                     << "' of target '" << chip->name << "')\n";
      return 1;
    }
  }
  pb::setExplainEnabled(explainDecisions);

  // Run the attach pass first, then the command line's passes, then the
  // requested stages (each followed by its dump when asked).
  MlirOptMainConfig cliConfig = MlirOptMainConfig::createFromCLOptions();
  MlirOptMainConfig config = cliConfig;
  std::string target = targetName;
  std::string dumpDir = dumpAfterStageDir;
  if (!dumpDir.empty()) {
    if (std::error_code ec = llvm::sys::fs::create_directories(dumpDir)) {
      llvm::errs() << "pb-opt: error: cannot create '" << dumpDir
                   << "': " << ec.message() << "\n";
      return 1;
    }
  }
  config.setPassPipelineSetupFn([=](PassManager &pm) -> LogicalResult {
    if (!target.empty())
      pm.addPass(pb::createPBAttachTargetPass({target}));
    if (failed(cliConfig.setupPassPipeline(pm)))
      return failure();
    for (auto [index, stage] : llvm::enumerate(stages)) {
      (void)pb::addStagePipeline(pm, stage, chip, pipelineOptions);
      if (!dumpDir.empty()) {
        llvm::SmallString<128> path(dumpDir);
        llvm::sys::path::append(
            path, llvm::formatv("{0}-{1}.mlir", index + 1, stage).str());
        pm.addPass(pb::createPBDumpStagePass({path.str().str()}));
      }
    }
    return success();
  });

  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> input =
      openInputFile(inputFile, &errorMessage);
  if (!input) {
    llvm::errs() << "pb-opt: error: " << errorMessage << "\n";
    return 1;
  }
  // A device or a FIFO is written in place; a regular file is replaced only
  // once the output is complete, and left as it was on failure.
  llvm::Expected<std::unique_ptr<pb::OutputFile>> output =
      pb::OutputFile::open(outputFile);
  if (!output) {
    llvm::errs() << "pb-opt: error: " << llvm::toString(output.takeError())
                 << "\n";
    return 1;
  }
  if (failed(MlirOptMain((*output)->os(), std::move(input), registry, config)))
    return 1;
  if (llvm::Error error = (*output)->commit()) {
    llvm::errs() << "pb-opt: error: " << llvm::toString(std::move(error))
                 << "\n";
    return 1;
  }
  return 0;
}
