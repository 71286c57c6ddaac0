//===- TileIR.h - The CUDA Tile IR dialect --------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef PB_TILEIR_TILEIR_H
#define PB_TILEIR_TILEIR_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "pb/TileIR/TileIRDialect.h.inc"
#include "pb/TileIR/TileIREnums.h.inc"

#include <optional>

#define GET_TYPEDEF_CLASSES
#include "pb/TileIR/TileIRTypes.h.inc"

#define GET_OP_CLASSES
#include "pb/TileIR/TileIR.h.inc"

#endif // PB_TILEIR_TILEIR_H
