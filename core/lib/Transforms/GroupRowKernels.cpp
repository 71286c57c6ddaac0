//===- GroupRowKernels.cpp - Row-wise ops kept whole for tile code
//---------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// pb-group-row-kernels (S2, on buffers, before pb-lower-to-affine; only in
// pipelines whose target generates tile-level code: codegen=tile-ir).
// Softmax, layernorm and their kin arrive as a run of linalg ops over the
// same rows:
//
//   %m = max over the row of x        (a reduction along the last loop)
//   %e = exp(x - %m)                  (elementwise over the rows)
//   %s = sum over the row of %e       (a reduction)
//   %y = %e / %s                      (elementwise)
//
// Lowered to loops, S3 fuses them at their rows and S4 maps the rows to
// threads. A tile-level code generator (the CUDA Tile IR path) does better
// with the ops themselves: a tile block holds a few whole rows as one tile,
// reduces it along the row, and writes only the run's results. Here each
// such run becomes a row kernel: its ops get `pb.row_kernel = <id>`, which
// pb-lower-to-affine leaves alone, and the target's S4 turns each kernel
// into one tile kernel (or lowers its ops to loops where it cannot).
//
// A row kernel's ops are linalg.generic ops on static f16/bf16/f32 buffers
// whose loops are the outer loops of the rows (the same extents in every
// op) and, but for the ops that compute one value per row, the row's loop
// last: a reduction's row loop is its one reduction loop, its body an
// elementwise function of its inputs folded into the accumulator by one
// add, multiply, maximum or minimum. Operands are indexed by a subset of
// the loops (a row, a per-row value, a per-column scale, a mask shared by
// the heads) or by 0 on unit dimensions. linalg.fill of a buffer the kernel
// reduces into joins it. Between the ops only allocations, deallocations and
// operations without memory effects (views) may stand. The whole row must
// fit the tile block's registers: `max-row-elements` elements, from the
// target's Tile IR figures.
//
//===----------------------------------------------------------------------===//

#include "pb/Dialect/PBDialect.h"
#include "pb/Target/TargetDesc.h"
#include "pb/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::pb {
#define GEN_PASS_DEF_PBGROUPROWKERNELSPASS
#include "pb/Transforms/Passes.h.inc"
} // namespace mlir::pb

using namespace mlir;
using namespace mlir::pb;

/// Whether `op` (in a row kernel op's body) is elementwise arithmetic that
/// a tile-level code generator has: float arithmetic, comparisons and
/// selects, the exponential and its kin, conversions between floats.
static bool isElementwiseArithmetic(Operation &op) {
  return isa<arith::AddFOp, arith::SubFOp, arith::MulFOp, arith::DivFOp,
             arith::MaximumFOp, arith::MinimumFOp, arith::MaxNumFOp,
             arith::MinNumFOp, arith::NegFOp, arith::ExtFOp, arith::TruncFOp,
             arith::ConstantOp, arith::SelectOp, arith::CmpFOp, math::ExpOp,
             math::LogOp, math::TanhOp, math::SqrtOp, math::RsqrtOp,
             math::AbsFOp, math::FmaOp, math::ErfOp>(op);
}

static bool isRowKernelElementType(Type type) {
  return isa<Float16Type, BFloat16Type, Float32Type>(type);
}

/// Per dimension of `operand`'s buffer, the loop it runs along, or -1 for
/// a unit dimension indexed by 0; nothing for other indexings.
static std::optional<SmallVector<int64_t>> getLoopDims(linalg::LinalgOp op,
                                                       OpOperand &operand) {
  auto type = dyn_cast<MemRefType>(operand.get().getType());
  if (!type)
    return std::nullopt;
  AffineMap map = op.getMatchingIndexingMap(&operand);
  SmallVector<int64_t> dims;
  for (auto [i, result] : llvm::enumerate(map.getResults())) {
    if (auto dim = dyn_cast<AffineDimExpr>(result)) {
      if (llvm::is_contained(dims, static_cast<int64_t>(dim.getPosition())))
        return std::nullopt;
      dims.push_back(dim.getPosition());
      continue;
    }
    auto constant = dyn_cast<AffineConstantExpr>(result);
    if (!constant || constant.getValue() != 0 || type.getDimSize(i) != 1)
      return std::nullopt;
    dims.push_back(-1);
  }
  return dims;
}

/// The extents other than 1.
static SmallVector<int64_t> nonUnit(ArrayRef<int64_t> extents) {
  return llvm::filter_to_vector(extents, [](int64_t e) { return e != 1; });
}

bool mlir::pb::isFullRowOp(linalg::GenericOp op, const RowKernel &kernel) {
  if (op.getNumReductionLoops() > 0)
    return true;
  SmallVector<int64_t> loops = op.getStaticLoopRanges();
  return !loops.empty() && loops.back() == kernel.row &&
         nonUnit(ArrayRef(loops).drop_back()) == nonUnit(kernel.outer);
}

std::optional<SmallVector<int64_t>>
mlir::pb::getRowKernelDims(linalg::LinalgOp op, OpOperand &operand,
                           const RowKernel &kernel) {
  std::optional<SmallVector<int64_t>> loopDims = getLoopDims(op, operand);
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!loopDims || !generic)
    return std::nullopt;
  // Loops of extent 1 run along no kernel dimension; the others along the
  // outer ones in order, and the row's loop (the last of an op along the
  // row) along the row.
  SmallVector<int64_t> loops = generic.getStaticLoopRanges();
  bool fullRow = isFullRowOp(generic, kernel);
  SmallVector<int64_t> kernelDimOfLoop(loops.size(), -1);
  int64_t next = 0;
  for (auto [i, extent] : llvm::enumerate(loops)) {
    if (fullRow && i + 1 == loops.size())
      kernelDimOfLoop[i] = kernel.outer.size();
    else if (extent != 1)
      kernelDimOfLoop[i] = next++;
  }
  SmallVector<int64_t> dims;
  for (int64_t loop : *loopDims)
    dims.push_back(loop < 0 ? -1 : kernelDimOfLoop[loop]);
  return dims;
}

std::optional<RowReduction> mlir::pb::getRowReduction(linalg::GenericOp op) {
  if (op.getNumReductionLoops() != 1 || op.getNumDpsInits() != 1 ||
      op.getIteratorTypesArray().back() != utils::IteratorType::reduction)
    return std::nullopt;
  Block *body = op.getBlock();
  BlockArgument acc = body->getArguments().back();
  Value yielded = body->getTerminator()->getOperand(0);
  Operation *combiner = yielded.getDefiningOp();
  if (!combiner || combiner->getBlock() != body ||
      combiner->getNumOperands() != 2 || !acc.hasOneUse() ||
      !llvm::is_contained(combiner->getOperands(), acc))
    return std::nullopt;
  std::optional<RowReduction::Kind> kind =
      llvm::TypeSwitch<Operation *, std::optional<RowReduction::Kind>>(combiner)
          .Case([](arith::AddFOp) { return RowReduction::Kind::Add; })
          .Case([](arith::MulFOp) { return RowReduction::Kind::Mul; })
          .Case<arith::MaximumFOp, arith::MaxNumFOp>(
              [](Operation *) { return RowReduction::Kind::Max; })
          .Case<arith::MinimumFOp, arith::MinNumFOp>(
              [](Operation *) { return RowReduction::Kind::Min; })
          .Default([](Operation *) { return std::nullopt; });
  if (!kind)
    return std::nullopt;
  RowReduction reduction;
  reduction.kind = *kind;
  reduction.combiner = combiner;
  reduction.value = combiner->getOperand(0) == acc ? combiner->getOperand(1)
                                                   : combiner->getOperand(0);
  return reduction;
}

/// Checks one generic op of a row kernel over `outer` x `row` (either may
/// still be unknown: `outer` empty and `row` 0), and the shape it implies.
static bool checkGeneric(linalg::GenericOp op, SmallVector<int64_t> &outer,
                         int64_t &row, bool &isReduction, std::string &why) {
  if (!op.hasPureBufferSemantics()) {
    why = "not on buffers";
    return false;
  }
  for (Operation &inner : op.getBlock()->without_terminator()) {
    if (!isElementwiseArithmetic(inner)) {
      why = ("no tile form for " + inner.getName().getStringRef()).str();
      return false;
    }
    for (Value operand : inner.getOperands())
      if (operand.getParentBlock() != op.getBlock() &&
          !operand.getDefiningOp<arith::ConstantOp>()) {
        why = "a body that uses a value computed outside it";
        return false;
      }
  }
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type || !type.hasStaticShape() ||
        !isRowKernelElementType(type.getElementType()) ||
        !getLoopDims(op, operand)) {
      why = "an operand that is not a static f16, bf16 or f32 buffer "
            "indexed by the loops";
      return false;
    }
  }
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic) || ranges.empty()) {
    why = "dynamic loop ranges";
    return false;
  }
  unsigned numLoops = ranges.size();
  isReduction = op.getNumReductionLoops() > 0;
  if (isReduction) {
    if (numLoops < 2 || !getRowReduction(op) || ranges.back() == 1) {
      why = "not one fold along the innermost loop";
      return false;
    }
  } else if (op.getNumParallelLoops() != numLoops) {
    why = "neither elementwise nor a reduction";
    return false;
  }
  // A reduction or an elementwise op over the rows: outer loops, then the
  // row; an elementwise op of one value per row: the outer loops only.
  // Loops of extent 1 (a batch of one, a kept dimension) count for none.
  ArrayRef<int64_t> loops(ranges);
  if (outer.empty()) {
    if (!isReduction)
      return true; // the shape comes from the kernel's first reduction
    outer = nonUnit(loops.drop_back());
    if (outer.empty())
      outer = {1}; // one row
    row = loops.back();
    return true;
  }
  if (nonUnit(loops.drop_back()) == nonUnit(outer) && loops.back() == row)
    return true;
  if (!isReduction && nonUnit(loops) == nonUnit(outer))
    return true;
  why = "loops other than the kernel's rows";
  return false;
}

/// Whether `op` may stand between a row kernel's ops: it touches no data.
static bool isNeutral(Operation &op) {
  return isa<memref::AllocOp, memref::DeallocOp>(op) || isMemoryEffectFree(&op);
}

/// A fill may join a run: a constant into a float buffer.
static bool isFillCandidate(linalg::FillOp fill) {
  return fill.hasPureBufferSemantics() &&
         fill.getInputs()[0].getDefiningOp<arith::ConstantOp>() &&
         isa<MemRefType>(fill.getOutputs()[0].getType());
}

/// Whether `fill`'s buffer is written by a reduction of `ops` (after it).
static bool fillsAnAccumulator(linalg::FillOp fill, ArrayRef<Operation *> ops) {
  Value buffer = fill.getOutputs()[0];
  return llvm::any_of(ops, [&](Operation *op) {
    auto generic = dyn_cast<linalg::GenericOp>(op);
    return generic && generic.getNumReductionLoops() > 0 &&
           generic.getDpsInitOperand(0)->get() == buffer;
  });
}

FailureOr<RowKernel> mlir::pb::analyzeRowKernel(ArrayRef<Operation *> ops,
                                                std::string &why) {
  RowKernel kernel;
  // The shape: from the first reduction.
  bool any = false;
  for (Operation *op : ops) {
    auto generic = dyn_cast<linalg::GenericOp>(op);
    if (!generic)
      continue;
    bool isReduction;
    if (!checkGeneric(generic, kernel.outer, kernel.row, isReduction, why))
      return failure();
    any |= isReduction;
  }
  if (!any) {
    why = "no reduction";
    return failure();
  }
  // Every op against that shape (the elementwise ops before the first
  // reduction were not checked against it).
  for (Operation *op : ops) {
    if (auto fill = dyn_cast<linalg::FillOp>(op)) {
      auto type = dyn_cast<MemRefType>(fill.getOutputs()[0].getType());
      if (!fill.hasPureBufferSemantics() || !type || !type.hasStaticShape() ||
          !isRowKernelElementType(type.getElementType()) ||
          !fill.getInputs()[0].getDefiningOp<arith::ConstantOp>()) {
        why = "a fill that is not of a static float buffer by a constant";
        return failure();
      }
      if (!fillsAnAccumulator(fill, ops)) {
        why = "a fill of no accumulator of the kernel";
        return failure();
      }
      kernel.ops.push_back(op);
      continue;
    }
    auto generic = dyn_cast<linalg::GenericOp>(op);
    bool isReduction;
    if (!generic ||
        !checkGeneric(generic, kernel.outer, kernel.row, isReduction, why))
      return failure();
    kernel.ops.push_back(op);
  }
  return kernel;
}

SmallVector<RowKernel>
mlir::pb::findRowKernels(Block &block, int64_t maxRowElements,
                         const llvm::SmallPtrSetImpl<Operation *> &excluded) {
  SmallVector<RowKernel> kernels;
  SmallVector<Operation *> run;
  auto fits = [&](const RowKernel &kernel) {
    return !kernel.outer.empty() &&
           static_cast<int64_t>(llvm::PowerOf2Ceil(kernel.row)) <=
               maxRowElements;
  };
  // The longest kernels of the run, greedily from its front; the ops that
  // join none stay loops.
  auto flush = [&] {
    size_t n = run.size();
    for (size_t begin = 0; begin < n;) {
      bool found = false;
      for (size_t end = n; end > begin && !found; --end) {
        ArrayRef<Operation *> slice = ArrayRef(run).slice(begin, end - begin);
        // Fills that fill no accumulator of the slice leave it (they touch
        // no buffer of it: then they may stay loops where they are).
        SmallVector<Operation *> ops;
        bool stray = false;
        for (Operation *op : slice) {
          auto fill = dyn_cast<linalg::FillOp>(op);
          if (!fill || fillsAnAccumulator(fill, slice)) {
            ops.push_back(op);
            continue;
          }
          Value buffer = fill.getOutputs()[0];
          stray |= llvm::any_of(slice, [&](Operation *other) {
            return other != op &&
                   llvm::is_contained(other->getOperands(), buffer);
          });
        }
        if (stray || ops.empty() || isa<linalg::FillOp>(ops.back()))
          continue;
        std::string why;
        FailureOr<RowKernel> kernel = analyzeRowKernel(ops, why);
        if (failed(kernel) || !fits(*kernel))
          continue;
        kernels.push_back(std::move(*kernel));
        begin = end;
        found = true;
      }
      if (!found)
        ++begin;
    }
    run.clear();
  };
  for (Operation &op : block) {
    if (auto generic = dyn_cast<linalg::GenericOp>(op)) {
      SmallVector<int64_t> outer;
      int64_t row = 0;
      bool isReduction;
      std::string why;
      if (excluded.contains(generic) ||
          generic->hasAttr(PBDialect::kKeepLayoutAttrName) ||
          isMultiplyAccumulate(generic, /*allowExtensions=*/true) ||
          !checkGeneric(generic, outer, row, isReduction, why)) {
        flush();
        continue;
      }
      run.push_back(&op);
      continue;
    }
    if (auto fill = dyn_cast<linalg::FillOp>(op);
        fill && isFillCandidate(fill)) {
      run.push_back(&op);
      continue;
    }
    if (isNeutral(op))
      continue;
    flush();
  }
  flush();
  return kernels;
}

namespace {
class PBGroupRowKernelsPass
    : public pb::impl::PBGroupRowKernelsPassBase<PBGroupRowKernelsPass> {
public:
  using Base::Base;
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    // Contractions and the epilogues S3 may fuse into them stay theirs (an
    // epilogue ends a run).
    const ChipDesc *chip = getTargetChip(func->getParentOfType<ModuleOp>());
    bool permuted = chip && hasCooperativeMatrixUnits(*chip);
    llvm::SmallPtrSet<Operation *, 8> epilogues;
    func.walk([&](linalg::LinalgOp op) {
      if (op.hasPureBufferSemantics() &&
          isMultiplyAccumulate(op, /*allowExtensions=*/true))
        if (linalg::GenericOp epilogue = findFusableEpilogue(op, permuted))
          epilogues.insert(epilogue);
    });
    int64_t id = 0;
    OpBuilder b(&getContext());
    func.walk([&](Block *block) {
      for (RowKernel &kernel :
           findRowKernels(*block, maxRowElements, epilogues)) {
        for (Operation *op : kernel.ops)
          op->setAttr(PBDialect::kRowKernelAttrName, b.getI64IntegerAttr(id));
        explain(kernel.ops.front(),
                llvm::formatv("row kernel {0}: {1} ops over rows of {2}", id,
                              kernel.ops.size(), kernel.row)
                    .str());
        ++id;
      }
    });
  }
};
} // namespace
