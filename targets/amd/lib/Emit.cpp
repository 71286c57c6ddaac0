//===- Emit.cpp - S5 for AMD GPUs: code objects and the launch plan -------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The payload is one JSON document (format "amd-hsaco+plan"):
//   {"arch": "gfx942",
//    "modules": [{"name", "hsaco_base64",
//                 "emulation_mlir" (when S4 kept it)}],
//    "entries": [...]}
// with the entries of the launch plan every GPU back end writes
// (pb/GPU/GPUCommon.h): buffers, then launches in order with their grid,
// block, shared-memory bytes and arguments. Each module is an AMDGPU code
// object (an ELF shared object for amdgcn-amd-amdhsa, code object version
// 5) holding one kernel that takes one bare device pointer per argument:
// its LLVM IR from the ROCDL dialect, the ROCm device libraries' functions
// it calls (ocml, ockl) linked in, LLVM's O3 pipeline and the AMDGPU back
// end for the chip, then ld.lld.
//
//===----------------------------------------------------------------------===//

#include "pb/AMD/AMDBackend.h"

#include "pb/Dialect/PBDialect.h"
#include "pb/GPU/ExternalTool.h"
#include "pb/GPU/GPUCommon.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Linker/Linker.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/Base64.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"

#include <cstdlib>

using namespace mlir;
using namespace mlir::pb;

static LogicalResult reportError(Operation *op, const llvm::Twine &message) {
  return op->emitError() << "S5 (amd): " << message;
}

//===----------------------------------------------------------------------===//
// Tools and libraries
//===----------------------------------------------------------------------===//

/// ld.lld: $POLYBLOCKS_LD, else the one found when PolyBlocks was built,
/// else ld.lld on PATH; empty when none is found.
static std::string findLinker() {
  if (const char *env = std::getenv("POLYBLOCKS_LD"))
    return env;
  if (llvm::sys::fs::can_execute(PB_LD_LLD))
    return PB_LD_LLD;
  if (llvm::ErrorOr<std::string> path = llvm::sys::findProgramByName("ld.lld"))
    return *path;
  return "";
}

/// The folder of the ROCm device libraries' bitcode (ocml.bc, ockl.bc):
/// $POLYBLOCKS_ROCM_DEVICE_LIBS, else amdgcn/bitcode under $ROCM_PATH (or
/// its lib/), Debian's rocm-device-libs or /opt/rocm; empty when none has
/// ocml.bc.
static std::string findDeviceLibs() {
  SmallVector<std::string> candidates;
  if (const char *env = std::getenv("POLYBLOCKS_ROCM_DEVICE_LIBS"))
    candidates.push_back(env);
  if (const char *rocm = std::getenv("ROCM_PATH")) {
    candidates.push_back((llvm::Twine(rocm) + "/amdgcn/bitcode").str());
    candidates.push_back((llvm::Twine(rocm) + "/lib/amdgcn/bitcode").str());
  }
  candidates.push_back("/usr/lib/x86_64-linux-gnu/amdgcn/bitcode");
  candidates.push_back("/opt/rocm/amdgcn/bitcode");
  for (const std::string &dir : candidates) {
    llvm::SmallString<128> ocml(dir);
    llvm::sys::path::append(ocml, "ocml.bc");
    if (llvm::sys::fs::exists(ocml))
      return dir;
  }
  return "";
}

static std::unique_ptr<llvm::TargetMachine>
createTargetMachine(const ChipDesc &chip, std::string &error) {
  static bool initialized = [] {
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTarget();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUAsmPrinter();
    LLVMInitializeAMDGPUAsmParser();
    return true;
  }();
  (void)initialized;
  llvm::Triple triple(chip.llvmTriple);
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) {
    error =
        ("no LLVM target for triple '" + chip.llvmTriple + "': " + error).str();
    return nullptr;
  }
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, chip.llvmCPU, chip.llvmFeatures, llvm::TargetOptions(),
      llvm::Reloc::PIC_, std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (!machine)
    error = ("cannot create a target machine for '" + chip.llvmCPU + "'").str();
  return machine;
}

//===----------------------------------------------------------------------===//
// One kernel module
//===----------------------------------------------------------------------===//

/// The ISA version the device libraries test (`__oclc_ISA_version`):
/// gfx90a -> 9010, gfx942 -> 9402 (major * 1000 + minor * 100 + stepping,
/// the last two hexadecimal digits of the name).
static std::optional<int> getISAVersion(llvm::StringRef cpu) {
  if (!cpu.consume_front("gfx") || cpu.size() < 3)
    return std::nullopt;
  unsigned major, minor, stepping;
  if (cpu.drop_back(2).getAsInteger(10, major) ||
      cpu.substr(cpu.size() - 2, 1).getAsInteger(16, minor) ||
      cpu.substr(cpu.size() - 1).getAsInteger(16, stepping))
    return std::nullopt;
  return major * 1000 + minor * 100 + stepping;
}

/// Defines the device libraries' control constants (what the
/// oclc_*.bc files hold) for `chip`: IEEE semantics (no finite-only, no
/// unsafe math, denormals kept), correctly rounded sqrt, the chip's
/// wavefront size, ISA version and code object version 5.
static void addControlConstants(llvm::Module &module, int isaVersion,
                                bool wave64) {
  auto define = [&](llvm::StringRef name, llvm::Type *type, uint64_t value) {
    if (auto *existing = module.getNamedGlobal(name))
      if (!existing->isDeclaration())
        return;
    auto *constant = llvm::ConstantInt::get(type, value);
    auto *global = module.getNamedGlobal(name);
    if (!global)
      global = new llvm::GlobalVariable(
          module, type, /*isConstant=*/true,
          llvm::GlobalValue::LinkOnceODRLinkage, constant, name, nullptr,
          llvm::GlobalValue::NotThreadLocal, /*AddressSpace=*/4);
    global->setInitializer(constant);
    global->setLinkage(llvm::GlobalValue::LinkOnceODRLinkage);
    global->setConstant(true);
    global->setVisibility(llvm::GlobalValue::HiddenVisibility);
  };
  llvm::LLVMContext &context = module.getContext();
  llvm::Type *i8 = llvm::Type::getInt8Ty(context);
  llvm::Type *i32 = llvm::Type::getInt32Ty(context);
  define("__oclc_finite_only_opt", i8, 0);
  define("__oclc_unsafe_math_opt", i8, 0);
  define("__oclc_daz_opt", i8, 0);
  define("__oclc_correctly_rounded_sqrt32", i8, 1);
  define("__oclc_wavefrontsize64", i8, wave64 ? 1 : 0);
  define("__oclc_ISA_version", i32, isaVersion);
  define("__oclc_ABI_version", i32, 500);
}

/// Links into `module` the definitions it needs from the device libraries
/// (ocml, then ockl, which ocml's functions call).
static LogicalResult linkDeviceLibs(Operation *op, llvm::Module &module,
                                    llvm::StringRef dir) {
  for (llvm::StringRef name : {"ocml.bc", "ockl.bc"}) {
    llvm::SmallString<128> path(dir);
    llvm::sys::path::append(path, name);
    auto buffer = llvm::MemoryBuffer::getFile(path);
    if (!buffer)
      return reportError(op, "cannot read " + path);
    auto library = llvm::parseBitcodeFile((*buffer)->getMemBufferRef(),
                                          module.getContext());
    if (!library)
      return reportError(op, "cannot parse " + path + ": " +
                                 llvm::toString(library.takeError()));
    (*library)->setTargetTriple(module.getTargetTriple());
    (*library)->setDataLayout(module.getDataLayout());
    if (llvm::Linker::linkModules(module, std::move(*library),
                                  llvm::Linker::LinkOnlyNeeded))
      return reportError(op, "cannot link " + path);
  }
  return success();
}

static bool callsDeviceLibs(const llvm::Module &module) {
  for (const llvm::Function &function : module)
    if (function.isDeclaration() &&
        (function.getName().starts_with("__ocml_") ||
         function.getName().starts_with("__ockl_")))
      return true;
  return false;
}

static void optimize(llvm::Module &module, llvm::TargetMachine &machine) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder builder(&machine);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3)
      .run(module, mam);
}

/// Links `object` (an AMDGPU relocatable ELF) into a code object with
/// ld.lld.
static LogicalResult linkCodeObject(Operation *op, llvm::StringRef lld,
                                    llvm::StringRef object,
                                    std::string &codeObject) {
  FailureOr<gpucommon::ToolOutput> run = gpucommon::runExternalTool(
      op, "S5 (amd): ", "ld.lld", lld,
      {lld, "-flavor", "gnu", "-shared", "{input}", "-o", "{output}"},
      "kernel.o", object, "kernel.hsaco", "code object");
  if (failed(run))
    return failure();
  codeObject = std::move(run->output);
  return success();
}

/// The code object of one kernel module.
static LogicalResult compileModule(gpu::GPUModuleOp gpuModule,
                                   const ChipDesc &chip,
                                   llvm::TargetMachine &machine,
                                   llvm::StringRef lld,
                                   std::string &codeObject) {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module =
      translateModuleToLLVMIR(gpuModule, context, gpuModule.getName());
  if (!module)
    return reportError(gpuModule, "translation to LLVM IR failed");
  module->setTargetTriple(machine.getTargetTriple());
  module->setDataLayout(machine.createDataLayout());
  module->addModuleFlag(llvm::Module::Error, "amdhsa_code_object_version", 500);
  if (callsDeviceLibs(*module)) {
    std::string dir = findDeviceLibs();
    if (dir.empty())
      return reportError(gpuModule,
                         "the kernels call the ROCm device libraries (ocml, "
                         "ockl) but none were found (install "
                         "rocm-device-libs or set ROCM_PATH)");
    if (failed(linkDeviceLibs(gpuModule, *module, dir)))
      return failure();
  }
  std::optional<int> isa = getISAVersion(chip.llvmCPU);
  if (!isa)
    return reportError(gpuModule, "cannot read an ISA version from the "
                                  "chip's LLVMCPU '" +
                                      chip.llvmCPU + "'");
  const ComputeLevelDesc *lane = chip.getComputeLevel(ComputeLevelKind::Lane);
  addControlConstants(*module, *isa, lane && lane->fixedCountPerParent == 64);
  // Only the kernels are entry points: the libraries' functions may be
  // inlined and dropped.
  for (llvm::Function &function : *module)
    if (!function.isDeclaration() &&
        function.getCallingConv() != llvm::CallingConv::AMDGPU_KERNEL)
      function.setLinkage(llvm::GlobalValue::InternalLinkage);
  optimize(*module, machine);
  llvm::SmallString<0> object;
  {
    llvm::raw_svector_ostream stream(object);
    llvm::legacy::PassManager codegen;
    if (machine.addPassesToEmitFile(codegen, stream, nullptr,
                                    llvm::CodeGenFileType::ObjectFile))
      return reportError(gpuModule, "the AMDGPU target cannot emit objects");
    codegen.run(*module);
  }
  return linkCodeObject(gpuModule, lld, object.str(), codeObject);
}

LogicalResult mlir::pb::amd::emitAMD(ModuleOp module, const ChipDesc &chip,
                                     const EmitOptions &, TimingScope &,
                                     EmittedBinary &binary) {
  DialectRegistry registry;
  registerAllToLLVMIRTranslations(registry);
  module.getContext()->appendDialectRegistry(registry);

  FailureOr<gpucommon::LaunchPlan> plan =
      gpucommon::describeLaunchPlan(module, "amd");
  if (failed(plan))
    return failure();

  std::string lld = findLinker();
  if (lld.empty())
    return reportError(module, "ld.lld was not found (install lld or set "
                               "POLYBLOCKS_LD)");
  std::string error;
  std::unique_ptr<llvm::TargetMachine> machine =
      createTargetMachine(chip, error);
  if (!machine)
    return reportError(module, error);

  llvm::json::Array modules;
  for (auto gpuModule : module.getOps<gpu::GPUModuleOp>()) {
    // The kernel's IR for the emulator (S4's pb-gpu-keep-emulation-ir) is
    // no part of its code object.
    auto emulationIR =
        gpuModule->getAttrOfType<StringAttr>(PBDialect::kEmulationIRAttrName);
    gpuModule->removeAttr(PBDialect::kEmulationIRAttrName);
    std::string codeObject;
    if (failed(compileModule(gpuModule, chip, *machine, lld, codeObject)))
      return failure();
    llvm::json::Object description{
        {"name", gpuModule.getName()},
        {"hsaco_base64", llvm::encodeBase64(codeObject)}};
    if (emulationIR)
      description["emulation_mlir"] = emulationIR.getValue().str();
    modules.push_back(std::move(description));
  }
  binary.estimate = gpucommon::estimateLaunchPlan(chip, *plan, {});
  llvm::json::Object payload{{"arch", chip.llvmCPU},
                             {"modules", std::move(modules)},
                             {"entries", std::move(plan->entries)}};
  binary.payload =
      llvm::formatv("{0:2}", llvm::json::Value(std::move(payload))).str();
  binary.format = "amd-hsaco+plan";
  return success();
}
