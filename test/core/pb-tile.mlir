// RUN: pb-opt --target=cpu-x86-64-v4 --pb-explain --pass-pipeline="builtin.module(pb-attach-target{target=cpu-x86-64-v4},func.func(pb-tile))" %s 2>&1 | FileCheck %s --check-prefix=CPU
// RUN: pb-opt-test-targets --pb-explain --pass-pipeline="builtin.module(pb-attach-target{target=toy-chip},func.func(pb-tile))" %s 2>&1 | FileCheck %s --check-prefix=TOY

// An elementwise add over 512x512 f32 streams all three memrefs (each
// access uses both loops, the innermost one in the last subscript): no
// tile would keep anything in a cache, so on the CPU the band stays whole
// and its innermost loop long (vectorized in full). On the toy chip the
// tiles are what its scratchpad holds, and the band is tiled.
// CPU: tile: 2-d band not tiled: it streams its memrefs, the rest (0 B) fits 'l1d'
// A 2-d add of a transposed operand (three memrefs, one read across its
// rows): the tile for a level is the largest power of two whose footprint
// (3 x 4 B x T^2) fits half its capacity, so tile sizes follow the chip's
// .td: 128 for the v4's 1 MiB L2, then 32 inside it for its 32 KiB L1; 32
// for the toy chip's 48 KiB scratchpad, its only on-chip level.
// CPU: tile: 2-d band tiled 128 for 'l2' (footprint 196608 B of 524288 B
// CPU: tile: 2-d band tiled 32 for 'l1d' (footprint 12288 B of 16384 B
// CPU-LABEL: func.func @add2d
// CPU-NOT: step
// Both loops are parallel before tiling; their tile-space loops say so
// (pb.parallel), since dependence analysis cannot prove it after tiling.
// CPU-LABEL: func.func @add_transposed
// CPU: affine.for %{{.*}} = 0 to 512 step 128
// CPU: affine.for %{{.*}} = 0 to 512 step 128
// CPU: step 32
// CPU: step 32
// CPU: } {pb.parallel}
// CPU: } {pb.parallel}
// CPU: } {pb.parallel}
// CPU: } {pb.parallel}

// TOY: tile: 2-d band tiled 32 for 'scratchpad' (footprint 12288 B of 24576 B
// TOY: tile: 2-d band tiled 32 for 'scratchpad' (footprint 12288 B of 24576 B
// TOY-NOT: tiled
// TOY-LABEL: func.func @add2d
// TOY: affine.for %{{.*}} = 0 to 512 step 32
// TOY: affine.for %{{.*}} = 0 to 512 step 32
// TOY-NOT: step
// TOY-LABEL: func.func @add_transposed
func.func @add2d(%a: memref<512x512xf32>, %b: memref<512x512xf32>,
                 %c: memref<512x512xf32>) {
  affine.for %i = 0 to 512 {
    affine.for %j = 0 to 512 {
      %x = affine.load %a[%i, %j] : memref<512x512xf32>
      %y = affine.load %b[%i, %j] : memref<512x512xf32>
      %z = arith.addf %x, %y : f32
      affine.store %z, %c[%i, %j] : memref<512x512xf32>
    }
  }
  return
}

func.func @add_transposed(%a: memref<512x512xf32>, %b: memref<512x512xf32>,
                          %c: memref<512x512xf32>) {
  affine.for %i = 0 to 512 {
    affine.for %j = 0 to 512 {
      %x = affine.load %a[%i, %j] : memref<512x512xf32>
      %y = affine.load %b[%j, %i] : memref<512x512xf32>
      %z = arith.addf %x, %y : f32
      affine.store %z, %c[%i, %j] : memref<512x512xf32>
    }
  }
  return
}
