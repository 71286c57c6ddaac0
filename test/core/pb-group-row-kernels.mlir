// RUN: pb-opt %s --pass-pipeline='builtin.module(func.func(pb-group-row-kernels{max-row-elements=1024}))' | FileCheck %s
// Row-wise runs of linalg ops on buffers become row kernels (all their ops
// tagged with one id, numbered per function): a softmax (the fill of each accumulator joins), a
// layernorm whose scale is indexed by the row only and whose statistics are
// per row; a run broken by a copy forms two kernels; rows longer than the
// limit, a body without a tile form (sin) and a reduction along the first
// loop stay untagged.

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
#id1 = affine_map<(d0) -> (d0)>

// CHECK-LABEL: func.func @softmax
// CHECK: linalg.fill {pb.row_kernel = 0 : i64}
// CHECK: linalg.generic {{.*}} {pb.row_kernel = 0 : i64}
// CHECK: linalg.generic {{.*}} {pb.row_kernel = 0 : i64}
// CHECK: linalg.fill {pb.row_kernel = 0 : i64}
// CHECK: linalg.generic {{.*}} {pb.row_kernel = 0 : i64}
// CHECK: linalg.generic {{.*}} {pb.row_kernel = 0 : i64}
func.func @softmax(%x: memref<64x100xf32>, %y: memref<64x100xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %m = memref.alloc() : memref<64xf32>
  linalg.fill ins(%ninf : f32) outs(%m : memref<64xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<64x100xf32>) outs(%m : memref<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.maxnumf %in, %acc : f32
    linalg.yield %r : f32
  }
  %e = memref.alloc() : memref<64x100xf32>
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : memref<64x100xf32>, memref<64xf32>) outs(%e : memref<64x100xf32>) {
  ^bb0(%in: f32, %mx: f32, %out: f32):
    %d = arith.subf %in, %mx : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  }
  %s = memref.alloc() : memref<64xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<64xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%e : memref<64x100xf32>) outs(%s : memref<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%e, %s : memref<64x100xf32>, memref<64xf32>) outs(%y : memref<64x100xf32>) {
  ^bb0(%in: f32, %sum: f32, %out: f32):
    %r = arith.divf %in, %sum : f32
    linalg.yield %r : f32
  }
  memref.dealloc %m : memref<64xf32>
  memref.dealloc %e : memref<64x100xf32>
  memref.dealloc %s : memref<64xf32>
  return
}

// CHECK-LABEL: func.func @layernorm_then_copy
// CHECK: linalg.fill {pb.row_kernel = 0 : i64}
// CHECK: linalg.generic {{.*}} {pb.row_kernel = 0 : i64}
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : memref<32xf32>) {{.*}} {pb.row_kernel = 0 : i64}
// CHECK: linalg.generic {{.*}} {pb.row_kernel = 0 : i64}
// CHECK: memref.copy
// CHECK: linalg.generic {{.*}} {pb.row_kernel = 1 : i64}
func.func @layernorm_then_copy(%x: memref<32x768xf32>, %g: memref<768xf32>, %y: memref<32x768xf32>, %z: memref<32x768xf32>, %w: memref<32xf32>) {
  %zero = arith.constant 0.0 : f32
  %s = memref.alloc() : memref<32xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<32xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<32x768xf32>) outs(%s : memref<32xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %r = arith.addf %sq, %acc : f32
    linalg.yield %r : f32
  }
  %r = memref.alloc() : memref<32xf32>
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%s : memref<32xf32>) outs(%r : memref<32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %q = math.rsqrt %in : f32
    linalg.yield %q : f32
  }
  linalg.generic {indexing_maps = [#id, #row, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %r, %g : memref<32x768xf32>, memref<32xf32>, memref<768xf32>) outs(%y : memref<32x768xf32>) {
  ^bb0(%in: f32, %rs: f32, %gamma: f32, %out: f32):
    %a = arith.mulf %in, %rs : f32
    %b = arith.mulf %a, %gamma : f32
    linalg.yield %b : f32
  }
  memref.copy %y, %z : memref<32x768xf32> to memref<32x768xf32>
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%z : memref<32x768xf32>) outs(%w : memref<32xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.maximumf %in, %acc : f32
    linalg.yield %m : f32
  }
  return
}

// Unit loops count for none: a batch of one (1x16 rows) reduced into a
// kept dimension, the mean computed over 16 values read through it, the
// centered row over all three loops.
// CHECK-LABEL: func.func @unit_dims
// CHECK: linalg.fill {pb.row_kernel = 0 : i64}
// CHECK: linalg.generic {{.*}} {pb.row_kernel = 0 : i64}
// CHECK: linalg.generic {{.*}} {pb.row_kernel = 0 : i64}
// CHECK: linalg.generic {{.*}} {pb.row_kernel = 0 : i64}
func.func @unit_dims(%x: memref<1x16x768xf32>, %y: memref<1x16x768xf32>) {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 768.0 : f32
  %s = memref.alloc() : memref<1x16xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<1x16xf32>)
  linalg.generic {indexing_maps = [affine_map<(a, b, c) -> (a, b, c)>, affine_map<(a, b, c) -> (a, b)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : memref<1x16x768xf32>) outs(%s : memref<1x16xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %acc, %in : f32
    linalg.yield %r : f32
  }
  %m = memref.alloc() : memref<16xf32>
  linalg.generic {indexing_maps = [affine_map<(d) -> (0, d)>, #id1], iterator_types = ["parallel"]}
      ins(%s : memref<1x16xf32>) outs(%m : memref<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.divf %in, %n : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(a, b, c) -> (a, b, c)>, affine_map<(a, b, c) -> (b)>, affine_map<(a, b, c) -> (a, b, c)>],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %m : memref<1x16x768xf32>, memref<16xf32>) outs(%y : memref<1x16x768xf32>) {
  ^bb0(%in: f32, %mean: f32, %out: f32):
    %r = arith.subf %in, %mean : f32
    linalg.yield %r : f32
  }
  return
}

// CHECK-LABEL: func.func @not_row_kernels
// CHECK-NOT: pb.row_kernel
// CHECK: return
func.func @not_row_kernels(%x: memref<8x2048xf32>, %a: memref<8xf32>, %b: memref<16x64xf32>, %c: memref<16xf32>, %d: memref<64xf32>) {
  // A row of 2048 elements: over the limit.
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x2048xf32>) outs(%a : memref<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  }
  // sin has no tile form.
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%b : memref<16x64xf32>) outs(%c : memref<16xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = math.sin %in : f32
    %r = arith.addf %s, %acc : f32
    linalg.yield %r : f32
  }
  // A reduction along the first loop (a column sum).
  linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%b : memref<16x64xf32>) outs(%d : memref<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  }
  return
}
