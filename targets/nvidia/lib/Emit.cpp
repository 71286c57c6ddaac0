//===- Emit.cpp - S5 for NVIDIA GPUs: PTX, cubin and the launch plan ------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The payload is one JSON document (format "nvidia-ptx+plan"):
//   {"arch": "sm_90a",
//    "modules": [{"name", "ptx", "cubin_base64" (when ptxas ran),
//                 "emulation_mlir" (when S4 kept it)} |
//                {"name", "tileir_bytecode_base64", "cubin_base64" (when
//                 tileiras ran)} (codegen=tile-ir, AssembleTileIR.cpp)],
//    "entries": [{"name",
//                 "buffers": [{"kind": "argument", "index"} |
//                             {"kind": "temporary", "bytes"}],
//                 "launches": [{"module", "kernel", "grid": [x, y, z],
//                               "block": [x, y, z],
//                               "dynamic_shared_memory_bytes",
//                               "static_shared_memory_bytes",
//                               "args": [buffer index, ...]}]}]}
// Buffers are numbered arguments first (inputs, then outputs, as the entry
// takes them), then temporaries in allocation order; launches run in order
// on one stream. Kernels take one bare device pointer per argument.
// "emulation_mlir" is the kernel module's MLIR text before NVVM lowering
// (S4's pb-gpu-keep-emulation-ir; the compile option emulation-ir=0
// leaves it out): a gpu.module of gpu, nvgpu and nvvm operations that
// pbExecutableLoadEmulated runs on the CPU.
//
//===----------------------------------------------------------------------===//

#include "pb/NVIDIA/NVIDIABackend.h"

#include "pb/Dialect/PBDialect.h"
#include "pb/GPU/ExternalTool.h"

#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/Base64.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <cstdlib>

using namespace mlir;
using namespace mlir::pb;

static LogicalResult reportError(Operation *op, const llvm::Twine &message) {
  return op->emitError() << "S5 (nvidia): " << message;
}

//===----------------------------------------------------------------------===//
// PTX and cubin
//===----------------------------------------------------------------------===//

/// ptxas: $POLYBLOCKS_PTXAS, else ptxas on PATH, else the CUDA toolkit's
/// default location; empty when none is found.
static std::string findPtxas() {
  if (const char *env = std::getenv("POLYBLOCKS_PTXAS"))
    return env;
  if (llvm::ErrorOr<std::string> path = llvm::sys::findProgramByName("ptxas"))
    return *path;
  const char *toolkit = "/usr/local/cuda/bin/ptxas";
  if (llvm::sys::fs::can_execute(toolkit))
    return toolkit;
  return "";
}

/// The CUDA toolkit whose libdevice kernels link against (math functions
/// such as sqrt and floor become __nv_* calls): $CUDA_HOME, $CUDA_PATH, the
/// directory above ptxas's, or /usr/local/cuda; empty when none has
/// nvvm/libdevice.
static std::string findToolkit(llvm::StringRef ptxas) {
  SmallVector<std::string> candidates;
  for (const char *var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char *env = std::getenv(var))
      candidates.push_back(env);
  if (!ptxas.empty())
    candidates.push_back(
        llvm::sys::path::parent_path(llvm::sys::path::parent_path(ptxas))
            .str());
  candidates.push_back("/usr/local/cuda");
  for (const std::string &dir : candidates) {
    llvm::SmallString<128> libdevice(dir);
    llvm::sys::path::append(libdevice, "nvvm", "libdevice");
    if (llvm::sys::fs::is_directory(libdevice))
      return dir;
  }
  return "";
}

/// Assembles `ptx` for `arch` with ptxas into `cubin`.
static LogicalResult assemble(Operation *op, llvm::StringRef ptxas,
                              llvm::StringRef arch, llvm::StringRef ptx,
                              std::string &cubin,
                              std::optional<int64_t> &registers) {
  std::string archFlag = ("-arch=" + arch).str();
  FailureOr<gpucommon::ToolOutput> run = gpucommon::runExternalTool(
      op, "S5 (nvidia): ", "ptxas", ptxas,
      {ptxas, archFlag, "-O3", "-v", "{input}", "-o", "{output}"}, "kernel.ptx",
      ptx, "kernel.cubin", "cubin");
  if (failed(run))
    return failure();
  // `ptxas -v`: "ptxas info    : Used 32 registers, ..." per kernel (one
  // kernel per module here).
  llvm::StringRef text = run->log;
  size_t used = text.find("Used ");
  int64_t count;
  if (used != llvm::StringRef::npos &&
      !text.substr(used + 5).take_while(llvm::isDigit).getAsInteger(10, count))
    registers = count;
  cubin = std::move(run->output);
  return success();
}

LogicalResult mlir::pb::nvidia::emitNVIDIA(ModuleOp module,
                                           const ChipDesc &chip,
                                           const EmitOptions &, TimingScope &,
                                           EmittedBinary &binary) {
  DialectRegistry registry;
  registerAllToLLVMIRTranslations(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  module.getContext()->appendDialectRegistry(registry);

  // The plan first: it names the kernel modules that serialization replaces.
  FailureOr<gpucommon::LaunchPlan> plan =
      gpucommon::describeLaunchPlan(module, "nvidia", [&](Operation *op) {
        return nvidia::describeTileIRLaunch(op, chip);
      });
  if (failed(plan))
    return failure();
  // Tile IR kernels (codegen=tile-ir) first: their cubins set their
  // launches' block sizes.
  llvm::json::Array modules;
  if (failed(nvidia::emitTileIRModules(module, chip, modules, plan->entries)))
    return failure();

  // The kernels' IR for the emulator, taken off the modules before they
  // are serialized (it is no attribute of their PTX).
  llvm::StringMap<std::string> emulationIR;
  for (auto gpuModule : module.getOps<gpu::GPUModuleOp>()) {
    if (auto text = gpuModule->getAttrOfType<StringAttr>(
            PBDialect::kEmulationIRAttrName))
      emulationIR[gpuModule.getName()] = text.getValue().str();
    gpuModule->removeAttr(PBDialect::kEmulationIRAttrName);
  }

  std::string ptxas = findPtxas();
  PassManager pm(module.getContext());
  GpuModuleToBinaryPassOptions options;
  options.compilationTarget = "isa";
  options.toolkitPath = findToolkit(ptxas);
  pm.addPass(createGpuModuleToBinaryPass(options));
  if (failed(pm.run(module)))
    return reportError(module.getOperation(), "PTX generation failed");

  llvm::StringMap<int64_t> registersByModule;
  for (auto gpuBinary : module.getOps<gpu::BinaryOp>()) {
    for (Attribute attr : gpuBinary.getObjects()) {
      auto object = cast<gpu::ObjectAttr>(attr);
      llvm::StringRef ptx = object.getObject().getValue();
      size_t external = ptx.find(".extern .func __nv_");
      if (external != llvm::StringRef::npos)
        return reportError(gpuBinary,
                           "the kernels call libdevice (" +
                               ptx.substr(external + 14).split('(').first +
                               ") but no CUDA toolkit with nvvm/libdevice "
                               "was found (set CUDA_HOME)");
      llvm::json::Object description{{"name", gpuBinary.getName()},
                                     {"ptx", ptx}};
      if (!ptxas.empty()) {
        std::string cubin;
        std::optional<int64_t> registers;
        if (failed(assemble(gpuBinary, ptxas, chip.llvmCPU, ptx, cubin,
                            registers)))
          return failure();
        if (registers)
          registersByModule[gpuBinary.getName()] = *registers;
        description["cubin_base64"] = llvm::encodeBase64(cubin);
      }
      if (auto it = emulationIR.find(gpuBinary.getName());
          it != emulationIR.end())
        description["emulation_mlir"] = std::move(it->second);
      modules.push_back(std::move(description));
    }
  }
  binary.estimate =
      gpucommon::estimateLaunchPlan(chip, *plan, registersByModule);
  llvm::json::Object payload{{"arch", chip.llvmCPU},
                             {"modules", std::move(modules)},
                             {"entries", std::move(plan->entries)}};
  binary.payload =
      llvm::formatv("{0:2}", llvm::json::Value(std::move(payload))).str();
  binary.format = "nvidia-ptx+plan";
  return success();
}
