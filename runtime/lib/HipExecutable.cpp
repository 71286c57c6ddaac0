//===- HipExecutable.cpp - Running amd-hsaco+plan artifacts ---------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// AMD artifacts (payload format amd-hsaco+plan) hold one AMDGPU code object
// per kernel module and, per entry, the launch plan every GPU back end
// writes (GpuPayload.cpp reads and checks both formats). This file loads
// the code objects through HIP's module API and runs a plan on the caller's
// device buffers and stream, as CudaExecutable.cpp does with the CUDA
// driver.
//
// The HIP runtime (libamdhip64.so, .so.6 or .so.5) is opened with dlopen
// when the first AMD artifact is loaded: libPolyBlocks.so has no link-time
// ROCm dependency, and the few HIP types and functions used here are
// declared below. Every HIP error becomes a status carrying HIP's error name
// and message. No AMD GPU has run these kernels yet (docs/AMD.md); the
// calls are checked against a stand-in library (test_hip_stub.py).
//
//===----------------------------------------------------------------------===//

#include "GpuPlan.h"
#include "Internal.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/JSON.h"

#include <dlfcn.h>
#include <mutex>
#include <vector>

using namespace mlir::pb::runtime;

//===----------------------------------------------------------------------===//
// The HIP API subset
//===----------------------------------------------------------------------===//

namespace {
using hipError_t = int;
using hipModule_t = struct ihipModule_t *;
using hipFunction_t = struct ihipModuleSymbol_t *;
using hipStream_t = struct ihipStream_t *;
using hipDeviceptr_t = void *;

constexpr hipError_t hipSuccess = 0;

/// The runtime's entry points, resolved once per process.
struct Runtime {
  hipError_t (*hipInit)(unsigned);
  hipError_t (*hipGetDeviceCount)(int *);
  hipError_t (*hipModuleLoadData)(hipModule_t *, const void *);
  hipError_t (*hipModuleUnload)(hipModule_t);
  hipError_t (*hipModuleGetFunction)(hipFunction_t *, hipModule_t,
                                     const char *);
  hipError_t (*hipModuleLaunchKernel)(hipFunction_t, unsigned, unsigned,
                                      unsigned, unsigned, unsigned, unsigned,
                                      unsigned, hipStream_t, void **, void **);
  hipError_t (*hipMalloc)(void **, size_t);
  hipError_t (*hipFree)(void *);
  hipError_t (*hipStreamSynchronize)(hipStream_t);
  const char *(*hipGetErrorName)(hipError_t);
  const char *(*hipGetErrorString)(hipError_t);
  // Optional (stream-ordered allocation, ROCm 5.3 and later).
  hipError_t (*hipMallocAsync)(void **, size_t, hipStream_t);
  hipError_t (*hipFreeAsync)(void *, hipStream_t);
};
} // namespace

/// "hipErrorX: message" for a HIP result.
static std::string describe(const Runtime &hip, hipError_t result) {
  const char *name =
      hip.hipGetErrorName ? hip.hipGetErrorName(result) : nullptr;
  const char *message =
      hip.hipGetErrorString ? hip.hipGetErrorString(result) : nullptr;
  std::string text = name ? name : "HIP error " + std::to_string(result);
  if (message)
    text += std::string(": ") + message;
  return text;
}

static pb_status *hipError(const Runtime &hip, hipError_t result,
                           const llvm::Twine &what) {
  return makeStatus(PB_STATUS_RUNTIME_ERROR,
                    what + " failed: " + describe(hip, result));
}

/// Opens the HIP runtime and initializes it, once per process; the outcome
/// (the runtime, or the reason there is none) is kept.
static pb_status *getRuntime(const Runtime *&out) {
  static std::once_flag once;
  static Runtime hip;
  static std::string failure;
  std::call_once(once, [] {
    void *handle = nullptr;
    std::string errors;
    for (const char *name :
         {"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"}) {
      handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (handle)
        break;
      const char *error = dlerror();
      errors += std::string(errors.empty() ? "" : "; ") +
                (error ? error : "dlopen failed");
    }
    if (!handle) {
      failure =
          "libamdhip64.so not found: no ROCm HIP runtime (" + errors + ")";
      return;
    }
    bool complete = true;
    auto resolve = [&](auto &fn, const char *name, bool required = true) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
          dlsym(handle, name));
      if (!fn && required) {
        complete = false;
        failure += (failure.empty() ? "" : ", ") + std::string(name);
      }
    };
    resolve(hip.hipInit, "hipInit");
    resolve(hip.hipGetDeviceCount, "hipGetDeviceCount");
    resolve(hip.hipModuleLoadData, "hipModuleLoadData");
    resolve(hip.hipModuleUnload, "hipModuleUnload");
    resolve(hip.hipModuleGetFunction, "hipModuleGetFunction");
    resolve(hip.hipModuleLaunchKernel, "hipModuleLaunchKernel");
    resolve(hip.hipMalloc, "hipMalloc");
    resolve(hip.hipFree, "hipFree");
    resolve(hip.hipStreamSynchronize, "hipStreamSynchronize");
    resolve(hip.hipGetErrorName, "hipGetErrorName");
    resolve(hip.hipGetErrorString, "hipGetErrorString");
    resolve(hip.hipMallocAsync, "hipMallocAsync", /*required=*/false);
    resolve(hip.hipFreeAsync, "hipFreeAsync", /*required=*/false);
    if (!complete) {
      failure = "libamdhip64.so lacks HIP functions: " + failure;
      return;
    }
    if (hipError_t result = hip.hipInit(0); result != hipSuccess) {
      failure =
          "cannot initialize HIP: hipInit failed: " + describe(hip, result);
      return;
    }
    int count = 0;
    if (hipError_t result = hip.hipGetDeviceCount(&count);
        result != hipSuccess) {
      failure = "hipGetDeviceCount failed: " + describe(hip, result);
      return;
    }
    if (count == 0)
      failure = "no AMD GPU: the HIP runtime reports 0 devices";
  });
  if (!failure.empty())
    return makeStatus(PB_STATUS_RUNTIME_ERROR, failure);
  out = &hip;
  return nullptr;
}

//===----------------------------------------------------------------------===//
// The executable
//===----------------------------------------------------------------------===//

namespace mlir::pb::runtime {
struct HipExecutable {
  const Runtime *hip = nullptr;
  std::vector<hipModule_t> modules;
  llvm::StringMap<GpuPlan<hipFunction_t>> plans;

  ~HipExecutable() {
    if (!hip)
      return;
    for (hipModule_t module : modules)
      hip->hipModuleUnload(module);
  }
};
} // namespace mlir::pb::runtime

void HipExecutableDeleter::operator()(HipExecutable *executable) const {
  delete executable;
}

pb_status *
mlir::pb::runtime::loadHipExecutable(const pb_artifact &artifact,
                                     const llvm::json::Array &entries,
                                     HipExecutablePtr &out) {
  // Everything the payload states is checked before HIP is opened.
  GpuPayload payload;
  if (pb_status *status = parseGpuPayload(artifact, entries, payload))
    return status;
  const Runtime *hip = nullptr;
  if (pb_status *status = getRuntime(hip))
    return status;

  // Modules load on the calling thread's current device (PyTorch's, for
  // instance), as HIP's module API does.
  HipExecutablePtr executable(new HipExecutable);
  executable->hip = hip;
  llvm::StringMap<hipModule_t> moduleByName;
  for (const ModuleSpec &module : payload.modules) {
    hipModule_t handle = nullptr;
    if (hipError_t result =
            hip->hipModuleLoadData(&handle, module.image.data()))
      return hipError(*hip, result,
                      "hipModuleLoadData (code object for " + payload.arch +
                          ", module '" + module.name + "')");
    executable->modules.push_back(handle);
    moduleByName[module.name] = handle;
  }
  for (auto &item : payload.plans) {
    GpuPlan<hipFunction_t> plan;
    if (pb_status *status = buildGpuPlan(
            item.getValue(), plan,
            [&](const LaunchSpec &launch, hipFunction_t &function) {
              hipError_t result = hip->hipModuleGetFunction(
                  &function, moduleByName.lookup(launch.module),
                  launch.kernel.c_str());
              return result == hipSuccess ? nullptr
                                          : hipError(*hip, result,
                                                     "hipModuleGetFunction ('" +
                                                         launch.kernel + "')");
            }))
      return status;
    executable->plans[item.getKey()] = std::move(plan);
  }
  out = std::move(executable);
  return nullptr;
}

bool mlir::pb::runtime::hasHipEntry(const HipExecutable &executable,
                                    llvm::StringRef entry, size_t &numBuffers) {
  auto it = executable.plans.find(entry);
  if (it == executable.plans.end())
    return false;
  numBuffers = it->second.numBuffers;
  return true;
}

pb_status *mlir::pb::runtime::runHipExecutable(HipExecutable &executable,
                                               llvm::StringRef entry,
                                               void *const *buffers,
                                               void *stream) {
  const Runtime &hip = *executable.hip;
  auto hipStream = static_cast<hipStream_t>(stream);
  bool async = hip.hipMallocAsync && hip.hipFreeAsync;
  auto allocate = [&](void *&address, size_t bytes,
                      size_t buffer) -> pb_status * {
    hipError_t result = async ? hip.hipMallocAsync(&address, bytes, hipStream)
                              : hip.hipMalloc(&address, bytes);
    if (result == hipSuccess)
      return nullptr;
    return hipError(hip, result,
                    llvm::Twine(async ? "hipMallocAsync" : "hipMalloc") + " (" +
                        llvm::Twine(bytes) + " bytes of temporary buffer " +
                        llvm::Twine(buffer) + " of entry '" + entry + "')");
  };
  auto launch = [&](const GpuLaunch<hipFunction_t> &step, void **params,
                    size_t index) -> pb_status * {
    hipError_t result = hip.hipModuleLaunchKernel(
        step.function, step.grid[0], step.grid[1], step.grid[2], step.block[0],
        step.block[1], step.block[2], step.dynamicShared, hipStream, params,
        nullptr);
    if (result == hipSuccess)
      return nullptr;
    return hipError(hip, result,
                    "hipModuleLaunchKernel (launch " + llvm::Twine(index) +
                        " of entry '" + entry + "')");
  };
  auto release = [&](llvm::ArrayRef<void *> temporaries, pb_status *&status) {
    if (async) {
      // Stream-ordered: freed once the launches before complete.
      for (void *address : temporaries)
        if (hipError_t result = hip.hipFreeAsync(address, hipStream);
            result != hipSuccess && !status)
          status = hipError(hip, result, "hipFreeAsync");
      return;
    }
    // The kernels may still use the temporaries: wait for them first.
    if (hipError_t result = hip.hipStreamSynchronize(hipStream);
        result != hipSuccess && !status)
      status = hipError(hip, result, "hipStreamSynchronize");
    for (void *address : temporaries)
      if (hipError_t result = hip.hipFree(address);
          result != hipSuccess && !status)
        status = hipError(hip, result, "hipFree");
  };
  return runGpuPlan<void *>(executable.plans.find(entry)->second, buffers,
                            allocate, launch, release);
}
