//===- pb-translate.cpp - PolyBlocks' translations
//-------------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// mlir-translate with PolyBlocks' own translations:
//   --tileir-to-bytecode  the tileir.entry kernels of a module as CUDA Tile
//                         IR bytecode (what tileiras assembles)
//   --bytecode-to-tileir  Tile IR bytecode back to a module of kernels
//
//===----------------------------------------------------------------------===//

#include "pb/TileIR/Bytecode.h"
#include "pb/TileIR/TileIR.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "mlir/Tools/mlir-translate/Translation.h"

using namespace mlir;

int main(int argc, char **argv) {
  TranslateFromMLIRRegistration toBytecode(
      "tileir-to-bytecode", "Write Tile IR kernels as Tile IR bytecode",
      [](Operation *op, llvm::raw_ostream &os) {
        return pb::tileir::writeBytecode(op, os);
      },
      [](DialectRegistry &registry) {
        registry.insert<pb::tileir::TileIRDialect>();
      });
  TranslateToMLIRRegistration fromBytecode(
      "bytecode-to-tileir", "Read Tile IR bytecode into Tile IR kernels",
      [](llvm::StringRef bytes,
         MLIRContext *context) -> OwningOpRef<Operation *> {
        return pb::tileir::readBytecode(bytes, context,
                                        UnknownLoc::get(context));
      },
      [](DialectRegistry &registry) {
        registry.insert<pb::tileir::TileIRDialect>();
      });
  return failed(mlirTranslateMain(argc, argv, "PolyBlocks translation tool"));
}
