// RUN: pb-opt --pb-explain --pass-pipeline="builtin.module(pb-attach-target{target=cpu-x86-64-v4},func.func(pb-affine-fusion))" %s 2>&1 | FileCheck %s

// The scf.parallel (a micro-kernel's shape) reads %buf only through a view
// made inside it, so upstream fusion's dependence graph, which compares
// buffers by SSA value, sees no dependence between it and the nest that
// writes %buf. %a is written by two nests (sibling mode), and sibling
// fusion would move the nest writing %buf into the later nest that also
// reads %a, below the scf.parallel: the function is left unfused.
// CHECK: remark: pb-explain: fusion: off in this function: it would move a loop nest across scf.parallel that accesses the buffer of a memref.alloc through a view
// CHECK-LABEL: func.func @write_read_through_view
// CHECK: %[[BUF:.*]] = memref.alloc() : memref<4x16xf32>
// CHECK: affine.for
// CHECK: affine.for
// CHECK: affine.store %{{.*}}, %[[BUF]]
// CHECK: scf.parallel
// CHECK: memref.collapse_shape %[[BUF]]
// CHECK: affine.for
// CHECK: affine.for
// CHECK-NOT: %[[BUF]]
// CHECK: arith.addf
func.func @write_read_through_view(%in: memref<64xf32>, %a: memref<64xf32>,
                                   %out: memref<64xf32>, %o2: memref<64xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  affine.for %i = 0 to 64 {
    %x = affine.load %in[%i] : memref<64xf32>
    %r = arith.maximumf %x, %zero : f32
    affine.store %r, %a[%i] : memref<64xf32>
  }
  %buf = memref.alloc() : memref<4x16xf32>
  affine.for %i = 0 to 4 {
    affine.for %j = 0 to 16 {
      %x = affine.load %a[%i * 16 + %j] : memref<64xf32>
      affine.store %x, %buf[%i, %j] : memref<4x16xf32>
    }
  }
  scf.parallel (%p) = (%c0) to (%c64) step (%c1) {
    %flat = memref.collapse_shape %buf [[0, 1]] : memref<4x16xf32> into memref<64xf32>
    %x = memref.load %flat[%p] : memref<64xf32>
    memref.store %x, %out[%p] : memref<64xf32>
    scf.reduce
  }
  affine.for %i = 0 to 4 {
    affine.for %j = 0 to 16 {
      %x = affine.load %a[%i * 16 + %j] : memref<64xf32>
      %y = arith.addf %x, %x : f32
      affine.store %y, %o2[%i * 16 + %j] : memref<64xf32>
    }
  }
  affine.for %i = 0 to 64 {
    affine.store %zero, %a[%i] : memref<64xf32>
  }
  memref.dealloc %buf : memref<4x16xf32>
  return
}
