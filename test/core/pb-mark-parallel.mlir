// RUN: pb-opt --pass-pipeline="builtin.module(pb-attach-target{target=cpu-x86-64-v4},func.func(pb-mark-parallel))" %s | FileCheck %s --check-prefix=CPU
// RUN: pb-opt --pass-pipeline="builtin.module(pb-attach-target{target=nvidia-sm90},func.func(pb-mark-parallel))" %s | FileCheck %s --check-prefix=GPU
// RUN: pb-opt --pb-explain --pass-pipeline="builtin.module(pb-attach-target{target=cpu-x86-64-v4},func.func(pb-mark-parallel))" %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN

// The outermost parallel loop maps to the level below the hierarchy's root:
// cores on a CPU, blocks on a GPU. The reduction loop stays sequential and
// only one loop per nest becomes parallel.
// CPU-LABEL: func.func @row_sums
// CPU: affine.parallel (%{{.*}}) = (0) to (512)
// CPU-NOT: affine.parallel
// CPU: affine.for %{{.*}} = 0 to 32
// CPU: {pb.level = "Core"}
// GPU: {pb.level = "Block"}
func.func @row_sums(%a: memref<512x32xf32>, %s: memref<512xf32>) {
  affine.for %i = 0 to 512 {
    affine.for %j = 0 to 32 {
      %x = affine.load %a[%i, %j] : memref<512x32xf32>
      %acc = affine.load %s[%i] : memref<512xf32>
      %y = arith.addf %x, %acc : f32
      affine.store %y, %s[%i] : memref<512xf32>
    }
  }
  return
}

// On a CPU, a nest whose buffers fit one core's L1 (2 x 1 KiB here, 32 KiB
// on x86-64-v4) stays serial: a fork and join of threads costs more. On a
// GPU it still becomes a grid of blocks.
// CPU-LABEL: func.func @small
// CPU-NOT: affine.parallel
// CPU: return
// GPU-LABEL: func.func @small
// GPU: affine.parallel (%{{.*}}) = (0) to (256)
func.func @small(%a: memref<256xf32>, %b: memref<256xf32>) {
  affine.for %i = 0 to 256 {
    %x = affine.load %a[%i] : memref<256xf32>
    affine.store %x, %b[%i] : memref<256xf32>
  }
  return
}

// A loop pb-tile proved parallel (pb.parallel) becomes the parallel loop,
// even where upstream's analysis alone would pick only an inner loop.
// CPU-LABEL: func.func @tiled
// CPU: affine.parallel (%{{.*}}) = (0) to (16384) step (64)
// CPU-NOT: pb.parallel
// CPU: {pb.level = "Core"}
func.func @tiled(%a: memref<16384xf32>, %b: memref<16384xf32>) {
  affine.for %i = 0 to 16384 step 64 {
    affine.for %j = affine_map<(d0) -> (d0)>(%i) to affine_map<(d0) -> (d0 + 64)>(%i) step 16 {
      affine.for %k = affine_map<(d0) -> (d0)>(%j) to affine_map<(d0) -> (d0 + 16)>(%j) {
        %x = affine.load %a[%k] : memref<16384xf32>
        affine.store %x, %b[%k] : memref<16384xf32>
      }
    }
  } {pb.parallel}
  return
}

// On a GPU (132 SMs on sm90: at least 528 iterations wanted), a batch-1 nest
// widens its grid loop with the parallel loops nested under it until there
// are enough iterations (1 x 28 x 28 = 784); the channel loop stays inside.
// On a CPU (cores known at run time) only the outermost loop is parallel.
// GPU-LABEL: func.func @batch_one
// GPU: affine.parallel (%{{.*}}, %{{.*}}, %{{.*}}) = (0, 0, 0) to (1, 28, 28) {
// GPU: affine.for %{{.*}} = 0 to 64
// GPU: {pb.level = "Block"}
// CPU-LABEL: func.func @batch_one
// CPU: affine.parallel (%{{.*}}) = (0) to (1) {
// CPU: affine.for %{{.*}} = 0 to 28
func.func @batch_one(%a: memref<1x28x28x64xf32>, %b: memref<1x28x28x64xf32>) {
  affine.for %n = 0 to 1 {
    affine.for %h = 0 to 28 {
      affine.for %w = 0 to 28 {
        affine.for %c = 0 to 64 {
          %x = affine.load %a[%n, %h, %w, %c] : memref<1x28x28x64xf32>
          %y = arith.addf %x, %x : f32
          affine.store %y, %b[%n, %h, %w, %c] : memref<1x28x28x64xf32>
        }
      }
    }
  }
  return
}

// Proven-parallel tile loops (pb.parallel) nested under each other join the
// grid loop the same way: 4 x 3 = 12 tiles, fewer than wanted; the
// intra-tile row loop (from a function of the grid's IVs, 64 iterations)
// joins too, as a dimension from 0 to 64 whose IV is the row's offset in
// the tile (the tile's row plus it, folded into the accesses): 768 blocks.
// The column loop, which upstream's analysis proves parallel, keeps or gets
// pb.parallel on a GPU for S4's threads; on cores no mark is left.
// GPU-LABEL: func.func @tiled_2d
// GPU: affine.parallel (%[[I:.*]], %[[J:.*]], %[[R:.*]]) = (0, 0, 0) to (256, 192, 64) step (64, 64, 1) {
// GPU-NEXT: affine.for %[[COL:.*]] = #{{.*}}(%[[J]]) to #{{.*}}(%[[J]]) {
// GPU-NEXT: affine.load %{{.*}}[%[[I]] + %[[R]], %[[COL]]]
// GPU-NEXT: affine.store %{{.*}}, %{{.*}}[%[[I]] + %[[R]], %[[COL]]]
// GPU-NEXT: } {pb.parallel}
// GPU-NEXT: } {pb.level = "Block"}
// CPU-LABEL: func.func @tiled_2d
// CPU-NOT: pb.parallel
// CPU: return
func.func @tiled_2d(%a: memref<256x192xf32>, %b: memref<256x192xf32>) {
  affine.for %i = 0 to 256 step 64 {
    affine.for %j = 0 to 192 step 64 {
      affine.for %k = affine_map<(d0) -> (d0)>(%i) to affine_map<(d0) -> (d0 + 64)>(%i) {
        affine.for %l = affine_map<(d0) -> (d0)>(%j) to affine_map<(d0) -> (d0 + 64)>(%j) {
          %x = affine.load %a[%k, %l] : memref<256x192xf32>
          affine.store %x, %b[%k, %l] : memref<256x192xf32>
        }
      }
    } {pb.parallel}
  } {pb.parallel}
  return
}

// A channel loop under a reduction over the pixels (a squeeze-excitation
// mean of a channels-last map): on cores, parallelizing the channel loop
// would fork and join threads once per pixel, so the nest stays serial; a
// GPU maps it as before.
// CPU-LABEL: func.func @channel_sums
// CPU-NOT: affine.parallel
// CPU: return
// GPU-LABEL: func.func @channel_sums
// GPU: affine.parallel
func.func @channel_sums(%a: memref<112x112x32xf32>, %s: memref<32xf32>) {
  affine.for %h = 0 to 112 {
    affine.for %w = 0 to 112 {
      affine.for %c = 0 to 32 {
        %x = affine.load %a[%h, %w, %c] : memref<112x112x32xf32>
        %acc = affine.load %s[%c] : memref<32xf32>
        %y = arith.addf %acc, %x : f32
        affine.store %y, %s[%c] : memref<32xf32>
      }
    }
  }
  return
}

// --pb-explain counts the parallel regions a call runs: each outermost
// parallel loop (here one row loop, and a micro-kernel's scf.parallel tasks
// in a K-block loop of 6 iterations, forking once per block), and the
// top-level nests with no parallel loop (the serial reduction).
// EXPLAIN-LABEL: remark: pb-explain: parallel: 7 parallel regions per call of @regions on level 'core' (2 parallel loops, 1 of them inside sequential loops); 1 top-level nests without a parallel loop
func.func @regions(%a: memref<512x32xf32>, %s: memref<512xf32>, %t: memref<32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %c8 = arith.constant 8 : index
  affine.for %i = 0 to 512 {
    affine.for %j = 0 to 32 {
      %x = affine.load %a[%i, %j] : memref<512x32xf32>
      %acc = affine.load %s[%i] : memref<512xf32>
      %y = arith.addf %x, %acc : f32
      affine.store %y, %s[%i] : memref<512xf32>
    }
  }
  scf.for %k = %c0 to %c6 step %c1 {
    scf.parallel (%p) = (%c0) to (%c8) step (%c1) {
      %x = memref.load %s[%p] : memref<512xf32>
      memref.store %x, %s[%k] : memref<512xf32>
      scf.reduce
    }
  }
  affine.for %h = 0 to 112 {
    affine.for %c = 0 to 32 {
      %x = affine.load %a[%h, %c] : memref<512x32xf32>
      %acc = affine.load %t[%c] : memref<32xf32>
      %y = arith.addf %acc, %x : f32
      affine.store %y, %t[%c] : memref<32xf32>
    }
  }
  return
}

// An embedding lookup: each row is read at an index loaded from memory, a
// load upstream's dependence analysis cannot see through. The table is
// read-only in the loop and the store is affine, so the rows are
// independent: on a GPU the row loop is the grid (before: one thread ran
// the whole lookup). Cores keep upstream's answer.
// GPU-LABEL: func.func @gather
// GPU: affine.parallel (%{{.*}}) = (0) to (128) {
// GPU: affine.for %{{.*}} = 0 to 768 {
// GPU: memref.load
// GPU: } {pb.parallel}
// CPU-LABEL: func.func @gather
// CPU-NOT: affine.parallel
// CPU: return
func.func @gather(%ids: memref<128xindex>, %table: memref<30522x768xf32>, %out: memref<128x768xf32>) {
  affine.for %i = 0 to 128 {
    %row = affine.load %ids[%i] : memref<128xindex>
    affine.for %j = 0 to 768 {
      %v = memref.load %table[%row, %j] : memref<30522x768xf32>
      affine.store %v, %out[%i, %j] : memref<128x768xf32>
    }
  }
  return
}

// A gather from the buffer the loop writes is not independent.
// GPU-LABEL: func.func @gather_written
// GPU-NOT: affine.parallel
// GPU: return
func.func @gather_written(%ids: memref<128xindex>, %buf: memref<128x768xf32>) {
  affine.for %i = 0 to 128 {
    %row = affine.load %ids[%i] : memref<128xindex>
    affine.for %j = 0 to 768 {
      %v = memref.load %buf[%row, %j] : memref<128x768xf32>
      affine.store %v, %buf[%i, %j] : memref<128x768xf32>
    }
  }
  return
}
