//===- TileIRKernel.cpp - What the Tile IR kernels share -----------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "TileIRKernel.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::pb;
using namespace mlir::pb::nvidia;

/// The buffer's static strides (offset 0), or failure.
FailureOr<SmallVector<int64_t>> nvidia::getStrides(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (!type.hasStaticShape() ||
      failed(type.getStridesAndOffset(strides, offset)) || offset != 0 ||
      llvm::any_of(strides, ShapedType::isDynamic))
    return failure();
  return strides;
}

/// The tile comparison of an arith.cmpf predicate (none for ord, uno and
/// the constant ones).
std::optional<std::pair<tir::ComparisonPredicate, bool>>
nvidia::getComparison(arith::CmpFPredicate predicate) {
  using P = arith::CmpFPredicate;
  using T = tir::ComparisonPredicate;
  switch (predicate) {
  case P::OEQ:
    return std::make_pair(T::equal, true);
  case P::ONE:
    return std::make_pair(T::not_equal, true);
  case P::OLT:
    return std::make_pair(T::less_than, true);
  case P::OLE:
    return std::make_pair(T::less_than_or_equal, true);
  case P::OGT:
    return std::make_pair(T::greater_than, true);
  case P::OGE:
    return std::make_pair(T::greater_than_or_equal, true);
  case P::UEQ:
    return std::make_pair(T::equal, false);
  case P::UNE:
    return std::make_pair(T::not_equal, false);
  case P::ULT:
    return std::make_pair(T::less_than, false);
  case P::ULE:
    return std::make_pair(T::less_than_or_equal, false);
  case P::UGT:
    return std::make_pair(T::greater_than, false);
  case P::UGE:
    return std::make_pair(T::greater_than_or_equal, false);
  default:
    return std::nullopt;
  }
}

bool nvidia::canTranslateBody(Block *body, std::string &why) {
  for (Operation &op : body->without_terminator()) {
    if (!isa<arith::AddFOp, arith::SubFOp, arith::MulFOp, arith::DivFOp,
             arith::MaximumFOp, arith::MinimumFOp, arith::MaxNumFOp,
             arith::MinNumFOp, arith::NegFOp, arith::ExtFOp, math::LogOp,
             arith::TruncFOp, arith::ConstantOp, arith::SelectOp, math::ExpOp,
             math::TanhOp, math::SqrtOp, math::RsqrtOp, math::AbsFOp,
             math::FmaOp>(op) &&
        !(isa<arith::CmpFOp>(op) &&
          getComparison(cast<arith::CmpFOp>(op).getPredicate()))) {
      why = ("no tile operation for " + op.getName().getStringRef()).str();
      return false;
    }
    for (Type type : op.getResultTypes())
      if (!isa<Float16Type, BFloat16Type, Float32Type>(type) &&
          !(isa<arith::CmpFOp>(op) && type.isSignlessInteger(1))) {
        why = "values of a type other than f16, bf16 or f32";
        return false;
      }
    if (auto constant = dyn_cast<arith::ConstantOp>(op))
      if (!isa<FloatAttr>(constant.getValue())) {
        why = "a constant that is not a float";
        return false;
      }
    // Values from outside the body: float constants only.
    for (Value operand : op.getOperands()) {
      if (operand.getParentBlock() == body)
        continue;
      auto constant = operand.getDefiningOp<arith::ConstantOp>();
      if (!constant || !isa<FloatAttr>(constant.getValue())) {
        why = "a body that uses a value computed outside it";
        return false;
      }
    }
  }
  return true;
}

/// The tile operation computing `op` on tiles of `shape` (operands mapped).
Value nvidia::translateScalarOp(KernelBuilder &kb, Operation *op,
                                ArrayRef<int64_t> shape, IRMapping &mapping) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  auto resultType = [&] {
    return kb.tileType(shape, op->getResult(0).getType());
  };
  auto operand = [&](unsigned i) -> Value {
    Value value = op->getOperand(i);
    if (Value mapped = mapping.lookupOrNull(value))
      return mapped;
    // A float constant from outside the body (canTranslateEpilogue).
    auto attr =
        cast<FloatAttr>(value.getDefiningOp<arith::ConstantOp>().getValue());
    Value tile = kb.splat(shape, cast<FloatType>(attr.getType()),
                          attr.getValueAsDouble());
    mapping.map(value, tile);
    return tile;
  };
  // Ops whose tile form takes the scalar op's operands, as tiles.
  auto same = [&](auto tag) -> Value {
    using TileOp = decltype(tag);
    SmallVector<Value> operands;
    for (unsigned i = 0, e = op->getNumOperands(); i < e; ++i)
      operands.push_back(operand(i));
    return TileOp::create(b, loc, TypeRange{resultType()}, operands)
        .getResult();
  };
  return llvm::TypeSwitch<Operation *, Value>(op)
      .Case([&](arith::ConstantOp c) {
        auto attr = cast<FloatAttr>(c.getValue());
        return kb.splat(shape, cast<FloatType>(attr.getType()),
                        attr.getValueAsDouble());
      })
      .Case([&](arith::AddFOp) { return same(tir::AddFOp()); })
      .Case([&](arith::SubFOp) { return same(tir::SubFOp()); })
      .Case([&](arith::MulFOp) { return same(tir::MulFOp()); })
      .Case([&](arith::DivFOp) { return same(tir::DivFOp()); })
      // maximumf and minimumf propagate NaN; maxnumf and minnumf take the
      // number.
      .Case<arith::MaximumFOp, arith::MinimumFOp>([&](Operation *) {
        Value result = isa<arith::MaximumFOp>(op) ? same(tir::MaxFOp())
                                                  : same(tir::MinFOp());
        result.getDefiningOp()->setAttr("propagate_nan", b.getUnitAttr());
        return result;
      })
      .Case([&](arith::MaxNumFOp) { return same(tir::MaxFOp()); })
      .Case([&](arith::MinNumFOp) { return same(tir::MinFOp()); })
      .Case([&](math::LogOp) { return same(tir::LogOp()); })
      .Case([&](arith::NegFOp) { return same(tir::NegFOp()); })
      .Case<arith::ExtFOp, arith::TruncFOp>(
          [&](Operation *) { return same(tir::FToFOp()); })
      .Case([&](math::ExpOp) { return same(tir::ExpOp()); })
      .Case([&](math::TanhOp) { return same(tir::TanHOp()); })
      .Case([&](math::SqrtOp) { return same(tir::SqrtOp()); })
      .Case([&](math::RsqrtOp) { return same(tir::RsqrtOp()); })
      .Case([&](math::AbsFOp) { return same(tir::AbsFOp()); })
      .Case([&](math::FmaOp) { return same(tir::FmaOp()); })
      .Case([&](arith::SelectOp) { return same(tir::SelectOp()); })
      .Case([&](arith::CmpFOp cmp) {
        auto [predicate, ordered] = *getComparison(cmp.getPredicate());
        return tir::CmpFOp::create(b, loc, resultType(), predicate,
                                   ordered ? tir::ComparisonOrdering::ordered
                                           : tir::ComparisonOrdering::unordered,
                                   operand(0), operand(1));
      })
      .Default([](Operation *) -> Value {
        llvm_unreachable("checked by canTranslateBody");
      });
}

/// The buffer an operand must be for the launch plan (an entry argument
/// or an allocation of the entry), or null.
bool nvidia::isPlanBuffer(Value value, func::FuncOp func) {
  if (auto arg = dyn_cast<BlockArgument>(value))
    return arg.getOwner() == &func.getBody().front();
  auto alloc = value.getDefiningOp<memref::AllocOp>();
  return alloc && alloc->getBlock() == &func.getBody().front();
}

void nvidia::approximateErf(Operation *op) {
  RewritePatternSet patterns(op->getContext());
  populateMathPolynomialApproximationPatterns(
      patterns, [](StringRef name) { return name == "math.erf"; });
  (void)applyPatternsGreedily(op, std::move(patterns));
}

int64_t nvidia::getGridUnits(const ChipDesc &chip) {
  const ComputeLevelDesc *grid = chip.getComputeLevel(ComputeLevelKind::Grid);
  return grid ? std::max<int64_t>(1, grid->physicalUnits) : 1;
}

Value nvidia::getPlanBase(Value value, func::FuncOp func) {
  while (Operation *def = value.getDefiningOp()) {
    if (!isa<memref::ExpandShapeOp, memref::CollapseShapeOp, memref::CastOp>(
            def))
      break;
    value = def->getOperand(0);
  }
  return isPlanBuffer(value, func) ? value : Value();
}
