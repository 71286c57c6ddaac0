//===- GpuPlan.h - Launch plans resolved to a GPU driver's handles -*- C++ -*-//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What the CUDA and HIP executors share: a checked PlanSpec turned into a
// plan of the driver's kernel handles, and the run of a plan (device
// addresses of the caller's buffers and of temporaries, the launches with
// their argument arrays, the temporaries released). The driver calls stay
// with each executor, as callbacks that report errors in its own words.
//
//===----------------------------------------------------------------------===//

#ifndef PB_RUNTIME_GPUPLAN_H
#define PB_RUNTIME_GPUPLAN_H

#include "Internal.h"

#include "llvm/ADT/ArrayRef.h"

#include <algorithm>
#include <vector>

namespace mlir::pb::runtime {

/// One launch of a plan, its kernel resolved to the driver's handle.
template <typename Function> struct GpuLaunch {
  Function function;
  unsigned grid[3], block[3];
  unsigned dynamicShared;
  std::vector<size_t> args; // buffer indices

  /// A launch with no blocks or threads has nothing to do.
  bool isEmpty() const {
    return !grid[0] || !grid[1] || !grid[2] || !block[0] || !block[1] ||
           !block[2];
  }
};

/// The launch plan of one entry.
template <typename Function> struct GpuPlan {
  /// Per buffer: the caller's buffer index (argument) or -1 (temporary).
  std::vector<int64_t> argumentIndex;
  /// Per buffer: the bytes of a temporary (0 for arguments).
  std::vector<size_t> temporaryBytes;
  std::vector<GpuLaunch<Function>> launches;
  size_t numBuffers; // the caller's: inputs, then outputs
};

/// Moves `spec` into `plan`, resolving each launch's kernel with
/// `resolve(const LaunchSpec &, Function &) -> pb_status *`.
template <typename Function, typename Resolve>
pb_status *buildGpuPlan(PlanSpec &spec, GpuPlan<Function> &plan,
                        Resolve resolve) {
  plan.numBuffers = spec.numBuffers;
  plan.argumentIndex = std::move(spec.argumentIndex);
  plan.temporaryBytes = std::move(spec.temporaryBytes);
  for (LaunchSpec &launch : spec.launches) {
    GpuLaunch<Function> step;
    std::copy(launch.grid, launch.grid + 3, step.grid);
    std::copy(launch.block, launch.block + 3, step.block);
    step.dynamicShared = launch.dynamicShared;
    if (pb_status *status = resolve(launch, step.function))
      return status;
    step.args = std::move(launch.args);
    plan.launches.push_back(std::move(step));
  }
  return nullptr;
}

/// Runs `plan` on the caller's device `buffers`. `Pointer` is the driver's
/// device address type; the callbacks, each returning an error or null:
///   allocate(Pointer &, size_t bytes, size_t buffer),
///   launch(const GpuLaunch<Function> &, void **params, size_t index),
///   release(llvm::ArrayRef<Pointer> temporaries, pb_status *&status),
///   after the launches, also after a failure; it sets `status` only when
///   it is still null (the first error is the one reported).
template <typename Pointer, typename Function, typename Allocate,
          typename Launch, typename Release>
pb_status *runGpuPlan(const GpuPlan<Function> &plan, void *const *buffers,
                      Allocate allocate, Launch launch, Release release) {
  // Device addresses of the plan's buffers; temporaries are allocated here.
  std::vector<Pointer> addresses(plan.argumentIndex.size(), Pointer());
  std::vector<Pointer> temporaries;
  pb_status *status = nullptr;
  for (size_t i = 0; i < addresses.size() && !status; ++i) {
    if (plan.argumentIndex[i] >= 0) {
      addresses[i] = reinterpret_cast<Pointer>(
          buffers[static_cast<size_t>(plan.argumentIndex[i])]);
      continue;
    }
    size_t bytes = std::max<size_t>(plan.temporaryBytes[i], 1);
    if ((status = allocate(addresses[i], bytes, i)))
      break;
    temporaries.push_back(addresses[i]);
  }

  std::vector<Pointer> values;
  std::vector<void *> params;
  for (size_t l = 0; l < plan.launches.size() && !status; ++l) {
    const GpuLaunch<Function> &step = plan.launches[l];
    if (step.isEmpty())
      continue;
    values.assign(step.args.size(), Pointer());
    params.assign(step.args.size(), nullptr);
    for (size_t a = 0; a < step.args.size(); ++a) {
      values[a] = addresses[step.args[a]];
      params[a] = &values[a];
    }
    status = launch(step, params.empty() ? nullptr : params.data(), l);
  }

  if (!temporaries.empty())
    release(llvm::ArrayRef<Pointer>(temporaries), status);
  return status;
}

} // namespace mlir::pb::runtime

#endif // PB_RUNTIME_GPUPLAN_H
