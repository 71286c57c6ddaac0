//===- FuseReductions.cpp - Row-wise fusion of reductions and their users -===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// pb-fuse-reductions (S3, before pb-affine-fusion): the paper's
// reduce-reduce fusion on loops. A softmax, a layernorm or a batch of
// attention rows arrives from S2 as a run of top-level nests over the same
// rows: fill the maximum, reduce it, exponentiate, fill the sum, reduce it,
// divide. Each nest writes and reads its per-row results at the row loops'
// own indices. Such nests are fused at those loops ("the band"): one
// parallel loop over rows whose body runs every nest's inner loops for that
// row, so each row is read from memory once and stays in cache for the
// rest, and one parallel region replaces six.
//
// Upstream's slicing fusion cannot do this: it fuses a producer into its
// consumer at the consumer's innermost common depth, and a buffer that the
// bufferizer reused across nests (the row maximum, then the row sum) turns
// its producer-consumer mode off (pb-affine-fusion).
//
// Legality, checked per pair of nests (the run fused so far and the next):
//  - both are affine nests whose only memory effects are affine loads and
//    stores (and allocations);
//  - their outermost loops have the same constant bounds up to depth d and
//    are parallel in each nest (so the fused band stays parallel);
//  - every buffer written by one of them and accessed by both is accessed,
//    in every access of both nests, with band loop k's index alone at one
//    subscript p_k, the same for all those accesses (views folded to the
//    base buffer). Two iterations of the band then touch disjoint parts of
//    it, so only same-iteration accesses conflict, and fusion keeps their
//    order.
// Loops that run once are promoted first, so a batch of 1 does not hide the
// rows behind a one-iteration batch loop.
//
//===----------------------------------------------------------------------===//

#include "pb/Transforms/Passes.h"

#include "mlir/Dialect/Affine/Analysis/AffineAnalysis.h"
#include "mlir/Dialect/Affine/Analysis/LoopAnalysis.h"
#include "mlir/Dialect/Affine/LoopUtils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::pb {
#define GEN_PASS_DEF_PBFUSEREDUCTIONSPASS
#include "pb/Transforms/Passes.h.inc"
} // namespace mlir::pb

using namespace mlir;
using namespace mlir::pb;

namespace {
/// One affine load or store of a nest, as subscripts of its base buffer.
/// Band loop k's index is dimension k; every other index value is a symbol.
struct Access {
  Value base;
  SmallVector<AffineExpr> subscripts;
  bool write = false;
  /// False when a view could not be folded: the subscripts are unknown.
  bool known = true;
};

/// A top-level nest (or a run of fused nests) and what fusion needs of it.
struct Nest {
  affine::AffineForOp root;
  /// The perfectly nested loops from the root; the last one's body may hold
  /// anything.
  SmallVector<affine::AffineForOp> band;
  /// How many leading band loops are parallel.
  unsigned parallelDepth = 0;
};
} // namespace

/// The accesses of `root`, with `bandIVs[k]` as dimension k and every other
/// index value as a symbol numbered in `symbols` (shared between nests, so
/// that a value common to two nests is the same symbol).
static SmallVector<Access>
collectAccesses(Operation *root, ArrayRef<Value> bandIVs,
                llvm::DenseMap<Value, unsigned> &symbols) {
  SmallVector<Access> accesses;
  MLIRContext *ctx = root->getContext();
  root->walk([&](Operation *op) {
    Value memref;
    AffineMap map;
    ValueRange operands;
    Access access;
    if (auto load = dyn_cast<affine::AffineLoadOp>(op)) {
      memref = load.getMemRef();
      map = load.getAffineMap();
      operands = load.getMapOperands();
    } else if (auto store = dyn_cast<affine::AffineStoreOp>(op)) {
      memref = store.getMemRef();
      map = store.getAffineMap();
      operands = store.getMapOperands();
      access.write = true;
    } else if (auto read = dyn_cast<affine::AffineReadOpInterface>(op)) {
      // Vector loads and stores: base known, subscripts not.
      accesses.push_back({getBaseBuffer(read.getMemRef()), {}, false, false});
      return;
    } else if (auto write = dyn_cast<affine::AffineWriteOpInterface>(op)) {
      accesses.push_back({getBaseBuffer(write.getMemRef()), {}, true, false});
      return;
    } else {
      return;
    }
    // Each operand becomes a dimension (a band index), a constant or a
    // symbol.
    SmallVector<AffineExpr> replacements;
    for (Value operand : operands) {
      auto it = llvm::find(bandIVs, operand);
      if (it != bandIVs.end()) {
        replacements.push_back(
            getAffineDimExpr(std::distance(bandIVs.begin(), it), ctx));
        continue;
      }
      if (std::optional<int64_t> constant = getConstantIntValue(operand)) {
        replacements.push_back(getAffineConstantExpr(*constant, ctx));
        continue;
      }
      auto [entry, inserted] = symbols.try_emplace(operand, symbols.size());
      replacements.push_back(getAffineSymbolExpr(entry->second, ctx));
    }
    for (AffineExpr result : map.getResults())
      access.subscripts.push_back(simplifyAffineExpr(
          result.replaceDimsAndSymbols(
              ArrayRef<AffineExpr>(replacements).take_front(map.getNumDims()),
              ArrayRef<AffineExpr>(replacements).drop_front(map.getNumDims())),
          bandIVs.size(), symbols.size()));
    // Fold the views between the access and its base buffer.
    while (Operation *view = memref.getDefiningOp()) {
      if (!isa<ViewLikeOpInterface>(view))
        break;
      FailureOr<Value> source = foldViewIndices(view, access.subscripts);
      if (failed(source)) {
        access.known = false;
        memref = getBaseBuffer(memref);
        break;
      }
      memref = *source;
      for (AffineExpr &subscript : access.subscripts)
        subscript =
            simplifyAffineExpr(subscript, bandIVs.size(), symbols.size());
    }
    access.base = memref;
    accesses.push_back(access);
  });
  return accesses;
}

/// How many leading band loops the accesses of `a` and `b` let fusion share,
/// at most `depth`: for every buffer one of them writes and both access,
/// band loop k's index alone at the same subscript in all those accesses.
static unsigned getAlignedDepth(ArrayRef<Access> a, ArrayRef<Access> b,
                                unsigned depth) {
  llvm::SetVector<Value> shared;
  for (const Access &x : a)
    for (const Access &y : b)
      if (x.base == y.base && (x.write || y.write))
        shared.insert(x.base);
  for (Value base : shared) {
    SmallVector<const Access *> all;
    for (const Access &x : a)
      if (x.base == base)
        all.push_back(&x);
    for (const Access &y : b)
      if (y.base == base)
        all.push_back(&y);
    if (llvm::any_of(all, [](const Access *x) { return !x->known; }))
      return 0;
    for (unsigned k = 0; k < depth; ++k) {
      AffineExpr dim = getAffineDimExpr(k, base.getContext());
      ArrayRef<AffineExpr> first = all.front()->subscripts;
      auto it = llvm::find(first, dim);
      if (it == first.end()) {
        depth = k;
        break;
      }
      size_t position = std::distance(first.begin(), it);
      if (!llvm::all_of(all, [&](const Access *x) {
            return x->subscripts.size() == first.size() &&
                   x->subscripts[position] == dim;
          })) {
        depth = k;
        break;
      }
    }
  }
  return depth;
}

/// Whether two loops have the same bounds and step: the same constants, or
/// the same maps of the same values (a size known only at run time).
static bool haveSameBounds(affine::AffineForOp x, affine::AffineForOp y) {
  if (x.getStepAsInt() != y.getStepAsInt())
    return false;
  if (x.hasConstantBounds() && y.hasConstantBounds())
    return x.getConstantLowerBound() == y.getConstantLowerBound() &&
           x.getConstantUpperBound() == y.getConstantUpperBound();
  return x.getLowerBoundMap() == y.getLowerBoundMap() &&
         x.getUpperBoundMap() == y.getUpperBoundMap() &&
         llvm::equal(x.getLowerBoundOperands(), y.getLowerBoundOperands()) &&
         llvm::equal(x.getUpperBoundOperands(), y.getUpperBoundOperands());
}

static Nest analyzeNest(affine::AffineForOp root) {
  Nest nest;
  nest.root = root;
  affine::getPerfectlyNestedLoops(nest.band, root);
  // A loop carrying values (a promoted reduction) ends the band.
  for (size_t k = 0; k < nest.band.size(); ++k)
    if (nest.band[k].getNumResults()) {
      nest.band.resize(k);
      break;
    }
  while (nest.parallelDepth < nest.band.size() &&
         affine::isLoopParallel(nest.band[nest.parallelDepth]))
    ++nest.parallelDepth;
  return nest;
}

/// Moves the body of `from`'s band loop `depth - 1` to the end of `into`'s,
/// `from`'s band indices replaced by `into`'s, and erases `from`.
static void fuseAtDepth(Nest &into, Nest &from, unsigned depth) {
  for (unsigned k = 0; k < depth; ++k)
    from.band[k].getInductionVar().replaceAllUsesWith(
        into.band[k].getInductionVar());
  Block *dst = into.band[depth - 1].getBody();
  Block *src = from.band[depth - 1].getBody();
  dst->getOperations().splice(std::prev(dst->end()), src->getOperations(),
                              src->begin(), std::prev(src->end()));
  from.root.erase();
  into.band.resize(depth);
  into.parallelDepth = std::min<unsigned>(into.parallelDepth, depth);
}

/// Whether `op`, found between two nests, can stay where it is while the
/// second nest's body moves above it: it neither writes nor frees a buffer
/// the nest accesses, nor defines a value the nest uses.
static bool canStayAfter(Operation *op, affine::AffineForOp next) {
  if (isMemoryEffectFree(op) || hasSingleEffect<MemoryEffects::Allocate>(op))
    return true; // Moved above the fused nest instead, if the nest uses it.
  auto dealloc = dyn_cast<memref::DeallocOp>(op);
  if (!dealloc)
    return false;
  Value base = getBaseBuffer(dealloc.getMemref());
  return !next->walk([&](Operation *nested) {
                for (Value operand : nested->getOperands())
                  if (isa<BaseMemRefType>(operand.getType()) &&
                      getBaseBuffer(operand) == base)
                    return WalkResult::interrupt();
                return WalkResult::advance();
              })
              .wasInterrupted();
}

namespace {
class PBFuseReductionsPass
    : public pb::impl::PBFuseReductionsPassBase<PBFuseReductionsPass> {
public:
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    // Loops that run once hide the rows behind them (a batch of 1).
    SmallVector<affine::AffineForOp> loops;
    func.walk([&](affine::AffineForOp loop) { loops.push_back(loop); });
    for (affine::AffineForOp loop : loops)
      (void)affine::promoteIfSingleIteration(loop);

    unsigned before = 0, fusedNests = 0, groups = 0;
    std::optional<Nest> current;
    unsigned currentSize = 0;
    auto close = [&]() {
      if (current && currentSize > 1) {
        ++groups;
        fusedNests += currentSize;
        std::string shape;
        for (affine::AffineForOp loop : current->band) {
          std::optional<uint64_t> trips = affine::getConstantTripCount(loop);
          shape += (shape.empty() ? "" : "x") +
                   (trips ? std::to_string(*trips) : std::string("?"));
        }
        explain(current->root,
                llvm::formatv("fuse-reductions: {0} nests fused at depth {1} "
                              "over a {2} parallel band",
                              currentSize, current->band.size(), shape));
      }
      current.reset();
      currentSize = 0;
    };

    // Ops between two nests are checked when the second one is reached:
    // pure ops and allocations move above the run (the next nest may use
    // them); deallocations of buffers the next nest does not touch stay
    // after it; anything else ends the run.
    // The function's nests, and those of each parallel loop of tasks at its
    // top level (pb-fuse-attention's blocks of rows), which are the
    // top-level nests of a task.
    SmallVector<Block *> blocks{&func.getBody().front()};
    for (auto parallel : func.getBody().getOps<scf::ParallelOp>())
      blocks.push_back(parallel.getBody());
    for (Block *body : blocks) {
      for (Operation &op : llvm::make_early_inc_range(*body)) {
        auto loop = dyn_cast<affine::AffineForOp>(op);
        if (!loop)
          continue;
        ++before;
        if (!hasOnlyAffineMemoryEffects(loop)) {
          close();
          continue;
        }
        Nest next = analyzeNest(loop);
        if (!current) {
          current = next;
          currentSize = 1;
          continue;
        }
        unsigned depth = 0;
        while (depth < current->band.size() && depth < next.band.size() &&
               depth < current->parallelDepth && depth < next.parallelDepth &&
               haveSameBounds(current->band[depth], next.band[depth]))
          ++depth;
        SmallVector<Value> currentIVs, nextIVs;
        for (unsigned k = 0; k < depth; ++k) {
          currentIVs.push_back(current->band[k].getInductionVar());
          nextIVs.push_back(next.band[k].getInductionVar());
        }
        // Band loop k of either nest is dimension k of both access lists.
        llvm::DenseMap<Value, unsigned> symbols;
        SmallVector<Access> currentAccesses =
            collectAccesses(current->root, currentIVs, symbols);
        SmallVector<Access> nextAccesses =
            collectAccesses(next.root, nextIVs, symbols);
        depth = getAlignedDepth(currentAccesses, nextAccesses, depth);
        bool between = depth > 0;
        SmallVector<Operation *> toHoist;
        for (Operation *it = current->root->getNextNode();
             between && it != loop; it = it->getNextNode()) {
          if (!canStayAfter(it, loop))
            between = false;
          else if (isMemoryEffectFree(it) ||
                   hasSingleEffect<MemoryEffects::Allocate>(it))
            toHoist.push_back(it);
        }
        if (!between) {
          close();
          current = next;
          currentSize = 1;
          continue;
        }
        for (Operation *hoisted : toHoist)
          hoisted->moveBefore(current->root);
        fuseAtDepth(*current, next, depth);
        ++currentSize;
      }
      close();
    }
    if (groups)
      explain(func, llvm::formatv("fuse-reductions: {0} of {1} top-level "
                                  "nests fused into {2}",
                                  fusedNests, before, groups));
  }
};
} // namespace
