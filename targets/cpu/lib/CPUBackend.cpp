//===- CPUBackend.cpp - S4 and S5 for CPUs
//----------------------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// S4 maps S3's parallel loops onto OpenMP threads (libomp) and lowers the
// vector dialect at the chip's width to LLVM; entry functions take bare
// pointers and get a packed wrapper. S5 translates to LLVM IR, optimizes
// and emits an object for the chip's triple, CPU and features (all from the
// .td tables), and links it with lld into a shared object that names libomp.
//
//===----------------------------------------------------------------------===//

#include "pb/CPU/CPUBackend.h"

#include "pb/Target/Backend.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/Transforms/IPO/MergeFunctions.h"

#include <cstdlib>

using namespace mlir;
using namespace mlir::pb;

// S4: everything below S3 down to the LLVM dialect. scf.parallel loops (the
// affine.parallel loops S3 marked) become OpenMP work-sharing loops.
static const char *const kCPUS4 =
    "pb-approximate-math,arith-expand{include-bf16=true},"
    "convert-linalg-to-affine-loops,lower-affine,"
    "convert-scf-to-openmp,convert-vector-to-scf,lower-affine,"
    "convert-vector-to-llvm,expand-strided-metadata,lower-affine,"
    "finalize-memref-to-llvm{use-generic-functions=1},convert-scf-to-cf,"
    "convert-math-to-llvm,"
    // libm calls for vector math ops (asinh of a vectorized loop) come as
    // vector.extract / vector.insert around scalar calls: lowered again.
    "convert-math-to-libm,convert-vector-to-llvm,"
    "convert-arith-to-llvm,convert-index-to-llvm,"
    "convert-cf-to-llvm,"
    "convert-func-to-llvm{use-bare-ptr-memref-call-conv=1},"
    "convert-openmp-to-llvm,convert-ub-to-llvm,"
    "reconcile-unrealized-casts,pb-cpu-entry-wrappers,pb-strip-annotations";

/// The pipeline is the same for every CPU chip: S3 already chose the
/// vector widths and parallel loops from the chip's tables.
static void addCPUS4Pipeline(OpPassManager &pm, const ChipDesc &) {
  if (failed(parsePassPipeline(kCPUS4, pm, llvm::errs())))
    llvm::report_fatal_error("invalid built-in CPU S4 pipeline");
}

/// The linker: $POLYBLOCKS_LD, else the ld.lld found when PolyBlocks was
/// configured, else ld.lld on PATH.
static std::string findLinker() {
  if (const char *env = std::getenv("POLYBLOCKS_LD"))
    return env;
  if (llvm::sys::fs::can_execute(PB_LD_LLD))
    return PB_LD_LLD;
  if (llvm::ErrorOr<std::string> path = llvm::sys::findProgramByName("ld.lld"))
    return *path;
  return "";
}

/// The archive linked into every artifact (targets/cpu/support: the buffer
/// pool behind memref.alloc): $POLYBLOCKS_CPU_SUPPORT_LIB, else the one
/// built with PolyBlocks.
static std::string findSupportLibrary() {
  if (const char *env = std::getenv("POLYBLOCKS_CPU_SUPPORT_LIB"))
    return env;
  return PB_CPU_SUPPORT_LIB;
}

static LogicalResult emitError(ModuleOp module, const llvm::Twine &message) {
  return module.emitError() << "S5 (cpu): " << message;
}

static std::unique_ptr<llvm::TargetMachine>
createTargetMachine(ModuleOp module, const ChipDesc &chip) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  std::string error;
  llvm::Triple triple(chip.llvmTriple);
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) {
    (void)emitError(module, "no LLVM target for triple '" + chip.llvmTriple +
                                "': " + error);
    return nullptr;
  }
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, chip.llvmCPU, chip.llvmFeatures, options, llvm::Reloc::PIC_,
      std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (!machine)
    (void)emitError(module, "cannot create a target machine for '" +
                                chip.llvmCPU + "'");
  return machine;
}

/// Merges identical functions, then runs LLVM's O3 pipeline without its
/// loop vectorizer, SLP vectorizer and loop unroller: S3 has already
/// vectorized and register-tiled the code. Returns (kernels, distinct
/// kernels).
///
/// Every parallel loop nest (a kernel) is its own function here: LLVM's
/// OpenMP lowering outlined it (`*.omp_par*`). A model's repeated layers
/// give identical kernels (BERT-base: 206, 20 distinct), so merging them
/// first means each distinct kernel is optimized and compiled once; merging
/// keeps the semantics (MergeFunctions merges only functions whose code is
/// the same). Without the vectorizers and the unroller S5 of resnet18 went
/// from about 18 s to 5 s, with run-time changes within this machine's
/// run-to-run noise (about 15%).
static std::pair<unsigned, unsigned>
optimizeLLVMModule(llvm::Module &module, llvm::TargetMachine &machine) {
  llvm::SmallVector<llvm::Function *> functions, kernels;
  for (llvm::Function &function : module) {
    if (function.isDeclaration())
      continue;
    functions.push_back(&function);
    if (function.getName().contains(".omp_par"))
      kernels.push_back(&function);
  }
  // Merged functions map to the one kept (compared as pointers only: a
  // merged function may have been erased).
  llvm::DenseMap<llvm::Function *, llvm::Function *> merged =
      llvm::MergeFunctionsPass::runOnFunctions(functions);
  unsigned distinct = llvm::count_if(
      kernels, [&](llvm::Function *kernel) { return !merged.count(kernel); });

  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = false;
  tuning.SLPVectorization = false;
  tuning.LoopUnrolling = false;
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder builder(&machine, tuning);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm =
      builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  mpm.run(module, mam);
  return {unsigned(kernels.size()), distinct};
}

static LogicalResult emitCPU(ModuleOp module, const ChipDesc &chip,
                             EmittedBinary &binary) {
  DialectRegistry registry;
  registerAllToLLVMIRTranslations(registry);
  module.getContext()->appendDialectRegistry(registry);

  std::unique_ptr<llvm::TargetMachine> machine =
      createTargetMachine(module, chip);
  if (!machine)
    return failure();

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, "polyblocks");
  if (!llvmModule)
    return emitError(module, "translation to LLVM IR failed");
  llvmModule->setTargetTriple(machine->getTargetTriple());
  llvmModule->setDataLayout(machine->createDataLayout());

  std::tie(binary.kernels, binary.compiledKernels) =
      optimizeLLVMModule(*llvmModule, *machine);

  llvm::SmallString<0> object;
  {
    llvm::raw_svector_ostream os(object);
    llvm::legacy::PassManager codegen;
    if (machine->addPassesToEmitFile(codegen, os, nullptr,
                                     llvm::CodeGenFileType::ObjectFile))
      return emitError(module, "the target cannot emit object files");
    codegen.run(*llvmModule);
  }

  // Link into a shared object with lld. libm and libc symbols (expf, malloc)
  // resolve against the process that loads it, which libPolyBlocks.so
  // already ties to both through libstdc++.
  std::string linker = findLinker();
  if (linker.empty())
    return emitError(module, "ld.lld not found (install lld or set "
                             "POLYBLOCKS_LD to an ld.lld binary)");
  llvm::SmallString<128> dir;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueDirectory("polyblocks-link", dir))
    return emitError(module,
                     "cannot create a temporary directory: " + ec.message());
  llvm::SmallString<128> objPath(dir), soPath(dir), logPath(dir);
  llvm::sys::path::append(objPath, "kernel.o");
  llvm::sys::path::append(soPath, "kernel.so");
  llvm::sys::path::append(logPath, "link.log");
  llvm::scope_exit cleanup([&] {
    llvm::sys::fs::remove(objPath);
    llvm::sys::fs::remove(soPath);
    llvm::sys::fs::remove(logPath);
    llvm::sys::fs::remove(dir);
  });
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(objPath, ec);
    if (ec)
      return emitError(module, "cannot write " + objPath + ": " + ec.message());
    os << object;
  }
  std::string support = findSupportLibrary();
  if (!llvm::sys::fs::exists(support))
    return emitError(module, "the CPU support library " + support +
                                 " is missing (set POLYBLOCKS_CPU_SUPPORT_LIB "
                                 "to libPBCPUSupport.a)");
  std::string ompDir = llvm::sys::path::parent_path(PB_LIBOMP).str();
  llvm::SmallVector<llvm::StringRef> args = {
      linker,   "-shared",    "--no-undefined-version",
      "-o",     soPath,       objPath,
      support,  "-L",         ompDir,
      "-rpath", ompDir,       "-lomp",
      "-z",     "noexecstack"};
  std::string errMsg;
  std::optional<llvm::StringRef> redirects[] = {
      std::nullopt, llvm::StringRef(logPath), llvm::StringRef(logPath)};
  int rc = llvm::sys::ExecuteAndWait(linker, args, std::nullopt, redirects, 0,
                                     0, &errMsg);
  if (rc != 0) {
    std::string log;
    if (auto buffer = llvm::MemoryBuffer::getFile(logPath))
      log = (*buffer)->getBuffer().str();
    return emitError(module, "linking with " + linker +
                                 " failed: " + (errMsg.empty() ? log : errMsg));
  }
  auto so = llvm::MemoryBuffer::getFile(soPath);
  if (!so)
    return emitError(module, "cannot read the linked object");
  binary.payload = (*so)->getBuffer().str();
  binary.format = "elf-shared-object";
  return success();
}

void mlir::pb::cpu::registerCPUBackend() {
  static bool registered = [] {
    registerPBCPUPasses();
    PassPipelineRegistration<>(
        "pb-cpu-s4", "Stage S4 for CPUs: OpenMP threads, vectors, LLVM",
        [](OpPassManager &pm) { addCPUS4Pipeline(pm, ChipDesc()); });
    registerTargetBackend({Vendor::CPU, addCPUS4Pipeline, emitCPU});
    return true;
  }();
  (void)registered;
}
