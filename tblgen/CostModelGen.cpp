//===- CostModelGen.cpp - -gen-cost-model
//----------------------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Generates one CostModelDesc per chip: peak throughput per element type and
// unit, bandwidth per memory level, launch overhead and clock.
//
//===----------------------------------------------------------------------===//

#include "TargetRecords.h"

#include "llvm/TableGen/Record.h"
#include "llvm/TableGen/TableGenBackend.h"

using namespace llvm;
using namespace pb::tblgen;

static void emitCostModel(const RecordKeeper &records, raw_ostream &os) {
  emitSourceFileHeader("PolyBlocks cost-model tables", os, records);
  TargetRecords targets(records);
  for (const Record *chip : targets.getChips()) {
    std::string id = TargetRecords::identifier(chip);
    os << "// " << chip->getValueAsString("Name") << "\n";
    os << "static const PeakComputeDesc kPeaks_" << id << "[] = {\n";
    for (const Record *peak : chip->getValueAsListOfDefs("PeakCompute"))
      os << "  {" << enumCase(peak->getValueAsDef("Type")) << ", "
         << cppString(peak->getValueAsString("Unit")) << ", "
         << peak->getValueAsInt("GFLOPs") << "},\n";
    os << "};\n";
    os << "static const LevelBandwidthDesc kBandwidths_" << id << "[] = {\n";
    for (const Record *level : chip->getValueAsListOfDefs("MemoryLevels"))
      os << "  {" << enumCase(level->getValueAsDef("Kind")) << ", "
         << cppString(level->getValueAsString("Name")) << ", "
         << level->getValueAsInt("BandwidthGBps") << "},\n";
    os << "};\n";
    os << "static const CostModelDesc kCostModel_" << id << " = {kPeaks_" << id
       << ", kBandwidths_" << id << ", "
       << chip->getValueAsInt("LaunchOverheadNs") << ", "
       << chip->getValueAsInt("ClockMHz") << "};\n\n";
  }
}

static TableGen::Emitter::Opt
    genCostModel("gen-cost-model", emitCostModel,
                 "Generate the cost-model tables of every chip");
