//===- TargetRegistry.cpp - Looking up and printing targets
//----------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "pb/Target/TargetRegistry.h"
#include "pb/Target/HostClock.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/TargetParser/Host.h"

using namespace llvm;

namespace mlir::pb {

//===----------------------------------------------------------------------===//
// Descriptor queries
//===----------------------------------------------------------------------===//

int64_t CostModelDesc::getPeakGFLOPs(ElementType type, StringRef unit) const {
  for (const PeakComputeDesc &peak : peaks)
    if (peak.type == type && peak.unit == unit)
      return peak.gflops;
  return 0;
}

bool ChipDesc::hasFeature(StringRef feature) const {
  return llvm::is_contained(features, feature);
}

const ComputeLevelDesc *ChipDesc::getComputeLevel(ComputeLevelKind kind) const {
  for (const ComputeLevelDesc &level : computeLevels)
    if (level.kind == kind)
      return &level;
  return nullptr;
}

const MemoryLevelDesc *ChipDesc::getMemoryLevel(MemoryKind kind) const {
  for (const MemoryLevelDesc &level : memoryLevels)
    if (level.kind == kind)
      return &level;
  return nullptr;
}

llvm::SmallVector<const MemoryLevelDesc *> ChipDesc::getCachesBySize() const {
  llvm::SmallVector<const MemoryLevelDesc *> caches;
  for (const MemoryLevelDesc &level : memoryLevels)
    if (level.kind == MemoryKind::Cache)
      caches.push_back(&level);
  llvm::stable_sort(caches,
                    [](const MemoryLevelDesc *x, const MemoryLevelDesc *y) {
                      return x->capacityBytes < y->capacityBytes;
                    });
  return caches;
}

const ComputeLevelDesc *ChipDesc::getTaskLevel() const {
  if (computeLevels.empty())
    return nullptr;
  return &computeLevels[computeLevels.size() > 1 ? 1 : 0];
}

//===----------------------------------------------------------------------===//
// Lookup and resolution
//===----------------------------------------------------------------------===//

const TargetRegistryEntry *lookupTargetEntry(StringRef name) {
  for (const TargetRegistryEntry &entry : getTargetRegistry())
    if (entry.name == name)
      return &entry;
  return nullptr;
}

std::string getValidTargetNames() {
  SmallVector<StringRef> names;
  for (const TargetRegistryEntry &entry : getTargetRegistry())
    names.push_back(entry.name);
  return join(names, ", ");
}

const ChipDesc *resolveHostCandidates(const TargetRegistryEntry &entry,
                                      const StringMap<bool> &hostFeatures) {
  for (const ChipDesc *candidate : entry.hostCandidates) {
    bool hasAll = llvm::all_of(candidate->hostCPUFeatures, [&](StringRef f) {
      return hostFeatures.lookup(f);
    });
    if (hasAll)
      return candidate;
  }
  return nullptr;
}

Expected<const ChipDesc *> resolveTarget(StringRef name) {
  const TargetRegistryEntry *entry = lookupTargetEntry(name);
  if (!entry)
    return createStringError(inconvertibleErrorCode(),
                             "unknown target '" + name +
                                 "'; valid targets: " + getValidTargetNames());
  if (entry->chip)
    return entry->chip;
  if (const ChipDesc *chip =
          resolveHostCandidates(*entry, sys::getHostCPUFeatures())) {
    // The candidate's figures at the running core's clock (HostClock.h).
    Expected<HostClock> clock = getHostClock();
    if (!clock)
      return createStringError(inconvertibleErrorCode(),
                               "target '" + name +
                                   "': " + toString(clock.takeError()));
    return getChipAtClock(*chip, clock->mhz);
  }
  SmallVector<StringRef> candidates;
  for (const ChipDesc *candidate : entry->hostCandidates)
    candidates.push_back(candidate->name);
  return createStringError(inconvertibleErrorCode(),
                           "target '" + name +
                               "': the running CPU has the features of none "
                               "of " +
                               join(candidates, ", "));
}

//===----------------------------------------------------------------------===//
// Printing
//===----------------------------------------------------------------------===//

static void printChip(raw_ostream &os, const ChipDesc &chip) {
  os << formatv("target {0} ({1})\n  {2}\n", chip.name,
                stringifyVendor(chip.vendor), chip.description);
  os << formatv("  llvm: triple={0} cpu={1} features={2}\n", chip.llvmTriple,
                chip.llvmCPU,
                chip.llvmFeatures.empty() ? "(none)" : chip.llvmFeatures);
  os << formatv("  clock: {0} MHz, vector width: {1} bits, launch overhead: "
                "{2} ns\n",
                chip.clockMHz, chip.vectorWidthBits,
                chip.costModel->launchOverheadNs);
  os << "  features: " << join(chip.features, ", ") << "\n";
  if (!chip.hostCPUFeatures.empty())
    os << "  host CPU features required: " << join(chip.hostCPUFeatures, ", ")
       << "\n";

  os << "  compute levels (outermost first):\n";
  for (const ComputeLevelDesc &level : chip.computeLevels)
    os << formatv("    {0,-10} kind={1} fixed-per-parent={2} "
                  "max-per-parent={3} units-on-chip={4}\n",
                  level.name, stringifyComputeLevelKind(level.kind),
                  level.fixedCountPerParent, level.maxCountPerParent,
                  level.physicalUnits);

  os << "  memory levels (innermost first):\n";
  for (const MemoryLevelDesc &level : chip.memoryLevels)
    os << formatv("    {0,-10} kind={1} scope={2} capacity={3} B "
                  "bandwidth={4} GB/s latency={5} cycles banks={6}x{7} B "
                  "line={8} B ways={9} address-space={10}\n",
                  level.name, stringifyMemoryKind(level.kind),
                  stringifyComputeLevelKind(level.scope), level.capacityBytes,
                  level.bandwidthGBps, level.latencyCycles, level.banks,
                  level.bankWidthBytes, level.lineBytes, level.ways,
                  level.addressSpace);

  os << "  matrix units:";
  if (chip.matrixUnits.empty())
    os << " (none)";
  os << "\n";
  for (const MatrixUnitDesc *unit : chip.matrixUnits) {
    os << formatv(
        "    {0}: {1}x{2}x{3} {4} x {5} -> {6}, scope={7} "
        "({8} subgroups), layout={9}, lowering={10} ({11}), "
        "intrinsic={12}, requires=[{13}], latency={14} cycles",
        unit->name, unit->m, unit->n, unit->k,
        stringifyElementType(unit->aType), stringifyElementType(unit->bType),
        stringifyElementType(unit->cType), stringifyMatrixScope(unit->scope),
        unit->scopeSubgroups, stringifyOperandLayout(unit->layout),
        stringifyMatrixLowering(unit->lowering), unit->loweringOp,
        unit->intrinsic, join(unit->requiredFeatures, ", "),
        unit->latencyCycles);
    if (unit->operandRegisters)
      os << ", operand registers=" << unit->operandRegisters;
    os << "\n";
  }

  if (chip.tileIR)
    os << formatv("  tile-ir path: gpu-name={0} threads-per-tile-block={1} "
                  "accumulator-registers-per-thread={2} "
                  "operand-row-bytes={3} "
                  "convolution-operand-row-bytes={4}\n",
                  chip.tileIR->gpuName, chip.tileIR->threadsPerTileBlock,
                  chip.tileIR->accumulatorRegistersPerThread,
                  chip.tileIR->operandRowBytes,
                  chip.tileIR->convolutionOperandRowBytes);
  os << "  peak compute:\n";
  for (const PeakComputeDesc &peak : chip.costModel->peaks)
    os << formatv("    {0,-10} {1,-6} {2} GFLOP/s\n",
                  stringifyElementType(peak.type), peak.unit, peak.gflops);
  os << "  sources:\n";
  for (StringRef source : chip.sources)
    os << "    - " << source << "\n";
}

void printTarget(raw_ostream &os, const TargetRegistryEntry &entry) {
  if (entry.chip) {
    printChip(os, *entry.chip);
    return;
  }
  os << formatv("target {0} ({1})\n  {2}\n  candidates:", entry.name,
                stringifyVendor(entry.vendor), entry.description);
  for (const ChipDesc *candidate : entry.hostCandidates)
    os << " " << candidate->name;
  os << "\n";
  Expected<const ChipDesc *> chip = resolveTarget(entry.name);
  if (!chip) {
    os << "  resolves on this machine to: nothing ("
       << toString(chip.takeError()) << ")\n";
    return;
  }
  os << "  resolves on this machine to: " << (*chip)->name << "\n";
  // How the figures below differ from the chip's .td: peaks and the
  // core's bandwidths follow the running core's clock.
  Expected<HostClock> clock = getHostClock();
  const ChipDesc *stated = lookupTargetEntry((*chip)->name)
                               ? lookupTargetEntry((*chip)->name)->chip
                               : nullptr;
  if (clock && clock->mhz > 0 && stated && stated->clockMHz > 0)
    os << formatv("  clock on this machine: {0} MHz ({1}); peaks and the "
                  "bandwidths of core-scoped memory levels are {2}'s .td "
                  "figures x {0} / {3} MHz (its units' rates per cycle, "
                  "times this clock); per core: x the cores a kernel "
                  "uses\n",
                  clock->mhz, clock->source, stated->name, stated->clockMHz);
  else if (clock)
    os << "  clock on this machine: unknown (" << clock->source
       << "); the figures are the .td's\n";
  printChip(os, **chip);
}

void printTargetList(raw_ostream &os) {
  os << "Registered targets:\n";
  for (const TargetRegistryEntry &entry : getTargetRegistry())
    os << formatv("  {0,-16} {1,-7} {2}\n", entry.name,
                  stringifyVendor(entry.vendor), entry.description);
}

} // namespace mlir::pb
