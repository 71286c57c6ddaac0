//===- Emit.cpp - S5 for NVIDIA GPUs: PTX, cubin and the launch plan ------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The payload is one JSON document (format "nvidia-ptx+plan"):
//   {"arch": "sm_90a",
//    "modules": [{"name", "ptx", "cubin_base64" (when ptxas ran),
//                 "emulation_mlir" (when S4 kept it)}],
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
// (S4's pb-nvidia-keep-emulation-ir; the compile option emulation-ir=0
// leaves it out): a gpu.module of gpu, nvgpu and nvvm operations that
// pbExecutableLoadEmulated runs on the CPU.
//
//===----------------------------------------------------------------------===//

#include "pb/NVIDIA/NVIDIABackend.h"

#include "pb/Dialect/PBDialect.h"

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
// The launch plan
//===----------------------------------------------------------------------===//

/// Bytes of the shared-memory globals (address space 3) of a kernel module.
static int64_t getStaticSharedBytes(gpu::GPUModuleOp module) {
  int64_t bytes = 0;
  module.walk([&](LLVM::GlobalOp global) {
    if (global.getAddrSpace() == 3)
      bytes += DataLayout::closest(global).getTypeSize(global.getGlobalType());
  });
  return bytes;
}

static FailureOr<llvm::json::Array> getSizes(gpu::LaunchFuncOp launch,
                                             gpu::KernelDim3 dims) {
  llvm::json::Array sizes;
  for (Value size : {dims.x, dims.y, dims.z}) {
    APInt value;
    if (!matchPattern(size, m_ConstantInt(&value)))
      return reportError(launch, "launch sizes must be constants");
    sizes.push_back(value.getSExtValue());
  }
  return sizes;
}

static FailureOr<llvm::json::Object> describeEntry(func::FuncOp func) {
  llvm::json::Array buffers, launches;
  DenseMap<Value, int64_t> bufferIndex;
  for (BlockArgument arg : func.getArguments()) {
    if (!isa<MemRefType>(arg.getType()))
      return reportError(func, "entry arguments must be buffers");
    bufferIndex[arg] = buffers.size();
    buffers.push_back(llvm::json::Object{{"kind", "argument"},
                                         {"index", arg.getArgNumber()}});
  }
  SymbolTableCollection symbols;
  for (Operation &op : func.getBody().front()) {
    if (isa<memref::AllocOp, memref::AllocaOp>(op)) {
      auto type = cast<MemRefType>(op.getResult(0).getType());
      if (!type.hasStaticShape())
        return reportError(&op, "temporary buffers need static shapes");
      bufferIndex[op.getResult(0)] = buffers.size();
      int64_t bytes = type.getNumElements() *
                      llvm::divideCeil(type.getElementTypeBitWidth(), 8);
      buffers.push_back(
          llvm::json::Object{{"kind", "temporary"}, {"bytes", bytes}});
      continue;
    }
    if (auto launch = dyn_cast<gpu::LaunchFuncOp>(op)) {
      FailureOr<llvm::json::Array> grid =
          getSizes(launch, launch.getGridSizeOperandValues());
      FailureOr<llvm::json::Array> block =
          getSizes(launch, launch.getBlockSizeOperandValues());
      if (failed(grid) || failed(block))
        return failure();
      int64_t dynamicShared = 0;
      if (Value size = launch.getDynamicSharedMemorySize()) {
        APInt value;
        if (!matchPattern(size, m_ConstantInt(&value)))
          return reportError(launch, "dynamic shared memory must be constant");
        dynamicShared = value.getSExtValue();
      }
      llvm::json::Array args;
      for (Value operand : launch.getKernelOperands()) {
        auto it = bufferIndex.find(operand);
        if (it == bufferIndex.end())
          return reportError(launch, "a kernel argument is neither an entry "
                                     "argument nor a temporary buffer");
        args.push_back(it->second);
      }
      auto module = symbols.lookupNearestSymbolFrom<gpu::GPUModuleOp>(
          launch, launch.getKernelModuleName());
      if (!module)
        return reportError(launch, "kernel module not found");
      launches.push_back(llvm::json::Object{
          {"module", launch.getKernelModuleName().getValue()},
          {"kernel", launch.getKernelName().getValue()},
          {"grid", std::move(*grid)},
          {"block", std::move(*block)},
          {"dynamic_shared_memory_bytes", dynamicShared},
          {"static_shared_memory_bytes", getStaticSharedBytes(module)},
          {"args", std::move(args)}});
      continue;
    }
    if (isa<memref::DeallocOp, func::ReturnOp, memref::GetGlobalOp,
            ViewLikeOpInterface>(op) ||
        (op.getNumRegions() == 0 && isMemoryEffectFree(&op)))
      continue;
    return reportError(&op, "the host side of an entry may only allocate "
                            "buffers and launch kernels");
  }
  return llvm::json::Object{{"name", func.getName()},
                            {"buffers", std::move(buffers)},
                            {"launches", std::move(launches)}};
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
  llvm::SmallString<128> dir;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueDirectory("polyblocks-ptxas", dir))
    return reportError(op,
                       "cannot create a temporary directory: " + ec.message());
  llvm::SmallString<128> ptxPath(dir), cubinPath(dir), logPath(dir);
  llvm::sys::path::append(ptxPath, "kernel.ptx");
  llvm::sys::path::append(cubinPath, "kernel.cubin");
  llvm::sys::path::append(logPath, "ptxas.log");
  llvm::scope_exit cleanup([&] {
    llvm::sys::fs::remove(ptxPath);
    llvm::sys::fs::remove(cubinPath);
    llvm::sys::fs::remove(logPath);
    llvm::sys::fs::remove(dir);
  });
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(ptxPath, ec);
    if (ec)
      return reportError(op, "cannot write " + ptxPath + ": " + ec.message());
    os << ptx;
  }
  std::string archFlag = ("-arch=" + arch).str();
  llvm::SmallVector<llvm::StringRef> args = {ptxas,   archFlag, "-O3",    "-v",
                                             ptxPath, "-o",     cubinPath};
  std::optional<llvm::StringRef> redirects[] = {
      std::nullopt, llvm::StringRef(logPath), llvm::StringRef(logPath)};
  std::string errMsg;
  int rc = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects, 0, 0,
                                     &errMsg);
  if (rc != 0) {
    std::string log;
    if (auto buffer = llvm::MemoryBuffer::getFile(logPath))
      log = (*buffer)->getBuffer().str();
    return reportError(op, "ptxas (" + ptxas +
                               ") failed: " + (log.empty() ? errMsg : log));
  }
  // `ptxas -v`: "ptxas info    : Used 32 registers, ..." per kernel (one
  // kernel per module here).
  if (auto log = llvm::MemoryBuffer::getFile(logPath)) {
    llvm::StringRef text = (*log)->getBuffer();
    size_t used = text.find("Used ");
    int64_t count;
    if (used != llvm::StringRef::npos && !text.substr(used + 5)
                                              .take_while(llvm::isDigit)
                                              .getAsInteger(10, count))
      registers = count;
  }
  auto buffer = llvm::MemoryBuffer::getFile(cubinPath, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return reportError(op, "cannot read the cubin ptxas wrote");
  cubin = (*buffer)->getBuffer().str();
  return success();
}

//===----------------------------------------------------------------------===//
// The roofline estimate
//===----------------------------------------------------------------------===//

static int64_t getProduct(const llvm::json::Array *sizes) {
  int64_t product = 1;
  if (sizes)
    for (const llvm::json::Value &size : *sizes)
      product *= size.getAsInteger().value_or(1);
  return product;
}

/// Adds to every launch of the plan its estimate (pb/Transforms/Roofline.h:
/// the work S4 counted, the launch's shape, ptxas's registers when it ran)
/// and returns the estimate of every entry for the metadata: the launches,
/// their sum and the entry's roofline (its bytes and FLOPs at the chip's
/// peaks).
static llvm::json::Value
estimateEntries(const ChipDesc &chip, llvm::json::Array &entries,
                ArrayRef<SmallVector<std::optional<Work>>> works,
                const llvm::StringMap<int64_t> &registersByModule) {
  llvm::json::Array result;
  for (auto [entryValue, entryWorks] : llvm::zip(entries, works)) {
    llvm::json::Object &entry = *entryValue.getAsObject();
    llvm::json::Array *launches = entry.getArray("launches");
    llvm::json::Array described;
    Work total;
    double seconds = 0;
    bool complete = launches && launches->size() == entryWorks.size();
    for (size_t i = 0; launches && i < launches->size(); ++i) {
      llvm::json::Object &launch = *(*launches)[i].getAsObject();
      std::optional<Work> work =
          i < entryWorks.size() ? entryWorks[i] : std::nullopt;
      if (!work) {
        complete = false;
        continue;
      }
      LaunchShape shape;
      shape.blocks = getProduct(launch.getArray("grid"));
      shape.threadsPerBlock = getProduct(launch.getArray("block"));
      shape.sharedBytesPerBlock =
          launch.getInteger("dynamic_shared_memory_bytes").value_or(0) +
          launch.getInteger("static_shared_memory_bytes").value_or(0);
      llvm::StringRef moduleName =
          launch.getString("module").value_or(llvm::StringRef());
      if (auto it = registersByModule.find(moduleName);
          it != registersByModule.end())
        shape.registersPerThread = it->second;
      std::string why;
      FailureOr<LaunchEstimate> estimate =
          estimateLaunch(chip, *work, shape, why);
      if (failed(estimate)) {
        complete = false;
        continue;
      }
      llvm::json::Object object = toJSON(*work, shape, *estimate);
      launch["estimate"] = llvm::json::Object(object);
      object["kernel"] = launch.getString("kernel").value_or("").str();
      described.push_back(std::move(object));
      total += *work;
      seconds += estimate->seconds;
    }
    llvm::json::Object summary{
        {"name", entry.getString("name").value_or("").str()},
        {"launches", std::move(described)},
        {"complete", complete},
        {"estimate_us", seconds * 1e6},
        {"roofline_us", getRooflineSeconds(chip, total) * 1e6},
        {"bytes", total.bytes},
        {"flops", total.totalFlops()}};
    result.push_back(std::move(summary));
  }
  return llvm::json::Object{
      {"model", "roofline per launch from the chip's .td (docs/NVIDIA.md); "
                "not a measurement"},
      {"chip", chip.name},
      {"entries", std::move(result)}};
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
  llvm::json::Array entries;
  SmallVector<SmallVector<std::optional<Work>>> entryWorks;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal() || !func.isPublic())
      continue;
    FailureOr<llvm::json::Object> entry = describeEntry(func);
    if (failed(entry))
      return failure();
    entries.push_back(std::move(*entry));
    SmallVector<std::optional<Work>> &works = entryWorks.emplace_back();
    if (auto array =
            func->getAttrOfType<ArrayAttr>(PBDialect::kLaunchWorkAttrName))
      for (Attribute attr : array)
        works.push_back(Work::fromAttr(attr));
    func->removeAttr(PBDialect::kLaunchWorkAttrName);
  }

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

  llvm::json::Array modules;
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
      estimateEntries(chip, entries, entryWorks, registersByModule);
  llvm::json::Object payload{{"arch", chip.llvmCPU},
                             {"modules", std::move(modules)},
                             {"entries", std::move(entries)}};
  binary.payload =
      llvm::formatv("{0:2}", llvm::json::Value(std::move(payload))).str();
  binary.format = "nvidia-ptx+plan";
  return success();
}
