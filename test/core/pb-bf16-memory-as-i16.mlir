// RUN: pb-opt %s --pass-pipeline='builtin.module(llvm.func(pb-bf16-memory-as-i16))' | FileCheck %s

// Masked loads and stores, gathers and scatters of bf16 vectors move i16
// lanes between bitcasts; other element types and plain loads stay.
// CHECK-LABEL: llvm.func @masked
// CHECK: %[[Z:.*]] = llvm.bitcast %arg2 : vector<8xbf16> to vector<8xi16>
// CHECK: %[[L:.*]] = llvm.intr.masked.load %arg0, %arg1, %[[Z]] {alignment = 2 : i32} : (!llvm.ptr, vector<8xi1>, vector<8xi16>) -> vector<8xi16>
// CHECK: %[[B:.*]] = llvm.bitcast %[[L]] : vector<8xi16> to vector<8xbf16>
// CHECK: %[[S:.*]] = llvm.bitcast %[[B]] : vector<8xbf16> to vector<8xi16>
// CHECK: llvm.intr.masked.store %[[S]], %arg0, %arg1 {alignment = 2 : i32} : vector<8xi16>, vector<8xi1> into !llvm.ptr
// CHECK: llvm.intr.masked.load %arg0, %arg1, %arg3 {alignment = 4 : i32} : (!llvm.ptr, vector<8xi1>, vector<8xf32>) -> vector<8xf32>
// CHECK: llvm.load %arg0 {alignment = 2 : i64} : !llvm.ptr -> vector<8xbf16>
llvm.func @masked(%p: !llvm.ptr, %m: vector<8xi1>, %z: vector<8xbf16>,
                  %zf: vector<8xf32>) -> vector<8xbf16> {
  %v = llvm.intr.masked.load %p, %m, %z {alignment = 2 : i32}
      : (!llvm.ptr, vector<8xi1>, vector<8xbf16>) -> vector<8xbf16>
  llvm.intr.masked.store %v, %p, %m {alignment = 2 : i32}
      : vector<8xbf16>, vector<8xi1> into !llvm.ptr
  %f = llvm.intr.masked.load %p, %m, %zf {alignment = 4 : i32}
      : (!llvm.ptr, vector<8xi1>, vector<8xf32>) -> vector<8xf32>
  %w = llvm.load %p {alignment = 2 : i64} : !llvm.ptr -> vector<8xbf16>
  llvm.return %w : vector<8xbf16>
}

// CHECK-LABEL: llvm.func @gather
// CHECK: %[[G:.*]] = llvm.intr.masked.gather %arg0, %arg1, %{{.*}} {alignment = 2 : i32} : (vector<4x!llvm.ptr>, vector<4xi1>, vector<4xi16>) -> vector<4xi16>
// CHECK: llvm.bitcast %[[G]] : vector<4xi16> to vector<4xbf16>
// CHECK: llvm.intr.masked.scatter %{{.*}}, %arg0, %arg1 {alignment = 2 : i32} : vector<4xi16>, vector<4xi1> into vector<4x!llvm.ptr>
llvm.func @gather(%ptrs: vector<4x!llvm.ptr>, %m: vector<4xi1>, %z: vector<4xbf16>) {
  %g = llvm.intr.masked.gather %ptrs, %m, %z {alignment = 2 : i32}
      : (vector<4x!llvm.ptr>, vector<4xi1>, vector<4xbf16>) -> vector<4xbf16>
  llvm.intr.masked.scatter %g, %ptrs, %m {alignment = 2 : i32}
      : vector<4xbf16>, vector<4xi1> into vector<4x!llvm.ptr>
  llvm.return
}

// A bf16 lane inserted into or extracted from a vector: on i16 lanes.
// CHECK-LABEL: llvm.func @lanes
// CHECK: %[[V:.*]] = llvm.bitcast %arg0 : vector<8xbf16> to vector<8xi16>
// CHECK: %[[S:.*]] = llvm.bitcast %arg1 : bf16 to i16
// CHECK: %[[I:.*]] = llvm.insertelement %[[S]], %[[V]][%arg2 : i64] : vector<8xi16>
// CHECK: %[[IB:.*]] = llvm.bitcast %[[I]] : vector<8xi16> to vector<8xbf16>
// CHECK: %[[IV:.*]] = llvm.bitcast %[[IB]] : vector<8xbf16> to vector<8xi16>
// CHECK: %[[E:.*]] = llvm.extractelement %[[IV]][%arg2 : i64] : vector<8xi16>
// CHECK: llvm.bitcast %[[E]] : i16 to bf16
// CHECK: llvm.insertelement %{{.*}}, %{{.*}}[%arg2 : i64] : vector<8xf32>
llvm.func @lanes(%v: vector<8xbf16>, %s: bf16, %i: i64, %f: vector<8xf32>,
                 %x: f32) -> bf16 {
  %w = llvm.insertelement %s, %v[%i : i64] : vector<8xbf16>
  %e = llvm.extractelement %w[%i : i64] : vector<8xbf16>
  %g = llvm.insertelement %x, %f[%i : i64] : vector<8xf32>
  llvm.return %e : bf16
}
