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

#include "pb/Dialect/PBDialect.h"
#include "pb/Target/Backend.h"
#include "pb/Transforms/Passes.h"

#include "ParallelCodegen.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
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
// affine.parallel loops S3 marked) become OpenMP work-sharing loops. The
// loop nests are functions first (pb-outline-kernels): the passes that work
// on any op run per function (func.func(...)), in parallel when the context
// has threads; the module-level ones in between. bf16 arithmetic computes
// in f32 and converts with integer operations (pb-emulate-bf16, first, so
// that a bf16 exp or tanh gets pb-approximate-math's f32 polynomial): LLVM
// would round each bf16 result with a call to compiler-rt's __truncsfbf2,
// which nothing defines where the artifact is loaded; for the same reason
// masked bf16 vector loads and stores move i16 lanes
// (pb-bf16-memory-as-i16, last). The tile ops of AMX contractions
// (pb-map-matrix-units) are lowered with the vector ops, to LLVM's
// intrinsics whose tile configuration the X86 back end derives; so are its
// x86vector dot products (VDPBF16PS).
static const char *const kCPUS4 =
    "pb-cpu-entry-buffers,pb-cpu-expand-reshapes,pb-outline-kernels,pb-kernel-"
    "sites{profile=0},"
    "func.func(pb-emulate-bf16,pb-approximate-math,arith-expand,"
    "convert-linalg-to-affine-loops,lower-affine),"
    "convert-scf-to-openmp,"
    "func.func(convert-vector-to-scf,lower-affine,"
    "convert-vector-to-llvm{enable-amx=1 enable-x86vector=1},"
    "expand-strided-metadata,lower-affine),"
    "finalize-memref-to-llvm{use-generic-functions=1},"
    "func.func(convert-scf-to-cf,convert-math-to-llvm),"
    // libm calls for vector math ops (asinh of a vectorized loop) come as
    // vector.extract / vector.insert around scalar calls: lowered again.
    "convert-math-to-libm,"
    "func.func(convert-vector-to-llvm,convert-arith-to-llvm,"
    "convert-index-to-llvm),"
    "convert-cf-to-llvm,"
    "convert-func-to-llvm{use-bare-ptr-memref-call-conv=1},"
    "convert-openmp-to-llvm,"
    "llvm.func(convert-ub-to-llvm,reconcile-unrealized-casts,"
    "pb-bf16-memory-as-i16),"
    "pb-cpu-entry-wrappers,pb-strip-annotations{keep=pb.kernel_sites}";

/// The pipeline is the same for every CPU chip: S3 already chose the
/// vector widths and parallel loops from the chip's tables. The one
/// pipeline option that concerns it is `profile` (pb-kernel-sites).
static void addCPUS4Pipeline(OpPassManager &pm, const ChipDesc &,
                             const PipelineOptions &options) {
  std::string pipeline = kCPUS4;
  if (options.profile) {
    size_t at = pipeline.find("profile=0");
    pipeline.replace(at, 9, "profile=1");
  }
  if (failed(parsePassPipeline(pipeline, pm, llvm::errs())))
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

/// The chip's target machine, or null with `error` set. Called from S5's
/// threads: it reports nothing itself.
static std::unique_ptr<llvm::TargetMachine>
createTargetMachine(const ChipDesc &chip, std::string &error) {
  llvm::Triple triple(chip.llvmTriple);
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) {
    error =
        ("no LLVM target for triple '" + chip.llvmTriple + "': " + error).str();
    return nullptr;
  }
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, chip.llvmCPU, chip.llvmFeatures, options, llvm::Reloc::PIC_,
      std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (!machine)
    error = ("cannot create a target machine for '" + chip.llvmCPU + "'").str();
  return machine;
}

/// The S5 time of each part, the slowest first, for the timing report.
static void describeParts(llvm::ArrayRef<cpu::CompiledPart> parts,
                          std::string &detail) {
  llvm::SmallVector<const cpu::CompiledPart *> sorted;
  for (const cpu::CompiledPart &part : parts)
    sorted.push_back(&part);
  llvm::stable_sort(sorted,
                    [](auto *a, auto *b) { return a->seconds > b->seconds; });
  double total = 0;
  for (const cpu::CompiledPart *part : sorted)
    total += part->seconds;
  llvm::raw_string_ostream os(detail);
  os << llvm::formatv("S5 per kernel: {0} parts, {1:f3} s on all threads\n",
                      parts.size(), total);
  for (const cpu::CompiledPart *part : sorted)
    os << llvm::formatv("  {0,10:f4} s  {1}  {2}\n", part->seconds,
                        part->cached ? "cached  " : "compiled",
                        part->kernel.empty() ? "(entries and the rest)"
                                             : part->kernel);
}

/// Merges functions that are the same code once lowered (pb-outline-kernels
/// already made one function of kernels that were the same before) and
/// returns how many of `kernels` are left to compile.
static unsigned mergeFunctions(llvm::Module &module,
                               const llvm::StringSet<> &kernelNames) {
  llvm::SmallVector<llvm::Function *> functions, kernels;
  for (llvm::Function &function : module) {
    if (function.isDeclaration())
      continue;
    functions.push_back(&function);
    if (kernelNames.contains(function.getName()))
      kernels.push_back(&function);
  }
  // Merged functions map to the one kept (compared as pointers only: a
  // merged function may have been erased).
  llvm::DenseMap<llvm::Function *, llvm::Function *> merged =
      llvm::MergeFunctionsPass::runOnFunctions(functions);
  return llvm::count_if(
      kernels, [&](llvm::Function *kernel) { return !merged.count(kernel); });
}

/// An attribute of pb-kernel-sites' record as JSON.
static llvm::json::Value toJSON(Attribute attr) {
  if (auto dict = dyn_cast<DictionaryAttr>(attr)) {
    llvm::json::Object object;
    for (NamedAttribute field : dict)
      object[field.getName().getValue()] = toJSON(field.getValue());
    return object;
  }
  if (auto array = dyn_cast<ArrayAttr>(attr)) {
    llvm::json::Array values;
    for (Attribute element : array)
      values.push_back(toJSON(element));
    return values;
  }
  if (auto text = dyn_cast<StringAttr>(attr))
    return text.getValue().str();
  if (auto flag = dyn_cast<BoolAttr>(attr))
    return flag.getValue();
  if (auto integer = dyn_cast<IntegerAttr>(attr))
    return integer.getInt();
  if (auto real = dyn_cast<FloatAttr>(attr))
    return real.getValueAsDouble();
  return nullptr;
}

/// The metadata's "estimate" from pb-kernel-sites' record (removed from
/// the module): the kernel calls of each entry in call order, with their
/// work and estimated time.
static llvm::json::Value takeKernelSites(ModuleOp module) {
  auto record =
      module->getAttrOfType<DictionaryAttr>(PBDialect::kKernelSitesAttrName);
  if (!record)
    return nullptr;
  module->removeAttr(PBDialect::kKernelSitesAttrName);
  llvm::json::Object estimate = *toJSON(record).getAsObject();
  llvm::json::Array *sites = estimate.getArray("sites");
  // Calls grouped by entry, in order.
  llvm::json::Array entries;
  llvm::StringMap<size_t> entryIndex;
  for (llvm::json::Value &value : sites ? *sites : llvm::json::Array()) {
    llvm::json::Object &site = *value.getAsObject();
    std::string name = site.getString("entry").value_or("").str();
    auto [it, inserted] = entryIndex.try_emplace(name, entries.size());
    if (inserted)
      entries.push_back(llvm::json::Object{{"name", name},
                                           {"launches", llvm::json::Array()},
                                           {"estimate_us", 0.0},
                                           {"bytes", 0.0},
                                           {"flops", 0.0},
                                           {"complete", true}});
    llvm::json::Object &entry = *entries[it->second].getAsObject();
    std::optional<double> us = site.getNumber("estimate_us");
    double flops = 0;
    for (llvm::StringRef key : {"vector_flops", "matrix_flops"})
      if (const llvm::json::Object *byType = site.getObject(key))
        for (const auto &field : *byType)
          flops += field.second.getAsNumber().value_or(0);
    entry["estimate_us"] = *entry.getNumber("estimate_us") + us.value_or(0);
    entry["bytes"] =
        *entry.getNumber("bytes") + site.getNumber("bytes").value_or(0);
    entry["flops"] = *entry.getNumber("flops") + flops;
    if (!us)
      entry["complete"] = false;
    entry.getArray("launches")->push_back(std::move(value));
  }
  estimate.erase("sites");
  estimate["entries"] = std::move(entries);
  estimate["model"] =
      "roofline per kernel call from the chip's per-core .td figures (a host "
      "target's at the clock measured when it was resolved), over "
      "the cores a parallel call uses (docs/Explorer.md); not a measurement";
  return estimate;
}

static LogicalResult emitCPU(ModuleOp module, const ChipDesc &chip,
                             const EmitOptions &options, TimingScope &timing,
                             EmittedBinary &binary) {
  DialectRegistry registry;
  registerAllToLLVMIRTranslations(registry);
  module.getContext()->appendDialectRegistry(registry);

  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  std::string machineError;
  std::unique_ptr<llvm::TargetMachine> machine =
      createTargetMachine(chip, machineError);
  if (!machine)
    return emitError(module, machineError);

  // The kernels (pb-outline-kernels' private functions, internal in
  // LLVM) and the calls of them.
  llvm::StringSet<> kernelNames;
  for (auto func : module.getOps<LLVM::LLVMFuncOp>())
    if (!func.isExternal() && func.isPrivate())
      kernelNames.insert(func.getName());
  module.walk([&](LLVM::CallOp call) {
    if (std::optional<StringRef> callee = call.getCallee())
      binary.kernels += kernelNames.contains(*callee);
  });

  binary.estimate = takeKernelSites(module);

  TimingScope translateTimer = timing.nest("translation to LLVM IR");
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, "polyblocks");
  if (!llvmModule)
    return emitError(module, "translation to LLVM IR failed");
  llvmModule->setTargetTriple(machine->getTargetTriple());
  llvmModule->setDataLayout(machine->createDataLayout());
  binary.compiledKernels = mergeFunctions(*llvmModule, kernelNames);
  translateTimer.stop();

  // Each kernel optimized and compiled on its own, on every core.
  TimingScope compileTimer = timing.nest("optimization and code generation");
  llvm::Expected<std::vector<cpu::CompiledPart>> parts = cpu::compileInParts(
      *llvmModule, kernelNames,
      [&] {
        std::string error; // Reported by the part that gets no machine.
        return createTargetMachine(chip, error);
      },
      options.threads,
      {options.kernelCache,
       (cpu::kCodegenRecipe + llvm::Twine("\nLLVM ") + LLVM_VERSION_STRING +
        "\n" + chip.llvmTriple + "\n" + chip.llvmCPU + "\n" + chip.llvmFeatures)
           .str()});
  compileTimer.stop();
  if (!parts)
    return emitError(module, llvm::toString(parts.takeError()));
  describeParts(*parts, binary.timingDetail);

  TimingScope linkTimer = timing.nest("link");
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
  llvm::SmallString<128> soPath(dir), logPath(dir);
  llvm::sys::path::append(soPath, "kernel.so");
  llvm::sys::path::append(logPath, "link.log");
  llvm::SmallVector<std::string> objPaths;
  llvm::scope_exit cleanup([&] {
    for (const std::string &path : objPaths)
      llvm::sys::fs::remove(path);
    llvm::sys::fs::remove(soPath);
    llvm::sys::fs::remove(logPath);
    llvm::sys::fs::remove(dir);
  });
  for (auto [index, part] : llvm::enumerate(*parts)) {
    llvm::SmallString<128> path(dir);
    llvm::sys::path::append(path, "part" + llvm::Twine(index) + ".o");
    objPaths.push_back(path.str().str());
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    if (ec)
      return emitError(module, "cannot write " + path + ": " + ec.message());
    os << part.object;
  }
  std::string support = findSupportLibrary();
  if (!llvm::sys::fs::exists(support))
    return emitError(module, "the CPU support library " + support +
                                 " is missing (set POLYBLOCKS_CPU_SUPPORT_LIB "
                                 "to libPBCPUSupport.a)");
  std::string ompDir = llvm::sys::path::parent_path(PB_LIBOMP).str();
  llvm::SmallVector<llvm::StringRef> args = {
      linker, "-shared", "--no-undefined-version", "-o", soPath};
  for (const std::string &path : objPaths)
    args.push_back(path);
  args.append(
      {support, "-L", ompDir, "-rpath", ompDir, "-lomp", "-z", "noexecstack"});
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
  linkTimer.stop();
  return success();
}

void mlir::pb::cpu::registerCPUBackend() {
  static bool registered = [] {
    registerPBCPUPasses();
    PassPipelineRegistration<>(
        "pb-cpu-s4", "Stage S4 for CPUs: OpenMP threads, vectors, LLVM",
        [](OpPassManager &pm) {
          addCPUS4Pipeline(pm, ChipDesc(), PipelineOptions());
        });
    registerTargetBackend({Vendor::CPU, addCPUS4Pipeline, emitCPU});
    return true;
  }();
  (void)registered;
}
