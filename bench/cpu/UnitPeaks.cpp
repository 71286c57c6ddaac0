//===- UnitPeaks.cpp - Measured issue rates of the CPU's vector units ----===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "UnitPeaks.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <thread>

namespace pb::bench {

namespace {

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// Twelve accumulators (registers 0-11) fed by two source registers that
// never change: independent chains, so the loop runs at the unit's issue
// rate once the latency (4-6 cycles) is covered twice over.
#define PB_TWELVE(OP, REG)                                                     \
  OP " %%" REG "14, %%" REG "15, %%" REG "0\n\t" OP " %%" REG "14, %%" REG     \
     "15, %%" REG "1\n\t" OP " %%" REG "14, %%" REG "15, %%" REG "2\n\t" OP    \
     " %%" REG "14, %%" REG "15, %%" REG "3\n\t" OP " %%" REG "14, %%" REG     \
     "15, %%" REG "4\n\t" OP " %%" REG "14, %%" REG "15, %%" REG "5\n\t" OP    \
     " %%" REG "14, %%" REG "15, %%" REG "6\n\t" OP " %%" REG "14, %%" REG     \
     "15, %%" REG "7\n\t" OP " %%" REG "14, %%" REG "15, %%" REG "8\n\t" OP    \
     " %%" REG "14, %%" REG "15, %%" REG "9\n\t" OP " %%" REG "14, %%" REG     \
     "15, %%" REG "10\n\t" OP " %%" REG "14, %%" REG "15, %%" REG "11\n\t"

// Every register starts at zero: whatever an accumulator held before
// (a subnormal, say) could slow the unit down.
#define PB_ZERO(ZERO, REG, N) ZERO " %%" REG N ", %%" REG N ", %%" REG N "\n\t"
#define PB_LOOP(NAME, ZERO, OP, REG, TARGET)                                   \
  __attribute__((target(TARGET))) void NAME(uint64_t iterations) {             \
    asm volatile(                                                              \
        PB_ZERO(ZERO, REG, "0") PB_ZERO(ZERO, REG, "1") PB_ZERO(               \
            ZERO, REG, "2") PB_ZERO(ZERO, REG, "3") PB_ZERO(ZERO, REG, "4")    \
            PB_ZERO(ZERO, REG, "5") PB_ZERO(ZERO, REG, "6")                    \
                PB_ZERO(ZERO, REG, "7") PB_ZERO(ZERO, REG, "8")                \
                    PB_ZERO(ZERO, REG, "9") PB_ZERO(ZERO, REG, "10")           \
                        PB_ZERO(ZERO, REG, "11") PB_ZERO(ZERO, REG, "14")      \
                            PB_ZERO(ZERO, REG, "15") "1:\n\t" PB_TWELVE(       \
                                OP, REG) "sub $1, %0\n\t"                      \
                                         "jnz 1b\n\t"                          \
                                         "vzeroupper"                          \
        : "+r"(iterations)                                                     \
        :                                                                      \
        : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",      \
          "xmm8", "xmm9", "xmm10", "xmm11", "xmm14", "xmm15", "cc");           \
  }

PB_LOOP(fmaZmm, "vpxord", "vfmadd231ps", "zmm", "avx512f")
PB_LOOP(fmaYmm, "vpxor", "vfmadd231ps", "ymm", "avx2,fma")
PB_LOOP(dpbf16Zmm, "vpxord", "vdpbf16ps", "zmm", "avx512f,avx512bf16")
PB_LOOP(dpbusdZmm, "vpxord", "vpdpbusd", "zmm", "avx512f,avx512vnni")
#undef PB_LOOP
#undef PB_ZERO
#undef PB_TWELVE

struct Loop {
  const char *type;
  const char *instruction;
  bool available;
  void (*run)(uint64_t);
  /// Operations per instruction: 2 per multiply-add lane.
  double operations;
};

/// Seconds for `threads` threads to run `iterations` loop passes each.
double timeThreads(void (*run)(uint64_t), unsigned threads,
                   uint64_t iterations) {
  auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> workers;
  for (unsigned t = 1; t < threads; ++t)
    workers.emplace_back([&] { run(iterations); });
  run(iterations);
  for (std::thread &worker : workers)
    worker.join();
  std::chrono::duration<double> elapsed =
      std::chrono::steady_clock::now() - start;
  return elapsed.count();
}
#endif

} // namespace

std::vector<UnitPeak> measureUnitPeaks(unsigned threads, unsigned runs) {
  std::vector<UnitPeak> peaks;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  bool avx512 = __builtin_cpu_supports("avx512f");
  std::array<Loop, 4> loops = {{
      {"f32", "vfmadd231ps zmm", avx512, fmaZmm, 16 * 2},
      {"f32", "vfmadd231ps ymm",
       !avx512 && __builtin_cpu_supports("avx2") &&
           __builtin_cpu_supports("fma"),
       fmaYmm, 8 * 2},
      {"bf16", "vdpbf16ps zmm", avx512 && __builtin_cpu_supports("avx512bf16"),
       dpbf16Zmm, 16 * 2 * 2},
      {"i8", "vpdpbusd zmm", avx512 && __builtin_cpu_supports("avx512vnni"),
       dpbusdZmm, 16 * 4 * 2},
  }};
  // About 20 ms a run at 3 GHz and one instruction per cycle.
  constexpr uint64_t kIterations = 5'000'000;
  for (const Loop &loop : loops) {
    if (!loop.available)
      continue;
    // Long enough for an idle core to reach its running clock.
    (void)timeThreads(loop.run, threads, 2 * kIterations);
    double best = INFINITY;
    for (unsigned run = 0; run < std::max(runs, 3u); ++run)
      best = std::min(best, timeThreads(loop.run, threads, kIterations));
    double instructions = 12.0 * kIterations * threads;
    peaks.push_back({loop.type, loop.instruction,
                     instructions * loop.operations / best / 1e9});
  }
#else
  (void)threads;
  (void)runs;
#endif
  return peaks;
}

std::vector<std::pair<std::string, double>>
readStatedPeaks(const std::string &pbOpt, const std::string &target,
                std::string &error) {
  std::vector<std::pair<std::string, double>> peaks;
  std::string command = "'" + pbOpt + "' --print-target='" + target + "' 2>&1";
  FILE *pipe = popen(command.c_str(), "r");
  if (!pipe) {
    error = "cannot run " + pbOpt;
    return peaks;
  }
  std::string text;
  char buffer[4096];
  while (size_t size = std::fread(buffer, 1, sizeof(buffer), pipe))
    text.append(buffer, size);
  int status = pclose(pipe);
  if (status != 0) {
    error = "`pb-opt --print-target=" + target + "` failed: " + text;
    return peaks;
  }
  // "  peak compute:" then lines "    f32        vector 77 GFLOP/s".
  std::istringstream lines(text);
  std::string line;
  bool inPeaks = false;
  while (std::getline(lines, line)) {
    if (line.find("peak compute:") != std::string::npos) {
      inPeaks = true;
      continue;
    }
    if (!inPeaks)
      continue;
    std::istringstream fields(line);
    std::string type, unit, gflops, suffix;
    if (!(fields >> type >> unit >> gflops >> suffix) || suffix != "GFLOP/s")
      break;
    if (unit == "vector")
      peaks.emplace_back(type, std::atof(gflops.c_str()));
  }
  if (peaks.empty())
    error = "`pb-opt --print-target=" + target + "` states no vector peak";
  return peaks;
}

} // namespace pb::bench
