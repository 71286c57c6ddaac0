//===- EnumsGen.cpp - -gen-target-enums
//------------------------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Generates the C++ enums of the target schema (one per enumeration class of
// Target.td) with their string conversions. Read by core/ through
// pb/Target/TargetDesc.h.
//
//===----------------------------------------------------------------------===//

#include "TargetRecords.h"

#include "llvm/TableGen/Record.h"
#include "llvm/TableGen/TableGenBackend.h"

using namespace llvm;
using namespace pb::tblgen;

static void emitTargetEnums(const RecordKeeper &records, raw_ostream &os) {
  emitSourceFileHeader("PolyBlocks target schema enumerations", os, records);
  // Validates, among the rest, that enumerations live in Target.td.
  TargetRecords validated(records);
  (void)validated;
  for (const SchemaEnum &e : getSchemaEnums()) {
    ArrayRef<const Record *> defs =
        records.getAllDerivedDefinitionsIfDefined(e.tdClass);
    os << "/// Generated from the " << e.tdClass << " records of Target.td.\n";
    os << "enum class " << e.cppName << " : uint8_t {\n";
    for (const Record *def : defs) {
      if (def->getValue("Description"))
        os << "  /// " << def->getValueAsString("Description") << "\n";
      os << "  " << def->getName() << ",\n";
    }
    os << "};\n\n";
    os << "inline llvm::StringRef stringify" << e.cppName << "(" << e.cppName
       << " value) {\n  switch (value) {\n";
    for (const Record *def : defs) {
      StringRef text = def->getName();
      if (def->getValue("MLIRName"))
        text = def->getValueAsString("MLIRName");
      else if (def->getValue("Name"))
        text = def->getValueAsString("Name");
      os << "  case " << e.cppName << "::" << def->getName() << ": return "
         << cppString(text) << ";\n";
    }
    os << "  }\n  return \"\";\n}\n\n";
  }

  os << "/// Width in bits of an element type.\n"
     << "inline unsigned getElementTypeBitWidth(ElementType type) {\n"
     << "  switch (type) {\n";
  for (const Record *def :
       records.getAllDerivedDefinitionsIfDefined("PBElementType"))
    os << "  case ElementType::" << def->getName() << ": return "
       << def->getValueAsInt("BitWidth") << ";\n";
  os << "  }\n  return 0;\n}\n";
}

static TableGen::Emitter::Opt
    genEnums("gen-target-enums", emitTargetEnums,
             "Generate the C++ enums of the target schema");
