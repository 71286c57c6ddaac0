//===- UnitPeaks.h - Measured rates of the vector units ------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// pb-bench-cpu's peak rows: how many multiply-accumulate instructions of
// each vector unit the cores issue per second, as operations per second
// (an FMA lane is 2, a VDPBF16PS lane 4, a VPDPBUSD lane 8), next to the
// peaks that `pb-opt --print-target` states for the target.
//
//===----------------------------------------------------------------------===//

#ifndef PB_BENCH_CPU_UNITPEAKS_H
#define PB_BENCH_CPU_UNITPEAKS_H

#include <string>
#include <vector>

namespace pb::bench {

/// One unit's measured rate.
struct UnitPeak {
  /// The element type as print-target names it: "f32", "bf16", "i8".
  std::string type;
  /// The instruction timed ("vfmadd231ps zmm", ...).
  std::string instruction;
  /// Operations per second over `threads` threads, in G/s.
  double gops = 0;
};

/// Times each vector multiply-accumulate instruction this CPU has among
/// the f32 FMA (zmm where AVX-512 is there, else ymm), VDPBF16PS and
/// VPDPBUSD (zmm), on `threads` threads at once: twelve independent
/// accumulators per thread, so that only the issue rate limits them; the
/// fastest of `runs` runs of about 20 ms. Empty on a CPU that is not
/// x86-64.
std::vector<UnitPeak> measureUnitPeaks(unsigned threads, unsigned runs);

/// The "vector" peaks (GFLOP/s, per core) that `pb-opt --print-target=NAME`
/// states for the target, by element type; `pbOpt` is pb-opt's path.
/// Empty, with `error` set, when pb-opt fails or states none.
std::vector<std::pair<std::string, double>>
readStatedPeaks(const std::string &pbOpt, const std::string &target,
                std::string &error);

} // namespace pb::bench

#endif // PB_BENCH_CPU_UNITPEAKS_H
