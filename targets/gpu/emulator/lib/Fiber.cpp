//===- Fiber.cpp - Stackful coroutines for emulated threads ---------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Fiber.h"

#include <cstdint>
#include <cstring>

using namespace mlir::pb::emulator;

#if defined(__x86_64__)

// pbEmulatorSwitch(void **save, void *next): pushes the System V callee-
// saved registers and MXCSR/x87 control words on the current stack, stores
// the stack pointer in *save, loads `next` and pops the same from it.
// pbEmulatorTrampoline is where a new fiber's first switch returns to: its
// entry function and argument wait in r13 and r12.
asm(R"(
  .text
  .p2align 4
  .globl pbEmulatorSwitch
  .hidden pbEmulatorSwitch
  .type pbEmulatorSwitch, @function
pbEmulatorSwitch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  retq
  .size pbEmulatorSwitch, .-pbEmulatorSwitch

  .p2align 4
  .globl pbEmulatorTrampoline
  .hidden pbEmulatorTrampoline
  .type pbEmulatorTrampoline, @function
pbEmulatorTrampoline:
  movq %r12, %rdi
  callq *%r13
  ud2
  .size pbEmulatorTrampoline, .-pbEmulatorTrampoline
)");

extern "C" void pbEmulatorSwitch(void **save, void *next);
extern "C" void pbEmulatorTrampoline();

void mlir::pb::emulator::startFiber(FiberContext &fiber, char *stack,
                                    size_t bytes, void (*entry)(void *),
                                    void *argument) {
  // From the stack pointer up: the control words, r15, r14, r13 (entry),
  // r12 (argument), rbx, rbp, the return address (the trampoline). After
  // the return the stack is 16-byte aligned, as a call expects it.
  uintptr_t top = (reinterpret_cast<uintptr_t>(stack) + bytes) & ~uintptr_t(15);
  auto *frame = reinterpret_cast<uint64_t *>(top - 64);
  uint32_t controls[2] = {0x1f80, 0x037f}; // MXCSR and x87 defaults
  std::memcpy(&frame[0], controls, 8);
  frame[1] = 0;                                    // r15
  frame[2] = 0;                                    // r14
  frame[3] = reinterpret_cast<uint64_t>(entry);    // r13
  frame[4] = reinterpret_cast<uint64_t>(argument); // r12
  frame[5] = 0;                                    // rbx
  frame[6] = 0;                                    // rbp
  frame[7] = reinterpret_cast<uint64_t>(&pbEmulatorTrampoline);
  fiber.stackPointer = frame;
}

void mlir::pb::emulator::switchFiber(FiberContext &from, FiberContext &to) {
  pbEmulatorSwitch(&from.stackPointer, to.stackPointer);
}

#else

void mlir::pb::emulator::startFiber(FiberContext &fiber, char *stack,
                                    size_t bytes, void (*entry)(void *),
                                    void *argument) {
  getcontext(&fiber.context);
  fiber.context.uc_stack.ss_sp = stack;
  fiber.context.uc_stack.ss_size = bytes;
  fiber.context.uc_link = nullptr;
  uintptr_t address = reinterpret_cast<uintptr_t>(argument);
  uintptr_t function = reinterpret_cast<uintptr_t>(entry);
  makecontext(&fiber.context,
              reinterpret_cast<void (*)()>(
                  +[](unsigned a, unsigned b, unsigned c, unsigned d) {
                    auto fn = reinterpret_cast<void (*)(void *)>(
                        (uintptr_t(c) << 32) | d);
                    fn(reinterpret_cast<void *>((uintptr_t(a) << 32) | b));
                  }),
              4, unsigned(address >> 32), unsigned(address),
              unsigned(function >> 32), unsigned(function));
}

void mlir::pb::emulator::switchFiber(FiberContext &from, FiberContext &to) {
  swapcontext(&from.context, &to.context);
}

#endif
