// RUN: pb-opt %s --pb-cpu-entry-wrappers --split-input-file --verify-diagnostics | FileCheck %s

// A public function with a body gets a wrapper that loads one pointer per
// argument from the packed array and calls it; declarations do not.
// CHECK-LABEL: llvm.func @add(
// CHECK: llvm.func internal @kernel_0123456789abcdef(
// CHECK: llvm.func @__pb_entry_add(%[[ARGS:.*]]: !llvm.ptr, %{{.*}}: !llvm.ptr)
// CHECK: %[[S0:.*]] = llvm.getelementptr %[[ARGS]][0]
// CHECK: %[[P0:.*]] = llvm.load %[[S0]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[S1:.*]] = llvm.getelementptr %[[ARGS]][1]
// CHECK: %[[P1:.*]] = llvm.load %[[S1]] : !llvm.ptr -> !llvm.ptr
// CHECK: llvm.call @add(%[[P0]], %[[P1]])
// CHECK-NOT: __pb_request_tile_registers
// CHECK-NOT: __pb_entry_malloc
// CHECK-NOT: __pb_entry_helper
// CHECK-NOT: __pb_entry_kernel_0123456789abcdef
llvm.func @malloc(i64) -> !llvm.ptr
llvm.func internal @helper(%a: !llvm.ptr) {
  llvm.return
}
llvm.func @add(%a: !llvm.ptr, %b: !llvm.ptr) {
  llvm.call @kernel_0123456789abcdef(%a) : (!llvm.ptr) -> ()
  llvm.return
}
// A private function with a body (a kernel of pb-outline-kernels) is no
// entry: it becomes internal.
llvm.func @kernel_0123456789abcdef(%a: !llvm.ptr) attributes {sym_visibility = "private"} {
  llvm.return
}

// -----

// Sizes (index arguments, i64 here) come from the second array, buffers
// from the first, each in argument order.
// CHECK-LABEL: llvm.func @sized(
// CHECK: llvm.func @__pb_entry_sized(%[[ARGS:.*]]: !llvm.ptr, %[[SIZES:.*]]: !llvm.ptr)
// CHECK: %[[S0:.*]] = llvm.getelementptr %[[ARGS]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: %[[P0:.*]] = llvm.load %[[S0]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[Z0:.*]] = llvm.getelementptr %[[SIZES]][0] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK: %[[N0:.*]] = llvm.load %[[Z0]] : !llvm.ptr -> i64
// CHECK: %[[Z1:.*]] = llvm.getelementptr %[[SIZES]][1] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK: %[[N1:.*]] = llvm.load %[[Z1]] : !llvm.ptr -> i64
// CHECK: %[[S1:.*]] = llvm.getelementptr %[[ARGS]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: %[[P1:.*]] = llvm.load %[[S1]] : !llvm.ptr -> !llvm.ptr
// CHECK: llvm.call @sized(%[[P0]], %[[N0]], %[[N1]], %[[P1]])
llvm.func @sized(%a: !llvm.ptr, %n: i64, %m: i64, %b: !llvm.ptr) {
  llvm.return
}

// -----

// expected-error @+1 {{entry 'scalar' argument 1 has type 'f32'; entries take only buffers and index sizes}}
llvm.func @scalar(%a: !llvm.ptr, %x: f32) {
  llvm.return
}

// -----

// Code on AMX tile registers: each wrapper first asks for the tile state
// (Linux grants it per process, on request).
// CHECK-LABEL: llvm.func @tiles(
// CHECK: llvm.func @__pb_request_tile_registers()
// CHECK: llvm.func @__pb_entry_tiles(%{{.*}}: !llvm.ptr)
// CHECK-NEXT: llvm.call @__pb_request_tile_registers() : () -> ()
// CHECK: llvm.call @tiles(
llvm.func @tiles(%a: !llvm.ptr) {
  %c16 = llvm.mlir.constant(16 : i16) : i16
  %c64 = llvm.mlir.constant(64 : i16) : i16
  %t = llvm.call_intrinsic "llvm.x86.tilezero.internal"(%c16, %c64) : (i16, i16) -> !llvm.x86_amx
  llvm.return
}
