//===- EmulatedExecutable.cpp - NVIDIA artifacts run on the CPU -----------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// pbExecutableLoadEmulated: an NVIDIA artifact's launch plans run on the
// host, each launch by the kernel emulator (targets/nvidia/emulator) on the
// kernel modules' MLIR that S4 kept in the payload ("emulation_mlir"). The
// plan is the same one the CUDA executable runs (GpuPayload.cpp reads
// it for both): the caller's buffers, here host pointers, then temporaries,
// here host memory, and the launches in order, here one after another on
// the calling thread.
//
// Every kernel argument goes to the emulator with its size, so that it can
// report out-of-bounds accesses: the caller's buffers from the metadata's
// shapes and element types, temporaries from the plan. Temporaries are
// filled with 0xFF bytes rather than zeroed: cuMemAlloc does not zero
// either, and zeros hide a kernel that reads what no launch wrote (an
// accumulator nobody initialized). 0xFF is NaN in every floating-point
// type (f16, bf16, f32, f64) and -1 in every integer type, so such a read
// turns the outputs it reaches into NaN, which no tolerance accepts; a
// pattern such as 0xA5 would be about -2.9e-16 as f32, lost in rounding.
//
// The chip's limits (shared memory per block, warp size) come from the
// target registry's chip whose LLVM CPU is the payload's "arch", the same
// .td facts S4 checked the launches against.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include "pb/Target/TargetDesc.h"

#ifdef PB_HAVE_GPU_EMULATOR
#include "pb/GPU/Emulator.h"

namespace emulator = mlir::pb::emulator;
#endif
#ifdef PB_HAVE_TILE_IR
#include "pb/TileIR/Interpreter.h"
#endif

#include "llvm/ADT/StringSet.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/MathExtras.h"

#include <cstdlib>
#include <cstring>
#include <mutex>

using namespace mlir::pb::runtime;

namespace mlir::pb::runtime {
struct EmulatedExecutable {
  /// The modules' text, kept for as long as the program that parsed it.
  std::vector<ModuleSpec> modules;
  llvm::StringMap<PlanSpec> plans;
#ifdef PB_HAVE_GPU_EMULATOR
  std::unique_ptr<emulator::Program> program;
#endif
#ifdef PB_HAVE_TILE_IR
  /// The Tile IR modules' kernels (codegen=tile-ir), in the tile
  /// interpreter.
  std::unique_ptr<mlir::pb::tileir::TileProgram> tilePrograms;
#endif
  llvm::StringSet<> tileModules;
  /// Runs are serialized: the emulator's program is not documented as
  /// safe to launch from several threads at once.
  std::mutex mutex;
};
} // namespace mlir::pb::runtime

void EmulatedExecutableDeleter::operator()(
    EmulatedExecutable *executable) const {
  delete executable;
}

#ifdef PB_HAVE_GPU_EMULATOR
/// The GPU chip whose LLVM CPU name is `arch` ("sm_80", "sm_90a",
/// "gfx942"), or null.
static const mlir::pb::ChipDesc *findChip(llvm::StringRef arch) {
  for (const mlir::pb::TargetRegistryEntry &entry :
       mlir::pb::getTargetRegistry())
    if (entry.chip &&
        (entry.chip->vendor == mlir::pb::Vendor::NVIDIA ||
         entry.chip->vendor == mlir::pb::Vendor::AMD) &&
        entry.chip->llvmCPU == arch)
      return entry.chip;
  return nullptr;
}

/// The limits the emulator enforces, from the chip's compute and memory
/// levels (as S4's launch-limit check reads them).
static pb_status *getDeviceLimits(llvm::StringRef arch,
                                  emulator::DeviceLimits &limits) {
  const mlir::pb::ChipDesc *chip = findChip(arch);
  if (!chip)
    return makeStatus(PB_STATUS_UNSUPPORTED,
                      "the GPU artifact is for architecture '" + arch +
                          "', which is no GPU chip this library knows");
  const mlir::pb::ComputeLevelDesc *lane =
      chip->getComputeLevel(mlir::pb::ComputeLevelKind::Lane);
  const mlir::pb::MemoryLevelDesc *shared =
      chip->getMemoryLevel(mlir::pb::MemoryKind::Scratchpad);
  if (!lane || lane->fixedCountPerParent <= 0 || !shared)
    return makeStatus(PB_STATUS_UNSUPPORTED,
                      "target '" + chip->name +
                          "' states no warp size (Lane level) or no shared "
                          "memory (Scratchpad level) for the emulator");
  limits.warpSize = static_cast<unsigned>(lane->fixedCountPerParent);
  limits.sharedBytesPerBlock = shared->capacityBytes;
  return nullptr;
}
#endif

pb_status *
mlir::pb::runtime::loadEmulatedExecutable(const pb_artifact &artifact,
                                          const llvm::json::Array &entries,
                                          EmulatedExecutablePtr &out) {
#ifndef PB_HAVE_GPU_EMULATOR
  (void)artifact;
  (void)entries;
  (void)out;
  return makeStatus(PB_STATUS_UNSUPPORTED,
                    "this library was built without the GPU kernel "
                    "emulator (neither the nvidia nor the amd target is "
                    "built)");
#else
  GpuPayload payload;
  if (pb_status *status = parseGpuPayload(artifact, entries, payload))
    return status;
  for (const ModuleSpec &module : payload.modules)
    if (!module.emulationIR && !module.tileIRBytecode)
      return makeStatus(
          PB_STATUS_RUNTIME_ERROR,
          "kernel module '" + module.name +
              "' of the GPU artifact has no IR for the emulator "
              "('emulation_mlir'): the artifact was compiled with "
              "emulation-ir=0; compile it with emulation-ir=1 (the default) "
              "to run it emulated");
  emulator::DeviceLimits limits;
  if (pb_status *status = getDeviceLimits(payload.arch, limits))
    return status;

  EmulatedExecutablePtr executable(new EmulatedExecutable);
  executable->modules = std::move(payload.modules);
  // Only the MLIR is used here, not the PTX, cubin or code object.
  for (ModuleSpec &module : executable->modules)
    module.image = std::string();
  executable->plans = std::move(payload.plans);
  std::vector<emulator::ModuleText> texts;
  std::vector<std::pair<llvm::StringRef, llvm::StringRef>> tileModules;
  for (const ModuleSpec &module : executable->modules) {
    if (module.tileIRBytecode) {
      tileModules.push_back({module.name, *module.tileIRBytecode});
      executable->tileModules.insert(module.name);
      continue;
    }
    texts.push_back({module.name, *module.emulationIR});
  }
  if (!tileModules.empty()) {
#ifdef PB_HAVE_TILE_IR
    llvm::Expected<std::unique_ptr<mlir::pb::tileir::TileProgram>> tiles =
        mlir::pb::tileir::TileProgram::create(tileModules);
    if (!tiles)
      return makeStatus(PB_STATUS_RUNTIME_ERROR,
                        "the tile interpreter cannot load the artifact's "
                        "Tile IR kernels: " +
                            llvm::toString(tiles.takeError()));
    executable->tilePrograms = std::move(*tiles);
#else
    return makeStatus(PB_STATUS_UNSUPPORTED,
                      "the artifact has Tile IR kernels and this library "
                      "was built without the tile interpreter");
#endif
  }
  llvm::Expected<std::unique_ptr<emulator::Program>> program =
      emulator::Program::create(texts, limits);
  if (!program)
    return makeStatus(PB_STATUS_RUNTIME_ERROR,
                      "the emulator cannot load the artifact's kernels: " +
                          llvm::toString(program.takeError()));
  executable->program = std::move(*program);
  out = std::move(executable);
  return nullptr;
#endif
}

bool mlir::pb::runtime::hasEmulatedEntry(const EmulatedExecutable &executable,
                                         llvm::StringRef entry,
                                         size_t &numBuffers) {
  auto it = executable.plans.find(entry);
  if (it == executable.plans.end())
    return false;
  numBuffers = it->second.numBuffers;
  return true;
}

namespace {
/// Host memory standing in for a cuMemAlloc'd temporary: aligned as the
/// driver aligns allocations and filled with a pattern, not zeros.
class Temporary {
public:
  explicit Temporary(size_t bytes)
      : size(llvm::alignTo(std::max<size_t>(bytes, 1), kAlignment)),
        data(std::aligned_alloc(kAlignment, size)) {
    if (data)
      std::memset(data, kFill, size);
  }
  ~Temporary() { std::free(data); }
  Temporary(const Temporary &) = delete;
  Temporary &operator=(const Temporary &) = delete;
  Temporary(Temporary &&other) noexcept : size(other.size), data(other.data) {
    other.data = nullptr;
  }

  static constexpr size_t kAlignment = 256;
  static constexpr int kFill = 0xFF;
  size_t size;
  void *data;
};
} // namespace

pb_status *
mlir::pb::runtime::runEmulatedExecutable(EmulatedExecutable &executable,
                                         llvm::StringRef entry,
                                         void *const *buffers) {
#ifndef PB_HAVE_GPU_EMULATOR
  (void)executable;
  (void)buffers;
  return makeStatus(PB_STATUS_UNSUPPORTED,
                    "cannot run entry '" + entry +
                        "': this library has no NVIDIA kernel emulator");
#else
  std::lock_guard<std::mutex> lock(executable.mutex);
  const PlanSpec &plan = executable.plans.find(entry)->second;

  // Each plan buffer as the kernels see it: the caller's, or a temporary
  // that lives for this run.
  std::vector<emulator::Buffer> planBuffers;
  std::vector<Temporary> temporaries;
  temporaries.reserve(plan.argumentIndex.size());
  for (size_t i = 0; i < plan.argumentIndex.size(); ++i) {
    if (int64_t index = plan.argumentIndex[i]; index >= 0) {
      planBuffers.push_back({buffers[index], plan.callerBytes[index]});
      continue;
    }
    Temporary &temporary = temporaries.emplace_back(plan.temporaryBytes[i]);
    if (!temporary.data)
      return makeStatus(PB_STATUS_RUNTIME_ERROR,
                        "cannot allocate " +
                            llvm::Twine(plan.temporaryBytes[i]) +
                            " bytes of host memory for temporary buffer " +
                            llvm::Twine(i) + " of entry '" + entry + "'");
    // The kernels may touch only the plan's bytes, not the rounding.
    planBuffers.push_back({temporary.data, plan.temporaryBytes[i]});
  }

  std::vector<emulator::Buffer> args;
  for (size_t l = 0; l < plan.launches.size(); ++l) {
    const LaunchSpec &launch = plan.launches[l];
    // As on the GPU, a launch with no blocks or threads has nothing to do.
    if (!launch.grid[0] || !launch.grid[1] || !launch.grid[2] ||
        !launch.block[0] || !launch.block[1] || !launch.block[2])
      continue;
    args.clear();
    for (size_t index : launch.args)
      args.push_back(planBuffers[index]);
#ifdef PB_HAVE_TILE_IR
    if (executable.tileModules.contains(launch.module)) {
      std::vector<mlir::pb::tileir::InterpreterBuffer> tileArgs;
      for (const emulator::Buffer &buffer : args)
        tileArgs.push_back({buffer.data, buffer.bytes});
      if (llvm::Error error = executable.tilePrograms->launch(
              launch.module, launch.kernel, launch.grid, tileArgs))
        return makeStatus(PB_STATUS_RUNTIME_ERROR,
                          "interpreted launch " + llvm::Twine(l) +
                              " of entry '" + entry + "' (Tile IR kernel '" +
                              launch.kernel +
                              "'): " + llvm::toString(std::move(error)));
      continue;
    }
#endif
    if (llvm::Error error = executable.program->launch(
            launch.module, launch.kernel, launch.grid, launch.block,
            launch.dynamicShared, args))
      return makeStatus(PB_STATUS_RUNTIME_ERROR,
                        "emulated launch " + llvm::Twine(l) + " of entry '" +
                            entry + "' (kernel '" + launch.kernel +
                            "'): " + llvm::toString(std::move(error)));
  }
  return nullptr;
#endif
}
