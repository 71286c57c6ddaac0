// RUN: not pb-tblgen -gen-target-descriptors -I %targets_td -I %S/Inputs %s 2>&1 | FileCheck %s
// A chip states at most one Tile IR path, with positive figures.
include "MinimalChip.td"
def PathA : PBTileIRPath {
  let GPUName = "sm_80";
  let ThreadsPerTileBlock = 128;
  let AccumulatorRegistersPerThread = 64;
  let OperandRowBytes = 128;
  let ConvolutionOperandRowBytes = 64;
}
def Chip : MinimalChip<"minimal"> {
  let TileIRPath = [PathA, PathA];
}
// CHECK: error: target 'minimal': more than one 'TileIRPath'
