//===- TargetRecords.h - Typed access to chip records -------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Shared by every pb-tblgen generator: collects the chip records of the
// schema in targets/Target.td, validates them (unset fields, duplicate
// names, dangling features, misplaced enumeration records) and exposes them
// in a fixed order, so that every generator agrees on indices and names.
//
//===----------------------------------------------------------------------===//

#ifndef PB_TBLGEN_TARGETRECORDS_H
#define PB_TBLGEN_TARGETRECORDS_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/TableGen/Record.h"

#include <string>
#include <vector>

namespace pb::tblgen {

/// The enumeration classes of the schema and the C++ enum each becomes.
struct SchemaEnum {
  llvm::StringRef tdClass;
  llvm::StringRef cppName;
};
llvm::ArrayRef<SchemaEnum> getSchemaEnums();

/// The C++ spelling of an enumeration record (`ElementType::F16`).
std::string enumCase(const llvm::Record *def);

/// All validated target records of one RecordKeeper.
class TargetRecords {
public:
  /// Validates the records; reports problems with PrintFatalError at the
  /// offending record's file:line.
  explicit TargetRecords(const llvm::RecordKeeper &records);

  /// Concrete chips (`PBChip`), sorted by target name.
  llvm::ArrayRef<const llvm::Record *> getChips() const { return chips; }
  /// Host-resolved chips (`PBHostChip`), sorted by target name.
  llvm::ArrayRef<const llvm::Record *> getHostChips() const {
    return hostChips;
  }
  /// Every registered target (chips and host chips), sorted by target name.
  llvm::ArrayRef<const llvm::Record *> getAllTargets() const {
    return allTargets;
  }
  /// Named matrix units, sorted by record name.
  llvm::ArrayRef<const llvm::Record *> getMatrixUnits() const {
    return matrixUnits;
  }

  /// Position of a chip in getChips().
  unsigned getChipIndex(const llvm::Record *chip) const;
  /// Position of a matrix unit in getMatrixUnits().
  unsigned getMatrixUnitIndex(const llvm::Record *unit) const;

  /// The chip's features closed over `Implies`, sorted by name.
  std::vector<llvm::StringRef>
  getClosedFeatures(const llvm::Record *chip) const;

  /// A C identifier for a record (its name, anonymous records excluded).
  static std::string identifier(const llvm::Record *def);

private:
  void validateChip(const llvm::Record *chip) const;
  void validateMatrixUnit(const llvm::Record *unit) const;

  std::vector<const llvm::Record *> chips;
  std::vector<const llvm::Record *> hostChips;
  std::vector<const llvm::Record *> allTargets;
  std::vector<const llvm::Record *> matrixUnits;
};

/// Writes `s` as a C++ string literal.
std::string cppString(llvm::StringRef s);

/// Emits `static const llvm::StringRef <name>[] = {...};`, with a trailing
/// empty string so that empty lists stay valid C++ (users pass the size).
void emitStringArray(llvm::raw_ostream &os, const llvm::Twine &name,
                     llvm::ArrayRef<llvm::StringRef> values);

} // namespace pb::tblgen

#endif // PB_TBLGEN_TARGETRECORDS_H
