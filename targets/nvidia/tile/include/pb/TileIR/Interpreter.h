//===- Interpreter.h - Runs Tile IR kernels on the CPU ----------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A tile-level interpreter for `tileir.entry` kernels read from bytecode: it
// runs a kernel's tile blocks one after another on the CPU, every tile a
// row-major array of doubles rounded to its element type after each
// operation, and checks every memory access against the buffer the kernel
// argument points to. It answers what a kernel computes without a GPU, and
// its checks turn an out-of-bounds access into an error naming the tile
// block and the operation.
//
//===----------------------------------------------------------------------===//

#ifndef PB_TILEIR_INTERPRETER_H
#define PB_TILEIR_INTERPRETER_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstddef>
#include <memory>
#include <utility>

namespace mlir::pb::tileir {

/// A buffer a kernel argument points to: host address and size in bytes.
struct InterpreterBuffer {
  void *data;
  size_t bytes;
};

/// Tile IR kernels run on the CPU, one tile block after another, with every
/// access checked.
///
/// Semantics: each operation's result is computed in double precision and
/// rounded (to nearest, ties to even) to its element type; `mmaf` sums the
/// products of a result element in double and rounds once. Loads of elements
/// past the tensor view's extent give NaN (0 for integers), stores do not
/// write them; a partition index outside the view's tile grid, a `for` step
/// that is not positive, and any element address outside its buffer are
/// errors.
class TileProgram {
public:
  /// `modules`: (name, bytecode) pairs. Reads each with readBytecode; fails
  /// (naming the module) on bytecode it cannot read and on operations the
  /// interpreter does not implement (naming the op and the kernel).
  static llvm::Expected<std::unique_ptr<TileProgram>>
  create(llvm::ArrayRef<std::pair<llvm::StringRef, llvm::StringRef>> modules);
  ~TileProgram();

  /// Runs kernel `kernel` (a tileir.entry's symbol name) of module `module`
  /// over grid[0] x grid[1] x grid[2] tile blocks. `buffers` are the kernel's
  /// arguments in order; each argument must be a pointer tile
  /// (!tileir.tile<!tileir.ptr<T>>), pointing at the start of its buffer.
  /// Returns an error naming the kernel, the tile block (x, y, z) and the
  /// operation on the first failed check.
  llvm::Error launch(llvm::StringRef module, llvm::StringRef kernel,
                     const unsigned grid[3],
                     llvm::ArrayRef<InterpreterBuffer> buffers);

private:
  struct Impl;
  explicit TileProgram(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl;
};

} // namespace mlir::pb::tileir

#endif // PB_TILEIR_INTERPRETER_H
