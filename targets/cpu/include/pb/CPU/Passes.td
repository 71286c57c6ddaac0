//===- Passes.td - CPU target passes -----------------------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef PB_CPU_PASSES_TD
#define PB_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// CPU passes (keep alphabetical)
//===----------------------------------------------------------------------===//

def PBCPUEntryWrappersPass : Pass<"pb-cpu-entry-wrappers", "ModuleOp"> {
  let summary = "Give every entry function a packed-argument C wrapper";
  let description = [{
    Stage S4 (CPU), after the lowering to the LLVM dialect with bare-pointer
    memrefs. For each public function with a body, adds

      void __pb_entry_<name>(void **buffers)

    that loads one pointer per argument from `buffers` and calls the
    function. The runtime calls this wrapper with the caller's buffers
    (inputs first, then outputs), so it needs no per-signature C code.
    An entry whose arguments are not all pointers (a scalar or a dynamic
    memref) is an error naming the function. Private functions with a body
    (the kernels of pb-outline-kernels) are no entries: they get internal
    linkage, so that they are not exported and LLVM may inline them.

    A module whose code uses AMX tile registers (calls of `llvm.x86.tile*`
    or `llvm.x86.tdp*` intrinsics) gets a call of
    `__pb_request_tile_registers` (support/TileRegisters.c) at the start of
    each wrapper: Linux grants the tile state to a process only on request.

    Before:
      llvm.func @f(%a: !llvm.ptr, %b: !llvm.ptr)
    After, in addition:
      llvm.func @__pb_entry_f(%args: !llvm.ptr) {
        %p0 = llvm.load (gep %args[0]) ; %p1 = llvm.load (gep %args[1])
        llvm.call @f(%p0, %p1)
      }
  }];
  let dependentDialects = ["LLVM::LLVMDialect"];
}

#endif // PB_CPU_PASSES_TD
