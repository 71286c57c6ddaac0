//===- Fiber.h - Stackful coroutines for emulated threads ------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Each emulated GPU thread that may wait (at a barrier or a collective) runs
// on a fiber of its own. On x86-64 a switch saves and restores the callee-
// saved registers and the floating-point control words only (ucontext's
// swapcontext also saves the signal mask, a system call per switch, which
// made switching most of the emulator's time); elsewhere ucontext is used.
//
//===----------------------------------------------------------------------===//

#ifndef PB_GPU_EMULATOR_FIBER_H
#define PB_GPU_EMULATOR_FIBER_H

#include <cstddef>

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

namespace mlir::pb::emulator {

struct FiberContext {
#if defined(__x86_64__)
  void *stackPointer = nullptr;
#else
  ucontext_t context;
#endif
};

/// Prepares `fiber` to run `entry(argument)` on the stack [stack, stack +
/// bytes) at its first switch. `entry` must never return: it ends by
/// switching to another fiber for good.
void startFiber(FiberContext &fiber, char *stack, size_t bytes,
                void (*entry)(void *), void *argument);

/// Saves the running code's context in `from` and continues `to`.
void switchFiber(FiberContext &from, FiberContext &to);

} // namespace mlir::pb::emulator

#endif // PB_GPU_EMULATOR_FIBER_H
