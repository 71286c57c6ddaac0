// RUN: pb-opt --pb-explain --pass-pipeline="builtin.module(pb-attach-target{target=cpu-x86-64-v4},func.func(pb-tile))" %s 2>&1 | FileCheck %s
// Which bands pb-tile may tile, and which of their loops stay parallel.
// Bands whose stored memrefs are accessed at one position per band loop
// by every access are decided without upstream's dependence analysis
// (densenet121's pooling nests took 1.3 s of Presburger arithmetic); the
// others still go to it. Both must give the same answer.

// A running maximum read and written in place at [i, j] over a window
// loop inside the band (a max pooling), with a transposed read of another
// memref that gives the band reuse to tile for: every element of %m is
// touched by one band iteration only, so the band is tiled and all four
// of its loops are parallel.
// CHECK: tile: 2-d band tiled 128 for 'l2'
// CHECK: tile: band not tiled, tiling would break a dependence
// CHECK-LABEL: func.func @pool_in_place
// CHECK: affine.for %{{.*}} = 0 to 512 step 128
// CHECK: affine.for %{{.*}} = 0 to 512 step 128
// CHECK: } {pb.parallel}
// CHECK: } {pb.parallel}
// CHECK: } {pb.parallel}
// CHECK: } {pb.parallel}
func.func @pool_in_place(%a: memref<514x512xf32>, %b: memref<512x512xf32>,
                         %m: memref<512x512xf32>) {
  %ninf = arith.constant -3.0e+38 : f32
  affine.for %i = 0 to 512 {
    affine.for %j = 0 to 512 {
      affine.store %ninf, %m[%i, %j] : memref<512x512xf32>
      affine.for %k = 0 to 3 {
        %x = affine.load %a[%i + %k, %j] : memref<514x512xf32>
        %y = affine.load %b[%j, %i] : memref<512x512xf32>
        %s = arith.addf %x, %y : f32
        %cur = affine.load %m[%i, %j] : memref<512x512xf32>
        %max = arith.maximumf %cur, %s : f32
        affine.store %max, %m[%i, %j] : memref<512x512xf32>
      }
    }
  }
  return
}

// %c[i, j] += %c[j, i]: iteration (i, j) reads what (j, i) writes, in
// either order, a dependence that tiling would reverse. The accesses put
// the band loops at different positions, so the dependence analysis
// decides: not tiled (the remark above), and nothing marked parallel.
// CHECK-LABEL: func.func @transposed_in_place
// CHECK-NOT: step
// CHECK-NOT: pb.parallel
// CHECK: return
func.func @transposed_in_place(%c: memref<512x512xf32>) {
  affine.for %i = 0 to 512 {
    affine.for %j = 0 to 512 {
      %x = affine.load %c[%i, %j] : memref<512x512xf32>
      %y = affine.load %c[%j, %i] : memref<512x512xf32>
      %z = arith.addf %x, %y : f32
      affine.store %z, %c[%i, %j] : memref<512x512xf32>
    }
  }
  return
}
