//===- LaunchPlan.cpp - S5's launch plan and its estimate -----------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The host side of S4's output, an entry that allocates buffers and launches
// kernels, described as the launch plan every GPU runtime executes
// (GPUCommon.h), and the roofline estimate of each launch.
//
//===----------------------------------------------------------------------===//

#include "pb/GPU/GPUCommon.h"

#include "pb/Dialect/PBDialect.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;
using namespace mlir::pb;

static LogicalResult reportError(llvm::StringRef vendor, Operation *op,
                                 const llvm::Twine &message) {
  return op->emitError() << "S5 (" << vendor << "): " << message;
}

/// Bytes of the shared-memory globals (address space 3) of a kernel module.
static int64_t getStaticSharedBytes(gpu::GPUModuleOp module) {
  int64_t bytes = 0;
  module.walk([&](LLVM::GlobalOp global) {
    if (global.getAddrSpace() == 3)
      bytes += DataLayout::closest(global).getTypeSize(global.getGlobalType());
  });
  return bytes;
}

static FailureOr<llvm::json::Array> getSizes(llvm::StringRef vendor,
                                             gpu::LaunchFuncOp launch,
                                             gpu::KernelDim3 dims) {
  llvm::json::Array sizes;
  for (Value size : {dims.x, dims.y, dims.z}) {
    APInt value;
    if (!matchPattern(size, m_ConstantInt(&value)))
      return reportError(vendor, launch, "launch sizes must be constants");
    sizes.push_back(value.getSExtValue());
  }
  return sizes;
}

static FailureOr<llvm::json::Object>
describeEntry(llvm::StringRef vendor, func::FuncOp func,
              const gpucommon::DescribeKernelLaunch &describeKernelLaunch) {
  llvm::json::Array buffers, launches;
  DenseMap<Value, int64_t> bufferIndex;
  for (BlockArgument arg : func.getArguments()) {
    if (!isa<MemRefType>(arg.getType()))
      return reportError(vendor, func, "entry arguments must be buffers");
    bufferIndex[arg] = buffers.size();
    buffers.push_back(llvm::json::Object{{"kind", "argument"},
                                         {"index", arg.getArgNumber()}});
  }
  SymbolTableCollection symbols;
  for (Operation &op : func.getBody().front()) {
    if (isa<memref::AllocOp, memref::AllocaOp>(op)) {
      auto type = cast<MemRefType>(op.getResult(0).getType());
      if (!type.hasStaticShape())
        return reportError(vendor, &op, "temporary buffers need static shapes");
      bufferIndex[op.getResult(0)] = buffers.size();
      int64_t bytes = type.getNumElements() *
                      llvm::divideCeil(type.getElementTypeBitWidth(), 8);
      buffers.push_back(
          llvm::json::Object{{"kind", "temporary"}, {"bytes", bytes}});
      continue;
    }
    if (auto launch = dyn_cast<gpu::LaunchFuncOp>(op)) {
      FailureOr<llvm::json::Array> grid =
          getSizes(vendor, launch, launch.getGridSizeOperandValues());
      FailureOr<llvm::json::Array> block =
          getSizes(vendor, launch, launch.getBlockSizeOperandValues());
      if (failed(grid) || failed(block))
        return failure();
      int64_t dynamicShared = 0;
      if (Value size = launch.getDynamicSharedMemorySize()) {
        APInt value;
        if (!matchPattern(size, m_ConstantInt(&value)))
          return reportError(vendor, launch,
                             "dynamic shared memory must be constant");
        dynamicShared = value.getSExtValue();
      }
      llvm::json::Array args;
      for (Value operand : launch.getKernelOperands()) {
        auto it = bufferIndex.find(operand);
        if (it == bufferIndex.end())
          return reportError(vendor, launch,
                             "a kernel argument is neither an entry "
                             "argument nor a temporary buffer");
        args.push_back(it->second);
      }
      auto module = symbols.lookupNearestSymbolFrom<gpu::GPUModuleOp>(
          launch, launch.getKernelModuleName());
      if (!module)
        return reportError(vendor, launch, "kernel module not found");
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
    if (op.hasAttr(PBDialect::kKernelLaunchAttrName) && describeKernelLaunch) {
      FailureOr<llvm::json::Object> launch = describeKernelLaunch(&op);
      if (failed(launch))
        return failure();
      llvm::json::Array args;
      for (Value operand : op.getOperands()) {
        auto it = bufferIndex.find(operand);
        if (it == bufferIndex.end())
          return reportError(vendor, &op,
                             "a kernel argument is neither an entry "
                             "argument nor a temporary buffer");
        args.push_back(it->second);
      }
      (*launch)["args"] = std::move(args);
      launches.push_back(std::move(*launch));
      continue;
    }
    if (isa<memref::DeallocOp, func::ReturnOp, memref::GetGlobalOp,
            ViewLikeOpInterface>(op) ||
        (op.getNumRegions() == 0 && isMemoryEffectFree(&op)))
      continue;
    return reportError(vendor, &op,
                       "the host side of an entry may only allocate "
                       "buffers and launch kernels");
  }
  return llvm::json::Object{{"name", func.getName()},
                            {"buffers", std::move(buffers)},
                            {"launches", std::move(launches)}};
}

FailureOr<gpucommon::LaunchPlan> gpucommon::describeLaunchPlan(
    ModuleOp module, llvm::StringRef vendor,
    const DescribeKernelLaunch &describeKernelLaunch) {
  LaunchPlan plan;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal() || !func.isPublic())
      continue;
    FailureOr<llvm::json::Object> entry =
        describeEntry(vendor, func, describeKernelLaunch);
    if (failed(entry))
      return failure();
    plan.entries.push_back(std::move(*entry));
    SmallVector<std::optional<Work>> &works = plan.works.emplace_back();
    SmallVector<std::string> &locations = plan.locations.emplace_back();
    if (auto array =
            func->getAttrOfType<ArrayAttr>(PBDialect::kLaunchWorkAttrName))
      for (Attribute attr : array) {
        works.push_back(Work::fromAttr(attr));
        auto dict = dyn_cast<DictionaryAttr>(attr);
        auto loc = dict ? dict.getAs<StringAttr>("loc") : StringAttr();
        locations.push_back(loc ? loc.getValue().str() : "");
      }
    func->removeAttr(PBDialect::kLaunchWorkAttrName);
  }
  return plan;
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
llvm::json::Value gpucommon::estimateLaunchPlan(
    const ChipDesc &chip, LaunchPlan &plan,
    const llvm::StringMap<int64_t> &registersByModule) {
  llvm::json::Array result;
  for (auto [entryValue, entryWorks, entryLocations] :
       llvm::zip(plan.entries, plan.works, plan.locations)) {
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
      if (i < entryLocations.size() && !entryLocations[i].empty())
        object["loc"] = entryLocations[i];
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
