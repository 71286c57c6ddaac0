//===- EmulatorInternal.h - The emulator's program and state ---*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A kernel is prepared once into `Code`: a list of `Instr` per block of the
// IR, every SSA value numbered as a slot of the thread's frame. Running a
// thread walks that code; values are vectors of lanes, each lane the bit
// pattern of one element (an f16 is its 16 bits, an index its 64), so that
// bitcasts and memory accesses are exact and arithmetic rounds to the
// element type after every operation, as the GPU does.
//
//===----------------------------------------------------------------------===//

#ifndef PB_GPU_EMULATOR_INTERNAL_H
#define PB_GPU_EMULATOR_INTERNAL_H

#include "Fiber.h"
#include "pb/GPU/Emulator.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace mlir::pb::emulator {

/// Element kinds of values and memory.
enum class EK : uint8_t { I1, I8, I16, I32, I64, Index, F16, BF16, F32, F64 };

unsigned getBits(EK kind);
inline bool isFloat(EK kind) { return kind >= EK::F16; }
/// The kind of a scalar type, or nullopt when the emulator has none.
std::optional<EK> getElementKind(Type type);

/// How a reduction combines (vector.reduction, gpu.all_reduce).
enum class Combine {
  Add,
  Mul,
  MinUI,
  MinSI,
  MinNumF,
  MaxUI,
  MaxSI,
  MaxNumF,
  And,
  Or,
  XOr,
  MinimumF,
  MaximumF
};
/// The combination named as vector.reduction and gpu.all_reduce print it.
std::optional<Combine> getCombine(llvm::StringRef name);
/// Combines two lanes of kind `kind` (`how` a Combine).
uint64_t combineLanes(int64_t how, uint64_t a, uint64_t b, EK kind);
/// IEEE maxNum/minNum (a NaN operand yields the other) and maximum/minimum
/// (NaN propagates), -0 below +0.
double maxNum(double a, double b);
double minNum(double a, double b);
double maximum(double a, double b);
double minimum(double a, double b);

/// Float conversions of lane bit patterns (round to nearest even).
double toDouble(uint64_t bits, EK kind);
uint64_t fromDouble(double value, EK kind);
float halfToFloat(uint16_t bits);
float bfloatToFloat(uint16_t bits);
uint16_t floatToHalf(float value);
uint16_t floatToBfloat(float value);
/// A lane's integer value, sign-extended from the kind's width.
int64_t toSigned(uint64_t bits, EK kind);
/// `value` truncated to the kind's width.
uint64_t truncate(uint64_t value, EK kind);

enum class Space : uint8_t { Global, Shared, Private };

/// A region of memory a memref may address.
struct Allocation {
  char *begin;
  char *end;
  Space space;
  std::string name;
  /// A constant global: writes are errors.
  bool readOnly = false;
};

/// A memref: element (i0, ..., in) lies at data + (offset + sum ik * stride
/// k) * elementBytes.
struct MemRefValue {
  char *data = nullptr;
  int64_t offset = 0;
  llvm::SmallVector<int64_t, 4> sizes, strides;
  unsigned elementBytes = 0;
  const Allocation *allocation = nullptr;
};

/// A value: lanes (scalars have one) or a memref.
struct Value {
  llvm::SmallVector<uint64_t, 4> lanes;
  std::shared_ptr<const MemRefValue> memref;
};

/// What an Instr does (Execute.cpp).
enum class OpCode : uint16_t {
  // Values.
  Constant,
  Zero,
  // Integer arithmetic.
  AddI,
  SubI,
  MulI,
  DivUI,
  DivSI,
  RemUI,
  RemSI,
  CeilDivSI,
  CeilDivUI,
  FloorDivSI,
  MinUI,
  MinSI,
  MaxUI,
  MaxSI,
  AndI,
  OrI,
  XOrI,
  ShLI,
  ShRUI,
  ShRSI,
  CmpI,
  CmpF,
  Select,
  // Floating-point arithmetic.
  AddF,
  SubF,
  MulF,
  DivF,
  RemF,
  MaximumF,
  MinimumF,
  MaxNumF,
  MinNumF,
  NegF,
  Fma,
  Exp,
  Exp2,
  Log,
  Log2,
  Log1p,
  Sqrt,
  Rsqrt,
  Tanh,
  Erf,
  Floor,
  Ceil,
  AbsF,
  AbsI,
  PowF,
  Sin,
  Cos,
  Round,
  RoundEven,
  Trunc,
  CopySign,
  Expm1,
  // Conversions.
  ExtF,
  TruncF,
  ExtSI,
  ExtUI,
  TruncI,
  SIToFP,
  UIToFP,
  FPToSI,
  FPToUI,
  IndexCast,
  IndexCastUI,
  Bitcast,
  // Vectors and aggregates.
  Broadcast,
  Extract,
  Insert,
  FromElements,
  Reduction,
  ShapeCast,
  // Memory.
  Load,
  Store,
  VectorLoad,
  VectorStore,
  TransferRead,
  TransferWrite,
  View,
  SubView,
  Alloca,
  Dealloc,
  ExtractPointer,
  Reshape,
  GetGlobal,
  // Control flow.
  For,
  If,
  While,
  // GPU.
  ThreadId,
  BlockId,
  BlockDim,
  GridDim,
  LaneId,
  DynamicShared,
  Barrier,
  AllReduce,
  Shuffle,
  // cp.async and fences.
  AsyncCopy,
  AsyncCreateGroup,
  AsyncWait,
  NoOp,
  // Collective matrix operations.
  Ldmatrix,
  MmaSync,
  NvvmMmaSync,
  Mfma,
  Wgmma,
  WgmmaCommit,
  WgmmaWait,
  ProxyFence,
  // Not an operation the emulator runs (preparation only).
  Unsupported,
};
struct Code;

/// One operation, prepared.
struct Instr {
  OpCode code;
  Operation *op;
  llvm::SmallVector<unsigned, 4> operands; // slots
  llvm::SmallVector<unsigned, 2> results;  // slots
  EK kind = EK::I64;       // element kind of the first operand (or result)
  EK resultKind = EK::I64; // element kind of the result
  unsigned lanes = 1;      // lanes of the result
  int64_t aux = 0;         // predicate, dimension, count, ...
  int64_t aux2 = 0;
  llvm::SmallVector<int64_t, 4> positions; // static positions/offsets
  llvm::SmallVector<uint64_t, 4> constant; // arith.constant's lanes
  std::vector<Code> regions;
};

struct Code {
  std::vector<Instr> instrs;
  llvm::SmallVector<unsigned, 4> arguments; // block argument slots
  llvm::SmallVector<unsigned, 4> yields;    // terminator operand slots
};

struct Kernel {
  std::string module, name;
  /// The gpu.func (its arguments' types).
  Operation *func = nullptr;
  /// Whether it has barriers or collectives (its threads need fibers).
  bool waits = false;
  /// The globals its memref.get_global operations read (Instr::aux).
  std::vector<std::shared_ptr<const MemRefValue>> globals;
  Code body;
  unsigned numSlots = 0;
};

/// The memref.global buffers of a kernel module, by symbol name, in host
/// memory (Emulator.cpp).
using Globals = llvm::StringMap<std::shared_ptr<const MemRefValue>>;

/// Returns the prepared kernel or an error naming the unsupported
/// operation (Prepare.cpp).
llvm::Error prepareKernel(Operation *func, const Globals &globals,
                          Kernel &kernel);

struct BlockRun;

enum class ThreadState : uint8_t { Ready, Waiting, Done };

/// A cp.async copy not yet complete.
struct AsyncCopy {
  char *destination;
  const char *source;
  unsigned bytes, sourceBytes;
};

struct Thread {
  BlockRun *block = nullptr;
  unsigned linear = 0;
  unsigned id[3] = {0, 0, 0};
  std::vector<Value> slots;
  FiberContext context;
  ThreadState state = ThreadState::Ready;
  /// The collective operation or barrier the thread waits at.
  const Instr *waitingAt = nullptr;
  std::vector<AsyncCopy> openCopies;
  std::deque<std::vector<AsyncCopy>> copyGroups;
  std::vector<std::unique_ptr<Allocation>> privateAllocations;
  std::vector<std::unique_ptr<char[]>> privateMemory;
  /// fence.proxy.async operations run so far (ShadowByte::writeFence).
  uint32_t proxyFences = 0;
  /// wgmma.mma_async operations not yet committed, and committed groups
  /// not yet waited for: each an accumulator slot and the operation's
  /// shared-memory reads (an index into BlockRun::wgmmaReads).
  struct PendingWgmma {
    unsigned slot;
    size_t reads;
  };
  std::vector<PendingWgmma> wgmmaOpen;
  std::deque<std::vector<PendingWgmma>> wgmmaGroups;
  /// Slots whose value an unfinished wgmma.mma_async produces: only another
  /// wgmma.mma_async may read them before wgmma.wait_group.
  llvm::SmallVector<unsigned, 4> wgmmaPendingSlots;
};

/// Shadow state of one shared-memory byte (race and cp.async checks).
struct ShadowByte {
  uint32_t writeEpoch = 0, readEpoch = 0;
  uint16_t writer = 0, reader = 0;
  bool manyReaders = false;
  /// Written by a cp.async of thread `asyncOwner` that is not complete.
  bool asyncPending = false;
  uint16_t asyncOwner = 0;
  /// The writer's Thread::proxyFences at the write: the write is visible
  /// to the async proxy (wgmma) once the writer has fenced since.
  uint32_t writeFence = 0;
  /// wgmma.mma_async operations in flight that read this byte.
  uint16_t wgmmaReaders = 0;
};

/// The shared-memory bytes one wgmma.mma_async reads, until every thread
/// of its warpgroup has waited for it.
struct WgmmaReads {
  std::vector<std::pair<size_t, unsigned>> ranges; // offset, bytes
  unsigned remaining = 0;                          // threads yet to wait
};

/// The state of one block while it runs.
struct BlockRun {
  const Kernel *kernel;
  const DeviceLimits *limits;
  unsigned blockId[3], gridDim[3], blockDim[3];
  Allocation shared;
  /// The shared-window address of shared.begin (what
  /// extract_aligned_pointer_as_index gives for shared memory).
  uint64_t sharedWindowBase = 16;
  std::vector<ShadowByte> shadow;
  uint32_t epoch = 1;
  /// The epoch the block started at (older shadow state is another
  /// block's).
  uint32_t firstEpoch = 1;
  std::vector<WgmmaReads> wgmmaReads;
  std::deque<Thread> threads;
  FiberContext scheduler;
  /// Threads run one after another on the scheduler's stack (kernels
  /// without barriers or collectives); a failed check throws
  /// ThreadFailure.
  bool direct = false;
  /// Set while the scheduler runs a collective (fail() throws then too).
  bool inScheduler = false;
  Thread *current = nullptr;
  std::string error;
};

/// Runs `code` on the current thread (Execute.cpp). Collective operations
/// and barriers switch back to the scheduler.
void run(Thread &thread, const Code &code);

/// Thrown by fail() in direct blocks.
struct ThreadFailure {};

/// Reports an error for `thread` (prefixed with the kernel, block and
/// thread) and switches to the scheduler for good.
[[noreturn]] void fail(Thread &thread, const llvm::Twine &message);

/// Waits at `instr` (a barrier or a collective) until the scheduler has
/// run it for every participating thread.
void waitAt(Thread &thread, const Instr &instr);

/// Whether an instruction is collective over a warp, a warpgroup or the
/// block, and runs it over `threads` (all waiting at it).
enum class Scope { None, Warp, Warpgroup, Block };
Scope getScope(const Instr &instr);
void runCollective(BlockRun &block, const Instr &instr,
                   llvm::ArrayRef<Thread *> threads);

/// Memory accesses with the checks (Emulator.cpp): `bytes` at `address` in
/// `memref`'s allocation; reads/writes mark shared memory's shadow.
void checkAccess(Thread &thread, const MemRefValue &memref, const char *address,
                 unsigned bytes, bool write, unsigned alignment,
                 const char *what);
/// The address of element `indices` of `memref`, checking each index
/// against its extent (`lastLanes` elements are accessed along the
/// innermost dimension).
char *getAddress(Thread &thread, const MemRefValue &memref,
                 llvm::ArrayRef<int64_t> indices, unsigned lastLanes,
                 const char *what);
/// Completes thread's cp.async groups but the `keep` most recent.
void completeCopies(Thread &thread, size_t keep);
/// Completes thread's wgmma groups but the `keep` most recent.
void completeWgmma(Thread &thread, size_t keep);
/// Fails when `instr` (not a wgmma.mma_async) reads a slot that an
/// unfinished wgmma.mma_async produces.
void checkWgmmaPending(Thread &thread, const Instr &instr);

/// ldmatrix and mma.sync over a warp (MatrixOps.cpp).
void runLdmatrix(BlockRun &block, const Instr &instr,
                 llvm::ArrayRef<Thread *> lanes);
void runMmaSync(BlockRun &block, const Instr &instr,
                llvm::ArrayRef<Thread *> lanes);
void runWgmma(BlockRun &block, const Instr &instr,
              llvm::ArrayRef<Thread *> threads);
/// amdgpu.mfma over a wavefront of 64 lanes (MatrixOps.cpp).
void runMfma(BlockRun &block, const Instr &instr,
             llvm::ArrayRef<Thread *> lanes);

} // namespace mlir::pb::emulator

#endif // PB_GPU_EMULATOR_INTERNAL_H
