// RUN: pb-opt --pass-pipeline="builtin.module(pb-attach-target{target=cpu-x86-64-v4},func.func(pb-mark-parallel))" %s | FileCheck %s --check-prefix=CPU
// RUN: pb-opt --pass-pipeline="builtin.module(pb-attach-target{target=nvidia-sm90},func.func(pb-mark-parallel))" %s | FileCheck %s --check-prefix=GPU

// The outermost parallel loop maps to the level below the hierarchy's root:
// cores on a CPU, blocks on a GPU. The reduction loop stays sequential and
// only one loop per nest becomes parallel.
// CPU-LABEL: func.func @row_sums
// CPU: affine.parallel (%{{.*}}) = (0) to (64)
// CPU-NOT: affine.parallel
// CPU: affine.for %{{.*}} = 0 to 32
// CPU: {pb.level = "Core"}
// GPU: {pb.level = "Block"}
func.func @row_sums(%a: memref<64x32xf32>, %s: memref<64xf32>) {
  affine.for %i = 0 to 64 {
    affine.for %j = 0 to 32 {
      %x = affine.load %a[%i, %j] : memref<64x32xf32>
      %acc = affine.load %s[%i] : memref<64xf32>
      %y = arith.addf %x, %acc : f32
      affine.store %y, %s[%i] : memref<64xf32>
    }
  }
  return
}

// A loop pb-tile proved parallel (pb.parallel) becomes the parallel loop,
// even where upstream's analysis alone would pick only an inner loop.
// CPU-LABEL: func.func @tiled
// CPU: affine.parallel (%{{.*}}) = (0) to (256) step (64)
// CPU-NOT: pb.parallel
// CPU: {pb.level = "Core"}
func.func @tiled(%a: memref<256xf32>, %b: memref<256xf32>) {
  affine.for %i = 0 to 256 step 64 {
    affine.for %j = affine_map<(d0) -> (d0)>(%i) to affine_map<(d0) -> (d0 + 64)>(%i) step 16 {
      affine.for %k = affine_map<(d0) -> (d0)>(%j) to affine_map<(d0) -> (d0 + 16)>(%j) {
        %x = affine.load %a[%k] : memref<256xf32>
        affine.store %x, %b[%k] : memref<256xf32>
      }
    }
  } {pb.parallel}
  return
}
