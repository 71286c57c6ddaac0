//===- MultiLevelTiling.cpp - Tile bands for the target's memory levels
//----===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "pb/Target/TargetDesc.h"
#include "pb/Transforms/Passes.h"

#include "mlir/Dialect/Affine/Analysis/AffineAnalysis.h"

#include "mlir/Dialect/Affine/Analysis/LoopAnalysis.h"
#include "mlir/Dialect/Affine/LoopUtils.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::pb {
#define GEN_PASS_DEF_PBMULTILEVELTILINGPASS
#include "pb/Transforms/Passes.h.inc"
} // namespace mlir::pb

using namespace mlir;
using namespace mlir::pb;

/// For each memref the band accesses, the element size and the band loops
/// its subscripts use (most over the accesses to it). A tile of size T per
/// loop touches about T^loops elements of it.
struct BandFootprint {
  struct MemRefUse {
    int64_t elementBytes = 0;
    unsigned loops = 0;
    /// Every access subscripts the memref with all band loops and its
    /// innermost subscript with the innermost band loop alone: the band
    /// walks it once, contiguously, and tiling gives it no reuse.
    bool streamed = true;
  };
  llvm::DenseMap<Value, MemRefUse> uses;

  explicit BandFootprint(MutableArrayRef<affine::AffineForOp> band) {
    llvm::SmallPtrSet<Value, 8> ivs;
    for (affine::AffineForOp loop : band)
      ivs.insert(loop.getInductionVar());
    Value innermost = band.back().getInductionVar();
    band.front()->walk([&](Operation *op) {
      Value memref;
      ValueRange indices;
      AffineMap map;
      if (auto load = dyn_cast<affine::AffineLoadOp>(op)) {
        memref = load.getMemRef();
        indices = load.getMapOperands();
        map = load.getAffineMap();
      } else if (auto store = dyn_cast<affine::AffineStoreOp>(op)) {
        memref = store.getMemRef();
        indices = store.getMapOperands();
        map = store.getAffineMap();
      } else {
        return;
      }
      unsigned loops = 0;
      for (Value index : indices)
        loops += ivs.contains(index);
      auto type = cast<MemRefType>(memref.getType());
      MemRefUse &use = uses[memref];
      use.elementBytes =
          std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
      use.loops = std::max(use.loops, loops);
      bool contiguous = false;
      if (map.getNumResults())
        if (auto last = dyn_cast<AffineDimExpr>(map.getResults().back()))
          contiguous = last.getPosition() < indices.size() &&
                       indices[last.getPosition()] == innermost;
      use.streamed &= loops == band.size() && contiguous;
    });
  }

  /// The bytes of the memrefs that the band does not stream (see
  /// MemRefUse::streamed), whole: what tiling could keep on chip.
  int64_t reusedBytes() const {
    int64_t total = 0;
    for (const auto &[memref, use] : uses) {
      if (use.streamed)
        continue;
      auto type = cast<MemRefType>(memref.getType());
      if (!type.hasStaticShape())
        return std::numeric_limits<int64_t>::max();
      total += type.getNumElements() * use.elementBytes;
    }
    return total;
  }

  int64_t bytes(int64_t tile) const {
    int64_t total = 0;
    for (const auto &[memref, use] : uses) {
      int64_t elements = 1;
      for (unsigned i = 0; i < use.loops; ++i)
        elements *= tile;
      total += elements * use.elementBytes;
    }
    return total;
  }
};

/// Whether `band` carries no dependence, decided without Presburger
/// arithmetic: the only memory accesses in it are affine loads and stores,
/// and every access to a memref the band stores to subscripts it with each
/// band loop's index, alone, at one position that is the same for all those
/// accesses (a pooling's running maximum, read and written at [n, h, w, c]
/// by the loops over h and w). Two accesses to one element then come from
/// the same band iteration, so tiling is valid and every band loop is
/// parallel. (Like upstream's dependence analysis, accesses through
/// different memref values are taken as independent.) Otherwise the caller
/// asks the dependence analysis; a model's streaming, elementwise and
/// pooling nests, most of its tiled bands, need no more.
static bool carriesNoDependence(ArrayRef<affine::AffineForOp> band) {
  // Per memref: the result position of each band loop's index in the
  // first access, whether every access has the same ones, and whether the
  // band stores to it.
  struct Accesses {
    SmallVector<int64_t> positions;
    bool stored = false;
    bool consistent = true;
  };
  llvm::DenseMap<Value, Accesses> memrefs;
  auto record = [&](Value memref, AffineMap map, ValueRange operands,
                    bool store) {
    SmallVector<int64_t> positions;
    for (affine::AffineForOp loop : band) {
      Value iv = loop.getInductionVar();
      int64_t position = -1;
      for (auto [i, e] : llvm::enumerate(map.getResults())) {
        auto dim = dyn_cast<AffineDimExpr>(e);
        if (dim && dim.getPosition() < operands.size() &&
            operands[dim.getPosition()] == iv) {
          position = i;
          break;
        }
      }
      positions.push_back(position);
    }
    Accesses &accesses = memrefs[memref];
    accesses.stored |= store;
    if (accesses.positions.empty())
      accesses.positions = positions;
    accesses.consistent &=
        accesses.positions == positions && !llvm::is_contained(positions, -1);
  };
  WalkResult walk = band.front()->walk([&](Operation *op) {
    if (auto load = dyn_cast<affine::AffineLoadOp>(op)) {
      record(load.getMemRef(), load.getAffineMap(), load.getMapOperands(),
             false);
      return WalkResult::advance();
    }
    if (auto store = dyn_cast<affine::AffineStoreOp>(op)) {
      record(store.getMemRef(), store.getAffineMap(), store.getMapOperands(),
             true);
      return WalkResult::advance();
    }
    if (isa<affine::AffineForOp, affine::AffineIfOp, affine::AffineYieldOp>(
            op) ||
        isMemoryEffectFree(op))
      return WalkResult::advance();
    return WalkResult::interrupt();
  });
  if (walk.wasInterrupted())
    return false;
  return llvm::all_of(memrefs, [](const auto &entry) {
    return !entry.second.stored || entry.second.consistent;
  });
}

/// The on-chip levels to tile for, largest first: every level between
/// registers and main memory, at most `maxLevels` of the innermost ones.
static SmallVector<const MemoryLevelDesc *>
getTilingLevels(const ChipDesc &chip, unsigned maxLevels) {
  SmallVector<const MemoryLevelDesc *> levels;
  for (const MemoryLevelDesc &level : chip.memoryLevels)
    if (level.kind == MemoryKind::Scratchpad || level.kind == MemoryKind::Cache)
      if (levels.size() < maxLevels)
        levels.push_back(&level);
  llvm::sort(levels, [](const MemoryLevelDesc *a, const MemoryLevelDesc *b) {
    return a->capacityBytes > b->capacityBytes;
  });
  return levels;
}

namespace {
class PBMultiLevelTilingPass
    : public pb::impl::PBMultiLevelTilingPassBase<PBMultiLevelTilingPass> {
public:
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    const ChipDesc *chip = getTargetChip(func);
    if (!chip) {
      func.emitError("pb-tile needs a target: run with --target");
      return signalPassFailure();
    }
    SmallVector<affine::AffineForOp> roots;
    for (auto loop : func.getBody().getOps<affine::AffineForOp>())
      roots.push_back(loop);
    for (affine::AffineForOp root : roots)
      if (failed(tileBand(*chip, root)))
        return signalPassFailure();
  }

private:
  LogicalResult tileBand(const ChipDesc &chip, affine::AffineForOp root) {
    SmallVector<affine::AffineForOp> band;
    affine::getPerfectlyNestedLoops(band, root);
    // Loops that carry values (reductions promoted to iter_args) cannot be
    // tiled by upstream's tiling; the band ends above them.
    for (size_t k = 0; k < band.size(); ++k)
      if (band[k].getNumResults()) {
        band.resize(k);
        break;
      }
    if (band.empty())
      return success();
    SmallVector<int64_t> tripCounts;
    for (affine::AffineForOp loop : band) {
      std::optional<uint64_t> trip = affine::getConstantTripCount(loop);
      if (!trip || *trip == 0)
        return success(); // Only static bands are tiled.
      tripCounts.push_back(*trip);
    }
    BandFootprint footprint(band);
    int64_t smallestTrip = *llvm::min_element(tripCounts);
    // A band that streams its large memrefs (an elementwise batch norm +
    // activation, a padding copy, a fill) reuses nothing that tiling could
    // keep in a cache; tiles would only cut its innermost, vectorized loop
    // short (240 channels into tiles of 4). On chips with a scratchpad the
    // tiles are also the unit of scratchpad promotion and mapping, and
    // stay.
    SmallVector<const MemoryLevelDesc *> levels =
        getTilingLevels(chip, maxLevels);
    bool hasScratchpad = llvm::any_of(chip.memoryLevels, [](auto &level) {
      return level.kind == MemoryKind::Scratchpad;
    });
    if (!hasScratchpad && !levels.empty() &&
        footprint.reusedBytes() <=
            static_cast<int64_t>(occupancy * levels.back()->capacityBytes)) {
      explain(root, llvm::formatv("tile: {0}-d band not tiled: it streams "
                                  "its memrefs, the rest ({1} B) fits '{2}'",
                                  band.size(), footprint.reusedBytes(),
                                  levels.back()->name));
      return success();
    }

    // Tile sizes per level, largest level first, each dividing the one
    // above so that the inner tiling sees constant trip counts. The
    // dependence analysis (tiling legality and the band's parallel loops,
    // Presburger arithmetic that takes most of this pass's time) runs
    // once, before the first tiling, for the bands that a level tiles.
    SmallVector<bool> parallel;
    int64_t parentTile = smallestTrip;
    for (const MemoryLevelDesc *level : levels) {
      int64_t budget = static_cast<int64_t>(occupancy * level->capacityBytes);
      int64_t tile = 1;
      while (tile * 2 <= parentTile && footprint.bytes(tile * 2) <= budget &&
             llvm::all_of(tripCounts,
                          [&](int64_t trip) { return trip % (tile * 2) == 0; }))
        tile *= 2;
      if (tile == 1 || tile >= parentTile) {
        // `band`, not `root`: tiling for an outer level may have replaced it.
        explain(band.front(),
                llvm::formatv("tile: {0}-d band not tiled for '{1}': "
                              "best tile {2} (footprint {3} B of {4} B "
                              "budget) is 1 or spans the whole band",
                              band.size(), level->name, tile,
                              footprint.bytes(tile), budget));
        continue;
      }
      if (parallel.empty() && carriesNoDependence(band))
        parallel.assign(band.size(), true);
      if (parallel.empty()) {
        if (!affine::isTilingValid(band)) {
          explain(root,
                  "tile: band not tiled, tiling would break a dependence");
          return success();
        }
        // Parallel loops of the band, decided before tiling: upstream's
        // dependence analysis cannot see through the tile-space loops it
        // makes.
        for (affine::AffineForOp loop : band)
          parallel.push_back(affine::isLoopParallel(loop));
      }
      SmallVector<unsigned> sizes(band.size(), static_cast<unsigned>(tile));
      SmallVector<affine::AffineForOp> tiled;
      if (failed(affine::tilePerfectlyNested(band, sizes, &tiled)))
        return root.emitError("tiling failed for tile size ") << tile;
      explain(tiled.front(),
              llvm::formatv("tile: {0}-d band tiled {1} for '{2}' (footprint "
                            "{3} B of {4} B = {5} x {6} B capacity)",
                            band.size(), tile, level->name,
                            footprint.bytes(tile), budget, occupancy,
                            level->capacityBytes));
      // A loop with no dependence carried at its depth yields a tile loop
      // and an intra-tile loop that carry none either.
      for (size_t i = 0; i < band.size(); ++i)
        if (parallel[i])
          for (affine::AffineForOp loop : {tiled[i], tiled[i + band.size()]})
            loop->setAttr(PBDialect::kParallelAttrName,
                          UnitAttr::get(&getContext()));
      // The intra-tile loops form the band of the next, inner level.
      band.assign(tiled.begin() + band.size(), tiled.end());
      for (int64_t &trip : tripCounts)
        trip = tile;
      parentTile = tile;
    }
    return success();
  }
};
} // namespace
