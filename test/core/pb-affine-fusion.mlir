// RUN: pb-opt --target=cpu-x86-64-v4 --pb-explain --pass-pipeline="builtin.module(pb-attach-target{target=cpu-x86-64-v4},func.func(pb-affine-fusion))" %s 2>&1 | FileCheck %s
// RUN: pb-opt --pb-explain --pass-pipeline="builtin.module(pb-attach-target{target=cpu-x86-64-v4},func.func(pb-affine-fusion{max-nests=1}))" %s 2>&1 | FileCheck %s --check-prefix=BUDGET

// A producer nest writing a temporary and a consumer reading it fuse into
// one nest; the private-buffer budget is the chip's L1 data cache. With
// more nests than max-nests (a compile-time budget) nothing is fused.
// BUDGET: remark: pb-explain: fusion: off in this function: 2 sibling loop nests in one block exceed max-nests (1)
// BUDGET-LABEL: func.func @producer_consumer
// BUDGET: affine.for
// BUDGET: affine.for
// CHECK: remark: pb-explain: fusion (greedy): 2 -> 1 top-level loop nests; private buffers up to 32 KiB (l1d of cpu-x86-64-v4)
// CHECK-LABEL: func.func @producer_consumer
// CHECK: affine.for
// CHECK-NOT: affine.for
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: return
func.func @producer_consumer(%a: memref<64xf32>, %out: memref<64xf32>) {
  %tmp = memref.alloc() : memref<64xf32>
  affine.for %i = 0 to 64 {
    %x = affine.load %a[%i] : memref<64xf32>
    %y = arith.mulf %x, %x : f32
    affine.store %y, %tmp[%i] : memref<64xf32>
  }
  affine.for %i = 0 to 64 {
    %y = affine.load %tmp[%i] : memref<64xf32>
    %z = arith.addf %y, %y : f32
    affine.store %z, %out[%i] : memref<64xf32>
  }
  memref.dealloc %tmp : memref<64xf32>
  return
}
