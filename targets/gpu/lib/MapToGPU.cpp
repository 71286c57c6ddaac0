//===- MapToGPU.cpp - Top-level statements onto GPU launches --------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Turns each top-level statement of an entry function into a gpu.launch:
// parallel loops onto blocks and threads, everything else onto one thread.
// The upstream convert-parallel-loops-to-gpu is not used because it rejects
// statements with side effects between (or after) the loops it maps onto
// threads, which every fused or tiled nest of S3 has; this pass inserts the
// barriers and the thread-0 guards those statements need instead.
//
//===----------------------------------------------------------------------===//

#include "pb/GPU/GPUCommon.h"

#include "pb/Dialect/PBDialect.h"
#include "pb/Transforms/Roofline.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/Utils/GPUUtils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::pb::gpucommon {
#define GEN_PASS_DEF_PBGPUMAPTOGPUPASS
#include "pb/GPU/Passes.h.inc"
} // namespace mlir::pb::gpucommon

using namespace mlir;
using namespace mlir::pb;
using gpucommon::LaunchLimits;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

static std::optional<int64_t> getConstantTrip(Value lb, Value ub, Value step) {
  APInt l, u, s;
  if (!matchPattern(lb, m_ConstantInt(&l)) ||
      !matchPattern(ub, m_ConstantInt(&u)) ||
      !matchPattern(step, m_ConstantInt(&s)) || s.getSExtValue() <= 0)
    return std::nullopt;
  int64_t diff = u.getSExtValue() - l.getSExtValue();
  return diff <= 0 ? 0 : llvm::divideCeil(diff, s.getSExtValue());
}

/// The iteration count of `loop` if constant (product over its dims).
static std::optional<int64_t> getConstantTrip(scf::ParallelOp loop) {
  int64_t total = 1;
  for (auto [lb, ub, step] :
       llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
    std::optional<int64_t> trip = getConstantTrip(lb, ub, step);
    if (!trip)
      return std::nullopt;
    total *= *trip;
  }
  return total;
}

/// max(0, ceil((ub - lb) / step)) computed at run time.
static Value buildTrip(OpBuilder &b, Location loc, Value lb, Value ub,
                       Value step) {
  Value diff = arith::SubIOp::create(b, loc, ub, lb);
  Value trip = arith::CeilDivSIOp::create(b, loc, diff, step);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  return arith::MaxSIOp::create(b, loc, trip, zero);
}

/// The induction variables of `loop` for the linear iteration `linear`,
/// innermost dimension fastest.
static SmallVector<Value> delinearize(OpBuilder &b, Location loc,
                                      scf::ParallelOp loop, Value linear,
                                      ArrayRef<Value> trips) {
  SmallVector<Value> ivs(trips.size());
  Value rest = linear;
  for (int64_t d = trips.size() - 1; d >= 0; --d) {
    Value index = rest;
    if (d > 0) {
      index = arith::RemUIOp::create(b, loc, rest, trips[d]);
      rest = arith::DivUIOp::create(b, loc, rest, trips[d]);
    }
    Value offset = arith::MulIOp::create(b, loc, index, loop.getStep()[d]);
    ivs[d] = arith::AddIOp::create(b, loc, loop.getLowerBound()[d], offset);
  }
  return ivs;
}

/// Moves the body of `loop` (but its terminator) before `before`, with its
/// induction variables replaced by `ivs`.
static void inlineBody(scf::ParallelOp loop, Operation *before,
                       ValueRange ivs) {
  Block *body = loop.getBody();
  for (auto [iv, value] : llvm::zip(body->getArguments(), ivs))
    iv.replaceAllUsesWith(value);
  before->getBlock()->getOperations().splice(
      before->getIterator(), body->getOperations(), body->begin(),
      std::prev(body->end()));
}

/// Replaces `loop` by sequential scf.for loops (inside a thread).
static void sequentialize(scf::ParallelOp loop) {
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  SmallVector<Value> ivs;
  for (auto [lb, ub, step] :
       llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
    auto inner = scf::ForOp::create(b, loc, lb, ub, step);
    ivs.push_back(inner.getInductionVar());
    b.setInsertionPoint(inner.getBody()->getTerminator());
  }
  Operation *before = &*b.getInsertionPoint();
  inlineBody(loop, before, ivs);
  loop.erase();
}

/// Thread-private buffers: allocations left inside a kernel become stack
/// buffers of the thread that runs them.
static void privatizeAllocations(Operation *root) {
  SmallVector<memref::AllocOp> allocs;
  root->walk([&](memref::AllocOp alloc) { allocs.push_back(alloc); });
  for (memref::AllocOp alloc : allocs) {
    OpBuilder b(alloc);
    auto alloca = memref::AllocaOp::create(
        b, alloc.getLoc(), alloc.getType(), alloc.getDynamicSizes(),
        alloc.getSymbolOperands(), alloc.getAlignmentAttr());
    for (OpOperand &use : llvm::make_early_inc_range(alloc->getUses()))
      if (isa<memref::DeallocOp>(use.getOwner()))
        use.getOwner()->erase();
    alloc.replaceAllUsesWith(alloca.getResult());
    alloc.erase();
  }
}

/// Ops that stay in the host function: buffers, views, constants. Kernels
/// get clones of the views and constants they use.
static bool isHostOp(Operation *op) {
  if (isa<memref::AllocOp, memref::AllocaOp, memref::DeallocOp,
          memref::GetGlobalOp, func::ReturnOp, ViewLikeOpInterface>(op))
    return true;
  return op->getNumRegions() == 0 && isMemoryEffectFree(op);
}

static bool isSinkable(Operation *op) {
  if (isa<memref::GetGlobalOp, ViewLikeOpInterface, memref::ExpandShapeOp,
          memref::CollapseShapeOp, memref::ReinterpretCastOp, memref::CastOp>(
          op))
    return true;
  return op->getNumRegions() == 0 && isMemoryEffectFree(op);
}

void gpucommon::sinkIntoLaunch(gpu::LaunchOp launch) {
  Region &body = launch.getBody();
  bool changed = true;
  while (changed) {
    changed = false;
    SetVector<Value> above;
    getUsedValuesDefinedAbove(body, above);
    for (Value value : above) {
      Operation *def = value.getDefiningOp();
      if (!def || !isSinkable(def))
        continue;
      OpBuilder b(&body.front(), body.front().begin());
      Operation *clone = b.clone(*def);
      replaceAllUsesInRegionWith(
          value, clone->getResult(cast<OpResult>(value).getResultNumber()),
          body);
      changed = true;
    }
  }
}

/// Whether `op` and everything nested in it at most read memory.
static bool onlyReads(Operation *op) {
  WalkResult result = op->walk([](Operation *nested) {
    if (isMemoryEffectFree(nested))
      return WalkResult::advance();
    auto iface = dyn_cast<MemoryEffectOpInterface>(nested);
    if (!iface) {
      if (nested->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
        return WalkResult::advance();
      return WalkResult::interrupt();
    }
    if (iface.hasEffect<MemoryEffects::Write>() ||
        iface.hasEffect<MemoryEffects::Allocate>() ||
        iface.hasEffect<MemoryEffects::Free>())
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return !result.wasInterrupted();
}

static bool containsParallel(Operation *op) {
  return op->walk([](scf::ParallelOp) { return WalkResult::interrupt(); })
      .wasInterrupted();
}

/// How a block's threads combine the partial results of a reduction whose
/// loop yields `combiner(accumulator, x)`.
struct BlockReduction {
  gpu::AllReduceOperation operation;
  arith::AtomicRMWKind kind;
};

static std::optional<BlockReduction> getBlockReduction(Operation *combiner) {
  using Op = gpu::AllReduceOperation;
  using Kind = arith::AtomicRMWKind;
  return llvm::TypeSwitch<Operation *, std::optional<BlockReduction>>(combiner)
      .Case([](arith::AddFOp) { return BlockReduction{Op::ADD, Kind::addf}; })
      .Case([](arith::MulFOp) { return BlockReduction{Op::MUL, Kind::mulf}; })
      .Case([](arith::MaxNumFOp) {
        return BlockReduction{Op::MAXNUMF, Kind::maxnumf};
      })
      .Case([](arith::MinNumFOp) {
        return BlockReduction{Op::MINNUMF, Kind::minnumf};
      })
      .Case([](arith::MaximumFOp) {
        return BlockReduction{Op::MAXIMUMF, Kind::maximumf};
      })
      .Case([](arith::MinimumFOp) {
        return BlockReduction{Op::MINIMUMF, Kind::minimumf};
      })
      .Case([](arith::AddIOp) { return BlockReduction{Op::ADD, Kind::addi}; })
      .Case([](arith::MulIOp) { return BlockReduction{Op::MUL, Kind::muli}; })
      .Case(
          [](arith::MaxSIOp) { return BlockReduction{Op::MAXSI, Kind::maxs}; })
      .Case(
          [](arith::MinSIOp) { return BlockReduction{Op::MINSI, Kind::mins}; })
      .Case(
          [](arith::MaxUIOp) { return BlockReduction{Op::MAXUI, Kind::maxu}; })
      .Case(
          [](arith::MinUIOp) { return BlockReduction{Op::MINUI, Kind::minu}; })
      .Case([](arith::AndIOp) { return BlockReduction{Op::AND, Kind::andi}; })
      .Case([](arith::OrIOp) { return BlockReduction{Op::OR, Kind::ori}; })
      .Default([](Operation *) { return std::nullopt; });
}

/// The combining op of each result of `loop` when every iteration only
/// reads memory and folds one value into each accumulator
/// (`acc' = combiner(acc, x)`, the accumulator used by nothing else), with
/// accumulators of 32- or 64-bit elements (what warp shuffles move).
static std::optional<SmallVector<Operation *>>
getReductionCombiners(scf::ForOp loop) {
  if (loop.getNumResults() == 0 || !onlyReads(loop) || containsParallel(loop))
    return std::nullopt;
  SmallVector<Operation *> combiners;
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  for (auto [acc, next] :
       llvm::zip(loop.getRegionIterArgs(), yield.getOperands())) {
    Operation *combiner = next.getDefiningOp();
    unsigned width =
        getElementTypeOrSelf(acc.getType()).getIntOrFloatBitWidth();
    if (!combiner || combiner->getBlock() != loop.getBody() ||
        combiner->getNumOperands() != 2 || !acc.hasOneUse() ||
        !llvm::is_contained(combiner->getOperands(), acc) ||
        !next.hasOneUse() || !getBlockReduction(combiner) ||
        (width != 32 && width != 64))
      return std::nullopt;
    if (auto vector = dyn_cast<VectorType>(acc.getType()))
      if (vector.getRank() != 1 || vector.isScalable())
        return std::nullopt;
    combiners.push_back(combiner);
  }
  return combiners;
}

//===----------------------------------------------------------------------===//
// The mapping
//===----------------------------------------------------------------------===//

namespace {
class GPUMapper {
public:
  GPUMapper(const LaunchLimits &limits, int64_t alignment, int64_t units)
      : limits(limits), alignment(alignment), units(units) {}

  LogicalResult mapFunction(func::FuncOp func);

private:
  gpu::LaunchOp createLaunch(OpBuilder &b, Location loc, int64_t blocks,
                             int64_t threads);
  LogicalResult mapGrid(scf::ParallelOp grid);
  LogicalResult mapSingleThread(ArrayRef<Operation *> ops);
  LogicalResult distribute(Block &block);
  LogicalResult mapThreads(scf::ParallelOp loop);
  void reduceOverThreads(scf::ForOp loop, ArrayRef<Operation *> combiners);
  LogicalResult guardOnThreadZero(SmallVectorImpl<Operation *> &pending,
                                  Operation *before);
  LogicalResult makeShared(Operation *alloc);
  void sinkIntoLaunch(gpu::LaunchOp launch);

  const LaunchLimits &limits;
  /// Alignment of the block's buffers in shared memory (the chip's widest
  /// vector access).
  int64_t alignment;
  /// The chip's SMs (physical units of the root level), or 0.
  int64_t units;
  // State of the launch being built.
  gpu::LaunchOp launch;
  Value threadId;
  int64_t threadCount = 1;
  /// The launch's dynamic shared memory and the bytes its buffers use.
  Value dynamicShared;
  int64_t sharedBytes = 0;
};
} // namespace

gpu::LaunchOp GPUMapper::createLaunch(OpBuilder &b, Location loc,
                                      int64_t blocks, int64_t threads) {
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value grid = arith::ConstantIndexOp::create(b, loc, blocks);
  Value block = arith::ConstantIndexOp::create(b, loc, threads);
  auto op = gpu::LaunchOp::create(b, loc, grid, one, one, block, one, one);
  OpBuilder inner = OpBuilder::atBlockEnd(&op.getBody().front());
  gpu::TerminatorOp::create(inner, loc);
  return op;
}

void GPUMapper::sinkIntoLaunch(gpu::LaunchOp op) {
  gpucommon::sinkIntoLaunch(op);
}

LogicalResult GPUMapper::mapSingleThread(ArrayRef<Operation *> ops) {
  if (ops.empty())
    return success();
  llvm::SmallPtrSet<Operation *, 8> group(ops.begin(), ops.end());
  for (Operation *op : ops)
    for (Operation *user : op->getUsers()) {
      Operation *top = user;
      while (top && !group.contains(top))
        top = top->getParentOp();
      if (!top)
        return op->emitError("pb-gpu-map-to-gpu: a statement run as a "
                             "kernel produces a value the host uses");
    }
  Work work = countWork(ops);
  OpBuilder b(ops.front());
  gpu::LaunchOp op = createLaunch(b, ops.front()->getLoc(), 1, 1);
  op->setAttr(PBDialect::kWorkAttrName, work.toAttr(op.getContext()));
  Operation *terminator = op.getBody().front().getTerminator();
  for (Operation *moved : ops)
    moved->moveBefore(terminator);
  privatizeAllocations(op);
  sinkIntoLaunch(op);
  return success();
}

LogicalResult GPUMapper::makeShared(Operation *alloc) {
  auto type = cast<MemRefType>(alloc->getResult(0).getType());
  if (!type.hasStaticShape() || !type.getLayout().isIdentity())
    return alloc->emitError("pb-gpu-map-to-gpu: a buffer shared by a "
                            "block's threads needs a static shape and an "
                            "identity layout");
  for (Operation *user : alloc->getUsers())
    if (!isa<memref::LoadOp, memref::StoreOp, memref::DeallocOp,
             vector::TransferReadOp, vector::TransferWriteOp, vector::LoadOp,
             vector::StoreOp>(user))
      return user->emitError("pb-gpu-map-to-gpu: unsupported use of a "
                             "buffer shared by a block's threads");
  // A view of the launch's dynamic shared memory (static shared memory
  // stops at 48 KiB; the runtime raises the dynamic limit to the chip's).
  MLIRContext *ctx = alloc->getContext();
  auto space = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  Location loc = alloc->getLoc();
  if (!dynamicShared) {
    OpBuilder b = OpBuilder::atBlockBegin(&launch.getBody().front());
    dynamicShared = gpu::DynamicSharedMemoryOp::create(
        b, loc,
        MemRefType::get({ShapedType::kDynamic}, IntegerType::get(ctx, 8),
                        MemRefLayoutAttrInterface(), space));
  }
  auto sharedType = MemRefType::get(type.getShape(), type.getElementType(),
                                    MemRefLayoutAttrInterface(), space);
  int64_t bytes = type.getNumElements() *
                  llvm::divideCeil(type.getElementTypeBitWidth(), 8);
  int64_t offset = llvm::alignTo(sharedBytes, alignment);
  sharedBytes = offset + bytes;
  OpBuilder b(alloc);
  Value shift = arith::ConstantIndexOp::create(b, loc, offset);
  Value shared = memref::ViewOp::create(b, loc, sharedType, dynamicShared,
                                        shift, ValueRange{});
  for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
    if (isa<memref::DeallocOp>(user))
      user->erase();
  alloc->getResult(0).replaceAllUsesWith(shared);
  alloc->erase();
  return success();
}

LogicalResult GPUMapper::mapThreads(scf::ParallelOp loop) {
  if (loop.getNumResults() != 0)
    return loop.emitError("pb-gpu-map-to-gpu: parallel loops with "
                          "reductions are not supported");
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  SmallVector<Value> trips;
  Value total = arith::ConstantIndexOp::create(b, loc, 1);
  for (auto [lb, ub, step] :
       llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
    trips.push_back(buildTrip(b, loc, lb, ub, step));
    total = arith::MulIOp::create(b, loc, total, trips.back());
  }
  Value stride = arith::ConstantIndexOp::create(b, loc, threadCount);
  auto cyclic = scf::ForOp::create(b, loc, threadId, total, stride);
  b.setInsertionPoint(cyclic.getBody()->getTerminator());
  SmallVector<Value> ivs =
      delinearize(b, loc, loop, cyclic.getInductionVar(), trips);
  inlineBody(loop, cyclic.getBody()->getTerminator(), ivs);
  b.setInsertionPointAfter(cyclic);
  gpu::BarrierOp::create(b, loc);
  loop.erase();
  SmallVector<scf::ParallelOp> nested;
  cyclic.walk([&](scf::ParallelOp inner) { nested.push_back(inner); });
  for (scf::ParallelOp inner : llvm::reverse(nested))
    sequentialize(inner);
  privatizeAllocations(cyclic);
  return success();
}

/// A reduction at block level (all threads run it, e.g. a softmax row's
/// maximum before the thread loop that uses it) is split over the block's
/// threads: thread t folds iterations t, t + T, ... into the combiner's
/// neutral element, `gpu.all_reduce` (warp shuffles and shared memory, per
/// vector lane) combines the partial results, and the loop's initial value
/// is folded in last. Every thread gets the result. Before, every thread ran
/// the whole loop.
void GPUMapper::reduceOverThreads(scf::ForOp loop,
                                  ArrayRef<Operation *> combiners) {
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  Value offset = arith::MulIOp::create(b, loc, threadId, loop.getStep());
  loop.getLowerBoundMutable().assign(
      arith::AddIOp::create(b, loc, loop.getLowerBound(), offset));
  Value threads = arith::ConstantIndexOp::create(b, loc, threadCount);
  loop.getStepMutable().assign(
      arith::MulIOp::create(b, loc, loop.getStep(), threads));
  SmallVector<BlockReduction> reductions;
  SmallVector<Value> inits;
  for (auto [combiner, init] : llvm::zip(combiners, loop.getInitArgs())) {
    reductions.push_back(*getBlockReduction(combiner));
    Type type = init.getType();
    TypedAttr neutral = arith::getIdentityValueAttr(
        reductions.back().kind, getElementTypeOrSelf(type), b, loc);
    if (auto vector = dyn_cast<VectorType>(type))
      neutral = DenseElementsAttr::get(vector, neutral);
    inits.push_back(init);
    Value start = arith::ConstantOp::create(b, loc, type, neutral);
    loop.getInitArgsMutable()[inits.size() - 1].assign(start);
  }
  b.setInsertionPointAfter(loop);
  for (auto [result, reduction, init] :
       llvm::zip(loop.getResults(), reductions, inits)) {
    // The loop's users, before the reduction below reads the result too.
    SmallVector<OpOperand *> uses = llvm::map_to_vector(
        result.getUses(), [](OpOperand &use) { return &use; });
    auto allReduce = [&](Value value) -> Value {
      return gpu::AllReduceOp::create(b, loc, value,
                                      gpu::AllReduceOperationAttr::get(
                                          b.getContext(), reduction.operation),
                                      /*uniform=*/true)
          .getResult();
    };
    // A vector result that one vector.reduction of the same kind folds
    // into a scalar (softmax's row maximum, a sum): each thread folds its
    // lanes first, one scalar crosses the threads, and the reduction keeps
    // the initial vector (and its own accumulator).
    auto horizontal =
        result.hasOneUse()
            ? dyn_cast<vector::ReductionOp>(*result.getUsers().begin())
            : nullptr;
    if (horizontal && horizontal.getKind() ==
                          gpu::convertReductionKind(reduction.operation)) {
      Value own = vector::ReductionOp::create(b, loc, horizontal.getKind(),
                                              result, horizontal.getFastmath());
      Value total = allReduce(own);
      horizontal.getVectorMutable().assign(init);
      OpBuilder after(horizontal->getBlock(),
                      std::next(horizontal->getIterator()));
      Value combined =
          arith::getReductionOp(reduction.kind, after, loc, horizontal, total);
      horizontal.getResult().replaceAllUsesExcept(combined,
                                                  combined.getDefiningOp());
      continue;
    }
    Value total;
    if (auto vector = dyn_cast<VectorType>(result.getType())) {
      SmallVector<Value> lanes;
      for (int64_t lane = 0; lane < vector.getNumElements(); ++lane)
        lanes.push_back(allReduce(
            vector::ExtractOp::create(b, loc, result, lane).getResult()));
      total = vector::FromElementsOp::create(b, loc, vector, lanes);
    } else {
      total = allReduce(result);
    }
    Value combined = arith::getReductionOp(reduction.kind, b, loc, init, total);
    for (OpOperand *use : uses)
      use->set(combined);
  }
}

LogicalResult
GPUMapper::guardOnThreadZero(SmallVectorImpl<Operation *> &pending,
                             Operation *before) {
  if (pending.empty())
    return success();
  llvm::SmallPtrSet<Operation *, 8> group(pending.begin(), pending.end());
  for (Operation *op : pending)
    for (Operation *user : op->getUsers())
      if (!group.contains(user))
        return op->emitError("pb-gpu-map-to-gpu: a statement that writes "
                             "memory produces a value the other threads of "
                             "its block need");
  OpBuilder b(before);
  Location loc = pending.front()->getLoc();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value first =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, threadId, zero);
  auto guard = scf::IfOp::create(b, loc, first, /*withElseRegion=*/false);
  for (Operation *op : pending)
    op->moveBefore(guard.thenBlock()->getTerminator());
  gpu::BarrierOp::create(b, loc);
  pending.clear();
  return success();
}

LogicalResult GPUMapper::distribute(Block &block) {
  SmallVector<Operation *> pending;
  llvm::SmallPtrSet<Operation *, 8> pendingSet;
  auto usesPending = [&](Operation *op) {
    return llvm::any_of(op->getOperands(), [&](Value v) {
      return v.getDefiningOp() && pendingSet.contains(v.getDefiningOp());
    });
  };
  auto flush = [&](Operation *before) {
    pendingSet.clear();
    return guardOnThreadZero(pending, before);
  };
  for (Operation &op : llvm::make_early_inc_range(block.without_terminator())) {
    if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
      if (failed(flush(&op)) || failed(mapThreads(loop)))
        return failure();
      continue;
    }
    if (isa<scf::ForOp, scf::IfOp>(op) && containsParallel(&op)) {
      if (op.getNumResults() != 0)
        return op.emitError("pb-gpu-map-to-gpu: a loop or branch with "
                            "results around a thread-level loop is not "
                            "supported");
      if (failed(flush(&op)))
        return failure();
      for (Region &region : op.getRegions())
        for (Block &inner : region)
          if (failed(distribute(inner)))
            return failure();
      continue;
    }
    if (isa<memref::AllocOp, memref::AllocaOp>(op)) {
      if (failed(makeShared(&op)))
        return failure();
      continue;
    }
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      if (std::optional<SmallVector<Operation *>> combiners =
              getReductionCombiners(loop)) {
        if (!pending.empty() && failed(flush(&op)))
          return failure();
        reduceOverThreads(loop, *combiners);
        continue;
      }
    }
    if (usesPending(&op) && isMemoryEffectFree(&op)) {
      pending.push_back(&op);
      pendingSet.insert(&op);
      continue;
    }
    if (onlyReads(&op)) {
      if (!pending.empty() && failed(flush(&op)))
        return failure();
      continue;
    }
    pending.push_back(&op);
    pendingSet.insert(&op);
  }
  return flush(block.getTerminator());
}

LogicalResult GPUMapper::mapGrid(scf::ParallelOp grid) {
  if (grid.getNumResults() != 0)
    return grid.emitError("pb-gpu-map-to-gpu: parallel loops with "
                          "reductions are not supported");
  std::optional<int64_t> iterations = getConstantTrip(grid);
  if (!iterations)
    return grid.emitError("pb-gpu-map-to-gpu: a grid-level loop needs "
                          "constant bounds");
  if (*iterations == 0) {
    grid.erase();
    return success();
  }
  // The largest thread-level trip count decides the block size.
  bool hasThreadLoops = false;
  int64_t largest = 0;
  grid.getBody()->walk<WalkOrder::PreOrder>([&](scf::ParallelOp inner) {
    hasThreadLoops = true;
    std::optional<int64_t> trip = getConstantTrip(inner);
    largest = std::max(largest, trip ? *trip : limits.maxThreadsPerBlock);
    return WalkResult::skip();
  });
  int64_t work = hasThreadLoops ? largest : *iterations;
  int64_t threads =
      std::clamp<int64_t>(llvm::alignTo(work, limits.warpSize), limits.warpSize,
                          limits.maxThreadsPerBlock);
  if (!hasThreadLoops) {
    // Iterations spread over blocks x threads: blocks small enough that
    // every SM gets one when there are few iterations (a batch-1 linear
    // layer's 1000 outputs: 32 blocks of 32 threads, not one block of
    // 1000 on one SM).
    if (units > 0)
      threads = std::clamp<int64_t>(
          llvm::alignTo(llvm::divideCeil(*iterations, units), limits.warpSize),
          limits.warpSize, threads);
    if (*iterations < threads)
      threads = *iterations;
  }
  int64_t blocks =
      hasThreadLoops ? *iterations : llvm::divideCeil(*iterations, threads);
  if (limits.maxBlocksPerGrid > 0)
    blocks = std::min(blocks, limits.maxBlocksPerGrid);

  Work statementWork = countWork({grid.getOperation()});
  OpBuilder b(grid);
  Location loc = grid.getLoc();
  launch = createLaunch(b, loc, blocks, threads);
  launch->setAttr(PBDialect::kWorkAttrName,
                  statementWork.toAttr(launch.getContext()));
  threadCount = threads;
  dynamicShared = nullptr;
  sharedBytes = 0;
  b.setInsertionPoint(launch.getBody().front().getTerminator());
  threadId = launch.getThreadIds().x;
  Value blockId = launch.getBlockIds().x;
  Value start = blockId;
  Value stride = arith::ConstantIndexOp::create(b, loc, blocks);
  if (!hasThreadLoops) {
    Value width = arith::ConstantIndexOp::create(b, loc, threads);
    start = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, blockId, width), threadId);
    stride = arith::ConstantIndexOp::create(b, loc, blocks * threads);
  }
  Value end = arith::ConstantIndexOp::create(b, loc, *iterations);
  auto cyclic = scf::ForOp::create(b, loc, start, end, stride);
  b.setInsertionPoint(cyclic.getBody()->getTerminator());
  SmallVector<Value> trips;
  for (auto [lb, ub, step] :
       llvm::zip(grid.getLowerBound(), grid.getUpperBound(), grid.getStep()))
    trips.push_back(
        arith::ConstantIndexOp::create(b, loc, *getConstantTrip(lb, ub, step)));
  SmallVector<Value> ivs =
      delinearize(b, loc, grid, cyclic.getInductionVar(), trips);
  inlineBody(grid, cyclic.getBody()->getTerminator(), ivs);
  grid.erase();

  if (hasThreadLoops) {
    if (failed(distribute(*cyclic.getBody())))
      return failure();
    // The next iteration of the block reuses its shared buffers.
    b.setInsertionPoint(cyclic.getBody()->getTerminator());
    gpu::BarrierOp::create(b, loc);
  }
  if (sharedBytes) {
    b.setInsertionPoint(launch);
    launch.getDynamicSharedMemorySizeMutable().assign(arith::ConstantOp::create(
        b, loc, b.getI32IntegerAttr(static_cast<int32_t>(sharedBytes))));
  }
  privatizeAllocations(launch);
  sinkIntoLaunch(launch);
  return success();
}

LogicalResult GPUMapper::mapFunction(func::FuncOp func) {
  // memref.copy between buffers becomes a parallel loop nest.
  SmallVector<memref::CopyOp> copies;
  for (auto copy : func.getBody().getOps<memref::CopyOp>())
    copies.push_back(copy);
  for (memref::CopyOp copy : copies) {
    auto type = dyn_cast<MemRefType>(copy.getSource().getType());
    if (!type || !type.hasStaticShape())
      return copy.emitError("pb-gpu-map-to-gpu: copies need static shapes");
    OpBuilder b(copy);
    Location loc = copy.getLoc();
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    SmallVector<Value> lbs(type.getRank(), zero), steps(type.getRank(), one),
        ubs;
    for (int64_t size : type.getShape())
      ubs.push_back(arith::ConstantIndexOp::create(b, loc, size));
    Value source = copy.getSource(), target = copy.getTarget();
    scf::ParallelOp::create(
        b, loc, lbs, ubs, steps,
        [&](OpBuilder &nested, Location nestedLoc, ValueRange ivs) {
          Value v = memref::LoadOp::create(nested, nestedLoc, source, ivs);
          memref::StoreOp::create(nested, nestedLoc, v, target, ivs);
        });
    copy.erase();
  }

  SmallVector<Operation *> pending;
  SmallVector<Operation *> ops;
  for (Operation &op : func.getBody().front())
    ops.push_back(&op);
  for (Operation *op : ops) {
    // Kernels built before (pb-nvidia-lower-matrix-units) stay as they are,
    // with the constants and views that passes since hoisted out of them
    // sunk back.
    if (auto built = dyn_cast<gpu::LaunchOp>(op)) {
      if (failed(mapSingleThread(pending)))
        return failure();
      pending.clear();
      sinkIntoLaunch(built);
      continue;
    }
    // Launches of kernels a back end built in its own IR stay too.
    if (op->hasAttr(PBDialect::kKernelLaunchAttrName)) {
      if (failed(mapSingleThread(pending)))
        return failure();
      pending.clear();
      continue;
    }
    if (auto grid = dyn_cast<scf::ParallelOp>(op)) {
      if (failed(mapSingleThread(pending)) || failed(mapGrid(grid)))
        return failure();
      pending.clear();
      continue;
    }
    if (isHostOp(op)) {
      if (pending.empty())
        continue;
      // A pure op that the single-thread group uses joins it; buffers and
      // the return close it.
      if (!isa<memref::AllocOp, memref::AllocaOp, memref::DeallocOp,
               func::ReturnOp>(op) &&
          llvm::any_of(op->getOperands(), [&](Value v) {
            return llvm::is_contained(pending, v.getDefiningOp());
          })) {
        pending.push_back(op);
        continue;
      }
      if (isa<memref::AllocOp, memref::AllocaOp, memref::DeallocOp,
              func::ReturnOp>(op)) {
        if (failed(mapSingleThread(pending)))
          return failure();
        pending.clear();
      }
      continue;
    }
    if (isa<func::CallOp>(op))
      return op->emitError("pb-gpu-map-to-gpu: calls between entry "
                           "functions are not supported");
    pending.push_back(op);
  }
  return mapSingleThread(pending);
}

namespace {
class PBGPUMapToGPUPass
    : public pb::gpucommon::impl::PBGPUMapToGPUPassBase<PBGPUMapToGPUPass> {
public:
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    const ChipDesc *chip = getTargetChip(func);
    if (!chip) {
      func.emitError("pb-gpu-map-to-gpu needs a target: run with --target");
      return signalPassFailure();
    }
    FailureOr<LaunchLimits> limits = gpucommon::getLaunchLimits(func, *chip);
    if (failed(limits))
      return signalPassFailure();
    GPUMapper mapper(*limits, std::max<int64_t>(1, chip->vectorWidthBits / 8),
                     chip->computeLevels.front().physicalUnits);
    if (failed(mapper.mapFunction(func)))
      return signalPassFailure();
  }
};
} // namespace
