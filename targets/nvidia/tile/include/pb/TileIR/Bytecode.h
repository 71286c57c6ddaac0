//===- Bytecode.h - CUDA Tile IR bytecode -----------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The binary form `tileiras` reads, written from the public specification
// of CUDA Tile IR's bytecode: a header (magic "\x7fTileIR\0", version), then
// sections (functions, constants, debug information, types, strings), each
// an id, a length and an alignment; tables are counts, offsets and data;
// numbers are LEB128 varints. One bytecode version is written and read.
//
//===----------------------------------------------------------------------===//

#ifndef PB_TILEIR_BYTECODE_H
#define PB_TILEIR_BYTECODE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::pb::tileir {

/// The bytecode version written and the only one read: 13.4 (tileiras
/// 13.4's newest; `tileiras --list-versions`).
struct BytecodeVersion {
  unsigned major, minor, tag;
};
inline constexpr BytecodeVersion kBytecodeVersion{13, 4, 0};

/// Writes every `tileir.entry` directly inside `container`'s single-block
/// region as one kernel of a bytecode module. Operations the writer has no
/// encoding for are an error on that operation.
LogicalResult writeBytecode(Operation *container, llvm::raw_ostream &os);

/// Reads bytecode back: a module of `tileir.entry` operations. A malformed
/// or truncated buffer, another version or an unknown opcode is an error
/// (emitted at `loc`), never a crash.
OwningOpRef<mlir::ModuleOp> readBytecode(llvm::StringRef bytes,
                                         MLIRContext *context, Location loc);

} // namespace mlir::pb::tileir

#endif // PB_TILEIR_BYTECODE_H
