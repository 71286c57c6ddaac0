//===- MatrixUnitsGen.cpp - -gen-matrix-units
//------------------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Generates the matrix-unit table: one MatrixUnitDesc per named PBMatrixUnit
// record, with the lowering kind that S4 dispatches on.
//
//===----------------------------------------------------------------------===//

#include "TargetRecords.h"

#include "llvm/TableGen/Record.h"
#include "llvm/TableGen/TableGenBackend.h"

using namespace llvm;
using namespace pb::tblgen;

static void emitMatrixUnits(const RecordKeeper &records, raw_ostream &os) {
  emitSourceFileHeader("PolyBlocks matrix-unit table", os, records);
  TargetRecords targets(records);

  for (const Record *unit : targets.getMatrixUnits()) {
    std::vector<StringRef> required;
    for (const Record *feature : unit->getValueAsListOfDefs("Requires"))
      required.push_back(feature->getValueAsString("Name"));
    emitStringArray(os, "kRequires_" + unit->getName().str(), required);
  }

  os << "\n/// Indices into kMatrixUnits.\nenum MatrixUnitIndex : unsigned {\n";
  for (const Record *unit : targets.getMatrixUnits())
    os << "  MU_" << unit->getName() << ",\n";
  os << "};\n\n";

  os << "static const MatrixUnitDesc kMatrixUnits[] = {\n";
  for (const Record *unit : targets.getMatrixUnits()) {
    const Record *scope = unit->getValueAsDef("Scope");
    const Record *lowering = unit->getValueAsDef("Lowering");
    size_t numRequired = unit->getValueAsListOfDefs("Requires").size();
    os << "  {" << cppString(unit->getName()) << ", "
       << cppString(unit->getValueAsString("Intrinsic")) << ", "
       << unit->getValueAsInt("M") << ", " << unit->getValueAsInt("N") << ", "
       << unit->getValueAsInt("K") << ",\n   "
       << enumCase(unit->getValueAsDef("AType")) << ", "
       << enumCase(unit->getValueAsDef("BType")) << ", "
       << enumCase(unit->getValueAsDef("CType")) << ",\n   " << enumCase(scope)
       << ", " << scope->getValueAsInt("Subgroups") << ", "
       << enumCase(unit->getValueAsDef("Layout")) << ",\n   "
       << enumCase(lowering) << ", "
       << cppString(lowering->getValueAsString("DialectOp")) << ",\n   "
       << "llvm::ArrayRef<llvm::StringRef>(kRequires_" << unit->getName()
       << ", size_t(" << numRequired << ")), "
       << unit->getValueAsInt("LatencyCycles") << ", "
       << unit->getValueAsInt("OperandRegisters") << "},\n";
  }
  os << "};\n";
}

static TableGen::Emitter::Opt genMatrixUnits("gen-matrix-units",
                                             emitMatrixUnits,
                                             "Generate the matrix-unit table");
