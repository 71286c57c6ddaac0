//===- DocsGen.cpp - -gen-target-docs
//--------------------------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Generates docs/targets.md: one section per registered target with every
// figure its .td file states.
//
//===----------------------------------------------------------------------===//

#include "TargetRecords.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/TableGen/Record.h"
#include "llvm/TableGen/TableGenBackend.h"

using namespace llvm;
using namespace pb::tblgen;

static void emitChip(const TargetRecords &targets, const Record *chip,
                     raw_ostream &os) {
  os << "## `" << chip->getValueAsString("Name") << "`\n\n"
     << chip->getValueAsString("Description") << "\n\n"
     << "- LLVM: triple `" << chip->getValueAsString("LLVMTriple") << "`, CPU `"
     << chip->getValueAsString("LLVMCPU") << "`, features `"
     << chip->getValueAsString("LLVMFeatures") << "`\n"
     << "- Clock: " << chip->getValueAsInt("ClockMHz") << " MHz; vector width "
     << chip->getValueAsInt("VectorWidthBits") << " bits; launch overhead "
     << chip->getValueAsInt("LaunchOverheadNs") << " ns\n"
     << "- Features: " << join(targets.getClosedFeatures(chip), ", ") << "\n";
  for (const Record *path : chip->getValueAsListOfDefs("TileIRPath"))
    os << "- Tile IR path: `tileiras --gpu-name "
       << path->getValueAsString("GPUName") << "`, "
       << path->getValueAsInt("ThreadsPerTileBlock")
       << " threads per tile block, "
       << path->getValueAsInt("AccumulatorRegistersPerThread")
       << " accumulator registers per thread, operand rows of "
       << path->getValueAsInt("OperandRowBytes") << " bytes (convolutions: "
       << path->getValueAsInt("ConvolutionOperandRowBytes") << ")\n";
  std::vector<StringRef> host =
      chip->getValueAsListOfStrings("HostCPUFeatures");
  if (!host.empty())
    os << "- Chosen for `cpu-host` when the CPU has: " << join(host, ", ")
       << "\n";

  os << "\n| compute level | kind | fixed per parent | max per parent | "
        "units on chip | resident per unit |\n|---|---|---|---|---|---|\n";
  for (const Record *level : chip->getValueAsListOfDefs("ComputeLevels"))
    os << "| " << level->getValueAsString("Name") << " | "
       << level->getValueAsDef("Kind")->getName() << " | "
       << level->getValueAsInt("FixedCountPerParent") << " | "
       << level->getValueAsInt("MaxCountPerParent") << " | "
       << level->getValueAsInt("PhysicalUnits") << " | "
       << level->getValueAsInt("MaxResidentPerUnit") << " |\n";

  os << "\n| memory level | kind | scope | capacity (bytes) | bandwidth (GB/s) "
        "| latency (cycles) | banks | bank width (bytes) | line (bytes) | "
        "ways | address space | per unit (bytes) | granule (bytes) | reserved "
        "(bytes) "
        "|\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const Record *level : chip->getValueAsListOfDefs("MemoryLevels"))
    os << "| " << level->getValueAsString("Name") << " | "
       << level->getValueAsDef("Kind")->getName() << " | "
       << level->getValueAsDef("Scope")->getName() << " | "
       << level->getValueAsInt("CapacityBytes") << " | "
       << level->getValueAsInt("BandwidthGBps") << " | "
       << level->getValueAsInt("LatencyCycles") << " | "
       << level->getValueAsInt("Banks") << " | "
       << level->getValueAsInt("BankWidthBytes") << " | "
       << level->getValueAsInt("LineBytes") << " | "
       << level->getValueAsInt("Ways") << " | "
       << level->getValueAsInt("AddressSpace") << " | "
       << level->getValueAsInt("CapacityBytesPerUnit") << " | "
       << level->getValueAsInt("AllocationGranuleBytes") << " | "
       << level->getValueAsInt("ReservedBytesPerInstance") << " |\n";

  std::vector<const Record *> units = chip->getValueAsListOfDefs("MatrixUnits");
  if (!units.empty()) {
    os << "\n| matrix unit | MxNxK | A, B -> C | scope | layout | lowering | "
          "latency (cycles) |\n|---|---|---|---|---|---|---|\n";
    for (const Record *unit : units)
      os << "| " << unit->getName() << " (`"
         << unit->getValueAsString("Intrinsic") << "`) | "
         << unit->getValueAsInt("M") << "x" << unit->getValueAsInt("N") << "x"
         << unit->getValueAsInt("K") << " | "
         << unit->getValueAsDef("AType")->getValueAsString("MLIRName") << ", "
         << unit->getValueAsDef("BType")->getValueAsString("MLIRName") << " -> "
         << unit->getValueAsDef("CType")->getValueAsString("MLIRName") << " | "
         << unit->getValueAsDef("Scope")->getName() << " | "
         << unit->getValueAsDef("Layout")->getName() << " | `"
         << unit->getValueAsDef("Lowering")->getValueAsString("DialectOp")
         << "` | " << unit->getValueAsInt("LatencyCycles") << " |\n";
  }

  os << "\n| peak | unit | GFLOP/s |\n|---|---|---|\n";
  for (const Record *peak : chip->getValueAsListOfDefs("PeakCompute"))
    os << "| " << peak->getValueAsDef("Type")->getValueAsString("MLIRName")
       << " | " << peak->getValueAsString("Unit") << " | "
       << peak->getValueAsInt("GFLOPs") << " |\n";

  os << "\nSources:\n";
  for (StringRef source : chip->getValueAsListOfStrings("Sources"))
    os << "- " << source << "\n";
  os << "\n";
}

static void emitDocs(const RecordKeeper &records, raw_ostream &os) {
  TargetRecords targets(records);
  os << "<!-- Generated by pb-tblgen -gen-target-docs from targets/**/*.td. "
        "Do not edit. -->\n\n# Targets\n\n"
     << "Every fact below comes from a chip's `.td` file; passes read the "
        "same facts through the generated tables.\n\n"
     << "| target | vendor | description |\n|---|---|---|\n";
  for (const Record *target : targets.getAllTargets())
    os << "| `" << target->getValueAsString("Name") << "` | "
       << target->getValueAsDef("Vendor")->getValueAsString("Name") << " | "
       << target->getValueAsString("Description") << " |\n";
  os << "\n";
  for (const Record *host : targets.getHostChips()) {
    os << "## `" << host->getValueAsString("Name") << "`\n\n"
       << host->getValueAsString("Description")
       << "\n\nResolved when the compiler runs to the first of these whose "
          "host features the CPU has: ";
    std::vector<std::string> names;
    for (const Record *c : host->getValueAsListOfDefs("HostCandidates"))
      names.push_back(("`" + c->getValueAsString("Name") + "`").str());
    os << join(names, ", ")
       << ". The chip's peaks and the bandwidths of its core-scoped memory "
          "levels are then scaled from its stated clock to the running "
          "core's, measured once per process (a timed chain of dependent "
          "adds, rounded to 100 MHz; `PB_HOST_CLOCK_MHZ` replaces the "
          "measurement); its rates per cycle stay the .td's. `pb-opt "
          "--print-target="
       << host->getValueAsString("Name")
       << "` prints the figures it uses and how they were found.\n\n";
  }
  for (const Record *chip : targets.getChips())
    emitChip(targets, chip, os);
}

static TableGen::Emitter::Opt genDocs("gen-target-docs", emitDocs,
                                      "Generate docs/targets.md");
