//===- HostClock.cpp - The running CPU's clock ---------------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "pb/Target/HostClock.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <utility>

using namespace llvm;

namespace mlir::pb {

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/// Seconds for `iterations` passes through four dependent adds: one add per
/// cycle on every x86-64 core, and the loop's own counter runs beside them.
static double timeDependentAdds(uint64_t iterations) {
  uint64_t value = 0, count = iterations;
  auto start = std::chrono::steady_clock::now();
  asm volatile("1:\n\t"
               "add $1, %0\n\t"
               "add $1, %0\n\t"
               "add $1, %0\n\t"
               "add $1, %0\n\t"
               "sub $1, %1\n\t"
               "jnz 1b"
               : "+r"(value), "+r"(count));
  std::chrono::duration<double> elapsed =
      std::chrono::steady_clock::now() - start;
  return elapsed.count();
}

/// The core's clock in MHz: the fastest of several short chains (a
/// preempted one only reads slower), after one longer chain that lets the
/// core leave an idle clock. About 3 ms in all.
static int64_t measureClockMHz() {
  constexpr uint64_t kWarmupIterations = 1 << 20;
  constexpr uint64_t kIterations = 1 << 18;
  (void)timeDependentAdds(kWarmupIterations);
  double best = INFINITY;
  for (int run = 0; run < 7; ++run)
    best = std::min(best, timeDependentAdds(kIterations));
  if (!(best > 0))
    return 0;
  double mhz = 4.0 * kIterations / best / 1e6;
  return static_cast<int64_t>(std::lround(mhz / 100.0)) * 100;
}
#endif

static Expected<HostClock> findHostClock() {
  HostClock clock;
  if (const char *value = std::getenv("PB_HOST_CLOCK_MHZ")) {
    int64_t mhz = 0;
    if (StringRef(value).getAsInteger(10, mhz) || mhz <= 0)
      return createStringError(inconvertibleErrorCode(),
                               "PB_HOST_CLOCK_MHZ='" + std::string(value) +
                                   "' is not a clock in MHz (a positive "
                                   "integer)");
    clock.mhz = mhz;
    clock.source = "PB_HOST_CLOCK_MHZ";
    return clock;
  }
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  clock.mhz = measureClockMHz();
  clock.source = "measured";
#else
  clock.source = "not measured on this architecture";
#endif
  return clock;
}

Expected<HostClock> getHostClock() {
  // Found once, the environment read once too: one process, one clock.
  static const std::pair<HostClock, std::string> found = [] {
    Expected<HostClock> clock = findHostClock();
    if (!clock)
      return std::make_pair(HostClock(), toString(clock.takeError()));
    return std::make_pair(*clock, std::string());
  }();
  if (!found.second.empty())
    return createStringError(inconvertibleErrorCode(), found.second);
  return found.first;
}

namespace {
/// A chip's tables copied and scaled; ChipDesc points into them.
struct ScaledChip {
  ChipDesc chip;
  CostModelDesc costModel;
  SmallVector<PeakComputeDesc> peaks;
  SmallVector<LevelBandwidthDesc> bandwidths;
  SmallVector<MemoryLevelDesc> memoryLevels;
};
} // namespace

static int64_t scale(int64_t figure, int64_t toMHz, int64_t fromMHz) {
  return static_cast<int64_t>(
      std::llround(static_cast<double>(figure) * toMHz / fromMHz));
}

static std::unique_ptr<ScaledChip> scaleChip(const ChipDesc &chip,
                                             int64_t clockMHz) {
  auto scaled = std::make_unique<ScaledChip>();
  scaled->chip = chip;
  scaled->chip.clockMHz = clockMHz;
  int64_t fromMHz = chip.clockMHz;

  SmallVector<StringRef> coreLevels;
  for (const MemoryLevelDesc &level : chip.memoryLevels) {
    MemoryLevelDesc copy = level;
    if (level.scope == ComputeLevelKind::Core) {
      copy.bandwidthGBps = scale(level.bandwidthGBps, clockMHz, fromMHz);
      coreLevels.push_back(level.name);
    }
    scaled->memoryLevels.push_back(copy);
  }
  scaled->chip.memoryLevels = scaled->memoryLevels;

  if (const CostModelDesc *costModel = chip.costModel) {
    scaled->costModel = *costModel;
    scaled->costModel.clockMHz = clockMHz;
    for (PeakComputeDesc peak : costModel->peaks) {
      peak.gflops = scale(peak.gflops, clockMHz, fromMHz);
      scaled->peaks.push_back(peak);
    }
    for (LevelBandwidthDesc bandwidth : costModel->bandwidths) {
      if (is_contained(coreLevels, bandwidth.level))
        bandwidth.bandwidthGBps =
            scale(bandwidth.bandwidthGBps, clockMHz, fromMHz);
      scaled->bandwidths.push_back(bandwidth);
    }
    scaled->costModel.peaks = scaled->peaks;
    scaled->costModel.bandwidths = scaled->bandwidths;
    scaled->chip.costModel = &scaled->costModel;
  }
  return scaled;
}

const ChipDesc *getChipAtClock(const ChipDesc &chip, int64_t clockMHz) {
  if (clockMHz <= 0 || chip.clockMHz <= 0 || clockMHz == chip.clockMHz)
    return &chip;
  static std::mutex mutex;
  static DenseMap<std::pair<const ChipDesc *, int64_t>,
                  std::unique_ptr<ScaledChip>>
      chips;
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<ScaledChip> &entry = chips[{&chip, clockMHz}];
  if (!entry)
    entry = scaleChip(chip, clockMHz);
  return &entry->chip;
}

} // namespace mlir::pb
