//===- AffineFusion.cpp - Target-sized slicing-based affine fusion
//---------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "pb/Target/TargetDesc.h"
#include "pb/Transforms/Passes.h"

#include "mlir/Dialect/Affine/Analysis/Utils.h"
#include "mlir/Dialect/Affine/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::pb {
#define GEN_PASS_DEF_PBAFFINEFUSIONPASS
#include "pb/Transforms/Passes.h.inc"
} // namespace mlir::pb

using namespace mlir;
using namespace mlir::pb;

/// The innermost level a fused nest's private buffers should fit: the
/// scratchpad when the chip has one, else its innermost cache.
static const MemoryLevelDesc *getPrivateBufferLevel(const ChipDesc &chip) {
  if (const MemoryLevelDesc *scratch =
          chip.getMemoryLevel(MemoryKind::Scratchpad))
    return scratch;
  return chip.getMemoryLevel(MemoryKind::Cache);
}

/// A memref stored to by more than one loop nest of one block (a buffer the
/// bufferizer reused, or an accumulator and its fill fused into one row
/// loop by pb-fuse-reductions), or null. Upstream's producer-consumer
/// fusion, which fuses the nests of every block, can move a later nest's
/// write of such a buffer above an earlier nest's read of it (a missed
/// write-after-read dependence, seen on decomposed softmax and average
/// pooling), so the pass then restricts itself to sibling fusion.
static Value findBufferWrittenByManyNests(func::FuncOp func) {
  Value shared;
  func.walk([&](Block *block) {
    llvm::DenseMap<Value, Operation *> writer;
    for (auto nest : block->getOps<affine::AffineForOp>()) {
      nest.walk([&](affine::AffineWriteOpInterface store) {
        auto [it, inserted] = writer.try_emplace(store.getMemRef(), nest);
        if (!inserted && it->second != nest.getOperation())
          shared = store.getMemRef();
      });
      if (shared)
        return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return shared;
}

/// A memref accessed by an affine load or store through a view (a subview,
/// a reshape) of another buffer, or null. Upstream fusion's dependence
/// analysis compares memrefs by SSA value, so it would miss the dependence
/// between accesses to the view and to the viewed buffer.
static Value findAccessedView(func::FuncOp func) {
  Value view;
  func.walk([&](Operation *op) {
    Value memref;
    if (auto read = dyn_cast<affine::AffineReadOpInterface>(op))
      memref = read.getMemRef();
    else if (auto write = dyn_cast<affine::AffineWriteOpInterface>(op))
      memref = write.getMemRef();
    if (memref && memref.getDefiningOp<ViewLikeOpInterface>()) {
      view = memref;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return view;
}

/// The buffer a memref value views: through subviews, reshapes and casts
/// to its allocation or block argument.
static Value getRootBuffer(Value memref) {
  while (true) {
    if (auto view = memref.getDefiningOp<ViewLikeOpInterface>())
      memref = view.getViewSource();
    else if (auto cast = memref.getDefiningOp<memref::CastOp>())
      memref = cast.getSource();
    else
      return memref;
  }
}

namespace {
/// One access of an op to a buffer (its root, see getRootBuffer).
struct BufferAccess {
  Value root;
  bool write;
  bool throughView; // through a view, not the root itself
};
} // namespace

/// The reads and writes of `op` (not of the ops nested in it). An op without
/// a memory effect interface, or with an effect that names no value, is
/// taken to read and write every memref it uses.
static void collectOwnAccesses(Operation *op,
                               SmallVectorImpl<BufferAccess> &accesses) {
  auto add = [&](Value memref, bool write) {
    Value root = getRootBuffer(memref);
    accesses.push_back({root, write, root != memref});
  };
  auto addOperands = [&] {
    for (Value operand : op->getOperands())
      if (isa<BaseMemRefType>(operand.getType())) {
        add(operand, /*write=*/false);
        add(operand, /*write=*/true);
      }
  };
  auto iface = dyn_cast<MemoryEffectOpInterface>(op);
  if (!iface) {
    if (!op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
      addOperands();
    return;
  }
  SmallVector<MemoryEffects::EffectInstance> effects;
  iface.getEffects(effects);
  for (const MemoryEffects::EffectInstance &effect : effects) {
    bool write = isa<MemoryEffects::Write>(effect.getEffect());
    if (!write && !isa<MemoryEffects::Read>(effect.getEffect()))
      continue;
    Value value = effect.getValue();
    if (value && isa<BaseMemRefType>(value.getType()))
      add(value, write);
    else if (!value)
      addOperands();
  }
}

namespace {
/// Upstream fusion's dependence graph compares buffers by SSA value, and
/// sees an op that is not an affine nest (a micro-kernel's scf.parallel
/// from pb-map-matrix-units, a copy, a call) only through the values its
/// nested ops access: a buffer read through a view made inside the op (an
/// im2col-like collapse_shape of a padded input) shares no value with the
/// nests that write the buffer, and fusion could move such a nest across
/// the op. This guard records, before fusion, the position in its block of
/// every access inside a top-level affine nest (as a discardable attribute,
/// which fusion's clones of the access keep), and checks after fusion that
/// no access moved across an op it conflicts with: one that accesses the
/// same buffer, the access or the op writing it. Blocks inside affine nests
/// are left out: fusion clones and erases those, and the guard's ops are
/// those it never moves.
class CrossingGuard {
public:
  static constexpr StringLiteral kOrderAttr = "pb_fusion_order";

  /// Records the ops of `func`'s blocks and tags the nests' accesses.
  /// False when no block has a non-nest op that accesses memory.
  bool record(func::FuncOp func) {
    func.walk([&](Block *block) {
      Operation *parent = block->getParentOp();
      if (isa<affine::AffineForOp>(parent) ||
          parent->getParentOfType<affine::AffineForOp>())
        return;
      SmallVector<std::pair<Operation *, unsigned>> nests;
      unsigned position = 0;
      for (Operation &op : *block) {
        ++position;
        if (isa<affine::AffineForOp>(op)) {
          nests.push_back({&op, position});
          continue;
        }
        SmallVector<BufferAccess> accesses;
        op.walk(
            [&](Operation *nested) { collectOwnAccesses(nested, accesses); });
        for (const BufferAccess &access : accesses) {
          OpAccess &entry = guards[{block, access.root}][&op];
          entry.position = position;
          entry.write |= access.write;
          entry.throughView |= access.throughView;
        }
        guardedBlocks.insert(block);
      }
      if (!guardedBlocks.contains(block))
        return;
      for (auto [nest, position] : nests) {
        IntegerAttr order = IntegerAttr::get(
            IntegerType::get(nest->getContext(), 32), position);
        nest->walk([&](Operation *nested) {
          if (!nested->getRegions().empty())
            return;
          SmallVector<BufferAccess> accesses;
          collectOwnAccesses(nested, accesses);
          if (!accesses.empty())
            nested->setAttr(kOrderAttr, order);
        });
      }
    });
    return !guardedBlocks.empty();
  }

  /// An op that an access moved across, and the buffer: the first found.
  /// Removes the tags.
  std::pair<Operation *, const BufferAccess *> findCrossing(func::FuncOp func) {
    Operation *crossed = nullptr;
    func.walk([&](Operation *access) {
      auto order = access->getAttrOfType<IntegerAttr>(kOrderAttr);
      if (!order)
        return;
      access->removeAttr(kOrderAttr);
      if (crossed)
        return;
      // The nest the access is in now: its ancestor in a guarded block.
      Operation *nest = access;
      while (nest && !guardedBlocks.contains(nest->getBlock()))
        nest = nest->getParentOp();
      if (!nest)
        return;
      SmallVector<BufferAccess> accesses;
      collectOwnAccesses(access, accesses);
      for (const BufferAccess &mine : accesses) {
        auto it = guards.find({nest->getBlock(), mine.root});
        if (it == guards.end())
          continue;
        for (auto &[op, theirs] : it->second) {
          if (!mine.write && !theirs.write)
            continue;
          bool wasBefore = order.getInt() < (int64_t)theirs.position;
          if (wasBefore == nest->isBeforeInBlock(op))
            continue;
          crossed = op;
          crossedAccess = {mine.root, true, theirs.throughView};
          return;
        }
      }
    });
    return {crossed, &crossedAccess};
  }

private:
  struct OpAccess {
    unsigned position = 0;
    bool write = false;
    bool throughView = false;
  };
  /// For each block and buffer, the non-nest ops of the block that access
  /// the buffer.
  DenseMap<std::pair<Block *, Value>, llvm::MapVector<Operation *, OpAccess>>
      guards;
  llvm::SmallPtrSet<Block *, 4> guardedBlocks;
  BufferAccess crossedAccess;
};
} // namespace

/// How an explanation names a buffer: its allocating op, or the function
/// argument.
static std::string describeBuffer(Value root) {
  if (auto arg = dyn_cast<BlockArgument>(root)) {
    if (isa<func::FuncOp>(arg.getOwner()->getParentOp()))
      return llvm::formatv("argument #{0}", arg.getArgNumber());
    return "a block argument";
  }
  return llvm::formatv("the buffer of a {0}",
                       root.getDefiningOp()->getName().getStringRef());
}

namespace {
class PBAffineFusionPass
    : public pb::impl::PBAffineFusionPassBase<PBAffineFusionPass> {
public:
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    const ChipDesc *chip = getTargetChip(func);
    if (!chip) {
      func.emitError("pb-affine-fusion needs a target: run with --target");
      return signalPassFailure();
    }
    const MemoryLevelDesc *level = getPrivateBufferLevel(*chip);
    uint64_t thresholdKiB = level ? level->capacityBytes / 1024 : 0;
    unsigned nestsBefore = countNests(func);
    // Upstream fusion fuses the sibling nests of every block, those inside
    // a loop too (pb-fuse-reductions' row loops): the budget is on the
    // most nests of one block.
    unsigned siblings = countMostSiblingNests(func);
    if (siblings > maxNests) {
      explain(func, llvm::formatv("fusion: off in this function: {0} "
                                  "sibling loop nests in one block exceed "
                                  "max-nests ({1}), the compile-time budget "
                                  "of upstream fusion's dependence analysis",
                                  siblings, maxNests.getValue()));
      return;
    }

    if (std::optional<uint64_t> paths =
            countDependencePaths(func, maxDependencePaths)) {
      explain(func, llvm::formatv("fusion: off in this function: its loop "
                                  "nests' dependences form more than {0} "
                                  "paths in one block, which upstream "
                                  "fusion's dependence-path search walks "
                                  "one by one",
                                  *paths));
      return;
    }

    if (Value view = findAccessedView(func)) {
      explain(func, llvm::formatv("fusion: off in this function: {0} is "
                                  "accessed through a view of another "
                                  "buffer, which fusion's dependence "
                                  "analysis cannot see",
                                  view.getDefiningOp()->getName()));
      return;
    }
    OpPassManager pm(func::FuncOp::getOperationName());
    Value reused = findBufferWrittenByManyNests(func);
    StringRef mode = reused ? "sibling" : "greedy";
    std::string spec = llvm::formatv(
        "affine-loop-fusion{{compute-tolerance={0} local-buf-threshold={1} "
        "mode={2}}",
        computeTolerance.getValue(), thresholdKiB, mode);
    // Upstream fusion may move a nest across an op it sees no dependence
    // on (CrossingGuard): keep a copy of the body to put back when it did.
    func::FuncOp backup;
    CrossingGuard guard;
    if (guard.record(func)) {
      // Cloned after tagging: strip the tags from the copy.
      backup = func.clone();
      backup.walk(
          [](Operation *op) { op->removeAttr(CrossingGuard::kOrderAttr); });
    }
    llvm::scope_exit eraseBackup([&] {
      if (backup)
        backup->erase();
    });
    if (failed(parsePassPipeline(spec, pm)) || failed(runPipeline(pm, func)))
      return signalPassFailure();
    if (backup) {
      auto [crossed, access] = guard.findCrossing(func);
      if (crossed) {
        // Worded before the fused body, which holds both, is dropped.
        std::string message = llvm::formatv(
            "fusion: off in this function: it would move a loop nest across "
            "{0} that accesses {1}{2}",
            crossed->getName(), describeBuffer(access->root),
            access->throughView ? " through a view" : "");
        func.getBody().takeBody(backup.getBody());
        explain(func, message);
        return;
      }
    }

    explain(func, llvm::formatv("fusion ({6}): {0} -> {1} top-level loop "
                                "nests; private buffers up to {2} KiB ({3} "
                                "of {4}), compute tolerance {5}{7}",
                                nestsBefore, countNests(func), thresholdKiB,
                                level ? level->name : "no on-chip level",
                                chip->name, computeTolerance.getValue(), mode,
                                reused ? "; a buffer is written by several "
                                         "nests, so producer-consumer fusion "
                                         "is off"
                                       : ""));
  }

private:
  /// `limit` when a block of `func` has more dependence paths between its
  /// ops than that (else nullopt). Upstream's
  /// MemRefDependenceGraph::hasDependencePath searches depth-first without
  /// remembering visited nodes: its cost is the number of paths, which a
  /// chain of nests that each read and write one buffer (a max pool's
  /// gradient spread over its window offsets) makes exponential.
  static std::optional<uint64_t> countDependencePaths(func::FuncOp func,
                                                      uint64_t limit) {
    std::optional<uint64_t> found;
    func.walk([&](Block *block) {
      if (llvm::count_if(*block, llvm::IsaPred<affine::AffineForOp>) < 2)
        return WalkResult::advance();
      affine::MemRefDependenceGraph graph(*block);
      if (!graph.init())
        return WalkResult::advance();
      // Edges go from earlier to later ops: count backwards in block order.
      SmallVector<std::pair<Operation *, unsigned>> order;
      for (auto &[id, node] : graph.nodes)
        order.push_back({node.op, id});
      llvm::sort(order, [](auto a, auto b) {
        return a.first->isBeforeInBlock(b.first);
      });
      llvm::DenseMap<unsigned, uint64_t> paths;
      uint64_t total = 0;
      for (auto [op, id] : llvm::reverse(order)) {
        uint64_t count = 1;
        for (const auto &edge : graph.outEdges.lookup(id))
          count = std::min(count + paths.lookup(edge.id), limit + 1);
        paths[id] = count;
        total = std::min(total + count, limit + 1);
      }
      if (total > limit) {
        found = limit;
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    return found;
  }

  static unsigned countMostSiblingNests(func::FuncOp func) {
    unsigned most = 0;
    func.walk([&](Block *block) {
      unsigned count = 0;
      for (Operation &op : *block)
        count += isa<affine::AffineForOp>(op);
      most = std::max(most, count);
    });
    return most;
  }

  static unsigned countNests(func::FuncOp func) {
    unsigned count = 0;
    for (Operation &op : func.getBody().getOps())
      count += isa<affine::AffineForOp>(op);
    return count;
  }
};
} // namespace
