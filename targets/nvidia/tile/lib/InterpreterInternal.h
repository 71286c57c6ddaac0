//===- InterpreterInternal.h - The tile interpreter's parts -----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What Interpreter.cpp prepares from a kernel and InterpreterOps.cpp runs:
// every SSA value has a slot, every operation is an instruction holding
// what its execution needs (shapes, element kinds, constants, the static
// part of its views), so that running a tile block only loops over doubles.
// A slot holds a tile as row-major doubles; a pointer, tensor view or
// partition view as (buffer index, byte offset), the rest of a view being
// static in its type; a token as nothing.
//
//===----------------------------------------------------------------------===//

#ifndef PB_TILEIR_LIB_INTERPRETERINTERNAL_H
#define PB_TILEIR_LIB_INTERPRETERINTERNAL_H

#include "pb/TileIR/Interpreter.h"

#include "mlir/IR/Operation.h"
#include "mlir/IR/Types.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Twine.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::pb::tileir::interpreter {

/// The element types a tile or view can hold.
enum class Elem : uint8_t {
  I1,
  I8,
  I16,
  I32,
  I64,
  F16,
  BF16,
  TF32,
  F32,
  F64,
  F8E4M3FN,
  F8E5M2,
  Ptr
};

/// The element kind of `type`, if the interpreter knows it.
std::optional<Elem> classify(Type type);
/// Whether `e` is a float type.
inline bool isFloat(Elem e) { return e >= Elem::F16 && e <= Elem::F8E5M2; }
/// Bytes of one element in memory (tf32 is stored as f32).
unsigned byteSize(Elem e);
/// Rounds every value to element type `e` (to nearest, ties to even;
/// integers are kept as they are).
void roundAll(Elem e, llvm::MutableArrayRef<double> values);

/// What an instruction does: one per operation, but for Copy.
enum class Opcode : uint8_t {
  Constant,
  MakeToken,
  BlockId,
  NumBlocks,
  Copy, // make_tensor_view, make_partition_view, reshape
  Load,
  Store,
  MmaF,
  For,
  AddF,
  SubF,
  MulF,
  DivF,
  MaxF,
  MinF,
  NegF,
  Exp,
  TanH,
  Sqrt,
  Rsqrt,
  FToF,
  Broadcast,
  AbsF,
  Fma,
  CmpF,
  Select,
  Offset,
  AddI,
  MulI,
  DivI,
  RemI,
  CmpI,
  Iota,
  Log,
  Reduce
};

using Shape = llvm::SmallVector<int64_t, 4>;

/// The static part of a partition view access, per tile dimension i (which
/// walks tensor dimension dimMap[i]).
struct ViewAccess {
  Elem elem = Elem::F32;
  unsigned elemBytes = 0;
  Shape tileShape, extent, stride, gridExtent;
  int64_t numElements = 1;
  /// What loads read past the tensor's extent: the view's padding value,
  /// else NaN (0 for integers): undefined in the specification.
  std::optional<double> padding;
  /// The byte just past the last element the view can reach from its base,
  /// or -1 when that overflows 64 bits.
  int64_t spanBytes = 0;
};

/// One prepared operation: its operands' and results' slots, and what its
/// opcode needs.
struct Instr {
  Opcode opcode;
  /// The operation, named in errors.
  Operation *op;
  /// Slots; `index` holds a view access's grid index.
  llvm::SmallVector<unsigned, 4> operands, results, index;
  Elem elem = Elem::F32; // of the result tile (of the stored tile for Store)
  int64_t numElements = 1;
  unsigned width = 1; // doubles per element: 2 for pointers
  /// constant: the value, rounded to the element type.
  std::vector<double> constant;
  /// load_view_tko, store_view_tko: the partition view.
  ViewAccess view;
  // mmaf: batch x (M x K) * (K x N).
  int64_t batch = 1, m = 0, n = 0, k = 0;
  // broadcast: result shape and the source's row-major strides (0 where
  // broadcast).
  Shape shape, sourceStrides;
  // offset: the pointee's bytes.
  unsigned pointeeBytes = 0;
  // cmpf: the predicate (ComparisonPredicate's value) and whether NaN
  // compares false (ordered); maxf, minf: whether NaN propagates.
  unsigned predicate = 0;
  bool ordered = true;
  // reduce: the dimension folded (`shape` is the operands' shape,
  // `constant` the identities).
  int64_t reduceDim = 0;
  // for: the body, its block arguments (induction variable, iter values)
  // and the continue's operands; reduce: its combiner, the combined values
  // (all left, then all right) and the yield's operands.
  std::vector<Instr> body;
  llvm::SmallVector<unsigned, 4> bodyArgs, yields;
};

/// A prepared tileir.entry.
struct Kernel {
  std::string name;
  std::vector<Instr> body;
  unsigned numSlots = 0;
  llvm::SmallVector<unsigned, 4> argSlots;
  /// Per argument: its type when it is not a pointer tile.
  llvm::SmallVector<Type, 4> badArgTypes;
};

/// Runs the tile blocks of one launch of a kernel, one at a time.
class Executor {
public:
  Executor(const Kernel &kernel, const unsigned grid[3],
           llvm::ArrayRef<InterpreterBuffer> buffers);

  /// Runs tile block (x, y, z); on failure `error` says why (the failed
  /// operation and check).
  bool runBlock(unsigned x, unsigned y, unsigned z);

  std::string error;

private:
  bool fail(const Instr &in, const llvm::Twine &message);
  bool run(const std::vector<Instr> &instrs);
  bool exec(const Instr &in);
  bool access(const Instr &in, bool isStore);
  bool loop(const Instr &in);
  bool reduce(const Instr &in);
  void mmaf(const Instr &in);
  void broadcast(const Instr &in);
  template <typename F> void unary(const Instr &in, F f);
  template <typename F> void binary(const Instr &in, F f);

  const Kernel &kernel;
  llvm::ArrayRef<InterpreterBuffer> buffers;
  /// Every f16 bit pattern's value.
  const double *half;
  unsigned grid[3], block[3];
  std::vector<std::vector<double>> slots;
};

} // namespace mlir::pb::tileir::interpreter

#endif // PB_TILEIR_LIB_INTERPRETERINTERNAL_H
