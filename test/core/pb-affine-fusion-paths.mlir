// RUN: pb-opt --pb-explain --pass-pipeline="builtin.module(pb-attach-target{target=cpu-x86-64-v4},func.func(pb-affine-fusion))" %s 2>&1 | FileCheck %s

// Twenty nests that each read and update one buffer: every nest depends on
// every earlier one, 2^19 dependence paths from the first. Upstream
// fusion's path search walks them one by one (a JAX max-pool gradient
// written this way took minutes); the pass leaves such a function unfused.
// CHECK: remark: pb-explain: fusion: off in this function: its loop nests' dependences form more than 100000 paths in one block
// CHECK-LABEL: func.func @chain
// CHECK-COUNT-20: affine.for
func.func @chain(%b: memref<4xf32>) {
  %one = arith.constant 1.0 : f32
  affine.for %i = 0 to 4 {
    %v = affine.load %b[%i] : memref<4xf32>
    %w = arith.addf %v, %one : f32
    affine.store %w, %b[%i] : memref<4xf32>
  }
  affine.for %i = 0 to 4 {
    %v = affine.load %b[%i] : memref<4xf32>
    %w = arith.addf %v, %one : f32
    affine.store %w, %b[%i] : memref<4xf32>
  }
  affine.for %i = 0 to 4 {
    %v = affine.load %b[%i] : memref<4xf32>
    %w = arith.addf %v, %one : f32
    affine.store %w, %b[%i] : memref<4xf32>
  }
  affine.for %i = 0 to 4 {
    %v = affine.load %b[%i] : memref<4xf32>
    %w = arith.addf %v, %one : f32
    affine.store %w, %b[%i] : memref<4xf32>
  }
  affine.for %i = 0 to 4 {
    %v = affine.load %b[%i] : memref<4xf32>
    %w = arith.addf %v, %one : f32
    affine.store %w, %b[%i] : memref<4xf32>
  }
  affine.for %i = 0 to 4 {
    %v = affine.load %b[%i] : memref<4xf32>
    %w = arith.addf %v, %one : f32
    affine.store %w, %b[%i] : memref<4xf32>
  }
  affine.for %i = 0 to 4 {
    %v = affine.load %b[%i] : memref<4xf32>
    %w = arith.addf %v, %one : f32
    affine.store %w, %b[%i] : memref<4xf32>
  }
  affine.for %i = 0 to 4 {
    %v = affine.load %b[%i] : memref<4xf32>
    %w = arith.addf %v, %one : f32
    affine.store %w, %b[%i] : memref<4xf32>
  }
  affine.for %i = 0 to 4 {
    %v = affine.load %b[%i] : memref<4xf32>
    %w = arith.addf %v, %one : f32
    affine.store %w, %b[%i] : memref<4xf32>
  }
  affine.for %i = 0 to 4 {
    %v = affine.load %b[%i] : memref<4xf32>
    %w = arith.addf %v, %one : f32
    affine.store %w, %b[%i] : memref<4xf32>
  }
  affine.for %i = 0 to 4 {
    %v = affine.load %b[%i] : memref<4xf32>
    %w = arith.addf %v, %one : f32
    affine.store %w, %b[%i] : memref<4xf32>
  }
  affine.for %i = 0 to 4 {
    %v = affine.load %b[%i] : memref<4xf32>
    %w = arith.addf %v, %one : f32
    affine.store %w, %b[%i] : memref<4xf32>
  }
  affine.for %i = 0 to 4 {
    %v = affine.load %b[%i] : memref<4xf32>
    %w = arith.addf %v, %one : f32
    affine.store %w, %b[%i] : memref<4xf32>
  }
  affine.for %i = 0 to 4 {
    %v = affine.load %b[%i] : memref<4xf32>
    %w = arith.addf %v, %one : f32
    affine.store %w, %b[%i] : memref<4xf32>
  }
  affine.for %i = 0 to 4 {
    %v = affine.load %b[%i] : memref<4xf32>
    %w = arith.addf %v, %one : f32
    affine.store %w, %b[%i] : memref<4xf32>
  }
  affine.for %i = 0 to 4 {
    %v = affine.load %b[%i] : memref<4xf32>
    %w = arith.addf %v, %one : f32
    affine.store %w, %b[%i] : memref<4xf32>
  }
  affine.for %i = 0 to 4 {
    %v = affine.load %b[%i] : memref<4xf32>
    %w = arith.addf %v, %one : f32
    affine.store %w, %b[%i] : memref<4xf32>
  }
  affine.for %i = 0 to 4 {
    %v = affine.load %b[%i] : memref<4xf32>
    %w = arith.addf %v, %one : f32
    affine.store %w, %b[%i] : memref<4xf32>
  }
  affine.for %i = 0 to 4 {
    %v = affine.load %b[%i] : memref<4xf32>
    %w = arith.addf %v, %one : f32
    affine.store %w, %b[%i] : memref<4xf32>
  }
  affine.for %i = 0 to 4 {
    %v = affine.load %b[%i] : memref<4xf32>
    %w = arith.addf %v, %one : f32
    affine.store %w, %b[%i] : memref<4xf32>
  }
  return
}
