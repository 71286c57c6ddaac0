//===- HoistInvariants.cpp - Subexpressions computed once per value -------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// pb-hoist-invariants (S1, after elementwise fusion). A batch norm in
// inference computes 1 / sqrt(var + eps) from its per-channel variance; in
// the fused generic of a convolution's epilogue that is a square root and a
// division for every element of the feature map, of which only one per
// channel differs. A subexpression of a generic's body that depends on a
// strict subset of its loops (through the indexing maps of the inputs it
// reads and linalg.index), possibly none, and holds an expensive op (a
// division, any math op) becomes a generic of its own over those loops (a
// 0-d one for none: an optimizer's 1 - beta ** step from its 0-d step),
// whose result the original generic reads as a new input, broadcast along
// the other loops.
// The arithmetic is unchanged (no reassociation): results are bitwise the
// same.
//
//===----------------------------------------------------------------------===//

#include "pb/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SmallBitVector.h"

namespace mlir::pb {
#define GEN_PASS_DEF_PBHOISTINVARIANTSPASS
#include "pb/Transforms/Passes.h.inc"
} // namespace mlir::pb

using namespace mlir;

/// A subexpression is moved out when the generic would compute it at least
/// this many times per distinct value: below that, the new tensor's store
/// and loads cost about what they save.
static constexpr int64_t kMinRepeats = 8;

/// Whether `op` costs more than an add or multiply: divisions, remainders
/// and math functions.
static bool isExpensive(Operation *op) {
  if (isa<math::MathDialect>(op->getDialect()))
    return true;
  return isa<arith::DivFOp, arith::RemFOp, arith::DivSIOp, arith::DivUIOp,
             arith::RemSIOp, arith::RemUIOp, arith::CeilDivSIOp,
             arith::CeilDivUIOp, arith::FloorDivSIOp>(op);
}

namespace {
/// What one value of a generic's body depends on.
struct Deps {
  /// The loops it varies with.
  llvm::SmallBitVector loops;
  /// Whether it may be computed outside the body at all (a pure scalar op
  /// over inputs read through projected permutations, or linalg.index).
  bool movable = true;
  /// Whether its computation holds an expensive op.
  bool expensive = false;
};

/// A value of the body to compute in a generic of its own.
struct Hoisted {
  Value value;
  /// Its loops, in loop order.
  SmallVector<unsigned> loops;
};
} // namespace

/// The values of `generic`'s body worth computing once per value of their
/// loops: floating-point, movable, not varying with all loops,
/// holding an expensive op, read by an op that is not itself such a value,
/// repeated kMinRepeats times or more.
static SmallVector<Hoisted> findHoisted(linalg::GenericOp generic) {
  DenseMap<Value, Deps> deps;
  unsigned numLoops = generic.getNumLoops();
  SmallVector<int64_t> ranges = generic.getStaticLoopRanges();
  Block *body = generic.getBody();
  for (OpOperand &operand : generic->getOpOperands()) {
    Deps d{llvm::SmallBitVector(numLoops), true, false};
    AffineMap map = generic.getMatchingIndexingMap(&operand);
    if (generic.isDpsInit(&operand) || !map.isProjectedPermutation()) {
      d.loops.set();
      d.movable = false;
    } else {
      for (AffineExpr e : map.getResults())
        d.loops.set(cast<AffineDimExpr>(e).getPosition());
    }
    deps[body->getArgument(operand.getOperandNumber())] = d;
  }
  for (Operation &op : body->without_terminator()) {
    Deps d{llvm::SmallBitVector(numLoops), true, isExpensive(&op)};
    if (auto index = dyn_cast<linalg::IndexOp>(op)) {
      d.loops.set(index.getDim());
    } else if (op.getNumRegions() != 0 || op.getNumResults() != 1 ||
               !isPure(&op)) {
      d.loops.set();
      d.movable = false;
    }
    for (Value operand : op.getOperands()) {
      auto it = deps.find(operand);
      if (it == deps.end())
        continue; // Defined outside the body: invariant.
      d.loops |= it->second.loops;
      d.movable &= it->second.movable;
      d.expensive |= it->second.expensive;
    }
    for (Value result : op.getResults())
      deps[result] = d;
  }
  // Floating-point values only: an index computed by a division (nearest
  // upsampling's h / 2) stays in the body, where S2 and S3 still see it as
  // arithmetic of loop indices, not a load.
  auto isHoistable = [&](Value value) {
    auto it = deps.find(value);
    if (it == deps.end() || isa<BlockArgument>(value) ||
        !isa<FloatType>(value.getType()))
      return false;
    const Deps &d = it->second;
    if (!d.movable || !d.expensive || d.loops.all())
      return false;
    int64_t repeats = 1;
    for (unsigned l = 0; l < numLoops; ++l) {
      if (ShapedType::isDynamic(ranges[l]))
        return false;
      if (!d.loops.test(l))
        repeats *= ranges[l];
    }
    return repeats >= kMinRepeats;
  };
  SmallVector<Hoisted> hoisted;
  for (Operation &op : body->getOperations()) {
    if (isa<linalg::IndexOp>(op))
      continue;
    for (Value result : op.getResults()) {
      if (!isHoistable(result))
        continue;
      bool readOutside = llvm::any_of(result.getUsers(), [&](Operation *user) {
        return user->getNumResults() != 1 || !isHoistable(user->getResult(0));
      });
      if (!readOutside)
        continue;
      Hoisted h{result, {}};
      for (unsigned l : deps[result].loops.set_bits())
        h.loops.push_back(l);
      hoisted.push_back(h);
    }
  }
  return hoisted;
}

/// A generic over the loops `h.loops` of `generic` computing `h.value`,
/// cloned from `generic`'s body.
static Value buildHoisted(RewriterBase &rewriter, linalg::GenericOp generic,
                          const Hoisted &h) {
  Location loc = generic.getLoc();
  MLIRContext *ctx = generic.getContext();
  SmallVector<int64_t> ranges = generic.getStaticLoopRanges();
  unsigned numLoops = h.loops.size();
  // The loop of `generic` -> the loop of the new generic.
  DenseMap<unsigned, unsigned> newLoop;
  SmallVector<int64_t> shape;
  for (auto [i, l] : llvm::enumerate(h.loops)) {
    newLoop[l] = i;
    shape.push_back(ranges[l]);
  }
  // The body's ops that `h.value` is computed from, in body order, and the
  // inputs they read.
  Block *body = generic.getBody();
  llvm::SetVector<Operation *> slice;
  llvm::SetVector<BlockArgument> args;
  SmallVector<Value> worklist{h.value};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg.getOwner() == body)
        args.insert(arg);
      continue;
    }
    Operation *def = v.getDefiningOp();
    if (def->getBlock() != body || !slice.insert(def))
      continue;
    llvm::append_range(worklist, def->getOperands());
  }
  SmallVector<Operation *> ops(slice.begin(), slice.end());
  llvm::sort(ops,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  // Where the new generic goes: not between `generic` and its producers,
  // where it would keep S3 from fusing their nests. When all it reads are
  // the function's arguments (through reshapes) and constants, at the start
  // of the block, with clones of those reshapes and constants; otherwise
  // right after the last definition it reads.
  Block *block = generic->getBlock();
  SmallVector<Value> outside;
  for (BlockArgument arg : args)
    outside.push_back(generic->getOperand(arg.getArgNumber()));
  for (Operation *op : ops)
    for (Value operand : op->getOperands())
      if (operand.getParentBlock() != body)
        outside.push_back(operand);
  std::function<bool(Value)> fromArguments = [&](Value v) {
    if (auto arg = dyn_cast<BlockArgument>(v))
      return arg.getOwner() == block;
    Operation *def = v.getDefiningOp();
    if (def->hasTrait<OpTrait::ConstantLike>())
      return true;
    if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def))
      return false;
    return llvm::all_of(def->getOperands(), fromArguments);
  };
  IRMapping atStart;
  OpBuilder::InsertionGuard guard(rewriter);
  if (llvm::all_of(outside, fromArguments)) {
    rewriter.setInsertionPointToStart(block);
    std::function<Value(Value)> cloneAtStart = [&](Value v) -> Value {
      if (isa<BlockArgument>(v) || atStart.contains(v))
        return atStart.lookupOrDefault(v);
      Operation *def = v.getDefiningOp();
      for (Value operand : def->getOperands())
        cloneAtStart(operand);
      rewriter.clone(*def, atStart);
      return atStart.lookup(v);
    };
    for (Value v : outside)
      cloneAtStart(v);
  } else {
    Operation *after = nullptr;
    for (Value v : outside) {
      Operation *def = v.getDefiningOp();
      if (!def)
        continue;
      def = block->findAncestorOpInBlock(*def);
      if (def && (!after || after->isBeforeInBlock(def)))
        after = def;
    }
    if (after)
      rewriter.setInsertionPointAfter(after);
    else
      rewriter.setInsertionPointToStart(block);
  }
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (BlockArgument arg : args) {
    OpOperand *operand = &generic->getOpOperand(arg.getArgNumber());
    AffineMap map = generic.getMatchingIndexingMap(operand);
    SmallVector<AffineExpr> results;
    for (AffineExpr e : map.getResults())
      results.push_back(getAffineDimExpr(
          newLoop.lookup(cast<AffineDimExpr>(e).getPosition()), ctx));
    inputs.push_back(atStart.lookupOrDefault(operand->get()));
    maps.push_back(AffineMap::get(numLoops, 0, results, ctx));
  }
  maps.push_back(AffineMap::getMultiDimIdentityMap(numLoops, ctx));
  Type elementType = h.value.getType();
  Value init = tensor::EmptyOp::create(rewriter, loc, shape, elementType);
  SmallVector<utils::IteratorType> iterators(numLoops,
                                             utils::IteratorType::parallel);
  auto hoisted = linalg::GenericOp::create(
      rewriter, loc, init.getType(), inputs, init, maps, iterators,
      [&](OpBuilder &b, Location bodyLoc, ValueRange blockArgs) {
        IRMapping mapping = atStart;
        for (auto [arg, blockArg] : llvm::zip(args, blockArgs))
          mapping.map(arg, blockArg);
        for (Operation *op : ops) {
          if (auto index = dyn_cast<linalg::IndexOp>(op)) {
            mapping.map(index.getResult(),
                        linalg::IndexOp::create(
                            b, bodyLoc, newLoop.lookup(index.getDim())));
            continue;
          }
          b.clone(*op, mapping);
        }
        linalg::YieldOp::create(b, bodyLoc, mapping.lookup(h.value));
      });
  return hoisted.getResult(0);
}

/// `generic` with the values `hoisted` read from `values` (their tensors)
/// through new inputs broadcast along the other loops.
static void readHoisted(RewriterBase &rewriter, linalg::GenericOp generic,
                        ArrayRef<Hoisted> hoisted, ArrayRef<Value> values) {
  MLIRContext *ctx = generic.getContext();
  unsigned numLoops = generic.getNumLoops();
  SmallVector<Value> inputs(generic.getDpsInputs());
  SmallVector<AffineMap> maps;
  for (OpOperand *input : generic.getDpsInputOperands())
    maps.push_back(generic.getMatchingIndexingMap(input));
  for (const Hoisted &h : hoisted) {
    SmallVector<AffineExpr> results;
    for (unsigned l : h.loops)
      results.push_back(getAffineDimExpr(l, ctx));
    maps.push_back(AffineMap::get(numLoops, 0, results, ctx));
  }
  llvm::append_range(inputs, values);
  for (OpOperand &init : generic.getDpsInitsMutable())
    maps.push_back(generic.getMatchingIndexingMap(&init));
  auto rebuilt = linalg::GenericOp::create(
      rewriter, generic.getLoc(), generic.getResultTypes(), inputs,
      generic.getDpsInits(), maps, generic.getIteratorTypesArray());
  rebuilt->setDiscardableAttrs(generic->getDiscardableAttrDictionary());
  rewriter.inlineRegionBefore(generic.getRegion(), rebuilt.getRegion(),
                              rebuilt.getRegion().end());
  Block *body = rebuilt.getBody();
  unsigned position = generic.getNumDpsInputs();
  for (auto [i, h] : llvm::enumerate(hoisted)) {
    BlockArgument arg =
        body->insertArgument(position + i, h.value.getType(), h.value.getLoc());
    rewriter.replaceAllUsesWith(h.value, arg);
  }
  // What computed the hoisted values is dead now.
  SmallVector<Operation *> ops;
  for (Operation &op : body->without_terminator())
    ops.push_back(&op);
  for (Operation *op : llvm::reverse(ops))
    if (isOpTriviallyDead(op))
      rewriter.eraseOp(op);
  rewriter.replaceOp(generic, rebuilt.getResults());
}

namespace {
class PBHoistInvariantsPass
    : public pb::impl::PBHoistInvariantsPassBase<PBHoistInvariantsPass> {
public:
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> generics;
    getOperation().walk([&](linalg::GenericOp generic) {
      if (generic.hasPureTensorSemantics())
        generics.push_back(generic);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp generic : generics) {
      SmallVector<Hoisted> hoisted = findHoisted(generic);
      if (hoisted.empty())
        continue;
      rewriter.setInsertionPoint(generic);
      SmallVector<Value> values;
      for (const Hoisted &h : hoisted)
        values.push_back(buildHoisted(rewriter, generic, h));
      // The inputs only the hoisted values read are left unused:
      // canonicalization drops them.
      readHoisted(rewriter, generic, hoisted, values);
    }
  }
};
} // namespace
