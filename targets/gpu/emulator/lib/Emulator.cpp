//===- Emulator.cpp - Blocks, threads and checked memory ------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Each block of a launch runs on its own: its threads are fibers (one stack
// each) that run until they reach a barrier, a collective operation or the
// end of the kernel. When every thread has stopped, the scheduler runs what
// can run: a warp-collective operation once all 32 lanes of a warp wait at
// it, a warpgroup one once its 128 threads do, a barrier or a block-wide
// reduction once every thread of the block does. Threads that wait at
// different operations, or a barrier some threads never reach, are errors,
// as compute-sanitizer's synccheck reports them.
//
// Shared memory has a shadow byte per byte: the last writer and reader of
// the byte and the barrier interval ("epoch") of each, so that a write and
// another thread's access to the same byte in one interval is reported as a
// race (racecheck), and cp.async destinations are marked until the issuing
// thread waits for them.
//
//===----------------------------------------------------------------------===//

#include "EmulatorInternal.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/SourceMgr.h"

#include <atomic>
#include <cstring>
#include <mutex>
#include <sys/mman.h>
#include <thread>

using namespace mlir;
using namespace mlir::pb::emulator;
using EValue = mlir::pb::emulator::Value;

struct Program::Impl {
  MLIRContext context;
  std::vector<OwningOpRef<ModuleOp>> modules;
  /// Kernels by "module/kernel".
  llvm::StringMap<Kernel> kernels;
  /// The memory of the modules' memref.globals.
  std::vector<std::unique_ptr<char[]>> globalMemory;
  std::vector<std::unique_ptr<Allocation>> globalAllocations;
  DeviceLimits limits;
};

Program::Program(std::unique_ptr<Impl> impl) : impl(std::move(impl)) {}
Program::~Program() = default;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// Host memory for a memref.global: its initial value (a constant's
/// elements) or, without one, a pattern.
static llvm::Error addGlobal(Program::Impl &impl, llvm::StringRef module,
                             memref::GlobalOp global, Globals &globals) {
  MemRefType type = global.getType();
  SmallVector<int64_t> strides;
  int64_t offset;
  unsigned elementBits = type.getElementTypeBitWidth();
  if (!type.hasStaticShape() || elementBits % 8 ||
      failed(type.getStridesAndOffset(strides, offset)) ||
      !type.getLayout().isIdentity())
    return makeError("global '" + global.getSymName() + "' of module '" +
                     module + "' is not a static buffer of whole bytes");
  if (isa_and_nonnull<gpu::AddressSpaceAttr>(type.getMemorySpace()))
    return makeError("global '" + global.getSymName() + "' of module '" +
                     module + "' is in shared memory, which is not emulated");
  size_t bytes = type.getNumElements() * (elementBits / 8);
  auto memory = std::make_unique<char[]>(bytes + 16);
  char *data = memory.get() + (-reinterpret_cast<uintptr_t>(memory.get()) & 15);
  std::memset(data, 0xFF, bytes);
  if (auto init =
          dyn_cast_or_null<DenseElementsAttr>(global.getInitialValueAttr())) {
    ArrayRef<char> raw = init.getRawData();
    if (init.isSplat()) {
      size_t elementBytes = elementBits / 8;
      for (size_t at = 0; at < bytes; at += elementBytes)
        std::memcpy(data + at, raw.data(), elementBytes);
    } else if (raw.size() == bytes) {
      std::memcpy(data, raw.data(), bytes);
    } else {
      return makeError("global '" + global.getSymName() + "' of module '" +
                       module +
                       "' has an initial value the emulator cannot "
                       "read");
    }
  } else if (global.getInitialValueAttr()) {
    return makeError("global '" + global.getSymName() + "' of module '" +
                     module +
                     "' has an initial value the emulator cannot "
                     "read");
  }
  auto allocation = std::make_unique<Allocation>(Allocation{
      data, data + bytes, Space::Global,
      ("global @" + global.getSymName()).str(), global.getConstant()});
  auto memref = std::make_shared<MemRefValue>();
  memref->data = data;
  memref->sizes.assign(type.getShape().begin(), type.getShape().end());
  memref->strides.assign(strides.begin(), strides.end());
  memref->elementBytes = elementBits / 8;
  memref->allocation = allocation.get();
  globals[global.getSymName()] = std::move(memref);
  impl.globalMemory.push_back(std::move(memory));
  impl.globalAllocations.push_back(std::move(allocation));
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<Program>>
Program::create(llvm::ArrayRef<ModuleText> modules,
                const DeviceLimits &limits) {
  auto impl = std::make_unique<Impl>();
  impl->limits = limits;
  DialectRegistry registry;
  registry.insert<amdgpu::AMDGPUDialect, arith::ArithDialect, gpu::GPUDialect,
                  LLVM::LLVMDialect, NVVM::NVVMDialect, ROCDL::ROCDLDialect,
                  math::MathDialect, memref::MemRefDialect, nvgpu::NVGPUDialect,
                  scf::SCFDialect, ub::UBDialect, vector::VectorDialect>();
  impl->context.appendDialectRegistry(registry);
  impl->context.loadAllAvailableDialects();
  impl->context.disableMultithreading();
  for (const ModuleText &text : modules) {
    std::string diagnostics;
    llvm::raw_string_ostream os(diagnostics);
    ScopedDiagnosticHandler handler(&impl->context, [&](Diagnostic &d) {
      os << d << "\n";
      return success();
    });
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(text.text, &impl->context, text.name);
    if (!module)
      return makeError("the emulation IR of kernel module '" + text.name +
                       "' does not parse: " + diagnostics);
    for (auto gpuModule : module->getBody()->getOps<gpu::GPUModuleOp>()) {
      Globals globals;
      for (auto global : gpuModule.getOps<memref::GlobalOp>())
        if (llvm::Error error = addGlobal(*impl, text.name, global, globals))
          return std::move(error);
      for (auto func : gpuModule.getOps<gpu::GPUFuncOp>()) {
        if (!func.isKernel())
          return makeError("module '" + text.name + "' has function '" +
                           func.getName() +
                           "', which is not a kernel: calls are not emulated");
        Kernel kernel;
        kernel.module = text.name.str();
        if (llvm::Error error = prepareKernel(func, globals, kernel))
          return makeError(
              "kernel '" + func.getName() + "' of module '" + text.name +
              "' cannot be emulated: " + llvm::toString(std::move(error)));
        impl->kernels[(text.name + "/" + func.getName()).str()] =
            std::move(kernel);
      }
    }
    impl->modules.push_back(std::move(module));
  }
  return std::unique_ptr<Program>(new Program(std::move(impl)));
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

static std::string describeThread(const Thread &thread) {
  const BlockRun &block = *thread.block;
  return llvm::formatv("kernel '{0}' of module '{1}', block ({2}, {3}, {4}), "
                       "thread ({5}, {6}, {7})",
                       block.kernel->name, block.kernel->module,
                       block.blockId[0], block.blockId[1], block.blockId[2],
                       thread.id[0], thread.id[1], thread.id[2])
      .str();
}

void mlir::pb::emulator::fail(Thread &thread, const llvm::Twine &message) {
  BlockRun &block = *thread.block;
  if (block.error.empty())
    block.error = describeThread(thread) + ": " + message.str();
  thread.state = ThreadState::Done;
  // On the scheduler's own stack (direct blocks, collectives) there is no
  // fiber to leave.
  if (block.direct || block.inScheduler)
    throw ThreadFailure();
  switchFiber(thread.context, block.scheduler);
  llvm_unreachable("a failed thread was resumed");
}

void mlir::pb::emulator::waitAt(Thread &thread, const Instr &instr) {
  thread.state = ThreadState::Waiting;
  thread.waitingAt = &instr;
  switchFiber(thread.context, thread.block->scheduler);
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

static std::string describeAddress(const BlockRun &block,
                                   const Allocation &allocation,
                                   const char *address) {
  if (allocation.space == Space::Shared)
    return llvm::formatv("shared address {0:x}",
                         block.sharedWindowBase +
                             (address - block.shared.begin))
        .str();
  return llvm::formatv("address {0} bytes into {1}",
                       int64_t(address - allocation.begin), allocation.name)
      .str();
}

char *mlir::pb::emulator::getAddress(Thread &thread, const MemRefValue &memref,
                                     ArrayRef<int64_t> indices,
                                     unsigned lastLanes, const char *what) {
  if (indices.size() != memref.sizes.size())
    fail(thread, llvm::Twine(what) + " with " + llvm::Twine(indices.size()) +
                     " indices into a memref of rank " +
                     llvm::Twine(memref.sizes.size()));
  int64_t linear = memref.offset;
  for (size_t d = 0; d < indices.size(); ++d) {
    int64_t extent = memref.sizes[d];
    int64_t last =
        d + 1 == indices.size() ? indices[d] + lastLanes - 1 : indices[d];
    if (indices[d] < 0 || last >= extent) {
      std::string list, shape;
      llvm::raw_string_ostream l(list), s(shape);
      llvm::interleaveComma(indices, l);
      llvm::interleave(memref.sizes, s, "x");
      fail(thread,
           llvm::Twine(what) + " out of bounds: index [" + list + "]" +
               (lastLanes > 1 ? " (" + llvm::Twine(lastLanes) + " elements)"
                              : llvm::Twine("")) +
               " of a " + shape + " memref in " + memref.allocation->name);
    }
    linear += indices[d] * memref.strides[d];
  }
  return memref.data + linear * int64_t(memref.elementBytes);
}

void mlir::pb::emulator::checkAccess(Thread &thread, const MemRefValue &memref,
                                     const char *address, unsigned bytes,
                                     bool write, unsigned alignment,
                                     const char *what) {
  BlockRun &block = *thread.block;
  const Allocation &allocation = *memref.allocation;
  if (address < allocation.begin || address + bytes > allocation.end)
    fail(thread, llvm::Twine(what) + " of " + llvm::Twine(bytes) +
                     " bytes at " +
                     describeAddress(block, allocation, address) +
                     " is outside " + allocation.name + " (" +
                     llvm::Twine(int64_t(allocation.end - allocation.begin)) +
                     " bytes)");
  uint64_t absolute =
      allocation.space == Space::Shared
          ? block.sharedWindowBase + (address - block.shared.begin)
          : reinterpret_cast<uintptr_t>(address);
  if (write && allocation.readOnly)
    fail(thread, llvm::Twine(what) + " writes " +
                     describeAddress(block, allocation, address) +
                     " of a constant global");
  if (alignment > 1 && absolute % alignment)
    fail(thread, llvm::Twine("misaligned ") + what + ": " + llvm::Twine(bytes) +
                     " bytes at " +
                     describeAddress(block, allocation, address) +
                     " need an alignment of " + llvm::Twine(alignment));
  if (allocation.space != Space::Shared)
    return;
  size_t first = address - block.shared.begin;
  uint16_t self = thread.linear;
  uint32_t epoch = block.epoch;
  for (size_t i = first; i < first + bytes; ++i) {
    ShadowByte &shadow = block.shadow[i];
    auto race = [&](const char *kind, unsigned other) {
      fail(thread,
           llvm::Twine("shared-memory race: ") + what + " (" +
               (write ? "write" : "read") + ") of " +
               describeAddress(block, allocation, block.shared.begin + i) +
               " and a " + kind + " of the same byte by thread " +
               llvm::Twine(other) + " with no barrier between them");
    };
    if (shadow.asyncPending)
      fail(thread,
           llvm::Twine(what) + (write ? " writes " : " reads ") +
               describeAddress(block, allocation, block.shared.begin + i) +
               ", the destination of a cp.async of thread " +
               llvm::Twine(shadow.asyncOwner) +
               " not waited for (cp.async.wait_group) before");
    if (shadow.writeEpoch == epoch && shadow.writer != self)
      race("write", shadow.writer);
    if (write && shadow.wgmmaReaders)
      fail(thread,
           llvm::Twine(what) + " writes " +
               describeAddress(block, allocation, block.shared.begin + i) +
               ", which a wgmma.mma_async still reads (no "
               "wgmma.wait_group for it before)");
    if (write) {
      shadow.writeFence = thread.proxyFences;
      if (shadow.readEpoch == epoch &&
          (shadow.reader != self || shadow.manyReaders))
        race("read",
             shadow.reader == self ? (self == 0 ? 1 : 0) : shadow.reader);
      shadow.writeEpoch = epoch;
      shadow.writer = self;
    } else if (shadow.readEpoch != epoch) {
      shadow.readEpoch = epoch;
      shadow.reader = self;
      shadow.manyReaders = false;
    } else if (shadow.reader != self) {
      shadow.manyReaders = true;
    }
  }
}

void mlir::pb::emulator::completeCopies(Thread &thread, size_t keep) {
  BlockRun &block = *thread.block;
  while (thread.copyGroups.size() > keep) {
    std::vector<AsyncCopy> group = std::move(thread.copyGroups.front());
    thread.copyGroups.pop_front();
    for (const AsyncCopy &copy : group) {
      if (copy.sourceBytes)
        std::memcpy(copy.destination, copy.source, copy.sourceBytes);
      std::memset(copy.destination + copy.sourceBytes, 0,
                  copy.bytes - copy.sourceBytes);
      size_t first = copy.destination - block.shared.begin;
      for (size_t i = first; i < first + copy.bytes; ++i)
        block.shadow[i].asyncPending = false;
      // The copy's bytes are this thread's writes.
      MemRefValue whole;
      whole.data = block.shared.begin;
      whole.elementBytes = 1;
      whole.allocation = &block.shared;
      checkAccess(thread, whole, copy.destination, copy.bytes,
                  /*write=*/true, 1, "cp.async completion");
    }
  }
}

void mlir::pb::emulator::completeWgmma(Thread &thread, size_t keep) {
  BlockRun &block = *thread.block;
  while (thread.wgmmaGroups.size() > keep) {
    std::vector<Thread::PendingWgmma> group =
        std::move(thread.wgmmaGroups.front());
    thread.wgmmaGroups.pop_front();
    for (const Thread::PendingWgmma &pending : group) {
      llvm::erase(thread.wgmmaPendingSlots, pending.slot);
      WgmmaReads &reads = block.wgmmaReads[pending.reads];
      if (--reads.remaining)
        continue;
      for (auto [offset, bytes] : reads.ranges)
        for (size_t i = offset; i < offset + bytes; ++i)
          --block.shadow[i].wgmmaReaders;
    }
  }
  // Copies of pending accumulators (loop-carried values) are released with
  // the last group.
  if (thread.wgmmaGroups.empty() && thread.wgmmaOpen.empty())
    thread.wgmmaPendingSlots.clear();
}

void mlir::pb::emulator::checkWgmmaPending(Thread &thread, const Instr &instr) {
  // Control flow only passes the values on (their copies stay pending).
  if (instr.code == OpCode::For || instr.code == OpCode::If ||
      instr.code == OpCode::While)
    return;
  for (unsigned slot : instr.operands)
    if (llvm::is_contained(thread.wgmmaPendingSlots, slot))
      fail(thread, llvm::Twine(instr.op->getName().getStringRef()) +
                       " reads the accumulators of a wgmma.mma_async before "
                       "a wgmma.wait_group completes it");
}

//===----------------------------------------------------------------------===//
// Threads and scheduling
//===----------------------------------------------------------------------===//

namespace {
/// Stacks of the fibers, with a guard page below each.
class Stacks {
public:
  static constexpr size_t kStackBytes = 256 * 1024, kGuardBytes = 4096;
  explicit Stacks(size_t count) : count(count) {
    bytes = count * (kStackBytes + kGuardBytes);
    memory = static_cast<char *>(
        mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0));
    if (memory == MAP_FAILED) {
      memory = nullptr;
      return;
    }
    for (size_t i = 0; i < count; ++i)
      mprotect(memory + i * (kStackBytes + kGuardBytes), kGuardBytes,
               PROT_NONE);
  }
  ~Stacks() {
    if (memory)
      munmap(memory, bytes);
  }
  bool valid() const { return memory != nullptr; }
  char *get(size_t i) const {
    return memory + i * (kStackBytes + kGuardBytes) + kGuardBytes;
  }

private:
  size_t count, bytes = 0;
  char *memory = nullptr;
};
} // namespace

static void fiberMain(void *argument) {
  auto *thread = static_cast<Thread *>(argument);
  run(*thread, thread->block->kernel->body);
  thread->state = ThreadState::Done;
  switchFiber(thread->context, thread->block->scheduler);
  llvm_unreachable("a finished thread was resumed");
}

static const char *describeOp(const Instr &instr) {
  return instr.op->getName().getStringRef().data();
}

static bool finishBlock(BlockRun &block);

/// Runs a collective over its threads on the scheduler's stack.
static bool runOnScheduler(BlockRun &block, const Instr &instr,
                           ArrayRef<Thread *> threads) {
  block.inScheduler = true;
  try {
    runCollective(block, instr, threads);
  } catch (const ThreadFailure &) {
    block.inScheduler = false;
    return false;
  }
  block.inScheduler = false;
  return block.error.empty();
}

/// Runs the block to its end; returns false with block.error set on a
/// failed check.
static bool runBlock(BlockRun &block, const Stacks &stacks) {
  unsigned warpSize = block.limits->warpSize;
  size_t count = block.threads.size();
  if (block.direct) {
    for (Thread &thread : block.threads) {
      block.current = &thread;
      try {
        run(thread, block.kernel->body);
      } catch (const ThreadFailure &) {
        return false;
      }
    }
    return finishBlock(block);
  }
  for (Thread &thread : block.threads) {
    thread.state = ThreadState::Ready;
    thread.waitingAt = nullptr;
    startFiber(thread.context, stacks.get(thread.linear), Stacks::kStackBytes,
               fiberMain, &thread);
  }
  for (;;) {
    for (Thread &thread : block.threads) {
      if (thread.state != ThreadState::Ready)
        continue;
      block.current = &thread;
      switchFiber(block.scheduler, thread.context);
      if (!block.error.empty())
        return false;
    }
    // Collectives of warps and warpgroups whose threads all wait at them.
    bool progress = false;
    for (unsigned groupSize : {warpSize, 4 * warpSize}) {
      Scope scope = groupSize == warpSize ? Scope::Warp : Scope::Warpgroup;
      for (size_t first = 0; first < count; first += groupSize) {
        size_t last = std::min(count, first + groupSize);
        Thread &lead = block.threads[first];
        if (lead.state != ThreadState::Waiting ||
            getScope(*lead.waitingAt) != scope)
          continue;
        SmallVector<Thread *, 128> members;
        bool ready = true;
        for (size_t t = first; t < last; ++t) {
          Thread &member = block.threads[t];
          if (member.state == ThreadState::Ready) {
            ready = false;
            break;
          }
          if (member.state == ThreadState::Done)
            fail(member, llvm::Twine("exited while thread ") +
                             llvm::Twine(lead.linear) + " waits at " +
                             describeOp(*lead.waitingAt) +
                             ", a collective of its warp" +
                             (scope == Scope::Warpgroup ? "group" : ""));
          if (member.waitingAt != lead.waitingAt) {
            if (getScope(*member.waitingAt) == scope) {
              // Another collective of the same scope: a divergence.
              block.current = &member;
              member.state = ThreadState::Done;
              if (block.error.empty())
                block.error = describeThread(member) + ": waits at " +
                              describeOp(*member.waitingAt) + " while thread " +
                              llvm::Twine(lead.linear).str() + " of its warp" +
                              (scope == Scope::Warpgroup ? "group" : "") +
                              " waits at another " +
                              describeOp(*lead.waitingAt) +
                              ": the threads of a collective diverged";
              return false;
            }
            ready = false;
            break;
          }
          members.push_back(&member);
        }
        if (!ready)
          continue;
        if (!runOnScheduler(block, *lead.waitingAt, members))
          return false;
        for (Thread *member : members)
          member->state = ThreadState::Ready;
        progress = true;
      }
    }
    if (progress)
      continue;
    // Block-wide: every thread waits at the same barrier or reduction.
    size_t done = 0;
    Thread *lead = nullptr;
    for (Thread &thread : block.threads) {
      if (thread.state == ThreadState::Done) {
        ++done;
        continue;
      }
      if (!lead)
        lead = &thread;
    }
    if (done == count)
      break;
    for (Thread &thread : block.threads) {
      if (thread.state == ThreadState::Done) {
        block.error =
            describeThread(thread) + ": exited while thread " +
            llvm::Twine(lead->linear).str() + " waits at " +
            describeOp(*lead->waitingAt) +
            ": a barrier or block-wide collective not reached by every thread";
        return false;
      }
      if (thread.waitingAt != lead->waitingAt) {
        block.error = describeThread(thread) + ": waits at " +
                      describeOp(*thread.waitingAt) + " while thread " +
                      llvm::Twine(lead->linear).str() + " waits at " +
                      describeOp(*lead->waitingAt) +
                      (getScope(*thread.waitingAt) == Scope::Block &&
                               getScope(*lead->waitingAt) == Scope::Block
                           ? ": threads of the block reached different "
                             "barriers"
                           : ": the threads are deadlocked (a collective "
                             "some threads of a warp never reach)");
        return false;
      }
    }
    SmallVector<Thread *, 256> members;
    for (Thread &thread : block.threads)
      members.push_back(&thread);
    if (!runOnScheduler(block, *lead->waitingAt, members))
      return false;
    ++block.epoch;
    for (Thread &thread : block.threads)
      thread.state = ThreadState::Ready;
  }
  return finishBlock(block);
}

static bool finishBlock(BlockRun &block) {
  // wgmma operations never waited for release their operands.
  for (WgmmaReads &reads : block.wgmmaReads)
    if (reads.remaining)
      for (auto [offset, bytes] : reads.ranges)
        for (size_t i = offset; i < offset + bytes; ++i)
          block.shadow[i].wgmmaReaders = 0;
  block.wgmmaReads.clear();
  for (Thread &thread : block.threads) {
    thread.wgmmaOpen.clear();
    thread.wgmmaGroups.clear();
    thread.wgmmaPendingSlots.clear();
  }
  // Copies never waited for land now; they must not stay pending into the
  // next block.
  for (Thread &thread : block.threads) {
    block.current = &thread;
    thread.copyGroups.push_back(std::move(thread.openCopies));
    thread.openCopies.clear();
    for (auto &group : thread.copyGroups)
      for (const AsyncCopy &copy : group) {
        size_t first = copy.destination - block.shared.begin;
        for (size_t i = first; i < first + copy.bytes; ++i)
          block.shadow[i].asyncPending = false;
      }
    thread.copyGroups.clear();
    thread.privateMemory.clear();
    thread.privateAllocations.clear();
  }
  return true;
}

llvm::Error Program::launch(llvm::StringRef module, llvm::StringRef kernel,
                            const unsigned grid[3], const unsigned block[3],
                            unsigned dynamicSharedBytes,
                            llvm::ArrayRef<Buffer> buffers) {
  auto it = impl->kernels.find((module + "/" + kernel).str());
  if (it == impl->kernels.end())
    return makeError("no kernel '" + kernel + "' in module '" + module +
                     "' of the emulation IR");
  const Kernel &prepared = it->second;
  int64_t threads = int64_t(block[0]) * block[1] * block[2];
  if (!threads || !grid[0] || !grid[1] || !grid[2])
    return llvm::Error::success();
  if (threads > 65535)
    return makeError("kernel '" + kernel + "': " + llvm::Twine(threads) +
                     " threads per block");
  if (impl->limits.sharedBytesPerBlock &&
      dynamicSharedBytes > impl->limits.sharedBytesPerBlock)
    return makeError("kernel '" + kernel + "' asks for " +
                     llvm::Twine(dynamicSharedBytes) +
                     " bytes of shared memory per block; the chip has " +
                     llvm::Twine(impl->limits.sharedBytesPerBlock));

  // The kernel's arguments as memrefs of their declared types.
  auto func = cast<gpu::GPUFuncOp>(prepared.func);
  if (func.getNumArguments() != buffers.size())
    return makeError("kernel '" + kernel + "' takes " +
                     llvm::Twine(func.getNumArguments()) + " buffers, not " +
                     llvm::Twine(buffers.size()));
  std::vector<Allocation> allocations;
  allocations.reserve(buffers.size());
  std::vector<EValue> arguments;
  for (auto [i, buffer] : llvm::enumerate(buffers)) {
    auto type = cast<MemRefType>(func.getArgument(i).getType());
    SmallVector<int64_t> strides;
    int64_t offset;
    if (!type.hasStaticShape() ||
        failed(type.getStridesAndOffset(strides, offset)) ||
        ShapedType::isDynamic(offset) ||
        llvm::any_of(strides, ShapedType::isDynamic))
      return makeError("kernel '" + kernel + "': argument " + llvm::Twine(i) +
                       " is not a memref of static shape and layout");
    char *data = static_cast<char *>(buffer.data);
    allocations.push_back({data, data + buffer.bytes, Space::Global,
                           ("kernel argument " + llvm::Twine(i)).str()});
    auto memref = std::make_shared<MemRefValue>();
    memref->data = data;
    memref->offset = offset;
    memref->sizes.assign(type.getShape().begin(), type.getShape().end());
    memref->strides.assign(strides.begin(), strides.end());
    memref->elementBytes =
        std::max<unsigned>(type.getElementTypeBitWidth() / 8, 1);
    memref->allocation = &allocations.back();
    EValue value;
    value.memref = std::move(memref);
    arguments.push_back(std::move(value));
  }

  // Blocks are independent: workers (one per core, at most one per block)
  // take them in order; the error of the first failing block is reported.
  int64_t numBlocks = int64_t(grid[0]) * grid[1] * grid[2];
  unsigned numWorkers = std::max(1u, std::thread::hardware_concurrency());
  numWorkers = unsigned(std::min<int64_t>({numWorkers, numBlocks, 16}));
  bool direct = !prepared.waits;
  std::atomic<int64_t> nextBlock{0};
  std::atomic<bool> failed{false};
  std::mutex errorMutex;
  int64_t failedBlock = numBlocks;
  std::string error;
  auto work = [&]() {
    BlockRun run;
    run.kernel = &prepared;
    run.limits = &impl->limits;
    run.direct = direct;
    std::copy(grid, grid + 3, run.gridDim);
    std::copy(block, block + 3, run.blockDim);
    // Shared memory, 16-byte aligned like the GPU's dynamic shared memory.
    std::vector<char> shared(dynamicSharedBytes + 16);
    char *sharedBegin =
        shared.data() + (-reinterpret_cast<uintptr_t>(shared.data()) & 15);
    run.shared = {sharedBegin, sharedBegin + dynamicSharedBytes, Space::Shared,
                  "the block's shared memory"};
    run.shadow.resize(dynamicSharedBytes);
    Stacks stacks(direct ? 0 : threads);
    auto report = [&](int64_t index, std::string message) {
      std::lock_guard<std::mutex> lock(errorMutex);
      if (index < failedBlock) {
        failedBlock = index;
        error = std::move(message);
      }
      failed = true;
    };
    if (!direct && !stacks.valid())
      return report(0, "cannot allocate the stacks of " +
                           std::to_string(threads) + " emulated threads");
    for (int64_t t = 0; t < threads; ++t) {
      Thread &thread = run.threads.emplace_back();
      thread.block = &run;
      thread.linear = t;
      thread.id[0] = t % block[0];
      thread.id[1] = (t / block[0]) % block[1];
      thread.id[2] = t / (int64_t(block[0]) * block[1]);
      thread.slots.resize(prepared.numSlots);
      for (auto [i, argument] : llvm::enumerate(arguments))
        thread.slots[prepared.body.arguments[i]] = argument;
    }
    for (;;) {
      int64_t index = nextBlock++;
      if (index >= numBlocks || failed)
        return;
      run.blockId[0] = index % grid[0];
      run.blockId[1] = (index / grid[0]) % grid[1];
      run.blockId[2] = index / (int64_t(grid[0]) * grid[1]);
      // Barrier intervals of earlier blocks never match a later one's.
      run.epoch += 1;
      run.firstEpoch = run.epoch;
      // Shared memory starts as NaNs, not zeros: a kernel that reads what
      // it did not write gets visibly wrong values.
      std::memset(run.shared.begin, 0xFF, dynamicSharedBytes);
      if (!runBlock(run, stacks))
        return report(index, run.error);
    }
  };
  std::vector<std::thread> workers;
  for (unsigned w = 1; w < numWorkers; ++w)
    workers.emplace_back(work);
  work();
  for (std::thread &worker : workers)
    worker.join();
  if (failed)
    return makeError(error);
  return llvm::Error::success();
}
