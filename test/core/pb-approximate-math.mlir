// RUN: pb-opt %s --pb-approximate-math | FileCheck %s

// f32 exp and tanh become arithmetic; f64 exp is left alone.
// CHECK-LABEL: func.func @approximate
// CHECK-NOT: math.exp {{.*}} : vector<16xf32>
// CHECK-NOT: math.tanh
// CHECK: arith.mulf
// CHECK: math.exp %{{.*}} : f64
func.func @approximate(%x: vector<16xf32>, %y: f32, %z: f64)
    -> (vector<16xf32>, f32, f64) {
  %a = math.exp %x : vector<16xf32>
  %b = math.tanh %y : f32
  %c = math.exp %z : f64
  return %a, %b, %c : vector<16xf32>, f32, f64
}
