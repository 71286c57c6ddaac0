//===- MatrixEpilogue.cpp - Zero fills and epilogues of matrix kernels ----===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What the vendors' matrix-unit kernels (NVIDIA's tensor cores, AMD's MFMA)
// share around their contraction: the unit S3 tagged, the zero fills of C
// they replace by accumulators that start at 0, the elementwise epilogue S3
// tagged, applied to each result in the kernel's stores, the kernel's work
// for the estimate, and the statements that go once the kernel is built.
//
//===----------------------------------------------------------------------===//

#include "pb/GPU/GPUCommon.h"

#include "pb/Dialect/PBDialect.h"
#include "pb/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::pb;

/// Whether `value` is a zero constant (scalar or splat).
static bool isZeroConstant(Value value) {
  Attribute attr;
  if (!matchPattern(value, m_Constant(&attr)))
    return false;
  if (auto splat = dyn_cast<SplatElementsAttr>(attr))
    attr = splat.getSplatValue<Attribute>();
  if (auto f = dyn_cast<FloatAttr>(attr))
    return f.getValue().isPosZero();
  if (auto i = dyn_cast<IntegerAttr>(attr))
    return i.getValue().isZero();
  return false;
}

namespace {
/// How a top-level statement uses the buffer `base`.
struct BaseUse {
  /// It touches `base` (or a view of it).
  bool touches = false;
  /// It reads `base`, writes something other than zeros to it, or uses it
  /// otherwise.
  bool other = false;
  /// It writes no other buffer: the whole statement is a fill of `base`.
  bool onlyBase = true;
  /// Its stores of zeros to `base`.
  SmallVector<Operation *> zeroStores;
};
} // namespace

static BaseUse classifyUse(Operation *stmt, Value base) {
  BaseUse use;
  stmt->walk([&](Operation *nested) {
    bool usesBase = llvm::any_of(nested->getOperands(), [&](Value operand) {
      return isa<MemRefType>(operand.getType()) &&
             getBaseBuffer(operand) == base;
    });
    use.touches |= usesBase;
    if (isMemoryEffectFree(nested) ||
        isa<affine::AffineForOp, affine::AffineParallelOp, affine::AffineIfOp,
            affine::AffineYieldOp, scf::ForOp, scf::YieldOp>(nested))
      return;
    Value memref, stored;
    if (auto store = dyn_cast<affine::AffineStoreOp>(nested))
      memref = store.getMemRef(), stored = store.getValueToStore();
    else if (auto store = dyn_cast<memref::StoreOp>(nested))
      memref = store.getMemRef(), stored = store.getValueToStore();
    else if (auto write = dyn_cast<vector::TransferWriteOp>(nested))
      memref = write.getBase(), stored = write.getVector();
    else if (auto store = dyn_cast<vector::StoreOp>(nested))
      memref = store.getBase(), stored = store.getValueToStore();
    if (!memref) {
      // Loads and other operations with effects.
      if (usesBase)
        use.other = true;
      else
        use.onlyBase = false;
      return;
    }
    if (getBaseBuffer(memref) != base) {
      use.onlyBase = false;
      if (usesBase) // `base` stored into another buffer, or used as an index
        use.other = true;
      return;
    }
    if (isZeroConstant(stored))
      use.zeroStores.push_back(nested);
    else
      use.other = true;
  });
  return use;
}

/// What zero-fills the C of `op` before it and can go (the kernel's
/// accumulators start at 0): whole statements that only store zeros to C,
/// and the zero stores to C inside statements that S3 fused with other work
/// (a fill inside the nest that computes another buffer), when C is a
/// buffer of this function (its contents before are undefined) and nothing
/// before `op` reads it; with an epilogue that writes its own output and
/// not C, also when nothing after `op` but the epilogue uses C. Empty
/// otherwise.
SmallVector<Operation *>
gpucommon::findRemovableZeroFills(linalg::LinalgOp op, Operation *epilogue,
                                  bool entryArguments) {
  Value c = op.getDpsInitOperand(0)->get();
  Value base = getBaseBuffer(c);
  Operation *start = nullptr;
  if (auto alloc = base.getDefiningOp<memref::AllocOp>()) {
    if (alloc->getBlock() != op->getBlock() ||
        cast<MemRefType>(c.getType()) != alloc.getType())
      return {};
    start = alloc->getNextNode();
  } else if (auto arg = dyn_cast<BlockArgument>(base)) {
    // The kernel must write all of C: no epilogue, or one that overwrites
    // C in place.
    auto inPlace = dyn_cast_or_null<linalg::GenericOp>(epilogue);
    if (!entryArguments || base != c ||
        (epilogue && (!inPlace || inPlace.getNumDpsInits() != 1 ||
                      inPlace.getDpsInitOperand(0)->get() != c)) ||
        arg.getOwner() != op->getBlock() || !op->getBlock()->isEntryBlock())
      return {};
    start = &op->getBlock()->front();
  } else {
    return {};
  }
  SmallVector<Operation *> fills;
  for (Operation *it = start; it && it != op; it = it->getNextNode()) {
    if (isa<ViewLikeOpInterface>(it) || isMemoryEffectFree(it))
      continue;
    BaseUse use = classifyUse(it, base);
    if (!use.touches)
      continue;
    if (use.other || use.zeroStores.empty())
      return {};
    if (use.onlyBase)
      fills.push_back(it);
    else
      fills.append(use.zeroStores.begin(), use.zeroStores.end());
  }
  // Without an epilogue, or with one that overwrites C in place, the
  // kernel stores all of C: later statements read its values.
  auto inPlace = dyn_cast_or_null<linalg::GenericOp>(epilogue);
  if (!epilogue || (inPlace && inPlace.getNumDpsInits() == 1 &&
                    inPlace.getDpsInitOperand(0)->get() == c))
    return fills;
  for (Operation *it = op->getNextNode(); it; it = it->getNextNode()) {
    if (it == epilogue || isa<memref::DeallocOp, ViewLikeOpInterface>(it) ||
        isMemoryEffectFree(it))
      continue;
    if (classifyUse(it, base).touches)
      return {};
  }
  return fills;
}

void gpucommon::storeThroughEpilogue(OpBuilder &b, linalg::GenericOp epilogue,
                                     Value cMem, ArrayRef<Value> cIndex,
                                     Value value) {
  Location loc = epilogue.getLoc();
  // The epilogue reads C through a permutation of its loops: C's index
  // gives the loops; its other inputs and its output are read and written
  // at their projections (permutations) of them.
  Block *body = epilogue.getBlock();
  SmallVector<Value> loops(epilogue.getNumLoops());
  for (OpOperand *input : epilogue.getDpsInputOperands())
    if (input->get() == cMem) {
      AffineMap map = epilogue.getMatchingIndexingMap(input);
      for (unsigned i = 0, e = map.getNumResults(); i < e; ++i)
        loops[map.getDimPosition(i)] = cIndex[i];
    }
  auto at = [&](OpOperand *operand) {
    AffineMap map = epilogue.getMatchingIndexingMap(operand);
    SmallVector<Value> result;
    for (unsigned i = 0, e = map.getNumResults(); i < e; ++i)
      result.push_back(loops[map.getDimPosition(i)]);
    return result;
  };
  IRMapping mapping;
  for (OpOperand *input : epilogue.getDpsInputOperands()) {
    BlockArgument arg = body->getArgument(input->getOperandNumber());
    if (input->get() == cMem) {
      mapping.map(arg, value);
      continue;
    }
    mapping.map(arg, memref::LoadOp::create(b, loc, input->get(), at(input)));
  }
  for (Operation &scalarOp : body->without_terminator())
    b.clone(scalarOp, mapping);
  Value result = mapping.lookup(body->getTerminator()->getOperand(0));
  OpOperand *out = epilogue.getDpsInitOperand(0);
  memref::StoreOp::create(b, loc, result, out->get(), at(out));
}

const MatrixUnitDesc *gpucommon::takeTaggedUnit(linalg::LinalgOp op,
                                                const ChipDesc &chip) {
  auto name = op->getAttrOfType<StringAttr>(PBDialect::kMatrixUnitAttrName);
  op->removeAttr(PBDialect::kMatrixUnitAttrName);
  for (const MatrixUnitDesc *unit : chip.matrixUnits)
    if (unit->name == name.getValue())
      return unit;
  op->emitError() << "matrix unit '" << name.getValue() << "' is not one of "
                  << chip.name << "'s";
  return nullptr;
}

gpucommon::MatrixKernelParts
gpucommon::prepareMatrixKernel(linalg::LinalgOp op, ElementType unitType,
                               double multiplyAdds) {
  MatrixKernelParts parts;
  // The epilogue S3 tagged (right after `op`, allocations, constants and
  // views of other buffers aside) runs in the kernel's stores; what S2
  // placed between the two must be defined before the kernel.
  parts.epilogue = findFusableEpilogue(op, /*permuted=*/true);
  if (parts.epilogue &&
      !parts.epilogue->hasAttr(PBDialect::kMatrixUnitEpilogueAttrName))
    parts.epilogue = nullptr;
  if (parts.epilogue)
    while (op->getNextNode() != parts.epilogue)
      op->getNextNode()->moveBefore(op);
  // The kernel's work: the contraction's multiply-adds on the unit's type,
  // the epilogue's arithmetic on vector units, the buffers of both.
  SmallVector<Operation *> statements = {op};
  if (parts.epilogue)
    statements.push_back(parts.epilogue);
  parts.work = countWork(statements);
  parts.work.vectorFlops =
      parts.epilogue ? countWork({parts.epilogue.getOperation()}).vectorFlops
                     : decltype(parts.work.vectorFlops)();
  parts.work.addFlops(/*matrix=*/true, unitType, 2 * multiplyAdds);
  parts.fills = findRemovableZeroFills(op, parts.epilogue.getOperation());
  // C zero-filled and its product kept in registers for the epilogue: the
  // kernel neither reads nor writes it.
  if (!parts.fills.empty() && parts.epilogue) {
    auto cType = cast<MemRefType>(op.getDpsInitOperand(0)->get().getType());
    parts.work.bytes -= static_cast<double>(cType.getNumElements()) *
                        llvm::divideCeil(cType.getElementTypeBitWidth(), 8);
  }
  return parts;
}

void gpucommon::finishMatrixKernel(linalg::LinalgOp op,
                                   const MatrixKernelParts &parts,
                                   llvm::StringRef unitName) {
  if (auto launch = dyn_cast_or_null<gpu::LaunchOp>(op->getPrevNode()))
    launch->setAttr(PBDialect::kWorkAttrName,
                    parts.work.toAttr(launch.getContext()));
  if (!parts.fills.empty())
    explain(op, llvm::formatv("matrix units: accumulators start at 0; "
                              "{0} zero fill(s) of C removed",
                              parts.fills.size()));
  for (Operation *fill : parts.fills)
    fill->erase();
  if (linalg::GenericOp epilogue = parts.epilogue) {
    explain(epilogue,
            llvm::formatv("matrix units: epilogue of {0} ops fused into the "
                          "stores of the {1} kernel",
                          epilogue.getBlock()->getOperations().size() - 1,
                          unitName));
    epilogue->erase();
  }
  op->erase();
}
