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

def PBCPUEntryBuffersPass : Pass<"pb-cpu-entry-buffers", "ModuleOp"> {
  let summary = "Pass an entry's buffers of dynamic shape as bare pointers";
  let description = [{
    Stage S4 (CPU), before the lowering to the LLVM dialect, whose
    bare-pointer calling convention takes only statically shaped memrefs.
    A public function's memref argument with dynamic dimensions, each named
    by its `pb.dim_args` (pb-check-input-contract; pb-bind-dims has already
    replaced their `memref.dim`), becomes a rank-0 memref of its element
    type, a bare pointer, which a `memref.reinterpret_cast` at the start of
    the function views with its sizes (the size arguments) and its
    row-major strides (products of them). Any other dynamic memref argument
    is an error naming the function.

      func.func @f(%x: memref<?x4xf32> {pb.dim_args = array<i64: 1, -1>},
                   %n: index)
      ->
      func.func @f(%p: memref<f32>, %n: index) {
        %x = memref.reinterpret_cast %p to offset: [0], sizes: [%n, 4],
             strides: [4, 1] : memref<f32> to memref<?x4xf32>
  }];
  let dependentDialects = ["memref::MemRefDialect", "arith::ArithDialect"];
}

def PBCPUExpandReshapesPass : Pass<"pb-cpu-expand-reshapes", "ModuleOp"> {
  let summary = "Views of expand_shape ops that split a dimension into "
                "several of run-time size";
  let description = [{
    Stage S4 (CPU), before `expand-strided-metadata`, which crashes on a
    `memref.expand_shape` whose reassociation group has more than one
    dimension of run-time size (a [s0 * s1, 256] buffer split into
    [s0, s1, 16, 16]: a symbolic batch and sequence length). Such an op
    becomes a `memref.reinterpret_cast` of its source's base buffer: the
    source's offset, the output shape as sizes, and within each group the
    source dimension's stride for the innermost dimension, times the sizes
    to its right for the others. Other expand_shape ops are left to
    `expand-strided-metadata`.

      %e = memref.expand_shape %m [[0, 1], [2, 3]]
           output_shape [%b, %s, 16, 16]
           : memref<?x256xf32> into memref<?x?x16x16xf32>
      ->
      %base, %offset, %sizes:2, %strides:2 = memref.extract_strided_metadata %m
      %e = memref.reinterpret_cast %base to offset: [0],
           sizes: [%b, %s, 16, 16], strides: [%t, 256, 16, 1]
      (%t = %s * 256)
  }];
  let dependentDialects = ["memref::MemRefDialect", "arith::ArithDialect"];
}

def PBCPUEntryWrappersPass : Pass<"pb-cpu-entry-wrappers", "ModuleOp"> {
  let summary = "Give every entry function a packed-argument C wrapper";
  let description = [{
    Stage S4 (CPU), after the lowering to the LLVM dialect with bare-pointer
    memrefs. For each public function with a body, adds

      void __pb_entry_<name>(void **buffers, const int64_t *sizes)

    that loads one pointer per pointer argument from `buffers` and one
    64-bit integer per `index` argument (the entry's sizes, in the order of
    the arguments) from `sizes`, and calls the function. The runtime calls
    this wrapper with the caller's buffers (inputs first, then outputs) and
    sizes, so it needs no per-signature C code. An entry with an argument
    of another type is an error naming the function. Private functions with a body
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
