//===- TargetRecords.cpp - Typed access to chip records
//--------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "TargetRecords.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/TableGen/Error.h"

#include <algorithm>

using namespace llvm;

namespace pb::tblgen {

ArrayRef<SchemaEnum> getSchemaEnums() {
  static const SchemaEnum enums[] = {
      {"PBElementType", "ElementType"},
      {"PBComputeLevelKind", "ComputeLevelKind"},
      {"PBMemoryKind", "MemoryKind"},
      {"PBMatrixScope", "MatrixScope"},
      {"PBOperandLayout", "OperandLayout"},
      {"PBMatrixLowering", "MatrixLowering"},
      {"PBVendor", "Vendor"},
  };
  return enums;
}

std::string enumCase(const Record *def) {
  for (const SchemaEnum &e : getSchemaEnums())
    if (def->isSubClassOf(e.tdClass))
      return (e.cppName + "::" + def->getName()).str();
  PrintFatalError(def->getLoc(), "record '" + def->getName() +
                                     "' is not an enumeration of "
                                     "the target schema");
}

std::string cppString(StringRef s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

void emitStringArray(raw_ostream &os, const Twine &name,
                     ArrayRef<StringRef> values) {
  os << "static const llvm::StringRef " << name << "[] = {";
  for (StringRef value : values)
    os << cppString(value) << ", ";
  os << "\"\"};\n";
}

std::string TargetRecords::identifier(const Record *def) {
  return def->getName().str();
}

/// The name of the file a record was defined in.
static StringRef getDefiningFile(const Record *def) {
  ArrayRef<SMLoc> locs = def->getLoc();
  if (locs.empty())
    return "";
  unsigned id = SrcMgr.FindBufferContainingLoc(locs.front());
  if (!id)
    return "";
  return SrcMgr.getMemoryBuffer(id)->getBufferIdentifier();
}

/// Reports every field of `def` left as `?`.
static void checkNoUnsetFields(const Record *def, const Twine &what) {
  for (const RecordVal &value : def->getValues()) {
    if (value.isTemplateArg() || value.getValue()->isComplete())
      continue;
    PrintFatalError(def->getLoc(),
                    what + ": field '" + value.getName() + "' is not set");
  }
}

static void checkPositive(const Record *def, ArrayRef<StringRef> fields,
                          const Twine &what) {
  for (StringRef field : fields)
    if (def->getValueAsInt(field) <= 0)
      PrintFatalError(def->getLoc(), what + ": field '" + field +
                                         "' must be positive, got " +
                                         Twine(def->getValueAsInt(field)));
}

static std::string targetName(const Record *def) {
  return def->getValueAsString("Name").str();
}

TargetRecords::TargetRecords(const RecordKeeper &records) {
  // Enumerations belong to the schema: C++ code (S4 dispatch, the core's
  // descriptor types) is generated from Target.td alone.
  for (const SchemaEnum &e : getSchemaEnums())
    for (const Record *def :
         records.getAllDerivedDefinitionsIfDefined(e.tdClass))
      if (!getDefiningFile(def).ends_with("Target.td"))
        PrintFatalError(def->getLoc(),
                        "'" + def->getName() + "' of class " + e.tdClass +
                            " must be defined in Target.td: enumerations "
                            "are part of the schema, not of a chip");

  auto byName = [](const Record *a, const Record *b) {
    return a->getValueAsString("Name") < b->getValueAsString("Name");
  };
  for (const Record *def : records.getAllDerivedDefinitionsIfDefined("PBChip"))
    chips.push_back(def);
  for (const Record *def :
       records.getAllDerivedDefinitionsIfDefined("PBHostChip"))
    hostChips.push_back(def);
  llvm::sort(chips, byName);
  llvm::sort(hostChips, byName);
  allTargets = chips;
  llvm::append_range(allTargets, hostChips);
  llvm::sort(allTargets, byName);

  StringMap<const Record *> seen;
  for (const Record *def : allTargets) {
    auto [it, inserted] = seen.try_emplace(def->getValueAsString("Name"), def);
    if (inserted)
      continue;
    PrintError(def->getLoc(),
               "duplicate target name '" + targetName(def) + "'");
    PrintFatalNote(it->second->getLoc(), "first defined here");
  }

  for (const Record *def :
       records.getAllDerivedDefinitionsIfDefined("PBMatrixUnit")) {
    if (def->isAnonymous())
      PrintFatalError(def->getLoc(), "matrix units must be named records "
                                     "(<Unit>_<C>_<M>x<N>x<K>_<A>[_<B>])");
    matrixUnits.push_back(def);
  }
  llvm::sort(matrixUnits, [](const Record *a, const Record *b) {
    return a->getName() < b->getName();
  });
  for (const Record *unit : matrixUnits)
    validateMatrixUnit(unit);

  for (const Record *chip : chips)
    validateChip(chip);
  for (const Record *host : hostChips) {
    checkNoUnsetFields(host, "target '" + targetName(host) + "'");
    std::vector<const Record *> candidates =
        host->getValueAsListOfDefs("HostCandidates");
    if (candidates.empty())
      PrintFatalError(host->getLoc(), "target '" + targetName(host) +
                                          "' lists no HostCandidates");
    for (const Record *candidate : candidates)
      if (!candidate->isSubClassOf("PBChip"))
        PrintFatalError(host->getLoc(), "host candidate '" +
                                            candidate->getName() +
                                            "' is not a PBChip");
  }
}

void TargetRecords::validateMatrixUnit(const Record *unit) const {
  std::string what = ("matrix unit '" + unit->getName() + "'").str();
  checkNoUnsetFields(unit, what);
  checkPositive(unit, {"M", "N", "K", "LatencyCycles"}, what);
  // The name states the shape; a mismatch is a typo in one of the two.
  std::string shape = ("_" + Twine(unit->getValueAsInt("M")) + "x" +
                       Twine(unit->getValueAsInt("N")) + "x" +
                       Twine(unit->getValueAsInt("K")) + "_")
                          .str();
  if (!unit->getName().contains(shape))
    PrintFatalError(unit->getLoc(), what +
                                        ": the name does not contain its "
                                        "shape '" +
                                        shape + "'");
}

void TargetRecords::validateChip(const Record *chip) const {
  std::string what = "target '" + targetName(chip) + "'";
  checkNoUnsetFields(chip, what);
  checkPositive(chip, {"ClockMHz", "VectorWidthBits", "LaunchOverheadNs"},
                what);
  for (StringRef list : {"ComputeLevels", "MemoryLevels", "PeakCompute"})
    if (chip->getValueAsListOfDefs(list).empty())
      PrintFatalError(chip->getLoc(), what + ": '" + list + "' is empty");
  std::vector<const Record *> tileIR = chip->getValueAsListOfDefs("TileIRPath");
  if (tileIR.size() > 1)
    PrintFatalError(chip->getLoc(), what + ": more than one 'TileIRPath'");
  for (const Record *path : tileIR) {
    checkNoUnsetFields(path, what + " Tile IR path");
    checkPositive(path,
                  {"ThreadsPerTileBlock", "AccumulatorRegistersPerThread",
                   "OperandRowBytes", "ConvolutionOperandRowBytes"},
                  what + " Tile IR path");
  }

  SmallPtrSet<const Record *, 8> levelKinds;
  for (const Record *level : chip->getValueAsListOfDefs("ComputeLevels")) {
    checkNoUnsetFields(level, what + " compute level");
    if (!levelKinds.insert(level->getValueAsDef("Kind")).second)
      PrintFatalError(level->getLoc(),
                      what + ": two compute levels of kind '" +
                          level->getValueAsDef("Kind")->getName() + "'");
  }
  for (const Record *level : chip->getValueAsListOfDefs("MemoryLevels")) {
    std::string levelWhat =
        what + " memory level '" + level->getValueAsString("Name").str() + "'";
    checkNoUnsetFields(level, levelWhat);
    checkPositive(level, {"CapacityBytes", "BandwidthGBps", "LatencyCycles"},
                  levelWhat);
    const Record *scope = level->getValueAsDef("Scope");
    if (!levelKinds.contains(scope))
      PrintFatalError(level->getLoc(),
                      levelWhat + ": scope '" + scope->getName() +
                          "' is not one of the chip's compute levels");
  }
  for (const Record *peak : chip->getValueAsListOfDefs("PeakCompute")) {
    checkNoUnsetFields(peak, what + " peak");
    StringRef unit = peak->getValueAsString("Unit");
    if (unit != "matrix" && unit != "vector")
      PrintFatalError(peak->getLoc(), what +
                                          ": peak unit must be \"matrix\" "
                                          "or \"vector\", got \"" +
                                          unit + "\"");
    checkPositive(peak, {"GFLOPs"}, what + " peak");
  }

  std::vector<StringRef> features = getClosedFeatures(chip);
  for (const Record *unit : chip->getValueAsListOfDefs("MatrixUnits"))
    for (const Record *req : unit->getValueAsListOfDefs("Requires"))
      if (!llvm::is_contained(features, req->getValueAsString("Name")))
        PrintFatalError(chip->getLoc(), what + ": matrix unit '" +
                                            unit->getName() +
                                            "' requires feature '" +
                                            req->getValueAsString("Name") +
                                            "', which the chip does not have");
}

unsigned TargetRecords::getChipIndex(const Record *chip) const {
  auto it = llvm::find(chips, chip);
  if (it == chips.end())
    PrintFatalError(chip->getLoc(), "'" + chip->getName() + "' is not a chip");
  return it - chips.begin();
}

unsigned TargetRecords::getMatrixUnitIndex(const Record *unit) const {
  auto it = llvm::find(matrixUnits, unit);
  if (it == matrixUnits.end())
    PrintFatalError(unit->getLoc(),
                    "'" + unit->getName() + "' is not a named matrix unit");
  return it - matrixUnits.begin();
}

std::vector<StringRef>
TargetRecords::getClosedFeatures(const Record *chip) const {
  SetVector<const Record *> closed;
  std::vector<const Record *> worklist = chip->getValueAsListOfDefs("Features");
  while (!worklist.empty()) {
    const Record *feature = worklist.back();
    worklist.pop_back();
    if (closed.insert(feature))
      llvm::append_range(worklist, feature->getValueAsListOfDefs("Implies"));
  }
  std::vector<StringRef> names;
  for (const Record *feature : closed)
    names.push_back(feature->getValueAsString("Name"));
  llvm::sort(names);
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

} // namespace pb::tblgen
