//===- TileIRPath.h - Figures derived from PBTileIRPath -------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What the CUDA Tile IR path's .td figures (TileIRPathDesc) imply, for the
// core's pipeline (which row kernels to form) and the NVIDIA back end (how
// to emit them) alike.
//
//===----------------------------------------------------------------------===//

#ifndef PB_TARGET_TILEIRPATH_H
#define PB_TARGET_TILEIRPATH_H

#include "pb/Target/TargetDesc.h"

#include <cstdint>

namespace mlir::pb {

/// The registers of one tile block: its threads' accumulator registers.
inline int64_t getTileBlockRegisters(const TileIRPathDesc &path) {
  return path.accumulatorRegistersPerThread * path.threadsPerTileBlock;
}

/// The longest row a row kernel keeps in a tile block's registers: two
/// rows of it (a row and its result) fill them.
inline int64_t getRowKernelMaxElements(const TileIRPathDesc &path) {
  return getTileBlockRegisters(path) / 2;
}

} // namespace mlir::pb

#endif // PB_TARGET_TILEIRPATH_H
