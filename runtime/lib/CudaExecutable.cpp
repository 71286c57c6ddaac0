//===- CudaExecutable.cpp - Running nvidia-ptx+plan artifacts ------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// NVIDIA artifacts (payload format nvidia-ptx+plan) hold kernel modules (PTX,
// and a cubin when ptxas was found at compile time) and, per entry, a launch
// plan: buffers (the entry's arguments, then temporaries with their sizes)
// and kernel launches in order. This file loads the modules through the CUDA
// driver API and runs a plan on the caller's device buffers and stream (the
// payload is read by GpuPayload.cpp, which the emulated executable
// shares).
//
// The driver (libcuda.so.1) is opened with dlopen when the first NVIDIA
// artifact is loaded: libPolyBlocks.so has no link-time CUDA dependency, and
// the few driver types and functions used here are declared below. Every
// driver error becomes a status carrying the driver's error name and message.
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
// The driver API subset
//===----------------------------------------------------------------------===//

namespace {
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;

constexpr CUresult CUDA_SUCCESS = 0;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
constexpr int CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED = 115;
constexpr int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;

/// The driver's entry points, resolved once per process.
struct Driver {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDeviceGetCount)(int *);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
  CUresult (*cuCtxGetCurrent)(CUcontext *);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuCtxGetDevice)(CUdevice *);
  CUresult (*cuModuleLoadData)(CUmodule *, const void *);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, unsigned, CUstream, void **,
                             void **);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuGetErrorName)(CUresult, const char **);
  CUresult (*cuGetErrorString)(CUresult, const char **);
  // Optional (stream-ordered allocation, CUDA 11.2 and later).
  CUresult (*cuMemAllocAsync)(CUdeviceptr *, size_t, CUstream);
  CUresult (*cuMemFreeAsync)(CUdeviceptr, CUstream);
};
} // namespace

/// "CUDA_ERROR_X (message)" for a driver result.
static std::string describe(const Driver &driver, CUresult result) {
  const char *name = nullptr, *message = nullptr;
  if (driver.cuGetErrorName)
    driver.cuGetErrorName(result, &name);
  if (driver.cuGetErrorString)
    driver.cuGetErrorString(result, &message);
  std::string text = name ? name : "CUDA error " + std::to_string(result);
  if (message)
    text += std::string(": ") + message;
  return text;
}

static pb_status *cudaError(const Driver &driver, CUresult result,
                            const llvm::Twine &what) {
  return makeStatus(PB_STATUS_RUNTIME_ERROR,
                    what + " failed: " + describe(driver, result));
}

/// Opens libcuda.so.1 and initializes the driver, once per process; the
/// outcome (the driver, or the reason there is none) is kept.
static pb_status *getDriver(const Driver *&out) {
  static std::once_flag once;
  static Driver driver;
  static std::string failure;
  std::call_once(once, [] {
    void *handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char *error = dlerror();
      failure = std::string("libcuda.so.1 not found: no NVIDIA driver (") +
                (error ? error : "dlopen failed") + ")";
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
    resolve(driver.cuInit, "cuInit");
    resolve(driver.cuDeviceGetCount, "cuDeviceGetCount");
    resolve(driver.cuDeviceGet, "cuDeviceGet");
    resolve(driver.cuDeviceGetAttribute, "cuDeviceGetAttribute");
    resolve(driver.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    resolve(driver.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
    resolve(driver.cuCtxGetCurrent, "cuCtxGetCurrent");
    resolve(driver.cuCtxSetCurrent, "cuCtxSetCurrent");
    resolve(driver.cuCtxGetDevice, "cuCtxGetDevice");
    resolve(driver.cuModuleLoadData, "cuModuleLoadData");
    resolve(driver.cuModuleUnload, "cuModuleUnload");
    resolve(driver.cuModuleGetFunction, "cuModuleGetFunction");
    resolve(driver.cuFuncSetAttribute, "cuFuncSetAttribute");
    resolve(driver.cuMemAlloc, "cuMemAlloc_v2");
    resolve(driver.cuMemFree, "cuMemFree_v2");
    resolve(driver.cuLaunchKernel, "cuLaunchKernel");
    resolve(driver.cuStreamSynchronize, "cuStreamSynchronize");
    resolve(driver.cuGetErrorName, "cuGetErrorName");
    resolve(driver.cuGetErrorString, "cuGetErrorString");
    resolve(driver.cuMemAllocAsync, "cuMemAllocAsync", /*required=*/false);
    resolve(driver.cuMemFreeAsync, "cuMemFreeAsync", /*required=*/false);
    if (!complete) {
      failure = "libcuda.so.1 lacks driver functions: " + failure;
      return;
    }
    if (CUresult result = driver.cuInit(0); result != CUDA_SUCCESS) {
      failure = "cannot initialize the CUDA driver: cuInit failed: " +
                describe(driver, result);
      return;
    }
    int count = 0;
    if (CUresult result = driver.cuDeviceGetCount(&count);
        result != CUDA_SUCCESS) {
      failure = "cuDeviceGetCount failed: " + describe(driver, result);
      return;
    }
    if (count == 0)
      failure = "no CUDA device: the NVIDIA driver reports 0 devices";
  });
  if (!failure.empty())
    return makeStatus(PB_STATUS_RUNTIME_ERROR, failure);
  out = &driver;
  return nullptr;
}

//===----------------------------------------------------------------------===//
// The executable
//===----------------------------------------------------------------------===//

namespace mlir::pb::runtime {
struct CudaExecutable {
  const Driver *driver = nullptr;
  CUcontext context = nullptr;
  CUdevice device = 0;
  /// Whether `context` is the device's primary context retained here.
  bool retained = false;
  bool memoryPools = false;
  std::vector<CUmodule> modules;
  llvm::StringMap<GpuPlan<CUfunction>> plans;

  ~CudaExecutable() {
    if (!driver)
      return;
    CUcontext previous = nullptr;
    driver->cuCtxGetCurrent(&previous);
    if (previous != context)
      driver->cuCtxSetCurrent(context);
    for (CUmodule module : modules)
      driver->cuModuleUnload(module);
    if (previous != context)
      driver->cuCtxSetCurrent(previous);
    if (retained)
      driver->cuDevicePrimaryCtxRelease(device);
  }
};
} // namespace mlir::pb::runtime

void CudaExecutableDeleter::operator()(CudaExecutable *executable) const {
  delete executable;
}

/// Makes `context` current on this thread for the lifetime of the scope.
namespace {
class ContextScope {
public:
  ContextScope(const Driver &driver, CUcontext context) : driver(driver) {
    driver.cuCtxGetCurrent(&previous);
    if (previous != context) {
      driver.cuCtxSetCurrent(context);
      restore = true;
    }
  }
  ~ContextScope() {
    if (restore)
      driver.cuCtxSetCurrent(previous);
  }

private:
  const Driver &driver;
  CUcontext previous = nullptr;
  bool restore = false;
};
} // namespace

pb_status *
mlir::pb::runtime::loadCudaExecutable(const pb_artifact &artifact,
                                      const llvm::json::Array &entries,
                                      CudaExecutablePtr &out) {
  // Everything the payload states is checked before the driver is opened.
  GpuPayload payload;
  if (pb_status *status = parseGpuPayload(artifact, entries, payload))
    return status;
  const Driver *driver = nullptr;
  if (pb_status *status = getDriver(driver))
    return status;

  CudaExecutablePtr executable(new CudaExecutable);
  executable->driver = driver;
  // The caller's current context (PyTorch's, for instance) when there is
  // one, else device 0's primary context.
  if (CUresult result = driver->cuCtxGetCurrent(&executable->context))
    return cudaError(*driver, result, "cuCtxGetCurrent");
  if (executable->context) {
    if (CUresult result = driver->cuCtxGetDevice(&executable->device))
      return cudaError(*driver, result, "cuCtxGetDevice");
  } else {
    if (CUresult result = driver->cuDeviceGet(&executable->device, 0))
      return cudaError(*driver, result, "cuDeviceGet");
    if (CUresult result = driver->cuDevicePrimaryCtxRetain(&executable->context,
                                                           executable->device))
      return cudaError(*driver, result, "cuDevicePrimaryCtxRetain");
    executable->retained = true;
  }
  int major = 0, minor = 0, pools = 0;
  driver->cuDeviceGetAttribute(
      &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, executable->device);
  driver->cuDeviceGetAttribute(
      &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, executable->device);
  driver->cuDeviceGetAttribute(
      &pools, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, executable->device);
  executable->memoryPools =
      pools && driver->cuMemAllocAsync && driver->cuMemFreeAsync;

  ContextScope scope(*driver, executable->context);
  llvm::StringMap<CUmodule> moduleByName;
  for (const ModuleSpec &module : payload.modules) {
    CUmodule handle = nullptr;
    if (module.image.empty())
      return makeStatus(PB_STATUS_UNSUPPORTED,
                        "kernel module '" + module.name + "' is " +
                            module.kind +
                            ": it cannot run on a GPU; "
                            "compile with tileiras installed (scripts/setup)");
    if (CUresult result =
            driver->cuModuleLoadData(&handle, module.image.c_str()))
      return cudaError(*driver, result,
                       llvm::Twine("cuModuleLoadData (") + module.kind +
                           " for " + payload.arch + ", module '" + module.name +
                           "', device sm_" + llvm::Twine(major) +
                           llvm::Twine(minor) + ")");
    executable->modules.push_back(handle);
    moduleByName[module.name] = handle;
  }

  for (auto &item : payload.plans) {
    GpuPlan<CUfunction> plan;
    auto resolve = [&](const LaunchSpec &launch,
                       CUfunction &function) -> pb_status * {
      if (CUresult result = driver->cuModuleGetFunction(
              &function, moduleByName.lookup(launch.module),
              launch.kernel.c_str()))
        return cudaError(*driver, result,
                         "cuModuleGetFunction ('" + launch.kernel + "')");
      // Dynamic shared memory beyond the default 48 KiB must be opted into.
      if (launch.dynamicShared > 48 * 1024)
        if (CUresult result = driver->cuFuncSetAttribute(
                function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                launch.dynamicShared))
          return cudaError(*driver, result,
                           "cuFuncSetAttribute ('" + launch.kernel + "')");
      return nullptr;
    };
    if (pb_status *status = buildGpuPlan(item.getValue(), plan, resolve))
      return status;
    executable->plans[item.getKey()] = std::move(plan);
  }
  out = std::move(executable);
  return nullptr;
}

bool mlir::pb::runtime::hasCudaEntry(const CudaExecutable &executable,
                                     llvm::StringRef entry,
                                     size_t &numBuffers) {
  auto it = executable.plans.find(entry);
  if (it == executable.plans.end())
    return false;
  numBuffers = it->second.numBuffers;
  return true;
}

pb_status *mlir::pb::runtime::runCudaExecutable(CudaExecutable &executable,
                                                llvm::StringRef entry,
                                                void *const *buffers,
                                                void *stream) {
  const Driver &driver = *executable.driver;
  auto cuStream = static_cast<CUstream>(stream);
  bool pools = executable.memoryPools;
  ContextScope scope(driver, executable.context);
  auto allocate = [&](CUdeviceptr &address, size_t bytes,
                      size_t buffer) -> pb_status * {
    CUresult result = pools ? driver.cuMemAllocAsync(&address, bytes, cuStream)
                            : driver.cuMemAlloc(&address, bytes);
    if (result == CUDA_SUCCESS)
      return nullptr;
    return cudaError(driver, result,
                     llvm::Twine(pools ? "cuMemAllocAsync" : "cuMemAlloc") +
                         " (" + llvm::Twine(bytes) +
                         " bytes of temporary buffer " + llvm::Twine(buffer) +
                         " of entry '" + entry + "')");
  };
  auto launch = [&](const GpuLaunch<CUfunction> &step, void **params,
                    size_t index) -> pb_status * {
    CUresult result = driver.cuLaunchKernel(
        step.function, step.grid[0], step.grid[1], step.grid[2], step.block[0],
        step.block[1], step.block[2], step.dynamicShared, cuStream, params,
        nullptr);
    if (result == CUDA_SUCCESS)
      return nullptr;
    return cudaError(driver, result,
                     "cuLaunchKernel (launch " + llvm::Twine(index) +
                         " of entry '" + entry + "')");
  };
  auto release = [&](llvm::ArrayRef<CUdeviceptr> temporaries,
                     pb_status *&status) {
    if (pools) {
      // Stream-ordered: freed once the launches before complete, without
      // waiting here.
      for (CUdeviceptr address : temporaries)
        if (CUresult result = driver.cuMemFreeAsync(address, cuStream);
            result != CUDA_SUCCESS && !status)
          status = cudaError(driver, result, "cuMemFreeAsync");
      return;
    }
    // The kernels may still use the temporaries: wait for them first.
    if (CUresult result = driver.cuStreamSynchronize(cuStream);
        result != CUDA_SUCCESS && !status)
      status = cudaError(driver, result, "cuStreamSynchronize");
    for (CUdeviceptr address : temporaries)
      if (CUresult result = driver.cuMemFree(address);
          result != CUDA_SUCCESS && !status)
        status = cudaError(driver, result, "cuMemFree");
  };
  return runGpuPlan<CUdeviceptr>(executable.plans.find(entry)->second, buffers,
                                 allocate, launch, release);
}
