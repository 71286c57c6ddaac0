//===- GpuPayload.cpp - Reading the payloads of GPU artifacts -------------===//
//===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The payload of a GPU artifact (targets/nvidia/lib/Emit.cpp and
// targets/amd/lib/Emit.cpp state their schemas: kernel modules as PTX and
// cubins or as AMDGPU code objects, and the same launch plans) is read and
// checked once here, for its loaders: the CUDA executable
// (CudaExecutable.cpp), the HIP one (HipExecutable.cpp) and the emulated one
// (EmulatedExecutable.cpp). Every index, size and name a plan refers to is
// checked before either loader uses it, so that neither reads out of range
// on a damaged or hand-written payload.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Base64.h"
#include "llvm/Support/JSON.h"

using namespace mlir::pb::runtime;

static bool getUnsigned3(const llvm::json::Array *array, unsigned out[3]) {
  if (!array || array->size() != 3)
    return false;
  for (int i = 0; i < 3; ++i) {
    std::optional<int64_t> value = (*array)[i].getAsInteger();
    if (!value || *value < 0 || *value > UINT32_MAX)
      return false;
    out[i] = static_cast<unsigned>(*value);
  }
  return true;
}

/// Bytes of a {"shape", "dtype"} of the metadata (checked when the artifact
/// was loaded), 0 when it is malformed.
static size_t getTensorBytes(const llvm::json::Value &value) {
  const llvm::json::Object *tensor = value.getAsObject();
  std::optional<llvm::StringRef> dtype =
      tensor ? tensor->getString("dtype") : std::nullopt;
  const llvm::json::Array *shape = tensor ? tensor->getArray("shape") : nullptr;
  if (!dtype || !shape)
    return 0;
  size_t bytes = getDTypeBytes(*dtype);
  for (const llvm::json::Value &dim : *shape)
    bytes *= std::max<int64_t>(dim.getAsInteger().value_or(0), 0);
  return bytes;
}

pb_status *mlir::pb::runtime::parseGpuPayload(const pb_artifact &artifact,
                                              const llvm::json::Array &entries,
                                              GpuPayload &out) {
  llvm::Expected<llvm::json::Value> payload =
      llvm::json::parse(artifact.payload);
  if (!payload)
    return makeStatus(PB_STATUS_RUNTIME_ERROR,
                      "the GPU artifact's payload is not JSON: " +
                          llvm::toString(payload.takeError()));
  const llvm::json::Object *root = payload->getAsObject();
  const llvm::json::Array *modules = root ? root->getArray("modules") : nullptr;
  const llvm::json::Array *plans = root ? root->getArray("entries") : nullptr;
  std::optional<llvm::StringRef> arch =
      root ? root->getString("arch") : std::nullopt;
  if (!modules || !plans || !arch)
    return makeStatus(PB_STATUS_RUNTIME_ERROR,
                      "the GPU artifact's payload lacks 'arch', 'modules' "
                      "or 'entries'");
  out.arch = arch->str();

  llvm::StringSet<> moduleNames;
  for (const llvm::json::Value &value : *modules) {
    const llvm::json::Object *module = value.getAsObject();
    std::optional<llvm::StringRef> name =
        module ? module->getString("name") : std::nullopt;
    std::optional<llvm::StringRef> ptx =
        module ? module->getString("ptx") : std::nullopt;
    // AMD artifacts (amd-hsaco+plan, same plan) carry code objects instead;
    // the emulator reads their kernels' IR only.
    std::optional<llvm::StringRef> hsaco =
        module ? module->getString("hsaco_base64") : std::nullopt;
    // Tile IR modules carry their bytecode (and a cubin when tileiras ran).
    std::optional<llvm::StringRef> tileIR =
        module ? module->getString("tileir_bytecode_base64") : std::nullopt;
    if (!name || (!ptx && !hsaco && !tileIR))
      return makeStatus(PB_STATUS_RUNTIME_ERROR,
                        "malformed kernel module in the GPU artifact");
    if (!moduleNames.insert(*name).second)
      return makeStatus(PB_STATUS_RUNTIME_ERROR,
                        "the GPU artifact has two kernel modules named '" +
                            *name + "'");
    // The cubin when the compiler had ptxas, else the PTX (which the driver
    // compiles for the device).
    ModuleSpec spec{name->str(), "", "PTX", std::nullopt, std::nullopt};
    if (tileIR) {
      std::vector<char> bytes;
      if (llvm::Error error = llvm::decodeBase64(*tileIR, bytes))
        return makeStatus(
            PB_STATUS_RUNTIME_ERROR,
            "the Tile IR bytecode of kernel module '" + *name +
                "' is not base64: " + llvm::toString(std::move(error)));
      spec.tileIRBytecode = std::string(bytes.begin(), bytes.end());
      spec.kind = "Tile IR bytecode without a cubin (tileiras was not "
                  "found when the artifact was compiled)";
    }
    if (const llvm::json::Value *text = module->get("emulation_mlir")) {
      std::optional<llvm::StringRef> string = text->getAsString();
      if (!string)
        return makeStatus(PB_STATUS_RUNTIME_ERROR,
                          "the emulation IR of kernel module '" + *name +
                              "' is not a string");
      spec.emulationIR = string->str();
    }
    if (std::optional<llvm::StringRef> cubin =
            module->getString("cubin_base64")) {
      std::vector<char> bytes;
      if (llvm::Error error = llvm::decodeBase64(*cubin, bytes))
        return makeStatus(
            PB_STATUS_RUNTIME_ERROR,
            "the cubin of kernel module '" + *name +
                "' is not base64: " + llvm::toString(std::move(error)));
      spec.image.assign(bytes.begin(), bytes.end());
      spec.kind = "cubin";
    } else if (ptx) {
      spec.image = ptx->str();
    } else if (tileIR) {
      // No image: the CUDA executable refuses the module, the emulator
      // interprets the bytecode.
    } else {
      std::vector<char> bytes;
      if (llvm::Error error = llvm::decodeBase64(*hsaco, bytes))
        return makeStatus(
            PB_STATUS_RUNTIME_ERROR,
            "the code object of kernel module '" + *name +
                "' is not base64: " + llvm::toString(std::move(error)));
      spec.image.assign(bytes.begin(), bytes.end());
      spec.kind = "code object";
    }
    out.modules.push_back(std::move(spec));
  }

  // The metadata's entries give the caller's buffers: their count and
  // sizes.
  llvm::StringMap<std::vector<size_t>> callerBytes;
  for (const llvm::json::Value &value : entries) {
    std::optional<EntryDescription> entry = readEntry(value);
    if (!entry)
      return makeStatus(PB_STATUS_RUNTIME_ERROR,
                        "malformed entry in the artifact's metadata");
    if (entry->getNumSizes())
      return makeStatus(PB_STATUS_UNSUPPORTED,
                        "GPU entry '" + entry->name +
                            "' takes sizes (dynamic shapes), which GPU "
                            "artifacts do not support yet");
    std::vector<size_t> &bytes = callerBytes[entry->name];
    for (const llvm::json::Array *tensors : {entry->inputs, entry->outputs})
      for (const llvm::json::Value &tensor : *tensors)
        bytes.push_back(getTensorBytes(tensor));
  }

  for (const llvm::json::Value &value : *plans) {
    const llvm::json::Object *entry = value.getAsObject();
    std::optional<llvm::StringRef> name =
        entry ? entry->getString("name") : std::nullopt;
    const llvm::json::Array *buffers =
        entry ? entry->getArray("buffers") : nullptr;
    const llvm::json::Array *launches =
        entry ? entry->getArray("launches") : nullptr;
    if (!name || !buffers || !launches)
      return makeStatus(PB_STATUS_RUNTIME_ERROR,
                        "malformed entry plan in the GPU artifact");
    auto count = callerBytes.find(*name);
    if (count == callerBytes.end())
      return makeStatus(PB_STATUS_RUNTIME_ERROR,
                        "the GPU artifact plans entry '" + *name +
                            "', which its metadata does not list");
    if (out.plans.count(*name))
      return makeStatus(PB_STATUS_RUNTIME_ERROR,
                        "the GPU artifact plans entry '" + *name + "' twice");
    auto malformed = [&](const llvm::Twine &what) {
      return makeStatus(PB_STATUS_RUNTIME_ERROR,
                        "malformed plan of entry '" + *name + "': " + what);
    };
    PlanSpec plan;
    plan.numBuffers = count->second.size();
    plan.callerBytes = count->second;
    for (const llvm::json::Value &bufferValue : *buffers) {
      const llvm::json::Object *buffer = bufferValue.getAsObject();
      std::optional<llvm::StringRef> bufferKind =
          buffer ? buffer->getString("kind") : std::nullopt;
      if (bufferKind == "argument") {
        std::optional<int64_t> index = buffer->getInteger("index");
        if (!index || *index < 0 || size_t(*index) >= plan.numBuffers)
          return malformed("bad argument index");
        plan.argumentIndex.push_back(*index);
        plan.temporaryBytes.push_back(0);
      } else if (bufferKind == "temporary") {
        std::optional<int64_t> bytes = buffer->getInteger("bytes");
        if (!bytes || *bytes < 0)
          return malformed("bad temporary size");
        plan.argumentIndex.push_back(-1);
        plan.temporaryBytes.push_back(*bytes);
      } else {
        return malformed("unknown buffer kind");
      }
    }
    for (const llvm::json::Value &launchValue : *launches) {
      const llvm::json::Object *launch = launchValue.getAsObject();
      if (!launch)
        return malformed("a launch is not an object");
      std::optional<llvm::StringRef> module = launch->getString("module");
      std::optional<llvm::StringRef> kernel = launch->getString("kernel");
      std::optional<int64_t> dynamicShared =
          launch->getInteger("dynamic_shared_memory_bytes");
      const llvm::json::Array *args = launch->getArray("args");
      LaunchSpec step;
      if (!module || !kernel || !args ||
          !getUnsigned3(launch->getArray("grid"), step.grid) ||
          !getUnsigned3(launch->getArray("block"), step.block) ||
          (dynamicShared && (*dynamicShared < 0 || *dynamicShared > INT32_MAX)))
        return malformed("bad launch");
      if (!moduleNames.contains(*module))
        return malformed("unknown kernel module '" + *module + "'");
      if (kernel->contains('\0'))
        return malformed("a kernel name with a NUL character");
      step.module = module->str();
      step.kernel = kernel->str();
      step.dynamicShared = dynamicShared ? *dynamicShared : 0;
      for (const llvm::json::Value &arg : *args) {
        std::optional<int64_t> index = arg.getAsInteger();
        if (!index || *index < 0 || size_t(*index) >= plan.argumentIndex.size())
          return malformed("bad kernel argument");
        step.args.push_back(*index);
      }
      plan.launches.push_back(std::move(step));
    }
    out.plans[*name] = std::move(plan);
  }
  for (const auto &count : callerBytes)
    if (!out.plans.count(count.getKey()))
      return makeStatus(PB_STATUS_RUNTIME_ERROR,
                        "the GPU artifact has no plan for entry '" +
                            count.getKey() + "'");
  return nullptr;
}
