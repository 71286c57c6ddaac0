// RUN: pb-opt %s --pb-emulate-bf16 | FileCheck %s

// bf16 arithmetic computes in f32, each result rounded back to bf16 (the
// product of a multiply-add too: the conversions are not marked contract,
// which would let extf(truncf(x)) fold). The conversions are integer
// operations: a shift out, a rounding bias to nearest even back. A select
// moves bits and stays on bf16.
// CHECK-LABEL: func.func @arith
// CHECK-NOT: fastmath
// CHECK: %[[P:.*]] = arith.mulf %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK: %[[PI:.*]] = arith.bitcast %[[P]] : vector<8xf32> to vector<8xi32>
// CHECK: %[[BIASED:.*]] = arith.addi %[[PI]], %{{.*}} : vector<8xi32>
// CHECK: arith.shrui %[[BIASED]]
// CHECK: %[[PB:.*]] = arith.bitcast %{{.*}} : vector<8xi16> to vector<8xbf16>
// CHECK: arith.bitcast %[[PB]] : vector<8xbf16> to vector<8xi16>
// CHECK: arith.addf %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK: math.sqrt %{{.*}} : vector<8xf32>
// CHECK: math.fma %{{.*}} : vector<8xf32>
// CHECK: arith.cmpf olt, %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : vector<8xi1>, vector<8xbf16>
// CHECK-NOT: fastmath
// CHECK: return
func.func @arith(%a: vector<8xbf16>, %b: vector<8xbf16>, %c: vector<8xbf16>) -> vector<8xbf16> {
  %p = arith.mulf %a, %b : vector<8xbf16>
  %s = arith.addf %p, %c : vector<8xbf16>
  %r = math.sqrt %s : vector<8xbf16>
  %f = math.fma %r, %a, %b : vector<8xbf16>
  %lt = arith.cmpf olt, %a, %b : vector<8xbf16>
  %sel = arith.select %lt, %f, %s : vector<8xi1>, vector<8xbf16>
  return %sel : vector<8xbf16>
}

// f64 to bf16 or f16: rounded to f32 to odd (toward zero, the last bit set
// when inexact), then to nearest even, one correct rounding. An f16 fma
// computes in f64 (LLVM would, and round with __truncdfhf2).
// CHECK-LABEL: func.func @wide
// CHECK: %[[N:.*]] = arith.truncf %arg0 : f64 to f32
// CHECK: %[[BACK:.*]] = arith.extf %[[N]] : f32 to f64
// CHECK: %[[BITS:.*]] = arith.bitcast %[[N]] : f32 to i32
// CHECK: arith.subi %[[BITS]]
// CHECK: arith.ori
// CHECK: arith.cmpf one, %[[BACK]], %arg0 : f64
// CHECK: %[[ODD:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK: arith.bitcast %[[ODD]] : f32 to i32
// CHECK: arith.bitcast %{{.*}} : i16 to bf16
// CHECK: arith.extf %arg1 : vector<4xf16> to vector<4xf64>
// CHECK: math.fma %{{.*}} : vector<4xf64>
// CHECK: arith.truncf %{{.*}} : vector<4xf64> to vector<4xf32>
// CHECK: arith.truncf %{{.*}} : vector<4xf32> to vector<4xf16>
// CHECK-NOT: math.fma
// CHECK: return
func.func @wide(%w: f64, %x: vector<4xf16>) -> (bf16, vector<4xf16>) {
  %v = arith.truncf %w : f64 to bf16
  %f = math.fma %x, %x, %x : vector<4xf16>
  return %v, %f : bf16, vector<4xf16>
}

// Other f16 arithmetic is left to LLVM (F16C converts in hardware), and
// functions without bf16 are untouched.
// CHECK-LABEL: func.func @half
// CHECK-NEXT: %[[P:.*]] = arith.mulf %arg0, %arg1 : vector<8xf16>
// CHECK-NEXT: %[[E:.*]] = math.exp %[[P]] : vector<8xf16>
// CHECK-NEXT: %[[T:.*]] = arith.truncf %arg2 : vector<8xf32> to vector<8xf16>
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[E]], %[[T]] fastmath<contract> : vector<8xf16>
// CHECK-NEXT: return %[[S]]
func.func @half(%a: vector<8xf16>, %b: vector<8xf16>, %c: vector<8xf32>) -> vector<8xf16> {
  %p = arith.mulf %a, %b : vector<8xf16>
  %e = math.exp %p : vector<8xf16>
  %t = arith.truncf %c : vector<8xf32> to vector<8xf16>
  %s = arith.addf %e, %t fastmath<contract> : vector<8xf16>
  return %s : vector<8xf16>
}

// CHECK-LABEL: func.func @float32
// CHECK-NEXT: %[[E:.*]] = arith.extf %arg0 fastmath<contract> : f32 to f64
// CHECK-NEXT: %[[T:.*]] = arith.truncf %[[E]] fastmath<contract> : f64 to f32
// CHECK-NEXT: %[[M:.*]] = arith.maximumf %[[T]], %arg0 : f32
// CHECK-NEXT: return %[[M]]
func.func @float32(%a: f32) -> f32 {
  %e = arith.extf %a fastmath<contract> : f32 to f64
  %t = arith.truncf %e fastmath<contract> : f64 to f32
  %m = arith.maximumf %t, %a : f32
  return %m : f32
}
