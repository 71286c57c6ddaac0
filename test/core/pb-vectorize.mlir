// RUN: pb-opt --pass-pipeline="builtin.module(pb-attach-target{target=cpu-x86-64-v3},func.func(pb-vectorize))" %s | FileCheck %s --check-prefix=V3
// RUN: pb-opt --pass-pipeline="builtin.module(pb-attach-target{target=cpu-x86-64-v4},func.func(pb-vectorize))" %s | FileCheck %s --check-prefix=V4

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
