//===- ParallelCodegen.cpp - S5 per kernel on a thread pool
//----------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// S5 of a whole model was one LLVM module optimized and compiled on one
// thread. Here each kernel (a function of pb-outline-kernels, with the
// functions only it uses: its OpenMP-outlined bodies) is a part of its own,
// and the rest (entries, wrappers, globals) one more. Each part travels as
// bitcode into an LLVMContext of its own, so that the parts are optimized
// and compiled concurrently; the objects are linked in the parts' order.
// The parts depend only on the module, never on the number of threads, and
// so neither do the objects.
//
//===----------------------------------------------------------------------===//

#include "ParallelCodegen.h"

#include "pb/Support/OutputFile.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"
#include "llvm/Transforms/Utils/Cloning.h"

#include <chrono>

using namespace llvm;
using namespace mlir::pb::cpu;

/// Local constants up to this size are copied into every part that reads
/// them (so that loads from them still fold) instead of shared.
static constexpr uint64_t kCopiedConstantBytes = 4096;

namespace {
/// Which part each global's definition goes to: 0 is the rest, 1.. the
/// kernels in module order.
class Partition {
public:
  Partition(Module &module, const StringSet<> &kernels) : module(module) {
    for (Function &function : module)
      if (!function.isDeclaration() && kernels.contains(function.getName()))
        partOf[&function] = numParts++;
    for (Function &function : module)
      if (!function.isDeclaration())
        (void)getPart(&function);
    for (GlobalVariable &global : module.globals())
      if (!global.isDeclaration())
        partOf[&global] = isCopied(global) ? kCopied : 0;
  }

  unsigned size() const { return numParts; }

  /// Whether `global` is defined in `part` (copies are defined in all).
  bool isDefinedIn(const GlobalValue *global, unsigned part) const {
    auto it = partOf.find(global);
    if (it == partOf.end())
      return part == 0; // Aliases, ifuncs: none today; keep them whole.
    return it->second == kCopied || it->second == part;
  }

  /// Gives every local that is not copied hidden global linkage, so that
  /// the parts can refer to one another's.
  void externalizeLocals() {
    auto externalize = [&](GlobalValue &global) {
      if (!global.hasLocalLinkage() || global.isDeclaration())
        return;
      auto it = partOf.find(&global);
      if (it != partOf.end() && it->second == kCopied)
        return;
      if (!global.hasName())
        global.setName("__pb_local");
      global.setLinkage(GlobalValue::ExternalLinkage);
      global.setVisibility(GlobalValue::HiddenVisibility);
    };
    for (Function &function : module)
      externalize(function);
    for (GlobalVariable &global : module.globals())
      externalize(global);
  }

private:
  static constexpr unsigned kCopied = ~0u;
  static constexpr unsigned kVisiting = ~0u - 1;

  bool isCopied(const GlobalVariable &global) const {
    return global.hasLocalLinkage() && global.isConstant() &&
           module.getDataLayout().getTypeAllocSize(global.getValueType()) <=
               kCopiedConstantBytes;
  }

  /// A function that is no kernel goes with the one kernel whose code uses
  /// it, else to the rest.
  unsigned getPart(Function *function) {
    auto [it, inserted] = partOf.try_emplace(function, kVisiting);
    if (!inserted)
      return it->second == kVisiting ? 0 : it->second;
    std::optional<unsigned> owner;
    for (User *user : function->users()) {
      auto *inst = dyn_cast<Instruction>(user);
      unsigned userPart = inst ? getPart(inst->getFunction()) : 0;
      if (owner && *owner != userPart) {
        owner = 0;
        break;
      }
      owner = userPart;
    }
    partOf[function] = owner.value_or(0);
    return partOf[function];
  }

  Module &module;
  DenseMap<const GlobalValue *, unsigned> partOf;
  unsigned numParts = 1;
};
} // namespace

/// O3 without the loop vectorizer, the SLP vectorizer and the unroller: S3
/// has already vectorized and register-tiled the code. (Without them S5 of
/// resnet18 went from about 18 s to 5 s, with run-time changes within the
/// machine's run-to-run noise.)
static void optimize(Module &module, TargetMachine &machine) {
  PipelineTuningOptions tuning;
  tuning.LoopVectorization = false;
  tuning.SLPVectorization = false;
  tuning.LoopUnrolling = false;
  LoopAnalysisManager lam;
  FunctionAnalysisManager fam;
  CGSCCAnalysisManager cgam;
  ModuleAnalysisManager mam;
  PassBuilder builder(&machine, tuning);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  ModulePassManager mpm =
      builder.buildPerModuleDefaultPipeline(OptimizationLevel::O3);
  mpm.run(module, mam);
}

/// Optimizes and compiles one part given as bitcode, in a context of its
/// own; returns the object or an error message.
static Expected<std::string> compilePart(StringRef bitcode,
                                         const TargetMachineFactory &create) {
  LLVMContext context;
  Expected<std::unique_ptr<Module>> module =
      parseBitcodeFile(MemoryBufferRef(bitcode, "part"), context);
  if (!module)
    return module.takeError();
  std::unique_ptr<TargetMachine> machine = create();
  if (!machine)
    return createStringError("cannot create a target machine");
  optimize(**module, *machine);
  SmallString<0> object;
  raw_svector_ostream stream(object);
  legacy::PassManager codegen;
  if (machine->addPassesToEmitFile(codegen, stream, nullptr,
                                   CodeGenFileType::ObjectFile))
    return createStringError("the target cannot emit object files");
  codegen.run(**module);
  return std::string(object.str());
}

/// Erases the declarations and copied constants `module` does not use, so
/// that a part's bitcode, and so its cache key, depends on its own code
/// only (not on the other kernels of the model).
static void dropUnused(Module &module) {
  SmallVector<GlobalValue *> unused;
  for (Function &function : module)
    if (function.isDeclaration() && function.use_empty())
      unused.push_back(&function);
  for (GlobalVariable &global : module.globals())
    if ((global.isDeclaration() || global.hasLocalLinkage()) &&
        global.use_empty())
      unused.push_back(&global);
  for (GlobalValue *global : unused)
    global->eraseFromParent();
}

/// A cache file: magic, the object's size (u64, little-endian), the object,
/// and a SHA-256 of everything before it.
static constexpr StringLiteral kCacheMagic("PBKOBJ1\n");

static std::string getCachePath(const KernelCache &cache, StringRef bitcode) {
  SHA256 hasher;
  hasher.update(cache.fingerprint);
  hasher.update(StringRef("\0", 1));
  hasher.update(bitcode);
  SmallString<128> path(cache.directory);
  sys::path::append(path, toHex(hasher.final(), /*LowerCase=*/true) + ".o");
  return path.str().str();
}

/// The object in the cache file at `path`, or nothing if the file is
/// missing or not whole.
static std::optional<std::string> readCached(StringRef path) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> file =
      MemoryBuffer::getFile(path, /*IsText=*/false,
                            /*RequiresNullTerminator=*/false);
  if (!file)
    return std::nullopt;
  StringRef bytes = (*file)->getBuffer();
  constexpr size_t kDigest = 32, kHeader = kCacheMagic.size() + 8;
  if (bytes.size() < kHeader + kDigest || !bytes.starts_with(kCacheMagic))
    return std::nullopt;
  uint64_t size = support::endian::read64le(bytes.data() + kCacheMagic.size());
  if (size != bytes.size() - kHeader - kDigest)
    return std::nullopt;
  std::array<uint8_t, 32> digest =
      SHA256::hash(arrayRefFromStringRef(bytes.drop_back(kDigest)));
  if (StringRef(reinterpret_cast<const char *>(digest.data()), kDigest) !=
      bytes.take_back(kDigest))
    return std::nullopt;
  return bytes.substr(kHeader, size).str();
}

/// Stores `object` at `path` through pb::OutputFile (a temporary file and a
/// rename); a failure leaves the cache as it was (the cache is an
/// optimization).
static void writeCached(StringRef path, StringRef object) {
  std::string bytes = kCacheMagic.str();
  char size[8];
  support::endian::write64le(size, object.size());
  bytes.append(size, 8);
  bytes += object;
  std::array<uint8_t, 32> digest = SHA256::hash(arrayRefFromStringRef(bytes));
  bytes.append(reinterpret_cast<const char *>(digest.data()), digest.size());
  consumeError(mlir::pb::writeOutputFile(path, bytes));
}

Expected<std::vector<CompiledPart>>
mlir::pb::cpu::compileInParts(Module &module, const StringSet<> &kernels,
                              const TargetMachineFactory &createMachine,
                              unsigned threads, const KernelCache &cache) {
  Partition partition(module, kernels);
  partition.externalizeLocals();

  // The parts as bitcode, cut here on one thread (the module's context is
  // not shared across threads).
  std::vector<CompiledPart> parts(partition.size());
  std::vector<std::string> bitcode(partition.size());
  for (unsigned part = 0; part < partition.size(); ++part) {
    ValueToValueMapTy mapping;
    std::unique_ptr<Module> copy =
        CloneModule(module, mapping, [&](const GlobalValue *global) {
          return partition.isDefinedIn(global, part);
        });
    for (Function &function : *copy)
      if (!function.isDeclaration() && kernels.contains(function.getName()))
        parts[part].kernel = function.getName().str();
    dropUnused(*copy);
    raw_string_ostream os(bitcode[part]);
    WriteBitcodeToFile(*copy, os);
  }

  bool useCache =
      !cache.directory.empty() && !sys::fs::create_directories(cache.directory);
  std::vector<std::string> errors(parts.size());
  auto run = [&](unsigned part) {
    auto start = std::chrono::steady_clock::now();
    std::string path;
    if (useCache) {
      path = getCachePath(cache, bitcode[part]);
      if (std::optional<std::string> object = readCached(path)) {
        parts[part].object = std::move(*object);
        parts[part].cached = true;
        parts[part].seconds = std::chrono::duration<double>(
                                  std::chrono::steady_clock::now() - start)
                                  .count();
        return;
      }
    }
    Expected<std::string> object = compilePart(bitcode[part], createMachine);
    parts[part].seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    if (object) {
      parts[part].object = std::move(*object);
      if (useCache)
        writeCached(path, parts[part].object);
    } else
      errors[part] = toString(object.takeError());
  };
  ThreadPoolStrategy strategy = hardware_concurrency(threads);
  if (strategy.compute_thread_count() <= 1 || parts.size() == 1) {
    for (unsigned part = 0; part < parts.size(); ++part)
      run(part);
  } else {
    DefaultThreadPool pool(strategy);
    // The largest parts first, so that no long part starts last.
    std::vector<unsigned> order(parts.size());
    for (unsigned part = 0; part < parts.size(); ++part)
      order[part] = part;
    llvm::stable_sort(order, [&](unsigned a, unsigned b) {
      return bitcode[a].size() > bitcode[b].size();
    });
    for (unsigned part : order)
      pool.async([&run, part] { run(part); });
    pool.wait();
  }
  for (unsigned part = 0; part < parts.size(); ++part)
    if (!errors[part].empty())
      return createStringError(
          "part " + Twine(part) +
          (parts[part].kernel.empty() ? "" : " (" + parts[part].kernel + ")") +
          ": " + errors[part]);
  return parts;
}
