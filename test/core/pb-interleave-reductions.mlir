// RUN: pb-opt --pass-pipeline="builtin.module(pb-attach-target{target=cpu-x86-64-v3},func.func(pb-interleave-reductions))" %s | FileCheck %s --check-prefix=V3
// RUN: pb-opt --pass-pipeline="builtin.module(pb-attach-target{target=cpu-x86-64-v4},func.func(pb-interleave-reductions))" %s | FileCheck %s --check-prefix=V4
// RUN: pb-opt --pass-pipeline="builtin.module(pb-attach-target{target=cpu-sapphire-rapids},func.func(pb-interleave-reductions))" %s | FileCheck %s --check-prefix=SPR
// RUN: pb-opt --pass-pipeline="builtin.module(pb-attach-target{target=nvidia-sm90},func.func(pb-interleave-reductions))" %s | FileCheck %s --check-prefix=SM90

// A row's vector max: one accumulator waits for the previous compare and
// select. x86-64-v3 keeps 8 chains in flight (FMA latency 4 x 2 vector
// operations per cycle), x86-64-v4's reference core 4 (latency 4 x 1),
// cpu-sapphire-rapids 8 again (two 512-bit FMA units): the
// loop carries that many partial maxima, the first from the loop's init,
// the others from maxnumf's identity (NaN), combined in a tree after it.
// Its horizontal max is a tree of halvings. A GPU thread has no vector
// FMA unit in the tables: the loop stays, and so does vector.reduction (S4
// folds each thread's lanes with it before combining the block's threads).
// V3-LABEL: func.func @row_max
// V3: %[[NAN:.*]] = arith.constant dense<0xFFC00000> : vector<8xf32>
// V3: %[[R:.*]]:8 = affine.for %[[J:.*]] = 0 to 1024 step 64 iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %[[NAN]], %{{.*}} = %[[NAN]], %{{.*}} = %[[NAN]], %{{.*}} = %[[NAN]], %{{.*}} = %[[NAN]], %{{.*}} = %[[NAN]], %{{.*}} = %[[NAN]])
// V3: vector.transfer_read %{{.*}}[%[[J]]]
// V3: affine.apply #{{.*}}(%[[J]])
// V3-COUNT-7: arith.maxnumf
// V3: affine.yield
// V3: %[[A:.*]] = arith.maxnumf %[[R]]#0, %[[R]]#1 : vector<8xf32>
// V3: %[[B:.*]] = arith.maxnumf %[[R]]#2, %[[R]]#3 : vector<8xf32>
// V3: %[[C:.*]] = arith.maxnumf %[[R]]#4, %[[R]]#5 : vector<8xf32>
// V3: %[[D:.*]] = arith.maxnumf %[[R]]#6, %[[R]]#7 : vector<8xf32>
// V3: %[[AB:.*]] = arith.maxnumf %[[A]], %[[B]]
// V3: %[[CD:.*]] = arith.maxnumf %[[C]], %[[D]]
// V3: %[[ALL:.*]] = arith.maxnumf %[[AB]], %[[CD]]
// V3: %[[LO:.*]] = vector.shuffle %[[ALL]], %[[ALL]] [0, 1, 2, 3] : vector<8xf32>, vector<8xf32>
// V3: %[[HI:.*]] = vector.shuffle %[[ALL]], %[[ALL]] [4, 5, 6, 7] : vector<8xf32>, vector<8xf32>
// V3: arith.maxnumf %[[LO]], %[[HI]] : vector<4xf32>
// V3: vector.shuffle {{.*}} [0, 1] : vector<4xf32>, vector<4xf32>
// V3: vector.shuffle {{.*}} [0] : vector<2xf32>, vector<2xf32>
// V3: %[[M:.*]] = vector.extract %{{.*}}[0] : f32 from vector<1xf32>
// V3-NOT: vector.reduction
// V3: return %[[M]]
// V4-LABEL: func.func @row_max
// V4: %{{.*}}:4 = affine.for %{{.*}} = 0 to 1024 step 32 iter_args
// V4-COUNT-4: arith.maxnumf {{.*}} : vector<8xf32>
// V4: affine.yield
// SPR-LABEL: func.func @row_max
// SPR: %{{.*}}:8 = affine.for %{{.*}} = 0 to 1024 step 64 iter_args
// SPR-COUNT-8: arith.maxnumf {{.*}} : vector<8xf32>
// SPR: affine.yield
// SM90-LABEL: func.func @row_max
// SM90: affine.for %{{.*}} = 0 to 1024 step 8 iter_args(%{{.*}} = %{{.*}}) -> (vector<8xf32>)
// SM90-NOT: vector.shuffle
// SM90: vector.reduction <maxnumf>
func.func @row_max(%x: memref<1024xf32>) -> f32 {
  %pad = ub.poison : f32
  %init = arith.constant dense<0xFF800000> : vector<8xf32>
  %m = affine.for %j = 0 to 1024 step 8 iter_args(%a = %init) -> (vector<8xf32>) {
    %v = vector.transfer_read %x[%j], %pad {in_bounds = [true]} : memref<1024xf32>, vector<8xf32>
    %n = arith.maxnumf %v, %a : vector<8xf32>
    affine.yield %n : vector<8xf32>
  }
  %r = vector.reduction <maxnumf>, %m : vector<8xf32> into f32
  return %r : f32
}

// Two sums carried together (a layernorm's sum and sum of squares): they
// are two chains already, so x86-64-v4 needs a factor of 2, x86-64-v3 of 4.
// The second copy starts from 0, the first from the loop's init. The
// reduction's accumulator operand is added after the tree.
// V4-LABEL: func.func @sum_and_squares
// V4: %[[INIT:.*]] = arith.constant dense<1.000000e+00> : vector<16xf32>
// V4: %[[Z0:.*]] = arith.constant dense<0.000000e+00> : vector<16xf32>
// V4: %[[Z1:.*]] = arith.constant dense<0.000000e+00> : vector<16xf32>
// V4: %[[R:.*]]:4 = affine.for %{{.*}} = 0 to 512 step 32 iter_args(%{{.*}} = %[[INIT]], %{{.*}} = %[[INIT]], %{{.*}} = %[[Z0]], %{{.*}} = %[[Z1]])
// V4: affine.yield
// V4: %[[S:.*]] = arith.addf %[[R]]#0, %[[R]]#2 : vector<16xf32>
// V4: %[[Q:.*]] = arith.addf %[[R]]#1, %[[R]]#3 : vector<16xf32>
// V4: vector.shuffle %[[S]], %[[S]] [0, 1, 2, 3, 4, 5, 6, 7]
// V4: %[[E:.*]] = vector.extract
// V4: arith.addf %[[E]], %{{.*}} : f32
// V3-LABEL: func.func @sum_and_squares
// V3: affine.for %{{.*}} = 0 to 512 step 64 iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
func.func @sum_and_squares(%x: memref<512xf32>, %acc: f32) -> (f32, vector<16xf32>) {
  %pad = ub.poison : f32
  %zero = arith.constant dense<1.0> : vector<16xf32>
  %r:2 = affine.for %j = 0 to 512 step 16 iter_args(%s = %zero, %q = %zero) -> (vector<16xf32>, vector<16xf32>) {
    %v = vector.transfer_read %x[%j], %pad {in_bounds = [true]} : memref<512xf32>, vector<16xf32>
    %s2 = arith.addf %v, %s : vector<16xf32>
    %sq = arith.mulf %v, %v : vector<16xf32>
    %q2 = arith.addf %sq, %q : vector<16xf32>
    affine.yield %s2, %q2 : vector<16xf32>, vector<16xf32>
  }
  %t = vector.reduction <add>, %r#0, %acc : vector<16xf32> into f32
  return %t, %r#1 : f32, vector<16xf32>
}

// Left alone: a loop of 3 iterations (no power of two > 1 divides it), a
// loop whose iter_arg is not a reduction (a running value read by the
// body), and a loop that is not innermost; the scalar loop inside the last
// one is interleaved.
// V4-LABEL: func.func @left_alone
// V4: affine.for %{{.*}} = 0 to 48 step 16 iter_args(%{{.*}} = %{{.*}}) -> (vector<16xf32>)
// V4: affine.for %{{.*}} = 0 to 64 iter_args(%{{.*}} = %{{.*}}) -> (f32)
// V4: affine.for %{{.*}} = 0 to 64 iter_args(%{{.*}} = %{{.*}}) -> (f32)
// V4: affine.for %{{.*}} = 0 to 64 step 4 iter_args({{.*}}) -> (f32, f32, f32, f32)
func.func @left_alone(%x: memref<64xf32>, %y: memref<64xf32>, %z: memref<64x64xf32>) -> (vector<16xf32>, f32, f32) {
  %pad = ub.poison : f32
  %zero = arith.constant dense<0.0> : vector<16xf32>
  %c0 = arith.constant 0.0 : f32
  %r = affine.for %j = 0 to 48 step 16 iter_args(%s = %zero) -> (vector<16xf32>) {
    %v = vector.transfer_read %x[%j], %pad {in_bounds = [true]} : memref<64xf32>, vector<16xf32>
    %s2 = arith.addf %v, %s : vector<16xf32>
    affine.yield %s2 : vector<16xf32>
  }
  %p = affine.for %j = 0 to 64 iter_args(%s = %c0) -> (f32) {
    %v = affine.load %x[%j] : memref<64xf32>
    affine.store %s, %y[%j] : memref<64xf32>
    %s2 = arith.addf %v, %s : f32
    affine.yield %s2 : f32
  }
  %o = affine.for %i = 0 to 64 iter_args(%s = %c0) -> (f32) {
    %in = affine.for %j = 0 to 64 iter_args(%t = %s) -> (f32) {
      %v = affine.load %z[%i, %j] : memref<64x64xf32>
      %t2 = arith.addf %v, %t : f32
      affine.yield %t2 : f32
    }
    affine.yield %in : f32
  }
  return %r, %p, %o : vector<16xf32>, f32, f32
}
