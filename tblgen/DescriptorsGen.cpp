//===- DescriptorsGen.cpp - -gen-target-descriptors
//------------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Generates kChips, one ChipDesc per PBChip record: identity, closed feature
// set, compute and memory hierarchies, matrix units and cost model. Expects
// the outputs of -gen-matrix-units and -gen-cost-model to precede it.
//
//===----------------------------------------------------------------------===//

#include "TargetRecords.h"

#include "llvm/TableGen/Record.h"
#include "llvm/TableGen/TableGenBackend.h"

using namespace llvm;
using namespace pb::tblgen;

/// `llvm::ArrayRef<T>(array, n)`, so that empty lists need no special case.
static std::string arrayRef(StringRef type, const Twine &array, size_t size) {
  return ("llvm::ArrayRef<" + type + ">(" + array + ", size_t(" + Twine(size) +
          "))")
      .str();
}

static void emitDescriptors(const RecordKeeper &records, raw_ostream &os) {
  emitSourceFileHeader("PolyBlocks chip descriptor tables", os, records);
  TargetRecords targets(records);

  for (const Record *chip : targets.getChips()) {
    std::string id = TargetRecords::identifier(chip);
    os << "// " << chip->getValueAsString("Name") << "\n";
    emitStringArray(os, "kSources_" + id,
                    chip->getValueAsListOfStrings("Sources"));
    emitStringArray(os, "kFeatures_" + id, targets.getClosedFeatures(chip));
    emitStringArray(os, "kHostCPUFeatures_" + id,
                    chip->getValueAsListOfStrings("HostCPUFeatures"));

    os << "static const ComputeLevelDesc kComputeLevels_" << id << "[] = {\n";
    for (const Record *level : chip->getValueAsListOfDefs("ComputeLevels"))
      os << "  {" << cppString(level->getValueAsString("Name")) << ", "
         << enumCase(level->getValueAsDef("Kind")) << ", "
         << level->getValueAsInt("FixedCountPerParent") << ", "
         << level->getValueAsInt("MaxCountPerParent") << ", "
         << level->getValueAsInt("PhysicalUnits") << ", "
         << level->getValueAsInt("MaxResidentPerUnit") << "},\n";
    os << "};\n";

    os << "static const MemoryLevelDesc kMemoryLevels_" << id << "[] = {\n";
    for (const Record *level : chip->getValueAsListOfDefs("MemoryLevels")) {
      os << "  {" << cppString(level->getValueAsString("Name")) << ", "
         << enumCase(level->getValueAsDef("Kind")) << ", "
         << enumCase(level->getValueAsDef("Scope"));
      for (StringRef field :
           {"CapacityBytes", "BandwidthGBps", "LatencyCycles", "Banks",
            "BankWidthBytes", "LineBytes", "Ways", "AddressSpace",
            "CapacityBytesPerUnit", "AllocationGranuleBytes",
            "ReservedBytesPerInstance"})
        os << ", " << level->getValueAsInt(field);
      os << "},\n";
    }
    os << "};\n";

    std::vector<const Record *> units =
        chip->getValueAsListOfDefs("MatrixUnits");
    os << "static const MatrixUnitDesc *const kMatrixUnits_" << id << "[] = {";
    for (const Record *unit : units)
      os << "&kMatrixUnits[MU_" << unit->getName() << "], ";
    os << "nullptr};\n";
    for (const Record *path : chip->getValueAsListOfDefs("TileIRPath"))
      os << "static const TileIRPathDesc kTileIR_" << id << " = {"
         << cppString(path->getValueAsString("GPUName")) << ", "
         << path->getValueAsInt("ThreadsPerTileBlock") << ", "
         << path->getValueAsInt("AccumulatorRegistersPerThread") << ", "
         << path->getValueAsInt("OperandRowBytes") << ", "
         << path->getValueAsInt("ConvolutionOperandRowBytes") << "};\n";
    os << "\n";
  }

  os << "static const ChipDesc kChips[] = {\n";
  for (const Record *chip : targets.getChips()) {
    std::string id = TargetRecords::identifier(chip);
    os << "  {" << cppString(chip->getValueAsString("Name")) << ", "
       << enumCase(chip->getValueAsDef("Vendor")) << ",\n   "
       << cppString(chip->getValueAsString("Description")) << ",\n   "
       << arrayRef("llvm::StringRef", "kSources_" + id,
                   chip->getValueAsListOfStrings("Sources").size())
       << ",\n   " << cppString(chip->getValueAsString("LLVMTriple")) << ", "
       << cppString(chip->getValueAsString("LLVMCPU")) << ", "
       << cppString(chip->getValueAsString("LLVMFeatures")) << ",\n   "
       << arrayRef("llvm::StringRef", "kFeatures_" + id,
                   targets.getClosedFeatures(chip).size())
       << ",\n   " << chip->getValueAsInt("ClockMHz") << ", "
       << chip->getValueAsInt("VectorWidthBits") << ",\n   "
       << "kComputeLevels_" << id << ", kMemoryLevels_" << id << ",\n   "
       << arrayRef("const MatrixUnitDesc *", "kMatrixUnits_" + id,
                   chip->getValueAsListOfDefs("MatrixUnits").size())
       << ",\n   &kCostModel_" << id << ",\n   "
       << (chip->getValueAsListOfDefs("TileIRPath").empty()
               ? std::string("nullptr")
               : "&kTileIR_" + id)
       << ",\n   "
       << arrayRef("llvm::StringRef", "kHostCPUFeatures_" + id,
                   chip->getValueAsListOfStrings("HostCPUFeatures").size())
       << "},\n";
  }
  os << "};\n";
}

static TableGen::Emitter::Opt
    genDescriptors("gen-target-descriptors", emitDescriptors,
                   "Generate the typed descriptor table of every chip");
