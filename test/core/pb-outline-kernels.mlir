// RUN: pb-opt --pb-explain --pb-outline-kernels %s 2>&1 | FileCheck %s

// Three nests, two of them the same code on different buffers: two
// kernels, the first called twice, each named after a hash of its code.
// Constants are copied into the kernel; the buffers and the index the
// bounds use are its arguments, in order of first use.
// CHECK: remark: pb-explain: 7 kernels outlined, 5 distinct after deduplication; 1 loop nests left in place
// CHECK-LABEL: func.func @three_nests
// CHECK-SAME: (%[[A:.*]]: memref<64x32xf32>, %[[B:.*]]: memref<64x32xf32>, %[[O1:.*]]: memref<64xf32>, %[[O2:.*]]: memref<64xf32>, %[[O3:.*]]: memref<64xf32>, %[[N:.*]]: index)
// CHECK: call @[[K0:kernel_[0-9a-f]{16}]](%[[O1]], %[[N]], %[[A]])
// CHECK-NEXT: call @[[K0]](%[[O2]], %[[N]], %[[B]])
// CHECK-NEXT: call @[[K2:kernel_[0-9a-f]{16}]](%[[A]], %[[O3]])
// CHECK-NEXT: return
// CHECK: func.func private @[[K0]](%[[KO:.*]]: memref<64xf32>, %[[KN:.*]]: index, %[[KI:.*]]: memref<64x32xf32>)
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0.0
// CHECK-NEXT: affine.for %[[I:.*]] = 0 to 64
// CHECK-NEXT: affine.store %[[Z]], %[[KO]][%[[I]]]
// CHECK-NEXT: affine.for %{{.*}} = 0 to %[[KN]]
// CHECK: math.tanh
// CHECK: } {pb.parallel}
// CHECK-NEXT: return
// CHECK-NOT: func.func private @[[K0]]
// CHECK: func.func private @[[K2]](
// CHECK: math.exp
func.func @three_nests(%a: memref<64x32xf32>, %b: memref<64x32xf32>,
                       %o1: memref<64xf32>, %o2: memref<64xf32>,
                       %o3: memref<64xf32>, %n: index) {
  %z = arith.constant 0.0 : f32
  affine.for %i = 0 to 64 {
    affine.store %z, %o1[%i] : memref<64xf32>
    affine.for %j = 0 to %n {
      %x = affine.load %a[%i, %j] : memref<64x32xf32>
      %t = math.tanh %x : f32
      %s = affine.load %o1[%i] : memref<64xf32>
      %r = arith.addf %t, %s : f32
      affine.store %r, %o1[%i] : memref<64xf32>
    }
  } {pb.parallel}
  affine.for %i = 0 to 64 {
    affine.store %z, %o2[%i] : memref<64xf32>
    affine.for %j = 0 to %n {
      %x = affine.load %b[%i, %j] : memref<64x32xf32>
      %t = math.tanh %x : f32
      %s = affine.load %o2[%i] : memref<64xf32>
      %r = arith.addf %t, %s : f32
      affine.store %r, %o2[%i] : memref<64xf32>
    }
  } {pb.parallel}
  affine.for %i = 0 to 64 {
    %x = affine.load %a[%i, 0] : memref<64x32xf32>
    %t = math.exp %x : f32
    affine.store %t, %o3[%i] : memref<64xf32>
  }
  return
}

// A static strided view is an argument like any buffer; the same nest in
// another function is the same kernel, defined once.
// CHECK-LABEL: func.func @views
// CHECK: %[[V:.*]] = memref.subview
// CHECK-NEXT: call @[[KV:kernel_[0-9a-f]{16}]](%[[V]])
// CHECK: func.func private @[[KV]](%{{.*}}: memref<4x8xf32, strided<[16, 1], offset: 4>>)
// CHECK-LABEL: func.func @views_again
// CHECK: memref.subview
// CHECK: call @[[KV]](
// CHECK-NOT: func.func private
func.func @views(%a: memref<8x16xf32>) {
  %one = arith.constant 1.0 : f32
  %v = memref.subview %a[0, 4] [4, 8] [1, 1]
      : memref<8x16xf32> to memref<4x8xf32, strided<[16, 1], offset: 4>>
  affine.for %i = 0 to 4 {
    affine.for %j = 0 to 8 {
      affine.store %one, %v[%i, %j] : memref<4x8xf32, strided<[16, 1], offset: 4>>
    }
  }
  return
}
func.func @views_again(%a: memref<8x16xf32>) {
  %v = memref.subview %a[0, 4] [4, 8] [1, 1]
      : memref<8x16xf32> to memref<4x8xf32, strided<[16, 1], offset: 4>>
  %one = arith.constant 1.0 : f32
  affine.for %i = 0 to 4 {
    affine.for %j = 0 to 8 {
      affine.store %one, %v[%i, %j] : memref<4x8xf32, strided<[16, 1], offset: 4>>
    }
  }
  return
}

// Kernels take bare pointers: a nest on a buffer of dynamic size stays.
// CHECK-LABEL: func.func @dynamic
// CHECK-NOT: call
// CHECK: affine.for
func.func @dynamic(%a: memref<?xf32>, %n: index) {
  %one = arith.constant 1.0 : f32
  affine.for %i = 0 to %n {
    affine.store %one, %a[%i] : memref<?xf32>
  }
  return
}

// The micro-kernels of pb-map-matrix-units are scf loops: outlined alike,
// their bounds' values passed or copied in.
// CHECK-LABEL: func.func @scf_loops
// CHECK: call @[[KS:kernel_[0-9a-f]{16}]](%{{.*}}, %{{.*}}) : (index, memref<64xf32>) -> ()
// CHECK-NEXT: return
// CHECK: func.func private @[[KS]](%[[N:.*]]: index, %[[A:.*]]: memref<64xf32>)
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK: scf.parallel (%{{.*}}) = (%[[C0]]) to (%[[N]]) step (%[[C1]])
func.func @scf_loops(%a: memref<64xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %one, %a[%i] : memref<64xf32>
  }
  return
}

// 16-bit float values are passed as the integers of their bits (x86's
// calling convention would round bf16 arguments through f32 with
// compiler-rt's __truncsfbf2) and bitcast back inside the kernel.
// CHECK-LABEL: func.func @half_floats
// CHECK: %[[V:.*]] = vector.broadcast %{{.*}} : bf16 to vector<4xbf16>
// CHECK-DAG: %[[VB:.*]] = arith.bitcast %[[V]] : vector<4xbf16> to vector<4xi16>
// CHECK-DAG: %[[HB:.*]] = arith.bitcast %{{.*}} : f16 to i16
// CHECK: call @[[KH:kernel_[0-9a-f]{16}]](%[[VB]], %{{.*}}, %[[HB]], %{{.*}}) : (vector<4xi16>, memref<6x4xbf16>, i16, memref<6xf16>) -> ()
// CHECK: func.func private @[[KH]](%[[AV:.*]]: vector<4xi16>, %{{.*}}: memref<6x4xbf16>, %[[AH:.*]]: i16, %{{.*}}: memref<6xf16>)
// CHECK-DAG: arith.bitcast %[[AV]] : vector<4xi16> to vector<4xbf16>
// CHECK-DAG: arith.bitcast %[[AH]] : i16 to f16
func.func @half_floats(%s: memref<bf16>, %a: memref<6x4xbf16>, %h: f16, %b: memref<6xf16>) {
  %0 = memref.load %s[] : memref<bf16>
  %v = vector.broadcast %0 : bf16 to vector<4xbf16>
  %c0 = arith.constant 0 : index
  affine.for %i = 0 to 6 {
    vector.transfer_write %v, %a[%i, %c0] {in_bounds = [true]} : vector<4xbf16>, memref<6x4xbf16>
    affine.store %h, %b[%i] : memref<6xf16>
  }
  return
}
