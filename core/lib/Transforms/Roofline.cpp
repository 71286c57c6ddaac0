//===- Roofline.cpp - Work of a statement and a launch's estimated time ---===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "pb/Transforms/Roofline.h"

#include "pb/Transforms/Passes.h"

#include "mlir/Dialect/Affine/Analysis/LoopAnalysis.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SetVector.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::pb;

//===----------------------------------------------------------------------===//
// Work
//===----------------------------------------------------------------------===//

void Work::addFlops(bool matrix, ElementType type, double flops) {
  if (flops == 0)
    return;
  auto add = [&](auto &list) {
    for (auto &[t, f] : list)
      if (t == type) {
        f += flops;
        return;
      }
    list.push_back({type, flops});
  };
  if (matrix)
    add(matrixFlops);
  else
    add(vectorFlops);
}

double Work::totalFlops() const {
  double total = 0;
  for (auto [type, flops] : vectorFlops)
    total += flops;
  for (auto [type, flops] : matrixFlops)
    total += flops;
  return total;
}

Work &Work::operator+=(const Work &other) {
  for (auto [type, flops] : other.vectorFlops)
    addFlops(false, type, flops);
  for (auto [type, flops] : other.matrixFlops)
    addFlops(true, type, flops);
  bytes += other.bytes;
  exact = exact && other.exact;
  return *this;
}

DictionaryAttr Work::toAttr(MLIRContext *ctx) const {
  Builder b(ctx);
  auto flopsAttr = [&](const auto &list) {
    SmallVector<NamedAttribute> entries;
    for (auto [type, flops] : list)
      entries.push_back(
          b.getNamedAttr(stringifyElementType(type), b.getF64FloatAttr(flops)));
    return b.getDictionaryAttr(entries);
  };
  return b.getDictionaryAttr(
      {b.getNamedAttr("bytes", b.getF64FloatAttr(bytes)),
       b.getNamedAttr("exact", b.getBoolAttr(exact)),
       b.getNamedAttr("matrix_flops", flopsAttr(matrixFlops)),
       b.getNamedAttr("vector_flops", flopsAttr(vectorFlops))});
}

std::optional<Work> Work::fromAttr(Attribute attr) {
  auto dict = dyn_cast_or_null<DictionaryAttr>(attr);
  if (!dict)
    return std::nullopt;
  Work work;
  auto bytes = dict.getAs<FloatAttr>("bytes");
  auto exact = dict.getAs<BoolAttr>("exact");
  if (!bytes || !exact)
    return std::nullopt;
  work.bytes = bytes.getValueAsDouble();
  work.exact = exact.getValue();
  for (auto [key, matrix] :
       {std::pair{"vector_flops", false}, std::pair{"matrix_flops", true}}) {
    auto flops = dict.getAs<DictionaryAttr>(key);
    if (!flops)
      return std::nullopt;
    for (NamedAttribute entry : flops) {
      std::optional<ElementType> type;
      for (ElementType t :
           {ElementType::F64, ElementType::F32, ElementType::TF32,
            ElementType::F16, ElementType::BF16, ElementType::F8E4M3FN,
            ElementType::F8E5M2, ElementType::I8, ElementType::I32,
            ElementType::I64})
        if (stringifyElementType(t) == entry.getName().getValue())
          type = t;
      auto value = dyn_cast<FloatAttr>(entry.getValue());
      if (!type || !value)
        return std::nullopt;
      work.addFlops(matrix, *type, value.getValueAsDouble());
    }
  }
  return work;
}

//===----------------------------------------------------------------------===//
// Counting
//===----------------------------------------------------------------------===//

/// Bytes one element of a buffer occupies: scalars, index and vectors of
/// them (packed layouts keep vectors in memrefs); nullopt for anything else.
static std::optional<int64_t> getStorageBytes(Type element) {
  if (element.isIndex())
    return 8;
  if (element.isIntOrFloat())
    return llvm::divideCeil(element.getIntOrFloatBitWidth(), 8);
  if (auto vector = dyn_cast<VectorType>(element)) {
    if (vector.isScalable())
      return std::nullopt;
    std::optional<int64_t> lane = getStorageBytes(vector.getElementType());
    if (!lane)
      return std::nullopt;
    return *lane * vector.getNumElements();
  }
  return std::nullopt;
}

namespace {
/// Walks a statement, multiplying by the trip counts of the loops around
/// each operation.
class WorkCounter {
public:
  explicit WorkCounter(ArrayRef<Operation *> roots) : roots(roots) {}

  Work run() {
    for (Operation *root : roots)
      visit(root, 1.0);
    for (Value buffer : buffers) {
      auto type = cast<MemRefType>(buffer.getType());
      if (!type.hasStaticShape()) {
        work.exact = false;
        continue;
      }
      std::optional<int64_t> elementBytes =
          getStorageBytes(type.getElementType());
      if (!elementBytes) {
        work.exact = false;
        continue;
      }
      work.bytes += static_cast<double>(type.getNumElements()) * *elementBytes;
    }
    return work;
  }

private:
  /// Iterations of a loop from `lb` to `ub` by `step`, or 1 (inexact).
  double trip(Value lb, Value ub, Value step) {
    APInt s;
    if (!matchPattern(step, m_ConstantInt(&s)) || s.getSExtValue() <= 0) {
      work.exact = false;
      return 1;
    }
    std::optional<int64_t> distance = getDistance(lb, ub);
    if (!distance) {
      work.exact = false;
      return 1;
    }
    return *distance <= 0 ? 0
                          : static_cast<double>(
                                llvm::divideCeil(*distance, s.getSExtValue()));
  }

  /// ub - lb when it is a constant: both constants, ub = lb + c, or the
  /// smallest such distance of a minimum's operands (a partial tile).
  std::optional<int64_t> getDistance(Value lb, Value ub) {
    APInt l, u;
    if (matchPattern(lb, m_ConstantInt(&l)) &&
        matchPattern(ub, m_ConstantInt(&u)))
      return u.getSExtValue() - l.getSExtValue();
    if (auto add = ub.getDefiningOp<arith::AddIOp>()) {
      APInt c;
      if (add.getLhs() == lb && matchPattern(add.getRhs(), m_ConstantInt(&c)))
        return c.getSExtValue();
      if (add.getRhs() == lb && matchPattern(add.getLhs(), m_ConstantInt(&c)))
        return c.getSExtValue();
    }
    if (isa_and_nonnull<arith::MinSIOp, arith::MinUIOp>(ub.getDefiningOp())) {
      std::optional<int64_t> best;
      for (Value operand : ub.getDefiningOp()->getOperands())
        if (std::optional<int64_t> d = getDistance(lb, operand))
          best = best ? std::min(*best, *d) : *d;
      return best;
    }
    return std::nullopt;
  }

  void visitRegions(Operation *op, double times) {
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (Operation &nested : block)
          visit(&nested, times);
  }

  void visit(Operation *op, double times) {
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      visitRegions(op, times * trip(loop.getLowerBound(), loop.getUpperBound(),
                                    loop.getStep()));
      return;
    }
    if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
      double iterations = 1;
      for (auto [lb, ub, step] : llvm::zip(
               loop.getLowerBound(), loop.getUpperBound(), loop.getStep()))
        iterations *= trip(lb, ub, step);
      visitRegions(op, times * iterations);
      return;
    }
    if (auto loop = dyn_cast<affine::AffineForOp>(op)) {
      std::optional<uint64_t> t = affine::getConstantTripCount(loop);
      if (!t)
        work.exact = false;
      visitRegions(op, times * (t ? static_cast<double>(*t) : 1.0));
      return;
    }
    if (auto loop = dyn_cast<affine::AffineParallelOp>(op)) {
      double iterations = 1;
      SmallVector<int64_t> steps = loop.getSteps();
      for (unsigned d = 0, e = loop.getNumDims(); d < e; ++d) {
        AffineMap lb = loop.getLowerBoundMap(d), ub = loop.getUpperBoundMap(d);
        if (!lb.isSingleConstant() || !ub.isSingleConstant()) {
          work.exact = false;
          continue;
        }
        iterations *= static_cast<double>(std::max<int64_t>(
            0, llvm::divideCeil(ub.getSingleConstantResult() -
                                    lb.getSingleConstantResult(),
                                steps[d])));
      }
      visitRegions(op, times * iterations);
      return;
    }
    if (isa<scf::IfOp, affine::AffineIfOp>(op)) {
      // Both branches are counted: an upper bound.
      work.exact = false;
      visitRegions(op, times);
      return;
    }
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
      double iterations = 1;
      for (int64_t range : linalgOp.getStaticLoopRanges()) {
        if (ShapedType::isDynamic(range)) {
          work.exact = false;
          continue;
        }
        iterations *= static_cast<double>(range);
      }
      for (OpOperand &operand : op->getOpOperands())
        noteBuffer(operand.get());
      visitRegions(op, times * iterations);
      return;
    }
    for (Value operand : op->getOperands())
      if (isa<MemRefType>(operand.getType()) &&
          (isa<memref::LoadOp, memref::StoreOp, affine::AffineLoadOp,
               affine::AffineStoreOp, vector::LoadOp, vector::StoreOp,
               vector::TransferReadOp, vector::TransferWriteOp,
               vector::MaskedLoadOp, vector::MaskedStoreOp, memref::CopyOp>(
              op)))
        noteBuffer(operand);
    countArithmetic(op, times);
    visitRegions(op, times);
  }

  /// A buffer defined outside the statement, in the default memory space.
  void noteBuffer(Value value) {
    auto type = dyn_cast<MemRefType>(value.getType());
    if (!type || type.getMemorySpace())
      return;
    Operation *def = value.getDefiningOp();
    if (auto arg = dyn_cast<BlockArgument>(value))
      def = arg.getOwner()->getParentOp();
    if (def && llvm::any_of(roots, [&](Operation *root) {
          return root->isAncestor(def);
        }))
      return;
    buffers.insert(value);
  }

  void countArithmetic(Operation *op, double times) {
    if (op->getNumResults() != 1)
      return;
    Type type = op->getResult(0).getType();
    double perElement = 0;
    if (isa<arith::AddFOp, arith::SubFOp, arith::MulFOp, arith::DivFOp,
            arith::RemFOp, arith::MaximumFOp, arith::MinimumFOp,
            arith::MaxNumFOp, arith::MinNumFOp, arith::NegFOp>(op) ||
        (isa<math::MathDialect>(op->getDialect()) && !isa<math::FmaOp>(op)))
      perElement = 1;
    else if (isa<math::FmaOp, vector::FMAOp>(op))
      perElement = 2;
    else if (auto reduction = dyn_cast<vector::ReductionOp>(op)) {
      // One operation per lane folded (and the accumulator).
      perElement = 1;
      type = reduction.getSourceVectorType();
    }
    if (perElement == 0)
      return;
    double lanes = 1;
    if (auto vector = dyn_cast<VectorType>(type))
      lanes = static_cast<double>(vector.getNumElements());
    Type element = getElementTypeOrSelf(type);
    if (!isa<FloatType>(element))
      return;
    std::optional<ElementType> target = getTargetElementType(element);
    if (!target)
      return;
    work.addFlops(/*matrix=*/false, *target, perElement * lanes * times);
  }

  ArrayRef<Operation *> roots;
  Work work;
  llvm::SetVector<Value> buffers;
};
} // namespace

std::string mlir::pb::describeFileLocation(Location loc) {
  std::string text;
  loc->walk([&](Location nested) {
    if (auto file = dyn_cast<FileLineColLoc>(nested)) {
      text = (file.getFilename().getValue() + ":" +
              llvm::Twine(file.getLine()) + ":" + llvm::Twine(file.getColumn()))
                 .str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return text;
}

Work mlir::pb::countWork(ArrayRef<Operation *> statements) {
  return WorkCounter(statements).run();
}

//===----------------------------------------------------------------------===//
// The model
//===----------------------------------------------------------------------===//

static int64_t roundUp(int64_t value, int64_t granule) {
  return granule > 0 ? llvm::alignTo(value, granule) : value;
}

FailureOr<RooflineSeconds> mlir::pb::getRooflineParts(const ChipDesc &chip,
                                                      const Work &work,
                                                      std::string &why) {
  const MemoryLevelDesc *mainMemory =
      chip.getMemoryLevel(MemoryKind::MainMemory);
  if (!mainMemory || mainMemory->bandwidthGBps <= 0 || !chip.costModel) {
    why = "the chip states no main-memory bandwidth";
    return failure();
  }
  RooflineSeconds parts;
  for (auto [matrix, list] : {std::pair{false, &work.vectorFlops},
                              std::pair{true, &work.matrixFlops}})
    for (auto [type, flops] : *list) {
      int64_t peak =
          chip.costModel->getPeakGFLOPs(type, matrix ? "matrix" : "vector");
      if (peak <= 0 && !matrix)
        peak = chip.costModel->getPeakGFLOPs(ElementType::F32, "vector");
      if (peak <= 0) {
        why = ("the chip states no " + stringifyElementType(type) + " " +
               (matrix ? "matrix" : "vector") + " peak")
                  .str();
        return failure();
      }
      parts.compute += flops / (static_cast<double>(peak) * 1e9);
    }
  parts.memory =
      work.bytes / (static_cast<double>(mainMemory->bandwidthGBps) * 1e9);
  return parts;
}

FailureOr<LaunchEstimate> mlir::pb::estimateLaunch(const ChipDesc &chip,
                                                   const Work &work,
                                                   const LaunchShape &shape,
                                                   std::string &why) {
  FailureOr<RooflineSeconds> parts = getRooflineParts(chip, work, why);
  if (failed(parts))
    return failure();
  LaunchEstimate estimate;
  estimate.computeSeconds = parts->compute;
  estimate.memorySeconds = parts->memory;
  estimate.overheadSeconds =
      static_cast<double>(chip.costModel->launchOverheadNs) * 1e-9;
  estimate.memoryBound = estimate.memorySeconds >= estimate.computeSeconds;

  // Occupancy: the blocks one unit (SM) holds at once.
  estimate.units =
      std::max<int64_t>(1, chip.computeLevels.front().physicalUnits);
  int64_t resident = std::numeric_limits<int64_t>::max();
  auto limit = [&](int64_t blocks, llvm::StringRef what) {
    if (blocks < resident) {
      resident = blocks;
      estimate.occupancyLimit = what.str();
    }
  };
  if (const ComputeLevelDesc *block =
          chip.getComputeLevel(ComputeLevelKind::Block))
    if (block->maxResidentPerUnit > 0)
      limit(block->maxResidentPerUnit, "blocks");
  int64_t threads = std::max<int64_t>(1, shape.threadsPerBlock);
  if (const ComputeLevelDesc *lane =
          chip.getComputeLevel(ComputeLevelKind::Lane)) {
    threads = roundUp(threads, lane->fixedCountPerParent);
    if (lane->maxResidentPerUnit > 0)
      limit(lane->maxResidentPerUnit / threads, "threads");
  }
  if (const MemoryLevelDesc *registers =
          chip.getMemoryLevel(MemoryKind::RegisterFile))
    if (shape.registersPerThread && registers->capacityBytesPerUnit > 0) {
      int64_t perThread = roundUp(*shape.registersPerThread * 4,
                                  registers->allocationGranuleBytes);
      limit(registers->capacityBytesPerUnit /
                std::max<int64_t>(1, perThread * threads),
            "registers");
    }
  if (const MemoryLevelDesc *shared =
          chip.getMemoryLevel(MemoryKind::Scratchpad))
    if (shared->capacityBytesPerUnit > 0) {
      int64_t perBlock =
          roundUp(shape.sharedBytesPerBlock + shared->reservedBytesPerInstance,
                  shared->allocationGranuleBytes);
      if (perBlock > 0)
        limit(shared->capacityBytesPerUnit / perBlock, "shared memory");
    }
  if (resident == std::numeric_limits<int64_t>::max()) {
    resident = 1;
    estimate.occupancyLimit = "not stated";
  }
  estimate.residentBlocksPerUnit = std::max<int64_t>(1, resident);

  // Waves of resident blocks; a single wave keeps min(blocks, units) units
  // busy, several waves lose the last one's idle slots.
  int64_t blocks = std::max<int64_t>(1, shape.blocks);
  int64_t slots = estimate.units * estimate.residentBlocksPerUnit;
  estimate.waves = llvm::divideCeil(blocks, slots);
  estimate.chipFraction =
      estimate.waves == 1
          ? std::min(1.0, static_cast<double>(blocks) / estimate.units)
          : static_cast<double>(blocks) /
                static_cast<double>(estimate.waves * slots);
  estimate.seconds = std::max(estimate.memorySeconds, estimate.computeSeconds) /
                         estimate.chipFraction +
                     estimate.overheadSeconds;
  return estimate;
}

double mlir::pb::getRooflineSeconds(const ChipDesc &chip, const Work &work) {
  std::string why;
  LaunchShape whole;
  whole.blocks = std::max<int64_t>(1, chip.computeLevels.front().physicalUnits);
  FailureOr<LaunchEstimate> estimate = estimateLaunch(chip, work, whole, why);
  if (failed(estimate))
    return 0;
  return std::max(estimate->memorySeconds, estimate->computeSeconds);
}

llvm::json::Object mlir::pb::toJSON(const Work &work, const LaunchShape &shape,
                                    const LaunchEstimate &estimate) {
  auto flops = [](const auto &list) {
    llvm::json::Object object;
    for (auto [type, value] : list)
      object[stringifyElementType(type)] = value;
    return object;
  };
  llvm::json::Object result{
      {"bytes", work.bytes},
      {"vector_flops", flops(work.vectorFlops)},
      {"matrix_flops", flops(work.matrixFlops)},
      {"work_exact", work.exact},
      {"blocks", shape.blocks},
      {"threads_per_block", shape.threadsPerBlock},
      {"shared_bytes_per_block", shape.sharedBytesPerBlock},
      {"resident_blocks_per_unit", estimate.residentBlocksPerUnit},
      {"occupancy_limit", estimate.occupancyLimit},
      {"waves", estimate.waves},
      {"chip_fraction", estimate.chipFraction},
      {"memory_us", estimate.memorySeconds * 1e6},
      {"compute_us", estimate.computeSeconds * 1e6},
      {"overhead_us", estimate.overheadSeconds * 1e6},
      {"estimate_us", estimate.seconds * 1e6},
      {"bound", estimate.memoryBound ? "memory" : "compute"}};
  if (shape.registersPerThread)
    result["registers_per_thread"] = *shape.registersPerThread;
  else
    result["registers_per_thread"] = nullptr;
  return result;
}
