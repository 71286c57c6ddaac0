//===- EmulateBF16.cpp - bf16 arithmetic in f32, conversions in integers ===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// x86 has no bf16 arithmetic (short of AVX512-BF16's dot products), and
// LLVM's x86 back end computes a bf16 fadd, fmul or llvm.sqrt in f32 and
// rounds the result back with a call to compiler-rt's __truncsfbf2 (f64 ->
// bf16: __truncdfbf2; f64 -> f16, F16C converting only from f32, and an
// f16 fma, which LLVM computes in f64: __truncdfhf2). A CPU artifact is a
// shared object loaded into the caller's process, where nothing need
// define those builtins (libgcc has the f16 ones since GCC 12, none of the
// bf16 ones): the load fails. This pass leaves LLVM no such conversion to
// make.
//
//===----------------------------------------------------------------------===//

#include "pb/Transforms/Passes.h"

#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::pb {
#define GEN_PASS_DEF_PBEMULATEBF16PASS
#include "pb/Transforms/Passes.h.inc"
} // namespace mlir::pb

using namespace mlir;

/// `type` (a scalar or a shaped type) with element type `element`.
static Type withElementType(Type type, Type element) {
  if (auto shaped = dyn_cast<ShapedType>(type))
    return shaped.clone(element);
  return element;
}

/// An arith.truncf to f16 or bf16 from a type wider than f32, in the
/// default rounding mode.
static bool isWideToHalfTruncation(Operation *op) {
  auto trunc = dyn_cast<arith::TruncFOp>(op);
  if (!trunc || trunc.getRoundingmodeAttr())
    return false;
  auto source = dyn_cast<FloatType>(getElementTypeOrSelf(trunc.getIn()));
  Type result = getElementTypeOrSelf(trunc.getType());
  return source && source.getWidth() > 32 &&
         isa<Float16Type, BFloat16Type>(result);
}

/// A math.fma or vector.fma on f16: LLVM computes it in f64 and rounds with
/// __truncdfhf2.
static bool isHalfFma(Operation *op) {
  return isa<math::FmaOp, vector::FMAOp>(op) &&
         isa<Float16Type>(getElementTypeOrSelf(op->getResult(0)));
}

/// Whether `op` has a bf16 operand or result (scalar, vector or tensor).
static bool touchesBF16(Operation *op) {
  auto isBF16 = [](Type type) {
    return isa<BFloat16Type>(getElementTypeOrSelf(type));
  };
  return llvm::any_of(op->getOperandTypes(), isBF16) ||
         llvm::any_of(op->getResultTypes(), isBF16);
}

/// Whether the pass rewrites `op`.
static bool isRewritten(Operation *op) {
  return touchesBF16(op) || isWideToHalfTruncation(op) || isHalfFma(op);
}

/// `x` (wider than f32) rounded to f32 to odd: truncated toward zero, the
/// last mantissa bit set when that was inexact. Rounding the result to
/// nearest even at 16 bits then rounds `x` correctly (f32 carries more than
/// two bits past an f16 or bf16 mantissa); rounding `x` to nearest f32 first
/// would round twice, wrongly when the first lands on a tie of the second.
static Value roundToOddF32(OpBuilder &b, Location loc, Value x) {
  Type type = x.getType();
  Type f32 = withElementType(type, b.getF32Type());
  Type i32 = withElementType(type, b.getI32Type());
  Value nearest = arith::TruncFOp::create(b, loc, f32, x);
  Value back = arith::ExtFOp::create(b, loc, type, nearest);
  Value zero =
      arith::ConstantOp::create(b, loc, cast<TypedAttr>(b.getZeroAttr(type)));
  auto cmp = [&](arith::CmpFPredicate predicate, Value l, Value r) -> Value {
    return arith::CmpFOp::create(b, loc, predicate, l, r);
  };
  // Rounded away from zero (overflow to an infinity included): step back.
  Value away =
      arith::SelectOp::create(b, loc, cmp(arith::CmpFPredicate::OLT, x, zero),
                              cmp(arith::CmpFPredicate::OLT, back, x),
                              cmp(arith::CmpFPredicate::OGT, back, x));
  Value one = createScalarOrSplatConstant(b, loc, i32, 1);
  Value bits = arith::BitcastOp::create(b, loc, i32, nearest);
  bits = arith::SelectOp::create(
      b, loc, away, arith::SubIOp::create(b, loc, bits, one), bits);
  // Inexact (false for NaN): the sticky bit.
  bits =
      arith::SelectOp::create(b, loc, cmp(arith::CmpFPredicate::ONE, back, x),
                              arith::OrIOp::create(b, loc, bits, one), bits);
  return arith::BitcastOp::create(b, loc, f32, bits);
}

namespace {
class PBEmulateBF16Pass
    : public pb::impl::PBEmulateBF16PassBase<PBEmulateBF16Pass> {
public:
  void runOnOperation() override {
    Operation *root = getOperation();
    MLIRContext *context = &getContext();
    // IR with no bf16 value, no such truncation and no f16 fma is left as
    // it is (not even rebuilt into the same ops).
    bool needed = false;
    root->walk([&](Operation *op) {
      needed = isRewritten(op);
      return needed ? WalkResult::interrupt() : WalkResult::advance();
    });
    if (!needed)
      return markAllAnalysesPreserved();

    // 0. A named linalg op (linalg.matmul: left to S4 by the reference
    // pipeline) whose body this pass rewrites becomes a linalg.generic:
    // the named op's body must stay the multiply-add it was built with.
    SmallVector<linalg::LinalgOp> named;
    root->walk([&](linalg::LinalgOp op) {
      if (isa<linalg::GenericOp>(op))
        return;
      WalkResult inBody = op->walk([&](Operation *inner) {
        return inner != op.getOperation() && !isa<linalg::YieldOp>(inner) &&
                       isRewritten(inner)
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      });
      if (inBody.wasInterrupted())
        named.push_back(op);
    });
    IRRewriter rewriter(context);
    for (linalg::LinalgOp op : named) {
      rewriter.setInsertionPoint(op);
      if (failed(linalg::generalizeNamedOp(rewriter, op))) {
        op->emitOpError(
            "cannot be generalized to compute its bf16 body in f32");
        return signalPassFailure();
      }
    }

    // 1. Every op computing on bf16 (arith, math, vector reductions and
    // contractions) computes on f32 between an extf of its operands and a
    // truncf of its results: upstream's arith-emulate-unsupported-floats,
    // extended to the math dialect (math.fma included, which upstream's
    // math-extend-to-supported-types leaves on bf16).
    TypeConverter converter;
    arith::populateEmulateUnsupportedFloatsConversions(
        converter, {BFloat16Type::get(context)}, Float32Type::get(context));
    ConversionTarget target(*context);
    arith::populateEmulateUnsupportedFloatsLegality(target, converter);
    target.addDynamicallyLegalDialect<math::MathDialect>(
        [&](Operation *op) -> std::optional<bool> {
          return converter.isLegal(op);
        });
    RewritePatternSet emulate(context);
    arith::populateEmulateUnsupportedFloatsPatterns(emulate, converter);
    llvm::DenseSet<Operation *> conversions;
    root->walk([&](Operation *op) {
      if (isa<arith::ExtFOp, arith::TruncFOp>(op))
        conversions.insert(op);
    });
    if (failed(applyPartialConversion(root, target, std::move(emulate))))
      return signalPassFailure();
    // Upstream marks the conversions it adds `contract`, which lets
    // extf(truncf(x)) fold to x (step 4's conversion folds it): the product
    // of a bf16 multiply-add would then not be rounded. Each op's result is
    // rounded to bf16, as the program says.
    root->walk([&](Operation *op) {
      if (conversions.contains(op))
        return;
      if (auto ext = dyn_cast<arith::ExtFOp>(op))
        ext.setFastmath(arith::FastMathFlags::none);
      else if (auto trunc = dyn_cast<arith::TruncFOp>(op))
        trunc.setFastmath(arith::FastMathFlags::none);
    });

    // 2. An f16 fma computes in f64 as LLVM would (the product exact), its
    // result then rounded to f16 once, by step 3.
    SmallVector<Operation *> fmas;
    root->walk([&](Operation *op) {
      if (isHalfFma(op))
        fmas.push_back(op);
    });
    for (Operation *op : fmas) {
      OpBuilder b(op);
      Type f64 = withElementType(op->getResult(0).getType(), b.getF64Type());
      SmallVector<Value> operands;
      for (Value operand : op->getOperands())
        operands.push_back(
            arith::ExtFOp::create(b, op->getLoc(), f64, operand));
      Operation *wide = b.create(op->getLoc(), op->getName().getIdentifier(),
                                 operands, {f64}, op->getAttrs());
      Value narrow = arith::TruncFOp::create(
          b, op->getLoc(), op->getResult(0).getType(), wide->getResult(0));
      op->getResult(0).replaceAllUsesWith(narrow);
      op->erase();
    }

    // 3. Truncations from f64 to f16 or bf16 go through f32, rounded to odd.
    SmallVector<arith::TruncFOp> wide;
    root->walk([&](arith::TruncFOp op) {
      if (isWideToHalfTruncation(op))
        wide.push_back(op);
    });
    for (arith::TruncFOp op : wide) {
      OpBuilder b(op);
      Value odd = roundToOddF32(b, op.getLoc(), op.getIn());
      Value narrow = arith::TruncFOp::create(b, op.getLoc(), op.getType(), odd);
      op.replaceAllUsesWith(narrow);
      op.erase();
    }

    // 4. The conversions between f32 and bf16 become integer operations
    // (upstream's arith-expand{include-bf16}; truncf rounds to nearest even,
    // NaNs become a quiet NaN), not LLVM's fpext / fptrunc.
    ConversionTarget expanded(*context);
    expanded.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    expanded.addDynamicallyLegalOp<arith::ExtFOp>([](arith::ExtFOp op) {
      return !(getElementTypeOrSelf(op.getIn()).isBF16() &&
               getElementTypeOrSelf(op.getType()).isF32());
    });
    expanded.addDynamicallyLegalOp<arith::TruncFOp>([](arith::TruncFOp op) {
      return !(getElementTypeOrSelf(op.getIn()).isF32() &&
               getElementTypeOrSelf(op.getType()).isBF16() &&
               !op.getRoundingmodeAttr());
    });
    RewritePatternSet expand(context);
    arith::populateExpandBFloat16Patterns(expand);
    if (failed(applyPartialConversion(root, expanded, std::move(expand))))
      return signalPassFailure();
  }
};
} // namespace
