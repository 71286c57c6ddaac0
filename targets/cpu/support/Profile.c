/*===- Profile.c - Per-call kernel timers of profiled CPU artifacts -------===*
 *
 * SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
 *
 * An artifact compiled with profile=1 brackets each kernel call of its
 * entries (a site, numbered by pb-kernel-sites) with __pb_profile_now and
 * __pb_profile_add, which add the call's wall-clock nanoseconds and one
 * call to the site's counters. The counters are atomic: entries may run
 * on several threads at once (a site called concurrently adds both calls'
 * times). The runtime reads and clears them through the two exported
 * functions below (pbExecutableReadProfile). This file is its own member
 * of the archive, so artifacts compiled without profiling do not link it.
 * Each artifact has its own counters.
 *===----------------------------------------------------------------------===*/

#include <stdint.h>
#include <time.h>

/* Sites beyond this many are not counted (the runtime says so). */
enum { kMaxSites = 1 << 16 };

static uint64_t siteNanoseconds[kMaxSites];
static uint64_t siteCalls[kMaxSites];

#define PB_HIDDEN __attribute__((visibility("hidden")))
#define PB_EXPORTED __attribute__((visibility("default")))

PB_HIDDEN int64_t __pb_profile_now(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

PB_HIDDEN void __pb_profile_add(int32_t site, int64_t start) {
  if (site < 0 || site >= kMaxSites)
    return;
  int64_t elapsed = __pb_profile_now() - start;
  __atomic_fetch_add(&siteNanoseconds[site], (uint64_t)elapsed,
                     __ATOMIC_RELAXED);
  __atomic_fetch_add(&siteCalls[site], 1, __ATOMIC_RELAXED);
}

/* Copies the counters of sites 0 .. count-1 (at most kMaxSites) and returns
 * how many sites this artifact can count. */
PB_EXPORTED uint64_t __pb_profile_read(uint64_t *nanoseconds, uint64_t *calls,
                                       uint64_t count) {
  for (uint64_t i = 0; i < count && i < kMaxSites; ++i) {
    nanoseconds[i] = __atomic_load_n(&siteNanoseconds[i], __ATOMIC_RELAXED);
    calls[i] = __atomic_load_n(&siteCalls[i], __ATOMIC_RELAXED);
  }
  return kMaxSites;
}

PB_EXPORTED void __pb_profile_reset(void) {
  for (uint64_t i = 0; i < kMaxSites; ++i) {
    __atomic_store_n(&siteNanoseconds[i], 0, __ATOMIC_RELAXED);
    __atomic_store_n(&siteCalls[i], 0, __ATOMIC_RELAXED);
  }
}
