// RUN: pb-opt --split-input-file --pass-pipeline="builtin.module(pb-attach-target{target=cpu-x86-64-v4},func.func(pb-register-accumulators))" %s | FileCheck %s --check-prefix=V4
// RUN: pb-opt --split-input-file --pass-pipeline="builtin.module(pb-attach-target{target=cpu-x86-64-v3},func.func(pb-register-accumulators))" %s | FileCheck %s --check-prefix=V3
// RUN: pb-opt --split-input-file --pb-explain --pass-pipeline="builtin.module(pb-attach-target{target=cpu-x86-64-v4},func.func(pb-register-accumulators))" %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN

// A depthwise convolution's taps around the channel loop (96 channels, 6
// vectors of 16): the channel loop moves outside the taps, in blocks of
// the most vectors up to the chains the chip keeps in flight that divide
// 6: x86-64-v4 keeps 4 (FMA latency 4 x 1 vector operation per cycle):
// 2 blocks of 3; x86-64-v3 keeps 8 (4 x 2): one block of 6, whose loop
// goes. Each block's accumulators are read once, carried through both tap
// loops and written once.
// V4-LABEL: func.func @taps
// V4: affine.for %{{.*}} = 0 to 4 {
// V4: affine.for %{{.*}} = 0 to 96 step 48 {
// V4-COUNT-3: vector.transfer_read %arg2[%arg3, %{{.*}}]{{.*}} : memref<4x96xf32>, vector<16xf32>
// V4: affine.for %{{.*}} = 0 to 3 iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// V4: affine.for %{{.*}} = 0 to 3 iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// V4-NOT: memref<4x96xf32>
// V4: affine.yield
// V4: affine.yield
// V4-COUNT-3: vector.transfer_write %{{.*}}, %arg2[%arg3, %{{.*}}]{{.*}} : vector<16xf32>, memref<4x96xf32>
// V3-LABEL: func.func @taps
// V3: affine.for %{{.*}} = 0 to 4 {
// V3-NOT: step 96
// V3-COUNT-6: vector.transfer_read %arg2
// V3: iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// EXPLAIN: register-accumulators: 1 vector loops moved out of their reduction loops, 3 vector accumulators carried in registers (blocks of up to 4 vectors: FMA latency x vector issue of cpu-x86-64-v4)
func.func @taps(%in: memref<6x6x96xf32>, %w: memref<3x3x96xf32>, %acc: memref<4x96xf32>) {
  %pad = ub.poison : f32
  affine.for %i = 0 to 4 {
    affine.for %kh = 0 to 3 {
      affine.for %kw = 0 to 3 {
        affine.for %c = 0 to 96 step 16 {
          %h = affine.apply affine_map<(d0, d1) -> (d0 + d1)>(%i, %kh)
          %x = vector.transfer_read %in[%h, %kw, %c], %pad {in_bounds = [true]} : memref<6x6x96xf32>, vector<16xf32>
          %f = vector.transfer_read %w[%kh, %kw, %c], %pad {in_bounds = [true]} : memref<3x3x96xf32>, vector<16xf32>
          %a = vector.transfer_read %acc[%i, %c], %pad {in_bounds = [true]} : memref<4x96xf32>, vector<16xf32>
          %m = arith.mulf %x, %f : vector<16xf32>
          %s = arith.addf %a, %m : vector<16xf32>
          vector.transfer_write %s, %acc[%i, %c] {in_bounds = [true]} : vector<16xf32>, memref<4x96xf32>
        }
      }
    }
  }
  return
}

// -----

// Left alone: a copy whose write moves with the loop around it (no
// reduction loop to carry it across), and an accumulation whose buffer is
// also read at another element in the loop (a shifted read may alias a
// block another iteration writes).
// V4-LABEL: func.func @not_accumulators
// V4: affine.for %{{.*}} = 0 to 4 {
// V4-NEXT: affine.for %{{.*}} = 0 to 32 step 16 {
// V4: affine.for %{{.*}} = 0 to 4 {
// V4-NEXT: affine.for %{{.*}} = 0 to 32 step 16 {
// V4-NOT: iter_args
func.func @not_accumulators(%x: memref<4x32xf32>, %y: memref<4x32xf32>, %acc: memref<40xf32>) {
  %pad = ub.poison : f32
  affine.for %r = 0 to 4 {
    affine.for %c = 0 to 32 step 16 {
      %v = vector.transfer_read %x[%r, %c], %pad {in_bounds = [true]} : memref<4x32xf32>, vector<16xf32>
      vector.transfer_write %v, %y[%r, %c] {in_bounds = [true]} : vector<16xf32>, memref<4x32xf32>
    }
  }
  affine.for %r = 0 to 4 {
    affine.for %c = 0 to 32 step 16 {
      %v = vector.transfer_read %x[%r, %c], %pad {in_bounds = [true]} : memref<4x32xf32>, vector<16xf32>
      %a = vector.transfer_read %acc[%c], %pad {in_bounds = [true]} : memref<40xf32>, vector<16xf32>
      %c4 = affine.apply affine_map<(d0) -> (d0 + 4)>(%c)
      %b = vector.transfer_read %acc[%c4], %pad {in_bounds = [true]} : memref<40xf32>, vector<16xf32>
      %s = arith.addf %a, %v : vector<16xf32>
      %t = arith.addf %s, %b : vector<16xf32>
      vector.transfer_write %t, %acc[%c] {in_bounds = [true]} : vector<16xf32>, memref<40xf32>
    }
  }
  return
}

