//===- MarkParallel.cpp - Parallel loops and their hardware level
//----------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "pb/Target/TargetDesc.h"
#include "pb/Transforms/Passes.h"

#include "mlir/Dialect/Affine/Analysis/AffineAnalysis.h"
#include "mlir/Dialect/Affine/Analysis/LoopAnalysis.h"
#include "mlir/Dialect/Affine/Analysis/Utils.h"
#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::pb {
#define GEN_PASS_DEF_PBMARKPARALLELPASS
#include "pb/Transforms/Passes.h.inc"
} // namespace mlir::pb

using namespace mlir;
using namespace mlir::pb;

/// Iterations of the outermost parallel loops per physical unit of the
/// root level that banding aims for (load balance across units).
static constexpr int64_t kIterationsPerUnit = 4;

/// The trip count of `loop` when its bounds are constants (a parallel loop
/// with constant bounds can join a multi-dimensional affine.parallel whose
/// bounds take no operands).
static std::optional<int64_t> getConstantBoundsTrip(affine::AffineForOp loop) {
  if (!loop.hasConstantBounds())
    return std::nullopt;
  std::optional<uint64_t> trip = affine::getConstantTripCount(loop);
  return trip ? std::optional<int64_t>(*trip) : std::nullopt;
}

/// Merges into the top-level `par` (constant bounds, no reductions) the
/// loops with constant bounds perfectly nested under it that `joins`
/// accepts, while its iterations are fewer than `wanted`.
/// Returns whether a joined loop's IV became an offset (an affine.apply).
static bool widenParallel(affine::AffineParallelOp par, int64_t wanted,
                          llvm::function_ref<bool(affine::AffineForOp)> joins) {
  bool offsets = false;
  auto constantTrip = [](affine::AffineParallelOp p) -> std::optional<int64_t> {
    if (p.getNumResults())
      return std::nullopt;
    SmallVector<int64_t> steps = p.getSteps();
    int64_t trip = 1;
    for (unsigned d = 0, e = p.getNumDims(); d < e; ++d) {
      AffineMap lb = p.getLowerBoundMap(d), ub = p.getUpperBoundMap(d);
      if (lb.getNumInputs() || ub.getNumInputs() || !lb.isSingleConstant() ||
          !ub.isSingleConstant())
        return std::nullopt;
      trip *= llvm::divideCeil(ub.getSingleConstantResult() -
                                   lb.getSingleConstantResult(),
                               steps[d]);
    }
    return trip;
  };
  std::optional<int64_t> trip = constantTrip(par);
  while (trip && *trip < wanted) {
    Block *body = par.getBody();
    if (body->getOperations().size() != 2)
      return offsets;
    auto inner = dyn_cast<affine::AffineForOp>(body->front());
    if (!inner || !joins(inner))
      return offsets;
    std::optional<int64_t> innerTrip = getConstantBoundsTrip(inner);
    // An intra-tile loop (from a function of `par`'s IVs, a constant trip
    // count) joins as a dimension from 0 to its extent; its IV becomes its
    // lower bound plus that dimension.
    bool offset = false;
    if (!innerTrip) {
      std::optional<uint64_t> trip = affine::getConstantTripCount(inner);
      AffineMap lbMap = inner.getLowerBoundMap();
      if (!trip || lbMap.getNumResults() != 1 ||
          !llvm::all_of(inner.getLowerBoundOperands(), [&](Value operand) {
            return llvm::is_contained(par.getIVs(), operand);
          }))
        return offsets;
      innerTrip = static_cast<int64_t>(*trip);
      offset = true;
      offsets = true;
    }
    SmallVector<AffineMap> lbs, ubs;
    for (unsigned d = 0, e = par.getNumDims(); d < e; ++d) {
      lbs.push_back(par.getLowerBoundMap(d));
      ubs.push_back(par.getUpperBoundMap(d));
    }
    MLIRContext *ctx = par.getContext();
    if (offset) {
      lbs.push_back(AffineMap::getConstantMap(0, ctx));
      ubs.push_back(
          AffineMap::getConstantMap(*innerTrip * inner.getStepAsInt(), ctx));
    } else {
      lbs.push_back(inner.getLowerBoundMap());
      ubs.push_back(inner.getUpperBoundMap());
    }
    SmallVector<int64_t> steps = par.getSteps();
    steps.push_back(inner.getStepAsInt());
    OpBuilder b(par);
    auto wider = affine::AffineParallelOp::create(
        b, par.getLoc(), TypeRange{}, ArrayRef<arith::AtomicRMWKind>{}, lbs,
        ValueRange{}, ubs, ValueRange{}, steps);
    Block *newBody = wider.getBody();
    Block *innermost = inner.getBody();
    newBody->getOperations().splice(
        newBody->begin(), innermost->getOperations(), innermost->begin(),
        std::prev(innermost->end()));
    for (auto [iv, newIV] : llvm::zip(par.getIVs(), wider.getIVs()))
      iv.replaceAllUsesWith(newIV);
    Value innerIV = wider.getIVs().back();
    if (offset) {
      // lb(operands) + d, with d the new dimension (the map's last input).
      AffineMap lbMap = inner.getLowerBoundMap();
      AffineMap shifted = AffineMap::get(
          lbMap.getNumDims() + 1, lbMap.getNumSymbols(),
          lbMap.getResult(0) + getAffineDimExpr(lbMap.getNumDims(), ctx));
      SmallVector<Value> operands(inner.getLowerBoundOperands());
      // Dims first, then the new dimension, then the symbols.
      operands.insert(operands.begin() + lbMap.getNumDims(), innerIV);
      OpBuilder atStart = OpBuilder::atBlockBegin(newBody);
      innerIV = affine::AffineApplyOp::create(atStart, inner.getLoc(), shifted,
                                              operands);
    }
    inner.getInductionVar().replaceAllUsesWith(innerIV);
    par.erase();
    par = wider;
    trip = *trip * *innerTrip;
  }
  return offsets;
}

/// Upstream's isLoopParallel, except that it also accepts loops that read
/// through non-affine loads (a gather: an embedding row at a loaded index)
/// from buffers nothing in the loop writes: such reads carry no dependence,
/// and the affine accesses are checked pairwise as upstream does.
static bool isParallelWithGathers(affine::AffineForOp loop) {
  if (loop.getNumResults() != 0)
    return false;
  if (affine::isLoopParallel(loop))
    return true;
  SmallVector<Operation *> accesses;
  SmallVector<Value> gathered;
  llvm::SmallPtrSet<Value, 8> written;
  bool analyzable = true;
  loop.getBody()->walk([&](Operation *op) {
    if (auto write = dyn_cast<affine::AffineWriteOpInterface>(op)) {
      accesses.push_back(op);
      written.insert(getBaseBuffer(write.getMemRef()));
    } else if (isa<affine::AffineReadOpInterface>(op)) {
      accesses.push_back(op);
    } else if (auto load = dyn_cast<memref::LoadOp>(op)) {
      gathered.push_back(getBaseBuffer(load.getMemRef()));
    } else if (!isa<affine::AffineForOp, affine::AffineIfOp,
                    affine::AffineYieldOp>(op) &&
               !isMemoryEffectFree(op)) {
      analyzable = false;
    }
  });
  if (!analyzable || gathered.empty() ||
      llvm::any_of(gathered, [&](Value v) { return written.contains(v); }))
    return false;
  unsigned depth = affine::getNestingDepth(loop) + 1;
  for (Operation *src : accesses)
    for (Operation *dst : accesses) {
      if (!isa<affine::AffineWriteOpInterface>(src) &&
          !isa<affine::AffineWriteOpInterface>(dst))
        continue;
      affine::MemRefAccess a(src), b(dst);
      if (a.memref != b.memref)
        continue;
      affine::DependenceResult result =
          affine::checkMemrefAccessDependence(a, b, depth);
      if (result.value == affine::DependenceResult::Failure ||
          affine::hasDependence(result))
        return false;
    }
  return true;
}

/// Bytes of the buffers that `nest` accesses, each counted whole and once,
/// or nothing when one has a dynamic shape.
static std::optional<int64_t> getAccessedBytes(Operation *nest) {
  llvm::SmallPtrSet<Value, 8> seen;
  int64_t bytes = 0;
  bool dynamic = false;
  nest->walk([&](Operation *op) {
    for (Value operand : op->getOperands()) {
      auto type = dyn_cast<MemRefType>(operand.getType());
      if (!type || !seen.insert(operand).second)
        continue;
      if (!type.hasStaticShape()) {
        dynamic = true;
        continue;
      }
      // Index elements have no bit width of their own: 8 bytes.
      int64_t elementBytes =
          type.getElementType().isIndex()
              ? 8
              : std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
      bytes += type.getNumElements() * elementBytes;
    }
  });
  return dynamic ? std::nullopt : std::optional<int64_t>(bytes);
}

/// The innermost cache owned by one instance of compute level `kind` (a
/// core's L1), or null.
static const MemoryLevelDesc *getInnermostCache(const ChipDesc &chip,
                                                ComputeLevelKind kind) {
  for (const MemoryLevelDesc &level : chip.memoryLevels)
    if (level.kind == MemoryKind::Cache && level.scope == kind)
      return &level;
  return nullptr;
}

/// Whether an affine.for around `loop`, up to `root` (inclusive), runs
/// other than exactly once (a dynamic trip count included).
static bool isInsideSerialLoop(affine::AffineForOp loop, Operation *root) {
  for (Operation *parent = loop->getParentOp(); parent;
       parent = parent->getParentOp()) {
    if (auto outer = dyn_cast<affine::AffineForOp>(parent))
      if (affine::getConstantTripCount(outer) != std::optional<uint64_t>(1))
        return true;
    if (parent == root)
      break;
  }
  return false;
}

/// Times `op` runs per call of its function: the product of the trip
/// counts of the loops around it (affine.for, scf.for; conditions count as
/// taken), and whether each of those counts is a constant (a loop whose
/// count is not counts as one iteration).
static std::pair<int64_t, bool> getRunsPerCall(Operation *op) {
  int64_t runs = 1;
  bool exact = true;
  for (Operation *parent = op->getParentOp();
       parent && !isa<FunctionOpInterface>(parent);
       parent = parent->getParentOp()) {
    std::optional<int64_t> trip;
    if (auto loop = dyn_cast<affine::AffineForOp>(parent)) {
      if (std::optional<uint64_t> t = affine::getConstantTripCount(loop))
        trip = static_cast<int64_t>(*t);
    } else if (auto loop = dyn_cast<scf::ForOp>(parent)) {
      if (std::optional<APInt> t = loop.getStaticTripCount())
        trip = t->getSExtValue();
    } else {
      continue;
    }
    if (trip)
      runs *= *trip;
    else
      exact = false;
  }
  return {runs, exact};
}

namespace {
class PBMarkParallelPass
    : public pb::impl::PBMarkParallelPassBase<PBMarkParallelPass> {
public:
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    const ChipDesc *chip = getTargetChip(func);
    if (!chip) {
      func.emitError("pb-mark-parallel needs a target: run with --target");
      return signalPassFailure();
    }
    // The level the outermost parallel loops map to (below the root).
    const ComputeLevelDesc &level = *chip->getTaskLevel();

    // On cores, every parallel loop is a fork and a join of threads, which
    // costs more than a nest whose buffers fit one core's innermost cache
    // takes to run (squeeze-and-excitation blocks: vectors of a few hundred
    // channels). Such nests stay serial. GPU blocks have no such cost.
    llvm::SmallPtrSet<Operation *, 16> serial;
    int64_t smallBytes = 0;
    if (level.kind == ComputeLevelKind::Core)
      if (const MemoryLevelDesc *cache = getInnermostCache(*chip, level.kind))
        smallBytes = cache->capacityBytes;
    for (auto nest : func.getBody().getOps<affine::AffineForOp>()) {
      std::optional<int64_t> bytes = getAccessedBytes(nest);
      if (bytes && *bytes <= smallBytes) {
        serial.insert(nest);
        nest.walk([](affine::AffineForOp loop) {
          loop->removeAttr(PBDialect::kParallelAttrName);
        });
      }
    }

    // Loops pb-tile proved parallel before tiling: the outermost one of each
    // nest becomes the parallel loop (upstream's analysis below would only
    // find the intra-tile loops, one fork per tile).
    SmallVector<affine::AffineForOp> proven;
    func.walk<WalkOrder::PreOrder>([&](affine::AffineForOp loop) {
      if (!loop->hasAttr(PBDialect::kParallelAttrName))
        return WalkResult::advance();
      proven.push_back(loop);
      return WalkResult::skip();
    });
    // Enough iterations for every physical unit of the root (SMs of a GPU)
    // to get several: nested proven-parallel loops join the outermost one
    // until then. Unknown unit counts (CPU cores, known at run time) keep
    // one loop.
    int64_t wanted =
        chip->computeLevels.front().physicalUnits * kIterationsPerUnit;
    // Nested loops pb-tile proved parallel join them.
    bool offsets = false;
    for (affine::AffineForOp loop : proven) {
      loop->removeAttr(PBDialect::kParallelAttrName);
      affine::AffineParallelOp par;
      if (succeeded(affine::affineParallelize(loop, {}, &par)) && wanted > 0)
        offsets |= widenParallel(par, wanted, [](affine::AffineForOp inner) {
          return inner->hasAttr(PBDialect::kParallelAttrName);
        });
    }
    // Chips whose tasks run threads (blocks of a GPU) keep the marks of
    // the inner loops: S4 maps them onto the threads, and after
    // vectorization upstream's analysis no longer sees their iterations as
    // independent. On cores they would mean nothing.
    bool threadsInTasks = chip->getComputeLevel(ComputeLevelKind::Lane);
    if (!threadsInTasks)
      func.walk([](affine::AffineForOp loop) {
        loop->removeAttr(PBDialect::kParallelAttrName);
      });

    // One parallel loop per nest (what upstream's affine-parallelize does
    // with max-nested=1, minus the serial nests): the outermost loops
    // proven parallel; inner loops stay affine.for for the vectorizer and
    // for register tiling.
    SmallVector<affine::AffineForOp> candidates;
    for (Operation &op : func.getBody().getOps()) {
      if (serial.contains(&op))
        continue;
      op.walk<WalkOrder::PreOrder>([&](Operation *nested) {
        if (isa<affine::AffineParallelOp>(nested))
          return WalkResult::skip();
        auto loop = dyn_cast<affine::AffineForOp>(nested);
        if (loop && loop.getNumResults() == 0 &&
            (threadsInTasks ? isParallelWithGathers(loop)
                            : affine::isLoopParallel(loop))) {
          // On cores, a parallel loop inside serial loops would fork and
          // join threads once per outer iteration (a channel loop under a
          // reduction over H and W: 12544 forks); such a nest stays serial.
          if (level.kind != ComputeLevelKind::Core ||
              !isInsideSerialLoop(loop, &op))
            candidates.push_back(loop);
          return WalkResult::skip();
        }
        return WalkResult::advance();
      });
    }
    for (affine::AffineForOp loop : candidates)
      if (failed(affine::affineParallelize(loop)))
        return signalPassFailure();

    if (wanted > 0) {
      SmallVector<affine::AffineParallelOp> outermost;
      for (Operation &op : func.getBody().getOps())
        if (auto par = dyn_cast<affine::AffineParallelOp>(op))
          outermost.push_back(par);
      for (affine::AffineParallelOp par : outermost)
        offsets |= widenParallel(par, wanted, [&](affine::AffineForOp inner) {
          return threadsInTasks ? isParallelWithGathers(inner)
                                : affine::isLoopParallel(inner);
        });
    }

    // Joined intra-tile loops leave their IVs as affine.apply ops; folded
    // into the accesses' maps (upstream's vectorizer fails on a reduction
    // whose access map takes such an apply beside a constant operand).
    if (offsets) {
      RewritePatternSet patterns(&getContext());
      affine::AffineApplyOp::getCanonicalizationPatterns(patterns,
                                                         &getContext());
      affine::AffineLoadOp::getCanonicalizationPatterns(patterns,
                                                        &getContext());
      affine::AffineStoreOp::getCanonicalizationPatterns(patterns,
                                                         &getContext());
      affine::AffineMinOp::getCanonicalizationPatterns(patterns, &getContext());
      affine::AffineMaxOp::getCanonicalizationPatterns(patterns, &getContext());
      affine::AffineIfOp::getCanonicalizationPatterns(patterns, &getContext());
      (void)applyPatternsGreedily(func, std::move(patterns));
    }
    if (threadsInTasks)
      markInnerParallelLoops(func);

    // Iterations of an outermost parallel loop become instances of the level
    // below the hierarchy's root: blocks of a grid, cores of a socket.
    auto levelAttr =
        StringAttr::get(&getContext(), stringifyComputeLevelKind(level.kind));
    if (!serial.empty())
      explain(func, llvm::formatv("parallel: {0} nests left serial: the "
                                  "buffers each accesses fit in {1} B, the "
                                  "'{2}' of one '{3}', less work than a fork "
                                  "and join of threads",
                                  serial.size(), smallBytes,
                                  getInnermostCache(*chip, level.kind)->name,
                                  level.name));
    func.walk([&](affine::AffineParallelOp loop) {
      if (loop->getParentOfType<affine::AffineParallelOp>())
        return;
      loop->setAttr(PBDialect::kLevelAttrName, levelAttr);
      explain(loop, llvm::formatv("parallel: {0}-d loop mapped to level "
                                  "'{1}' ({2})",
                                  loop.getNumDims(), level.name, chip->name));
    });
    explainParallelRegions(func, level);
  }

private:
  /// Marks the loops inside the outermost parallel loops whose iterations
  /// upstream's dependence analysis proves independent (pb-tile marked the
  /// loops of the bands it tiled), and clears the marks elsewhere.
  void markInnerParallelLoops(func::FuncOp func) {
    for (Operation &op : func.getBody().getOps()) {
      if (!isa<affine::AffineParallelOp>(op)) {
        op.walk([](affine::AffineForOp loop) {
          loop->removeAttr(PBDialect::kParallelAttrName);
        });
        continue;
      }
      op.walk([&](affine::AffineForOp loop) {
        if (!loop->hasAttr(PBDialect::kParallelAttrName) &&
            loop.getNumResults() == 0 && isParallelWithGathers(loop))
          loop->setAttr(PBDialect::kParallelAttrName,
                        UnitAttr::get(&getContext()));
      });
    }
  }

  /// Reports the parallel regions a call of `func` runs: its outermost
  /// parallel loops (these, and the micro-kernels' scf.parallel tasks, each
  /// fork and join the level's instances: threads of cores, a grid of
  /// blocks), counted as often as the loops around them run, and the
  /// top-level nests with no parallel loop.
  void explainParallelRegions(func::FuncOp func,
                              const ComputeLevelDesc &level) {
    if (!isExplainEnabled() || func.isExternal())
      return;
    int64_t loops = 0, nested = 0, regions = 0;
    bool exact = true;
    func.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (!isa<affine::AffineParallelOp, scf::ParallelOp>(op))
        return WalkResult::advance();
      auto [runs, known] = getRunsPerCall(op);
      ++loops;
      nested += runs != 1 || !known;
      regions += runs;
      exact &= known;
      return WalkResult::skip();
    });
    int64_t serialNests = 0;
    for (Operation &op : func.getBody().getOps()) {
      if (!isa<affine::AffineForOp, scf::ForOp>(op))
        continue;
      bool parallel = false;
      op.walk([&](Operation *inner) {
        parallel |= isa<affine::AffineParallelOp, scf::ParallelOp>(inner);
      });
      serialNests += !parallel;
    }
    explain(func,
            llvm::formatv("parallel: {0}{1} parallel regions per call of @{2} "
                          "on level '{3}' ({4} parallel loops, {5} of them "
                          "inside sequential loops); {6} top-level nests "
                          "without a parallel loop",
                          exact ? "" : "at least ", regions, func.getSymName(),
                          level.name, loops, nested, serialNests));
  }
};
} // namespace
