//===- RegistryGen.cpp - -gen-target-registry
//------------------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Generates kTargetRegistry: every name `--target=` accepts, sorted, each
// pointing at its chip in kChips or, for host-resolved targets, at the
// candidate chips. Expects the output of -gen-target-descriptors before it.
//
//===----------------------------------------------------------------------===//

#include "TargetRecords.h"

#include "llvm/TableGen/Record.h"
#include "llvm/TableGen/TableGenBackend.h"

using namespace llvm;
using namespace pb::tblgen;

static void emitRegistry(const RecordKeeper &records, raw_ostream &os) {
  emitSourceFileHeader("PolyBlocks target registry", os, records);
  TargetRecords targets(records);

  for (const Record *host : targets.getHostChips()) {
    os << "static const ChipDesc *const kHostCandidates_"
       << TargetRecords::identifier(host) << "[] = {";
    for (const Record *candidate : host->getValueAsListOfDefs("HostCandidates"))
      os << "&kChips[" << targets.getChipIndex(candidate) << "], ";
    os << "};\n";
  }

  os << "static const TargetRegistryEntry kTargetRegistry[] = {\n";
  for (const Record *target : targets.getAllTargets()) {
    os << "  {" << cppString(target->getValueAsString("Name")) << ", "
       << enumCase(target->getValueAsDef("Vendor")) << ",\n   "
       << cppString(target->getValueAsString("Description")) << ",\n   ";
    if (target->isSubClassOf("PBChip"))
      os << "&kChips[" << targets.getChipIndex(target) << "], {}},\n";
    else
      os << "nullptr, kHostCandidates_" << TargetRecords::identifier(target)
         << "},\n";
  }
  os << "};\n";
}

static TableGen::Emitter::Opt
    genRegistry("gen-target-registry", emitRegistry,
                "Generate the registry of target names");
