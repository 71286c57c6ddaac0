// RUN: pb-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(pb-fold-views))' | FileCheck %s

// A store through a padding subview and a load through an expand_shape
// address the viewed buffers, with the views' offsets and shapes in the
// maps; the views go.
// CHECK-LABEL: func.func @subview_and_expand
// CHECK-NOT: memref.subview
// CHECK-NOT: memref.expand_shape
// CHECK: affine.load %{{.*}}[%[[I:.*]] * 8 + %[[J:.*]]] : memref<32xf32>
// CHECK: affine.store %{{.*}}, %{{.*}}[0, %[[I]] + 1, %[[J]] + 2] : memref<1x6x12xf32>
func.func @subview_and_expand(%src: memref<32xf32>, %dst: memref<1x6x12xf32>) {
  %e = memref.expand_shape %src [[0, 1]] output_shape [4, 8] : memref<32xf32> into memref<4x8xf32>
  %s = memref.subview %dst[0, 1, 2] [1, 4, 8] [1, 1, 1] : memref<1x6x12xf32> to memref<4x8xf32, strided<[12, 1], offset: 14>>
  affine.for %i = 0 to 4 {
    affine.for %j = 0 to 8 {
      %v = affine.load %e[%i, %j] : memref<4x8xf32>
      affine.store %v, %s[%i, %j] : memref<4x8xf32, strided<[12, 1], offset: 14>>
    }
  }
  return
}

// -----

// Views of views fold in turn; a strided subview scales the index.
// CHECK-LABEL: func.func @view_of_view
// CHECK-NOT: memref.subview
// CHECK: affine.store %{{.*}}, %{{.*}}[%{{.*}} * 2 + 9] : memref<16xf32>
func.func @view_of_view(%v: f32, %dst: memref<16xf32>) {
  %e = memref.expand_shape %dst [[0, 1]] output_shape [2, 8] : memref<16xf32> into memref<2x8xf32>
  %s = memref.subview %e[1, 1] [1, 4] [1, 2] : memref<2x8xf32> to memref<4xf32, strided<[2], offset: 9>>
  affine.for %i = 0 to 4 {
    affine.store %v, %s[%i] : memref<4xf32, strided<[2], offset: 9>>
  }
  return
}

// -----

// A collapse_shape view is kept (its indices would need floordiv/mod).
// CHECK-LABEL: func.func @collapse_kept
// CHECK: %[[C:.*]] = memref.collapse_shape
// CHECK: affine.store %{{.*}}, %[[C]]
func.func @collapse_kept(%v: f32, %dst: memref<2x8xf32>) {
  %c = memref.collapse_shape %dst [[0, 1]] : memref<2x8xf32> into memref<16xf32>
  affine.for %i = 0 to 16 {
    affine.store %v, %c[%i] : memref<16xf32>
  }
  return
}

// -----

// When a view of the buffer is also used by another op (a linalg op, which
// fusion could not see through a folded access), no access is folded: the
// views stay and pb-affine-fusion keeps its guard.
// CHECK-LABEL: func.func @view_used_by_linalg
// CHECK: %[[E:.*]] = memref.expand_shape
// CHECK: affine.load %[[E]]
// CHECK: linalg.fill ins(%{{.*}}) outs(%[[E]]
func.func @view_used_by_linalg(%buf: memref<32xf32>, %out: memref<4x8xf32>) {
  %z = arith.constant 0.0 : f32
  %e = memref.expand_shape %buf [[0, 1]] output_shape [4, 8] : memref<32xf32> into memref<4x8xf32>
  affine.for %i = 0 to 4 {
    affine.for %j = 0 to 8 {
      %v = affine.load %e[%i, %j] : memref<4x8xf32>
      affine.store %v, %out[%i, %j] : memref<4x8xf32>
    }
  }
  linalg.fill ins(%z : f32) outs(%e : memref<4x8xf32>)
  return
}

// -----

// A head split (expand_shape) of a strided column block (subview) of a
// QKV projection: the expansion splits the block's logical indices whatever
// its layout, then the subview folds into the projection.
// CHECK-LABEL: func.func @expand_of_strided_subview
// CHECK-NOT: memref.subview
// CHECK-NOT: memref.expand_shape
// CHECK: affine.load %{{.*}}[%[[S:.*]], %[[H:.*]] * 4 + %[[D:.*]] + 8] : memref<2x24xf32>
func.func @expand_of_strided_subview(%qkv: memref<2x24xf32>, %k: memref<2x2x4xf32>) {
  %s = memref.subview %qkv[0, 8] [2, 8] [1, 1] : memref<2x24xf32> to memref<2x8xf32, strided<[24, 1], offset: 8>>
  %e = memref.expand_shape %s [[0], [1, 2]] output_shape [2, 2, 4] : memref<2x8xf32, strided<[24, 1], offset: 8>> into memref<2x2x4xf32, strided<[24, 4, 1], offset: 8>>
  affine.for %i = 0 to 2 {
    affine.for %h = 0 to 2 {
      affine.for %d = 0 to 4 {
        %v = affine.load %e[%i, %h, %d] : memref<2x2x4xf32, strided<[24, 4, 1], offset: 8>>
        affine.store %v, %k[%i, %h, %d] : memref<2x2x4xf32>
      }
    }
  }
  return
}

// -----

// A squeeze (collapse_shape whose groups merge one dimension with unit
// ones) folds: the merged index goes to the large dimension, the unit ones
// read 0. A collapse that merges two large dimensions would need floordiv
// and mod: it stays, and so does every view of its buffer.
// CHECK-LABEL: func.func @squeeze
// CHECK-NOT: memref.collapse_shape
// CHECK: affine.load %{{.*}}[0, %[[I:.*]], %[[J:.*]], 0] : memref<1x4x8x1xf32>
func.func @squeeze(%x: memref<1x4x8x1xf32>, %out: memref<4x8xf32>) {
  %c = memref.collapse_shape %x [[0, 1], [2, 3]] : memref<1x4x8x1xf32> into memref<4x8xf32>
  affine.for %i = 0 to 4 {
    affine.for %j = 0 to 8 {
      %v = affine.load %c[%i, %j] : memref<4x8xf32>
      affine.store %v, %out[%i, %j] : memref<4x8xf32>
    }
  }
  return
}

// -----

// A collapse to a scalar (rank 0) reads element 0 of every unit dimension.
// CHECK-LABEL: func.func @squeeze_to_scalar
// CHECK-NOT: memref.collapse_shape
// CHECK: affine.load %{{.*}}[0, 0] : memref<1x1xf32>
func.func @squeeze_to_scalar(%x: memref<1x1xf32>, %out: memref<4xf32>) {
  %c = memref.collapse_shape %x [] : memref<1x1xf32> into memref<f32>
  affine.for %i = 0 to 4 {
    %v = affine.load %c[] : memref<f32>
    affine.store %v, %out[%i] : memref<4xf32>
  }
  return
}

// -----

// A collapse that merges two dimensions larger than one (8 x 4 into 32)
// stays, and so does the other view of its buffer (the expand_shape).
// CHECK-LABEL: func.func @merge_stays
// CHECK: memref.collapse_shape
// CHECK: memref.expand_shape
func.func @merge_stays(%x: memref<4x8xf32>, %out: memref<32xf32>, %out2: memref<4x2x4xf32>) {
  %c = memref.collapse_shape %x [[0, 1]] : memref<4x8xf32> into memref<32xf32>
  %e = memref.expand_shape %x [[0], [1, 2]] output_shape [4, 2, 4] : memref<4x8xf32> into memref<4x2x4xf32>
  affine.for %i = 0 to 32 {
    %v = affine.load %c[%i] : memref<32xf32>
    affine.store %v, %out[%i] : memref<32xf32>
  }
  affine.for %i = 0 to 4 {
    affine.for %j = 0 to 2 {
      affine.for %k = 0 to 4 {
        %v = affine.load %e[%i, %j, %k] : memref<4x2x4xf32>
        affine.store %v, %out2[%i, %j, %k] : memref<4x2x4xf32>
      }
    }
  }
  return
}
