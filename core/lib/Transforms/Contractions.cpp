//===- Contractions.cpp - Recognizing contractions and epilogues ----------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Shared by S2 (pb-lower-to-affine keeps these ops as linalg) and S3
// (pb-map-matrix-units maps them onto matrix units).
//
//===----------------------------------------------------------------------===//

#include "pb/Transforms/DimArgs.h"
#include "pb/Transforms/Passes.h"

#include "mlir/Dialect/Affine/LoopUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;
using namespace mlir::pb;

bool mlir::pb::isMultiplyAccumulate(linalg::LinalgOp op, bool allowExtensions) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() == 0 || op->getNumRegions() != 1)
    return false;
  Block &body = op->getRegion(0).front();
  if (body.getNumArguments() != 3 || body.getOperations().size() < 3 ||
      body.getOperations().size() > (allowExtensions ? 5u : 3u))
    return false;
  auto yield = dyn_cast<linalg::YieldOp>(body.getTerminator());
  if (!yield || yield.getNumOperands() != 1)
    return false;
  Operation *add = yield.getOperand(0).getDefiningOp();
  if (!add || !isa<arith::AddFOp, arith::AddIOp>(add))
    return false;
  Value acc = body.getArgument(2);
  Value product =
      add->getOperand(0) == acc ? add->getOperand(1) : add->getOperand(0);
  if (add->getOperand(0) != acc && add->getOperand(1) != acc)
    return false;
  Operation *mul = product.getDefiningOp();
  if (!mul || !isa<arith::MulFOp, arith::MulIOp>(mul))
    return false;
  // A mixed-precision contraction widens its operands to the accumulator's
  // type first (f16 x f16 -> f32, i8 x i8 -> i32).
  auto operand = [&](Value v) {
    Operation *ext = v.getDefiningOp();
    if (allowExtensions && isa_and_nonnull<arith::ExtFOp, arith::ExtSIOp>(ext))
      return ext->getOperand(0);
    return v;
  };
  Value x = operand(mul->getOperand(0)), y = operand(mul->getOperand(1));
  // Every op of the body is the add, the mul or one of these extensions.
  unsigned extensions = (x != mul->getOperand(0)) + (y != mul->getOperand(1));
  if (body.getOperations().size() != 3 + extensions)
    return false;
  return (x == body.getArgument(0) && y == body.getArgument(1)) ||
         (x == body.getArgument(1) && y == body.getArgument(0));
}

Value mlir::pb::getBaseBuffer(Value value) {
  while (auto view = value.getDefiningOp<ViewLikeOpInterface>())
    value = view.getViewSource();
  return value;
}

bool mlir::pb::hasOnlyAffineMemoryEffects(Operation *root) {
  return !root->walk([](Operation *op) {
                if (isa<affine::AffineReadOpInterface,
                        affine::AffineWriteOpInterface, affine::AffineForOp,
                        affine::AffineIfOp, affine::AffineYieldOp>(op) ||
                    isMemoryEffectFree(op) ||
                    hasSingleEffect<MemoryEffects::Allocate>(op))
                  return WalkResult::advance();
                return WalkResult::interrupt();
              })
              .wasInterrupted();
}

SmallVector<Value> mlir::pb::applyIndexingMap(OpBuilder &b, Location loc,
                                              AffineMap map,
                                              ValueRange operands) {
  SmallVector<Value> result;
  for (unsigned i = 0, e = map.getNumResults(); i < e; ++i) {
    if (auto dim = dyn_cast<AffineDimExpr>(map.getResult(i))) {
      result.push_back(operands[dim.getPosition()]);
      continue;
    }
    result.push_back(
        affine::AffineApplyOp::create(b, loc, map.getSubMap({i}), operands));
  }
  return result;
}

std::optional<pb::ElementType> mlir::pb::getTargetElementType(Type type) {
  if (type.isF32())
    return ElementType::F32;
  if (type.isF16())
    return ElementType::F16;
  if (type.isBF16())
    return ElementType::BF16;
  if (type.isF64())
    return ElementType::F64;
  if (type.isInteger(8))
    return ElementType::I8;
  if (type.isInteger(32))
    return ElementType::I32;
  return std::nullopt;
}

std::optional<SmallVector<unsigned>> mlir::pb::getPlainDims(AffineMap map) {
  SmallVector<unsigned> dims;
  for (AffineExpr e : map.getResults()) {
    auto d = dyn_cast<AffineDimExpr>(e);
    if (!d)
      return std::nullopt;
    dims.push_back(d.getPosition());
  }
  return dims;
}

bool mlir::pb::hasCooperativeMatrixUnits(const ChipDesc &chip) {
  return llvm::any_of(chip.matrixUnits, [](const MatrixUnitDesc *unit) {
    return unit->scope == MatrixScope::SubgroupScope ||
           unit->scope == MatrixScope::WarpgroupScope;
  });
}

bool mlir::pb::hasMixedPrecisionMatrixUnits(const ChipDesc &chip) {
  return hasCooperativeMatrixUnits(chip) ||
         llvm::any_of(chip.matrixUnits, [](const MatrixUnitDesc *unit) {
           return unit->aType != unit->cType || unit->bType != unit->cType;
         });
}

/// The ops that use `buffer`'s memory: users of it and of its views (the
/// views followed, not listed).
static void collectMemoryUsers(Value buffer,
                               SmallVectorImpl<Operation *> &users) {
  for (Operation *user : buffer.getUsers()) {
    if (isa<ViewLikeOpInterface>(user) && isMemoryEffectFree(user) &&
        user->getNumResults() == 1 &&
        isa<MemRefType>(user->getResult(0).getType())) {
      collectMemoryUsers(user->getResult(0), users);
      continue;
    }
    users.push_back(user);
  }
}

/// Whether `op` writes every element of `alloc` and reads none of it: a
/// linalg.fill of it or of a reshape of it, or S2's form of one
/// (matchFillNest).
static bool overwritesWhole(Operation *op, Value alloc) {
  // `target` is `alloc` or a reshape of it: all of its elements.
  auto coversAlloc = [&](Value target) {
    auto type = dyn_cast<MemRefType>(target.getType());
    if (!type || !type.getLayout().isIdentity())
      return false;
    Value v = target;
    while (auto view = v.getDefiningOp<ViewLikeOpInterface>()) {
      if (!isa<memref::ExpandShapeOp, memref::CollapseShapeOp>(
              view.getOperation()))
        return false;
      v = view.getViewSource();
    }
    return v == alloc;
  };
  if (auto fill = dyn_cast<linalg::FillOp>(op))
    return fill.hasPureBufferSemantics() &&
           coversAlloc(fill.getDpsInitOperand(0)->get());
  auto outer = dyn_cast<affine::AffineForOp>(op);
  affine::AffineStoreOp store = outer ? pb::matchFillNest(outer) : nullptr;
  return store && coversAlloc(store.getMemRef());
}

/// Whether `loop` runs over all of dimension `dim` of `memref` with step 1
/// from 0: to its static extent, or to the value that holds its run-time
/// extent (an allocation's size operand, an entry's size argument).
static bool spansDimension(affine::AffineForOp loop, Value memref,
                           unsigned dim) {
  if (!loop.hasConstantLowerBound() || loop.getConstantLowerBound() != 0 ||
      loop.getStepAsInt() != 1)
    return false;
  auto type = cast<MemRefType>(memref.getType());
  if (!type.isDynamicDim(dim))
    return loop.hasConstantUpperBound() &&
           loop.getConstantUpperBound() == type.getDimSize(dim);
  Value extent;
  if (auto alloc = memref.getDefiningOp<memref::AllocOp>())
    extent = alloc.getDynamicSizes()[type.getDynamicDimIndex(dim)];
  else if (auto arg = dyn_cast<BlockArgument>(memref))
    extent = pb::getDimArg(arg, dim);
  AffineMap upper = loop.getUpperBoundMap();
  if (!extent || upper.getNumResults() != 1 ||
      loop.getUpperBoundOperands().size() != 1 ||
      loop.getUpperBoundOperands().front() != extent)
    return false;
  AffineExpr e = upper.getResult(0);
  return e == getAffineSymbolExpr(0, loop.getContext()) ||
         e == getAffineDimExpr(0, loop.getContext());
}

affine::AffineStoreOp mlir::pb::matchFillNest(affine::AffineForOp outer) {
  SmallVector<affine::AffineForOp> nest;
  affine::getPerfectlyNestedLoops(nest, outer);
  Block *body = nest.back().getBody();
  auto store = dyn_cast<affine::AffineStoreOp>(body->front());
  if (body->getOperations().size() != 2 || !store ||
      !store.getAffineMap().isIdentity() ||
      !store.getValueToStore().getParentRegion()->isProperAncestor(
          &outer.getRegion()))
    return nullptr;
  auto type = cast<MemRefType>(store.getMemRef().getType());
  if (!type.getLayout().isIdentity() ||
      nest.size() != static_cast<size_t>(type.getRank()))
    return nullptr;
  for (auto [dim, loop, operand] :
       llvm::enumerate(nest, store.getMapOperands()))
    if (!spansDimension(loop, store.getMemRef(), dim) ||
        operand != loop.getInductionVar())
      return nullptr;
  return store;
}

linalg::GenericOp mlir::pb::findFusableEpilogue(linalg::LinalgOp mac,
                                                bool permuted) {
  if (mac.getNumDpsInits() != 1)
    return nullptr;
  Value c = mac.getDpsInitOperand(0)->get();
  auto cType = dyn_cast<MemRefType>(c.getType());
  if (!cType || !cType.getLayout().isIdentity())
    return nullptr;
  // Between the two: allocations, constants and any statement independent
  // of `mac` (views of other buffers, a residual branch's convolution, the
  // fill of a padded tensor's border whose interior the epilogue writes),
  // which the kernel's builder moves before it: it
  // neither touches C nor writes or frees A or B (bufferization places A's
  // deallocation right after its last use), and its effects are all known.
  Value cBase = getBaseBuffer(c);
  SmallVector<Value> inputBases;
  for (Value input : mac.getDpsInputs())
    inputBases.push_back(getBaseBuffer(input));
  auto isIndependent = [&](Operation *op) {
    WalkResult walk = op->walk([&](Operation *nested) {
      if (auto view = dyn_cast<ViewLikeOpInterface>(nested))
        if (isMemoryEffectFree(nested))
          return getBaseBuffer(view.getViewSource()) == cBase
                     ? WalkResult::interrupt()
                     : WalkResult::advance();
      auto effects = dyn_cast<MemoryEffectOpInterface>(nested);
      if (!effects)
        return nested->hasTrait<OpTrait::HasRecursiveMemoryEffects>()
                   ? WalkResult::advance()
                   : WalkResult::interrupt();
      SmallVector<MemoryEffects::EffectInstance> instances;
      effects.getEffects(instances);
      for (const MemoryEffects::EffectInstance &effect : instances) {
        Value value = effect.getValue();
        if (!value)
          return WalkResult::interrupt();
        Value base = getBaseBuffer(value);
        if (base == cBase || (isa<MemoryEffects::Write, MemoryEffects::Free>(
                                  effect.getEffect()) &&
                              llvm::is_contained(inputBases, base)))
          return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    return !walk.wasInterrupted();
  };
  auto isSkippable = [&](Operation *op) {
    if (isa<memref::AllocOp, arith::ConstantOp>(op))
      return true;
    // Views of other buffers (S1's expand_shape of a batch norm's (C)
    // parameters to (1, C)).
    if (auto view = dyn_cast<ViewLikeOpInterface>(op))
      if (isMemoryEffectFree(op) &&
          getBaseBuffer(view.getViewSource()) != cBase)
        return true;
    return isIndependent(op);
  };
  Operation *next = mac->getNextNode();
  while (next && isSkippable(next))
    next = next->getNextNode();
  auto epilogue = dyn_cast_or_null<linalg::GenericOp>(next);
  if (!epilogue || !epilogue.hasPureBufferSemantics() ||
      epilogue.getNumDpsInits() != 1 ||
      epilogue.getNumParallelLoops() != epilogue.getNumLoops() ||
      epilogue.getNumLoops() != static_cast<unsigned>(cType.getRank()))
    return nullptr;
  OpOperand *out = epilogue.getDpsInitOperand(0);
  auto outType = dyn_cast<MemRefType>(out->get().getType());
  AffineMap outMap = epilogue.getMatchingIndexingMap(out);
  // Without `permuted` (the CPU kernels' vector stores), the output may be
  // a view with unit innermost stride (the interior of a padded tensor).
  if (!outType ||
      !(permuted ? outType.getLayout().isIdentity()
                 : outType.isLastDimUnitStride()) ||
      !(permuted ? outMap.isPermutation() : outMap.isIdentity()) ||
      (!permuted && outType.getShape() != cType.getShape()))
    return nullptr;
  // The kernel writes the epilogue's output while other blocks still read
  // A and B: the output may not share memory with them, through views
  // included (bufferization reuses buffers).
  Value outBase = getBaseBuffer(out->get());
  for (Value input : mac.getDpsInputs())
    if (getBaseBuffer(input) == outBase)
      return nullptr;
  if (out->get() != c && getBaseBuffer(c) == outBase)
    return nullptr;
  // The result's final value must not be observable, unless the epilogue
  // overwrites it in place: C is a temporary (an allocation, or a reshape
  // of one, as a projection whose result S1 reshaped writes).
  Value cAlloc = c;
  if (auto expand = c.getDefiningOp<memref::ExpandShapeOp>())
    cAlloc = expand.getSrc();
  else if (auto collapse = c.getDefiningOp<memref::CollapseShapeOp>())
    cAlloc = collapse.getSrc();
  if (out->get() != c && !cAlloc.getDefiningOp<memref::AllocOp>())
    return nullptr;
  // Reads of the result (identity map; a permutation when `permuted`) and
  // of other buffers (projections; for vector stores, the innermost loop
  // only as the innermost index).
  unsigned innermost = epilogue.getNumLoops() - 1;
  int readsOfC = 0;
  for (OpOperand *input : epilogue.getDpsInputOperands()) {
    AffineMap map = epilogue.getMatchingIndexingMap(input);
    if (input->get() == c) {
      if (!(permuted ? map.isPermutation() : map.isIdentity()))
        return nullptr;
      // In place, each element must go back where it was read: a block
      // writing C elsewhere would race with blocks still reading it.
      if (out->get() == c && map != outMap)
        return nullptr;
      ++readsOfC;
      continue;
    }
    auto type = dyn_cast<MemRefType>(input->get().getType());
    // i1 buffers hold a byte per element, but a vector<Nxi1> load reads N
    // bits: the kernel's vector loads would misread a mask (GPT-2's causal
    // mask gave wrong scores).
    if (type && type.getElementTypeBitWidth() < 8)
      return nullptr;
    if (!type || !map.isProjectedPermutation() || input->get() == out->get() ||
        llvm::is_contained(mac->getOperands(), input->get()))
      return nullptr;
    if (permuted)
      continue;
    for (unsigned i = 0, e = map.getNumResults(); i + 1 < e; ++i)
      if (map.getDimPosition(i) == innermost)
        return nullptr;
    if (map.getNumResults() > 0 &&
        map.getDimPosition(map.getNumResults() - 1) == innermost &&
        !type.getLayout().isIdentity())
      return nullptr;
  }
  if (readsOfC != 1)
    return nullptr;
  // A body of elementwise scalar ops only.
  for (Operation &op : epilogue.getBlock()->without_terminator())
    if (op.getNumRegions() != 0 || op.getNumResults() != 1 ||
        !op.hasTrait<OpTrait::Elementwise>() || isa<linalg::IndexOp>(op))
      return nullptr;
  // In place, later readers of C read the epilogue's result, as the kernel
  // leaves it (a buffer that bufferization reuses for a later layer).
  if (out->get() == c)
    return epilogue;
  // Otherwise nothing else may read the result: every other op on C's
  // allocation (directly or through a view) comes before `mac` (its
  // initialization) or deallocates it, or the first one after the epilogue
  // overwrites all of it before any read (bufferization reuses the buffer
  // for a later layer's result: BERT's linear layers after the first).
  SmallVector<Operation *> users;
  collectMemoryUsers(cAlloc, users);
  Operation *firstLater = nullptr;
  for (Operation *user : users) {
    if (user == mac.getOperation() || user == epilogue.getOperation() ||
        isa<memref::DeallocOp>(user))
      continue;
    Operation *ancestor = mac->getBlock()->findAncestorOpInBlock(*user);
    if (!ancestor)
      return nullptr;
    if (ancestor->isBeforeInBlock(mac))
      continue;
    if (!firstLater || ancestor->isBeforeInBlock(firstLater))
      firstLater = ancestor;
  }
  if (firstLater && (!epilogue->isBeforeInBlock(firstLater) ||
                     !overwritesWhole(firstLater, cAlloc)))
    return nullptr;
  return epilogue;
}

const mlir::pb::MatrixUnitDesc *
mlir::pb::findThreadScopeUnit(const ChipDesc &chip, ElementType a,
                              ElementType bt, ElementType c, int64_t maxLanes) {
  const MatrixUnitDesc *widest = nullptr, *fitting = nullptr;
  for (const MatrixUnitDesc *unit : chip.matrixUnits) {
    if (unit->scope != MatrixScope::ThreadScope ||
        unit->lowering != MatrixLowering::VectorOuterProduct || unit->m != 1 ||
        unit->k != 1 || unit->aType != a || unit->bType != bt ||
        unit->cType != c)
      continue;
    if (!widest || unit->n > widest->n)
      widest = unit;
    if (maxLanes > 0 && unit->n <= maxLanes &&
        (!fitting || unit->n > fitting->n))
      fitting = unit;
  }
  return fitting ? fitting : widest;
}
