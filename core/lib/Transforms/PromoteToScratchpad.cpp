//===- PromoteToScratchpad.cpp - Reused tiles into the scratchpad ---------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// pb-promote-to-scratchpad (S3): inside every compute-level parallel loop
// (pb-mark-parallel's grid of blocks), the tiles of read-only buffers that a
// statement reads more often than it has elements are copied into buffers
// of the target's scratchpad level before the statement, and the statement
// reads the copies. Placement descends through serial loops (a matmul's K
// tile loop) until the promoted tiles fit `occupancy` of the scratchpad.
// A tile is the exact box of the indices the statement reads: each index is
// linear in the IVs of the loops inside the statement (constant trip
// counts, lower bounds linear in outer values, steps included) plus a base
// over values defined outside it. (Upstream's MemRefRegion bounds the box
// through constraints that drop the steps of tiled loops whose lower bounds
// are IVs, overestimating a 64-wide tile of 32-steps as 95 wide.) Copies are
// point-wise nests, parallel in every loop, which S4 spreads over a block's
// threads; rows whose size is a multiple of the scratchpad's bank span are
// padded by one vector (the chip's vector width) against bank conflicts
// when threads read a column. Targets without a scratchpad level (CPUs) are
// left unchanged.
//
//===----------------------------------------------------------------------===//

#include "pb/Target/TargetRegistry.h"
#include "pb/Transforms/Passes.h"

#include "mlir/Dialect/Affine/Analysis/AffineAnalysis.h"
#include "mlir/Dialect/Affine/Analysis/LoopAnalysis.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::pb {
#define GEN_PASS_DEF_PBPROMOTETOSCRATCHPADPASS
#include "pb/Transforms/Passes.h.inc"
} // namespace mlir::pb

using namespace mlir;
using namespace mlir::pb;

namespace {
/// sum(coefficient x value) + constant over index values: the IVs of loops
/// inside the promoted statement (each standing for its iteration number q,
/// 0 <= q < trip) and values defined outside it.
struct Linear {
  llvm::MapVector<Value, int64_t> terms;
  int64_t constant = 0;
  void add(const Linear &other, int64_t scale) {
    for (auto [value, coefficient] : other.terms)
      terms[value] += scale * coefficient;
    constant += scale * other.constant;
  }
};

/// The part of one buffer that a statement reads, as a box: per dimension
/// a base (a linear function of values defined outside the statement) and
/// the constant offsets [low, high] read from it.
struct Box {
  SmallVector<Linear, 4> bases;
  SmallVector<int64_t> low, high;
};

/// One buffer's tile that a statement reads.
struct Promotion {
  Value memref;
  Box box;
  SmallVector<affine::AffineLoadOp> loads;
  /// Elements of a row of the copy (padded) and bytes of the copy.
  int64_t rowElements = 0, bytes = 0;
};

class PBPromoteToScratchpadPass
    : public pb::impl::PBPromoteToScratchpadPassBase<
          PBPromoteToScratchpadPass> {
public:
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    const ChipDesc *chip = getTargetChip(func);
    if (!chip)
      return;
    scratchpad = chip->getMemoryLevel(MemoryKind::Scratchpad);
    if (!scratchpad || !scratchpad->capacityBytes)
      return;
    vectorBytes = chip->vectorWidthBits / 8;
    budget = static_cast<int64_t>(occupancy * scratchpad->capacityBytes);
    for (auto grid : func.getBody().getOps<affine::AffineParallelOp>())
      if (grid->hasAttr(PBDialect::kLevelAttrName))
        for (Operation &op :
             llvm::make_early_inc_range(grid.getBody()->without_terminator()))
          placeIn(&op);
  }

private:
  /// Promotes the reused tiles of statement `op`, or of the statements of
  /// its body when `op` is a serial loop whose tiles do not fit.
  void placeIn(Operation *op);
  /// The tiles `op` reads more often than they have elements, by buffer;
  /// false when `op` has effects this pass cannot see.
  bool collect(Operation *op, SmallVectorImpl<Promotion> &promotions);
  /// Copies the tile before `op` and makes `op` read the copy.
  void promote(Operation *op, Promotion &promotion);

  const MemoryLevelDesc *scratchpad = nullptr;
  int64_t vectorBytes = 0, budget = 0;
};
} // namespace

/// `value` as a Linear over IVs of loops inside `root` and values defined
/// outside it; the lower bound of an inner loop is substituted for its IV
/// (plus the IV itself, standing for step x iteration). Nothing when the
/// value is another op's result inside `root` or a bound is not affine in
/// that sense.
static std::optional<Linear> linearize(Value value, Operation *root);

/// The Linear of result `expr` of an affine map applied to `operands`.
static std::optional<Linear> linearize(AffineExpr expr, ValueRange operands,
                                       unsigned numDims, Operation *root) {
  if (auto constant = dyn_cast<AffineConstantExpr>(expr)) {
    Linear result;
    result.constant = constant.getValue();
    return result;
  }
  if (auto dim = dyn_cast<AffineDimExpr>(expr))
    return linearize(operands[dim.getPosition()], root);
  if (auto symbol = dyn_cast<AffineSymbolExpr>(expr))
    return linearize(operands[numDims + symbol.getPosition()], root);
  auto binary = dyn_cast<AffineBinaryOpExpr>(expr);
  if (!binary)
    return std::nullopt;
  if (binary.getKind() == AffineExprKind::Add) {
    std::optional<Linear> lhs =
        linearize(binary.getLHS(), operands, numDims, root);
    std::optional<Linear> rhs =
        linearize(binary.getRHS(), operands, numDims, root);
    if (!lhs || !rhs)
      return std::nullopt;
    lhs->add(*rhs, 1);
    return lhs;
  }
  if (binary.getKind() == AffineExprKind::Mul) {
    auto factor = dyn_cast<AffineConstantExpr>(binary.getRHS());
    if (!factor)
      return std::nullopt;
    std::optional<Linear> lhs =
        linearize(binary.getLHS(), operands, numDims, root);
    if (!lhs)
      return std::nullopt;
    Linear result;
    result.add(*lhs, factor.getValue());
    return result;
  }
  return std::nullopt;
}

static std::optional<Linear> linearize(Value value, Operation *root) {
  Linear result;
  Operation *owner = isa<BlockArgument>(value)
                         ? cast<BlockArgument>(value).getOwner()->getParentOp()
                         : value.getDefiningOp();
  if (!owner || !root->isAncestor(owner)) {
    result.terms[value] = 1; // defined outside: part of the base
    return result;
  }
  auto loop = dyn_cast<affine::AffineForOp>(owner);
  if (!loop || value != loop.getInductionVar() ||
      loop.getLowerBoundMap().getNumResults() != 1)
    return std::nullopt;
  // iv = lower bound + step x q.
  std::optional<Linear> lower = linearize(
      loop.getLowerBoundMap().getResult(0), loop.getLowerBoundOperands(),
      loop.getLowerBoundMap().getNumDims(), root);
  if (!lower)
    return std::nullopt;
  lower->terms[value] += 1;
  return lower;
}

/// The box of the offsets `index` takes in `root`: q of each loop inside
/// `root` in [0, trip), scaled by the IV's coefficient times the loop's
/// step; the other terms form the base.
static std::optional<std::tuple<Linear, int64_t, int64_t>>
boxOf(const Linear &index, Operation *root) {
  Linear base;
  base.constant = index.constant;
  int64_t low = 0, high = 0;
  for (auto [value, coefficient] : index.terms) {
    auto arg = dyn_cast<BlockArgument>(value);
    auto loop =
        arg ? dyn_cast<affine::AffineForOp>(arg.getOwner()->getParentOp())
            : affine::AffineForOp();
    if (!loop || loop.getInductionVar() != value || !root->isAncestor(loop)) {
      if (coefficient)
        base.terms[value] = coefficient;
      continue;
    }
    std::optional<uint64_t> trip = affine::getConstantTripCount(loop);
    if (!trip || *trip == 0)
      return std::nullopt;
    int64_t span =
        coefficient * loop.getStepAsInt() * static_cast<int64_t>(*trip - 1);
    (span < 0 ? low : high) += span;
  }
  return std::make_tuple(base, low, high);
}

/// Accesses of `load` over the iterations of the loops between it and
/// `root` (inclusive), or nothing when a trip count is not constant.
static std::optional<int64_t> countAccesses(Operation *load, Operation *root) {
  int64_t count = 1;
  for (Operation *parent = load->getParentOp(); parent;
       parent = parent->getParentOp()) {
    if (auto loop = dyn_cast<affine::AffineForOp>(parent)) {
      std::optional<uint64_t> trip = affine::getConstantTripCount(loop);
      if (!trip)
        return std::nullopt;
      count *= *trip;
    } else if (!isa<affine::AffineIfOp>(parent)) {
      return std::nullopt;
    }
    if (parent == root)
      break;
  }
  return count;
}

static bool sameTerms(const Linear &a, const Linear &b) {
  if (a.constant != b.constant)
    return false;
  auto nonzero = [](const Linear &l) {
    SmallVector<std::pair<Value, int64_t>> terms;
    for (auto [value, coefficient] : l.terms)
      if (coefficient)
        terms.push_back({value, coefficient});
    llvm::sort(terms, [](auto x, auto y) {
      return x.first.getAsOpaquePointer() < y.first.getAsOpaquePointer();
    });
    return terms;
  };
  return nonzero(a) == nonzero(b);
}

bool PBPromoteToScratchpadPass::collect(
    Operation *op, SmallVectorImpl<Promotion> &promotions) {
  // Buffers read by affine loads only and never written inside `op`.
  llvm::MapVector<Value, SmallVector<affine::AffineLoadOp>> loads;
  DenseSet<Value> excluded;
  WalkResult walk = op->walk([&](Operation *nested) {
    if (auto load = dyn_cast<affine::AffineLoadOp>(nested)) {
      loads[load.getMemRef()].push_back(load);
      return WalkResult::advance();
    }
    auto effects = dyn_cast<MemoryEffectOpInterface>(nested);
    if (!effects) {
      if (!nested->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
        return WalkResult::interrupt();
      return WalkResult::advance();
    }
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffects(instances);
    for (const MemoryEffects::EffectInstance &effect : instances)
      if (Value value = effect.getValue())
        excluded.insert(value);
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return false;
  for (auto &[memref, accesses] : loads) {
    auto type = dyn_cast<MemRefType>(memref.getType());
    // Views could alias what `op` writes; copies need plain buffers.
    bool plain = isa<BlockArgument>(memref) ||
                 isa_and_nonnull<memref::AllocOp, memref::GetGlobalOp>(
                     memref.getDefiningOp());
    if (excluded.contains(memref) || !type || !plain ||
        !type.hasStaticShape() || !type.getLayout().isIdentity() ||
        !type.getElementType().isIntOrFloat() ||
        type.getElementTypeBitWidth() % 8 != 0 || type.getRank() == 0)
      continue;
    Promotion promotion;
    promotion.memref = memref;
    int64_t accessCount = 0;
    bool analysed = true;
    for (affine::AffineLoadOp load : accesses) {
      std::optional<int64_t> count = countAccesses(load, op);
      if (!count) {
        analysed = false;
        break;
      }
      accessCount += *count;
      AffineMap map = load.getAffineMap();
      for (unsigned d = 0; d < map.getNumResults() && analysed; ++d) {
        std::optional<Linear> index = linearize(
            map.getResult(d), load.getMapOperands(), map.getNumDims(), op);
        auto box = index ? boxOf(*index, op) : std::nullopt;
        if (!box) {
          analysed = false;
          break;
        }
        auto &[base, low, high] = *box;
        // The base's values index the copy: they must be valid affine dims.
        if (llvm::any_of(base.terms, [](auto term) {
              return term.second && !affine::isValidDim(term.first);
            })) {
          analysed = false;
          break;
        }
        if (promotion.box.bases.size() <= d) {
          promotion.box.bases.push_back(base);
          promotion.box.low.push_back(low);
          promotion.box.high.push_back(high);
          continue;
        }
        // Every load must read around the same base.
        if (!sameTerms(promotion.box.bases[d], base)) {
          analysed = false;
          break;
        }
        promotion.box.low[d] = std::min(promotion.box.low[d], low);
        promotion.box.high[d] = std::max(promotion.box.high[d], high);
      }
      if (!analysed)
        break;
      promotion.loads.push_back(load);
    }
    if (!analysed)
      continue;
    int64_t elements = 1;
    for (auto [low, high] : llvm::zip(promotion.box.low, promotion.box.high))
      elements *= high - low + 1;
    // Promotion pays only when the tile's elements are read more than once.
    if (accessCount <= elements)
      continue;
    int64_t elementBytes = type.getElementTypeBitWidth() / 8;
    int64_t row = promotion.box.high.back() - promotion.box.low.back() + 1;
    int64_t span = scratchpad->banks * scratchpad->bankWidthBytes;
    int64_t padded = row;
    if (type.getRank() >= 2 && span && elementBytes &&
        (row * elementBytes) % span == 0 && vectorBytes % elementBytes == 0)
      padded += vectorBytes / elementBytes;
    promotion.rowElements = padded;
    promotion.bytes = elements / row * padded * elementBytes;
    promotions.push_back(std::move(promotion));
  }
  return true;
}

void PBPromoteToScratchpadPass::promote(Operation *op, Promotion &promotion) {
  MLIRContext *ctx = op->getContext();
  auto type = cast<MemRefType>(promotion.memref.getType());
  const Box &box = promotion.box;
  unsigned rank = type.getRank();
  SmallVector<int64_t> shape;
  for (unsigned d = 0; d < rank; ++d)
    shape.push_back(box.high[d] - box.low[d] + 1);
  SmallVector<int64_t> allocShape(shape);
  allocShape.back() = promotion.rowElements;

  // The base of each dimension, as affine expressions of the outer values
  // (dimensions: loop IVs among them are no symbols).
  SmallVector<Value> outer;
  for (const Linear &base : box.bases)
    for (auto [value, coefficient] : base.terms)
      if (coefficient && !llvm::is_contained(outer, value))
        outer.push_back(value);
  SmallVector<AffineExpr> baseExprs;
  for (auto [d, base] : llvm::enumerate(box.bases)) {
    AffineExpr expr = getAffineConstantExpr(base.constant + box.low[d], ctx);
    for (auto [value, coefficient] : base.terms)
      if (coefficient)
        expr = expr +
               getAffineDimExpr(llvm::find(outer, value) - outer.begin(), ctx) *
                   coefficient;
    baseExprs.push_back(expr);
  }

  OpBuilder b(op);
  Location loc = op->getLoc();
  auto bufferType = MemRefType::get(allocShape, type.getElementType());
  auto alloc = memref::AllocOp::create(b, loc, bufferType);
  alloc->setAttr(PBDialect::kScratchpadAttrName, UnitAttr::get(ctx));
  // Copy loop: one flat loop over the tile's elements, the innermost
  // dimension fastest (consecutive iterations read consecutive elements),
  // buffer[r...] = memref[base + r...] with r the delinearized iteration.
  // It is marked parallel (each iteration writes its own element of the
  // fresh buffer), which a block's threads share as one loop.
  int64_t elements = 1;
  for (int64_t extent : shape)
    elements *= extent;
  auto loop = affine::AffineForOp::create(b, loc, 0, elements);
  loop->setAttr(PBDialect::kParallelAttrName, UnitAttr::get(ctx));
  {
    OpBuilder inner = OpBuilder::atBlockBegin(loop.getBody());
    AffineExpr flat = getAffineDimExpr(0, ctx);
    SmallVector<AffineExpr> position(rank);
    int64_t stride = 1;
    for (int d = rank - 1; d >= 0; --d) {
      position[d] =
          d == 0 ? flat.floorDiv(stride) : flat.floorDiv(stride) % shape[d];
      stride *= shape[d];
    }
    // memref[base_d + r_d]: dims are the flat IV, then the outer values.
    SmallVector<AffineExpr> exprs;
    for (unsigned d = 0; d < rank; ++d)
      exprs.push_back(position[d] + baseExprs[d].shiftDims(outer.size(), 1));
    AffineMap loadMap = AffineMap::get(1 + outer.size(), 0, exprs, ctx);
    SmallVector<Value> operands = {loop.getInductionVar()};
    operands.append(outer);
    Value value = affine::AffineLoadOp::create(inner, loc, promotion.memref,
                                               loadMap, operands);
    affine::AffineStoreOp::create(inner, loc, value, alloc,
                                  AffineMap::get(1, 0, position, ctx),
                                  ValueRange{loop.getInductionVar()});
  }
  b.setInsertionPointAfter(op);
  memref::DeallocOp::create(b, loc, alloc);

  // Loads read the copy at their index minus the base.
  for (affine::AffineLoadOp load : promotion.loads) {
    AffineMap map = load.getAffineMap();
    unsigned dims = map.getNumDims(), symbols = map.getNumSymbols();
    // Dimensions: the load's, then the outer values; symbols: the load's.
    SmallVector<AffineExpr> exprs;
    for (unsigned d = 0; d < rank; ++d)
      exprs.push_back(map.getResult(d) -
                      baseExprs[d].shiftDims(outer.size(), dims));
    AffineMap shifted =
        AffineMap::get(dims + outer.size(), symbols, exprs, ctx);
    SmallVector<Value> operands(load.getMapOperands().take_front(dims));
    operands.append(outer);
    operands.append(load.getMapOperands().begin() + dims,
                    load.getMapOperands().end());
    OpBuilder lb(load);
    auto replacement = affine::AffineLoadOp::create(lb, load.getLoc(), alloc,
                                                    shifted, operands);
    load.getResult().replaceAllUsesWith(replacement.getResult());
    load.erase();
  }
  explain(op,
          llvm::formatv("scratchpad: {0} tile of {1} promoted into "
                        "'{2}' ({3} B)",
                        bufferType, type, scratchpad->name, promotion.bytes));
}

void PBPromoteToScratchpadPass::placeIn(Operation *op) {
  SmallVector<Promotion, 2> promotions;
  if (!collect(op, promotions) || promotions.empty())
    return;
  int64_t total = 0;
  for (const Promotion &promotion : promotions)
    total += promotion.bytes;
  if (total > budget) {
    // Too large here: one iteration of a serial loop reads less.
    auto loop = dyn_cast<affine::AffineForOp>(op);
    if (loop && !affine::isLoopParallel(loop))
      for (Operation &nested :
           llvm::make_early_inc_range(loop.getBody()->without_terminator()))
        placeIn(&nested);
    return;
  }
  for (Promotion &promotion : promotions)
    promote(op, promotion);
}
