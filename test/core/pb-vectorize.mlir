// RUN: pb-opt --pass-pipeline="builtin.module(pb-attach-target{target=cpu-x86-64-v3},func.func(pb-vectorize))" %s | FileCheck %s --check-prefix=V3
// RUN: pb-opt --pass-pipeline="builtin.module(pb-attach-target{target=cpu-x86-64-v4},func.func(pb-vectorize))" %s | FileCheck %s --check-prefix=V4
// RUN: pb-opt --pass-pipeline="builtin.module(pb-attach-target{target=nvidia-sm90},func.func(pb-vectorize))" %s | FileCheck %s --check-prefix=GPU

// The vector length is the chip's vector width over the element width:
// 256/32 = 8 lanes on x86-64-v3, 512/32 = 16 on x86-64-v4. The transfers
// are marked in bounds (the trip count is a multiple of the lanes), so S4
// lowers them to plain vector loads and stores.
// V3-LABEL: func.func @scale
// V3: affine.for %{{.*}} = 0 to 1024 step 8
// V3: vector.transfer_read {{.*}} {in_bounds = [true]} : memref<1024xf32>, vector<8xf32>
// V3: vector.transfer_write {{.*}} {in_bounds = [true]} : vector<8xf32>, memref<1024xf32>
// V4-LABEL: func.func @scale
// V4: affine.for %{{.*}} = 0 to 1024 step 16
// V4: vector.transfer_read {{.*}} vector<16xf32>
func.func @scale(%a: memref<1024xf32>, %b: memref<1024xf32>) {
  affine.for %i = 0 to 1024 {
    %x = affine.load %a[%i] : memref<1024xf32>
    %y = arith.addf %x, %x : f32
    affine.store %y, %b[%i] : memref<1024xf32>
  }
  return
}

// A row sum of 197 elements (attention scores) carried in iter_args: 192
// iterations become a vector reduction, and a scalar loop after it adds the
// remaining 5 (13 on x86-64-v4) to its result.
// V3-LABEL: func.func @row_sum_remainder
// V3: %[[V:.*]] = affine.for %{{.*}} = 0 to 192 step 8 iter_args(%{{.*}} = %{{.*}}) -> (vector<8xf32>)
// V3: %[[R:.*]] = vector.reduction <add>, %[[V]]
// V3: %[[S:.*]] = arith.addf %[[R]], %{{.*}} : f32
// V3: %[[T:.*]] = affine.for %{{.*}} = 192 to 197 iter_args(%{{.*}} = %[[S]]) -> (f32)
// V3: return %[[T]]
// V4-LABEL: func.func @row_sum_remainder
// V4: affine.for %{{.*}} = 0 to 192 step 16 iter_args
// V4: affine.for %{{.*}} = 192 to 197 iter_args
func.func @row_sum_remainder(%a: memref<197xf32>, %init: f32) -> f32 {
  %r = affine.for %i = 0 to 197 iter_args(%acc = %init) -> (f32) {
    %x = affine.load %a[%i] : memref<197xf32>
    %s = arith.addf %acc, %x : f32
    affine.yield %s : f32
  }
  return %r : f32
}

// A row of a run-time number of elements (softmax over a run-time number
// of keys): the vector loop runs to the largest multiple of the lanes,
// computed at run time, and a scalar loop does the rest.
// V3-LABEL: func.func @row_sum_run_time
// V3: %[[V:.*]] = affine.for %{{.*}} = 0 to #{{.*}}()[%[[N:.*]]] step 8 iter_args(%{{.*}} = %{{.*}}) -> (vector<8xf32>)
// V3: %[[R:.*]] = vector.reduction <add>, %[[V]]
// V3: %[[S:.*]] = arith.addf %[[R]], %{{.*}} : f32
// V3: %[[T:.*]] = affine.for %{{.*}} = #{{.*}}()[%[[N]]] to %[[N]] iter_args(%{{.*}} = %[[S]]) -> (f32)
// V3: return %[[T]]
func.func @row_sum_run_time(%a: memref<?xf32>, %n: index, %init: f32) -> f32 {
  %r = affine.for %i = 0 to %n iter_args(%acc = %init) -> (f32) {
    %x = affine.load %a[%i] : memref<?xf32>
    %s = arith.addf %acc, %x : f32
    affine.yield %s : f32
  }
  return %r : f32
}

// Too short for one vector: left as it is.
// V3-LABEL: func.func @short
// V3: affine.for %{{.*}} = 0 to 5 {
// V3-NOT: vector
func.func @short(%a: memref<5xf32>) {
  affine.for %i = 0 to 5 {
    %x = affine.load %a[%i] : memref<5xf32>
    %y = arith.addf %x, %x : f32
    affine.store %y, %a[%i] : memref<5xf32>
  }
  return
}

// Each loop takes its own vector length: a loop over a buffer of i1 (one
// byte per element, which a vector<Nxi1> load would read as bits) stays
// scalar and does not impose 256 lanes on the f32 loop beside it.
// V3-LABEL: func.func @per_loop_lanes
// V3: affine.for %{{.*}} = 0 to 64 {
// V3: arith.xori %{{.*}} : i1
// V3: affine.for %{{.*}} = 0 to 64 step 8
// V3: vector<8xf32>
func.func @per_loop_lanes(%m: memref<64xi1>, %a: memref<64xf32>) {
  affine.for %i = 0 to 64 {
    %x = affine.load %m[%i] : memref<64xi1>
    %y = arith.xori %x, %x : i1
    affine.store %y, %m[%i] : memref<64xi1>
  }
  affine.for %i = 0 to 64 {
    %x = affine.load %a[%i] : memref<64xf32>
    %y = arith.addf %x, %x : f32
    affine.store %y, %a[%i] : memref<64xf32>
  }
  return
}

// A remainder that a narrower power-of-two vector divides runs in that
// vector: 72 channels are 64 in vectors of 16 and 8 in one vector of 8 on
// x86-64-v4 (9 vectors of 8 on x86-64-v3); a loop of 4 runs in one vector
// of 4; a loop of 3 stays scalar.
// V4-LABEL: func.func @narrow_remainder
// V4: affine.for %{{.*}} = 0 to 64 step 16 {
// V4: vector.transfer_read {{.*}} : memref<72xf32>, vector<16xf32>
// V4: affine.for %{{.*}} = 64 to 72 step 8 {
// V4: vector.transfer_read {{.*}} {in_bounds = [true]} : memref<72xf32>, vector<8xf32>
// V4: vector.transfer_write {{.*}} {in_bounds = [true]} : vector<8xf32>, memref<72xf32>
// V4: affine.for %{{.*}} = 0 to 4 step 4 {
// V4: vector.transfer_read {{.*}} : memref<4xf32>, vector<4xf32>
// V4: affine.for %{{.*}} = 0 to 3 {
// V4-NOT: vector
// V4: return
// V3-LABEL: func.func @narrow_remainder
// V3: affine.for %{{.*}} = 0 to 72 step 8 {
// V3-NOT: affine.for %{{.*}} = 64 to 72
func.func @narrow_remainder(%a: memref<72xf32>, %b: memref<4xf32>, %c: memref<3xf32>) {
  affine.for %i = 0 to 72 {
    %x = affine.load %a[%i] : memref<72xf32>
    %y = arith.addf %x, %x : f32
    affine.store %y, %a[%i] : memref<72xf32>
  }
  affine.for %i = 0 to 4 {
    %x = affine.load %b[%i] : memref<4xf32>
    %y = arith.addf %x, %x : f32
    affine.store %y, %b[%i] : memref<4xf32>
  }
  affine.for %i = 0 to 3 {
    %x = affine.load %c[%i] : memref<3xf32>
    %y = arith.addf %x, %x : f32
    affine.store %y, %c[%i] : memref<3xf32>
  }
  return
}

// Accesses that step other than one element per iteration along the
// innermost dimension (a flip, a strided slice) stay scalar: a contiguous
// vector would read the wrong elements.
// V4-LABEL: func.func @non_unit_stride
// V4: affine.for %{{.*}} = 0 to 16 {
// V4: affine.load %{{.*}}[-%{{.*}} + 15]
// V4: affine.for %{{.*}} = 0 to 16 {
// V4: affine.load %{{.*}}[%{{.*}} * 2]
// V4-NOT: vector.transfer_read
// V4: return
func.func @non_unit_stride(%a: memref<16xf32>, %b: memref<32xf32>, %c: memref<16xf32>) {
  affine.for %i = 0 to 16 {
    %x = affine.load %a[15 - %i] : memref<16xf32>
    affine.store %x, %c[%i] : memref<16xf32>
  }
  affine.for %i = 0 to 16 {
    %x = affine.load %b[%i * 2] : memref<32xf32>
    affine.store %x, %c[%i] : memref<16xf32>
  }
  return
}

// A causal mask built from the loop indices (column - row <= 0): the
// column index, read as a value, becomes a vector of consecutive indices
// (broadcast + [0, 1, ..., 15]) and the loop is vectorized. In a loop that
// stays scalar (its accesses step by two), the cast of its index is left.
// V4-LABEL: func.func @index_as_value
// V4-NOT: memref.alloca
// V4: affine.for %[[I:.*]] = 0 to 4 {
// V4: affine.for %[[J:.*]] = 0 to 32 step 16 {
// V4: %[[X:.*]] = vector.transfer_read
// V4: %[[JC:.*]] = arith.index_cast %[[J]] : index to i64
// V4: %[[JV:.*]] = vector.broadcast %[[JC]] : i64 to vector<16xi64>
// V4: %[[STEPS:.*]] = arith.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]> : vector<16xi64>
// V4: %[[COLS:.*]] = arith.addi %[[JV]], %[[STEPS]] : vector<16xi64>
// V4: arith.subi %[[COLS]], %{{.*}} : vector<16xi64>
// V4: arith.select %{{.*}} : vector<16xi1>, vector<16xf32>
// V4: vector.transfer_write
// V4: affine.for %[[K:.*]] = 0 to 16 {
// V4: affine.load %{{.*}}[%[[K]] * 2]
// V4: arith.index_cast %[[K]] : index to i64
// V4: return
func.func @index_as_value(%s: memref<4x32xf32>, %o: memref<4x32xf32>,
                          %b: memref<32xf32>, %c: memref<16xf32>) {
  %zero = arith.constant 0 : i64
  %ninf = arith.constant 0xFF800000 : f32
  %fzero = arith.constant 0.0 : f32
  affine.for %i = 0 to 4 {
    affine.for %j = 0 to 32 {
      %x = affine.load %s[%i, %j] : memref<4x32xf32>
      %row = arith.index_cast %i : index to i64
      %col = arith.index_cast %j : index to i64
      %d = arith.subi %col, %row : i64
      %keep = arith.cmpi sle, %d, %zero : i64
      %m = arith.select %keep, %fzero, %ninf : f32
      %y = arith.addf %x, %m : f32
      affine.store %y, %o[%i, %j] : memref<4x32xf32>
    }
  }
  affine.for %k = 0 to 16 {
    %x = affine.load %b[%k * 2] : memref<32xf32>
    %kc = arith.index_cast %k : index to i64
    %kf = arith.sitofp %kc : i64 to f32
    %y = arith.addf %x, %kf : f32
    affine.store %y, %c[%k] : memref<16xf32>
  }
  return
}

// A declaration has no body to vectorize, and stays as it is (under
// AddressSanitizer this read past the operation before: make
// check-sanitize).
// V4-LABEL: func.func private @declaration(memref<16xf32>)
func.func private @declaration(memref<16xf32>)

// A loop marked parallel (pb.parallel: S4 maps it onto threads) stays marked
// once vectorized (4 lanes of 128-bit accesses); the reduction next to it,
// vectorized too, is not marked.
// GPU-LABEL: func.func @marked
// GPU: affine.for %{{.*}} = 0 to 256 step 4 {
// GPU: vector.transfer_write
// GPU-NEXT: } {pb.parallel}
// GPU: affine.for %{{.*}} = 0 to 256 step 4 iter_args
// GPU-NOT: pb.parallel
// GPU: return
func.func @marked(%a: memref<256xf32>, %b: memref<256xf32>) -> f32 {
  %zero = arith.constant 0.0 : f32
  affine.for %i = 0 to 256 {
    %x = affine.load %a[%i] : memref<256xf32>
    %y = arith.addf %x, %x : f32
    affine.store %y, %b[%i] : memref<256xf32>
  } {pb.parallel}
  %s = affine.for %i = 0 to 256 iter_args(%acc = %zero) -> f32 {
    %x = affine.load %a[%i] : memref<256xf32>
    %t = arith.addf %acc, %x : f32
    affine.yield %t : f32
  }
  return %s : f32
}
