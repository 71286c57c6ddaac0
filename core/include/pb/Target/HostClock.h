//===- HostClock.h - The running CPU's clock ------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A CPU chip's .td states its peaks and its core-side bandwidths at one
// clock (ClockMHz). The CPU the compiler runs on seldom runs at that clock:
// a boosting part runs faster, a virtual machine's part is unknown. The
// host-resolved targets (cpu-host) therefore measure the running core's
// clock and scale the figures that follow it: the chip's per-cycle rates
// (what its units issue per clock) stay the .td's.
//
//===----------------------------------------------------------------------===//

#ifndef PB_TARGET_HOSTCLOCK_H
#define PB_TARGET_HOSTCLOCK_H

#include "pb/Target/TargetDesc.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace mlir::pb {

/// The module attribute (an i64, MHz) that pb-attach-target sets beside
/// `pb.target` when it resolved a host target to a chip at a measured
/// clock: getTargetChip then gives the passes that chip at that clock, and
/// the IR says which clock its figures assumed.
inline constexpr llvm::StringLiteral kHostClockAttrName = "pb.host_clock_mhz";

/// The running core's clock and how it was found.
struct HostClock {
  /// MHz, rounded to 100; 0 when neither measured nor given.
  int64_t mhz = 0;
  /// "measured" (a timed chain of dependent integer adds, one per cycle),
  /// "PB_HOST_CLOCK_MHZ" (the environment variable), or "not measured on
  /// this architecture".
  std::string source;
};

/// The running CPU's clock, found once per process. PB_HOST_CLOCK_MHZ (a
/// positive integer) replaces the measurement, so that a build can be
/// reproduced on another machine; any other value is an error.
llvm::Expected<HostClock> getHostClock();

/// `chip` with its peaks and the bandwidths of its core-scoped memory
/// levels (registers and the core's caches) scaled from the .td's clock to
/// `clockMHz`, and `clockMHz` as its clock; the socket's levels (shared
/// caches, DRAM) keep their figures. `chip` itself when the clocks agree
/// or either is unknown. The copy lives as long as the process.
const ChipDesc *getChipAtClock(const ChipDesc &chip, int64_t clockMHz);

} // namespace mlir::pb

#endif // PB_TARGET_HOSTCLOCK_H
