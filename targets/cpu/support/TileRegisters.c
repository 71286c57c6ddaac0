/*===- TileRegisters.c - The AMX tile state, requested from the kernel ----===*
 *
 * SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
 *
 * Linux hands a process the AMX tile data state (XTILEDATA) only after it
 * asks: arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA). Until then the
 * first tile instruction raises SIGILL. The entry wrappers of an artifact
 * whose code uses tile registers call __pb_request_tile_registers first
 * (pb-cpu-entry-wrappers); the request is made once per process and holds
 * for all its threads. A refusal (a kernel older than 5.16, a hypervisor
 * that hides the state) stops the process with a message rather than with
 * SIGILL in a kernel. This file is its own member of the archive, so
 * artifacts without tile code do not link it.
 *===----------------------------------------------------------------------===*/

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PB_HIDDEN __attribute__((visibility("hidden")))

/* From the Linux UAPI (asm/prctl.h) and the XSAVE feature numbers. */
enum { kArchReqXcompPerm = 0x1023, kXFeatureXTileData = 18 };

static atomic_int granted;

PB_HIDDEN void __pb_request_tile_registers(void) {
  if (atomic_load_explicit(&granted, memory_order_acquire))
    return;
  if (syscall(SYS_arch_prctl, kArchReqXcompPerm, kXFeatureXTileData) != 0) {
    perror("polyblocks: this artifact uses AMX tile registers, and the "
           "kernel refused them (arch_prctl ARCH_REQ_XCOMP_PERM)");
    abort();
  }
  atomic_store_explicit(&granted, 1, memory_order_release);
}
