// RUN: pb-opt %s --target=nvidia-sm90 --pb-explain --pass-pipeline='builtin.module(pb-nvidia-emit-tile-ir)' -split-input-file 2>%t.explain | FileCheck %s
// RUN: FileCheck %s --check-prefix=EXPLAIN < %t.explain
// pb-nvidia-emit-tile-ir: the contractions S3 tagged become tile kernels:
// operands through tensor views with their own strides (a transposed
// operand is a view, not a copy), K tiles in a loop of mmaf, C's zero fill
// removed where the kernel writes all of C, a tagged epilogue applied on
// the tile, the result stored in C's type. Tiles from nvidia-sm90's
// TileIRPath: 128 x 64 at most (64 accumulator registers x 128 threads),
// halved while the grid has fewer tiles than SMs, not below the 64 rows of
// the warpgroup unit; K tiles of 32 (64 operand row bytes), zero-padded
// past K.

// CHECK-LABEL: func.func @matmul
// CHECK-NOT: affine.store
// CHECK: tileir.launch @matmul_tile0::@matmul_tile0 grid [4, 16, 1] args(%arg0, %arg1, %arg2) {pb.kernel_launch, pb.work = {{.*}}} : memref<256x200xf16>, memref<200x512xf16>, memref<256x512xf16>
// CHECK-NOT: linalg.matmul
// CHECK: tileir.module @matmul_tile0 {
// CHECK: tileir.entry @matmul_tile0(%[[A:.*]]: !tileir.tile<!tileir.ptr<f16>>, %[[B:.*]]: !tileir.tile<!tileir.ptr<f16>>, %[[C:.*]]: !tileir.tile<!tileir.ptr<f16>>)
// CHECK: %[[X:.*]], %[[Y:.*]], %{{.*}} = tileir.get_tile_block_id
// CHECK: %[[ZERO:.*]] = tileir.constant dense<0.000000e+00> : tensor<64x32xf32>
// CHECK: %[[KTILES:.*]] = tileir.constant dense<7> : tensor<i32>
// CHECK: tileir.make_tensor_view %[[A]] : <!tileir.ptr<f16>> -> <256x200xf16, strides=[200,1]>
// CHECK: -> <tile=(64x32), !tileir.tensor_view<256x200xf16, strides=[200,1]>, padding_value=zero>
// CHECK: -> <tile=(32x32), !tileir.tensor_view<200x512xf16, strides=[512,1]>, padding_value=zero>
// CHECK: tileir.for %[[K:.*]] = %{{.*}} to %[[KTILES]] step %{{.*}} : !tileir.tile<i32> iter_values(%[[ACC:.*]] = %[[ZERO]])
// CHECK: tileir.load_view_tko %{{.*}}[%[[X]], %[[K]]]
// CHECK: tileir.load_view_tko %{{.*}}[%[[K]], %[[Y]]]
// CHECK: tileir.mmaf %{{.*}}, %{{.*}}, %[[ACC]] : <64x32xf16>, <32x32xf16>, <64x32xf32>
// CHECK-NOT: tileir.load_view_tko
// CHECK: tileir.ftof %{{.*}} : <64x32xf32> -> <64x32xf16>
// CHECK: tileir.store_view_tko
// EXPLAIN: tile-ir: kernel @matmul_tile0: batch 1, MxNxK 256x512x200; tiles 64x32x32, grid [4, 16, 1]; accumulators start at 0 (C's zero fill removed)
module attributes {pb.target = #pb.target<"nvidia-sm90">} {
  func.func @matmul(%a: memref<256x200xf16>, %b: memref<200x512xf16>, %c: memref<256x512xf16>) {
    %zero = arith.constant 0.0 : f16
    affine.for %i = 0 to 256 {
      affine.for %j = 0 to 512 {
        affine.store %zero, %c[%i, %j] : memref<256x512xf16>
      }
    }
    linalg.matmul {pb.matrix_unit = "WGMMA_F32_64x128x16_F16"} ins(%a, %b : memref<256x200xf16>, memref<200x512xf16>) outs(%c : memref<256x512xf16>)
    return
  }
}

// -----

// A batched product with B transposed (its view's strides walk it
// column-wise) and a bias + ReLU epilogue on the tile: the bias loaded as a
// 32-wide row, reshaped and broadcast over the rows. C is a temporary that
// only held zeros: the kernel neither reads nor writes it.
// CHECK-LABEL: func.func @batched_epilogue
// CHECK: %[[C:.*]] = memref.alloc() : memref<8x128x128xf32>
// CHECK-NOT: affine.for
// CHECK: tileir.launch @batched_epilogue_tile0::@batched_epilogue_tile0 grid [2, 4, 8] args(%arg0, %arg1, %arg2, %arg3)
// CHECK-NOT: linalg.generic
// CHECK: tileir.entry @batched_epilogue_tile0
// CHECK: -> <tile=(1x64x32), !tileir.tensor_view<8x128x64xbf16, strides=[8192,64,1]>>
// CHECK: -> <tile=(1x32x32), !tileir.tensor_view<8x64x128xbf16, strides=[8192,1,64]>>
// CHECK: tileir.mmaf %{{.*}} : <1x64x32xbf16>, <1x32x32xbf16>, <1x64x32xf32>
// CHECK-NOT: tileir.addf
// CHECK: %[[BIAS:.*]], %{{.*}} = tileir.load_view_tko %{{.*}} -> <32xf32>
// CHECK: %[[ROW:.*]] = tileir.reshape %[[BIAS]] : <32xf32> -> <1x1x32xf32>
// CHECK: tileir.broadcast %[[ROW]] : <1x1x32xf32> -> <1x64x32xf32>
// CHECK: tileir.addf
// CHECK: tileir.constant dense<0.000000e+00> : tensor<1x64x32xf32>
// CHECK: tileir.maxf
// CHECK: tileir.store_view_tko
// EXPLAIN: tile-ir: kernel @batched_epilogue_tile0: batch 8, MxNxK 128x128x64; tiles 64x32x32, grid [2, 4, 8]; accumulators start at 0 (C's zero fill removed); epilogue of 2 ops fused
#bmk = affine_map<(b, m, n, k) -> (b, m, k)>
#bnk = affine_map<(b, m, n, k) -> (b, n, k)>
#bmn = affine_map<(b, m, n, k) -> (b, m, n)>
#id3 = affine_map<(b, i, j) -> (b, i, j)>
#col3 = affine_map<(b, i, j) -> (j)>
module attributes {pb.target = #pb.target<"nvidia-sm90">} {
  func.func @batched_epilogue(%a: memref<8x128x64xbf16>, %b: memref<8x128x64xbf16>, %bias: memref<128xf32>, %out: memref<8x128x128xf32>) {
    %zero = arith.constant 0.0 : f32
    %c = memref.alloc() : memref<8x128x128xf32>
    affine.for %i = 0 to 8 {
      affine.for %j = 0 to 128 {
        affine.for %k = 0 to 128 {
          affine.store %zero, %c[%i, %j, %k] : memref<8x128x128xf32>
        }
      }
    }
    linalg.generic {indexing_maps = [#bmk, #bnk, #bmn], iterator_types = ["parallel", "parallel", "parallel", "reduction"], pb.matrix_unit = "WGMMA_F32_64x128x16_BF16"}
        ins(%a, %b : memref<8x128x64xbf16>, memref<8x128x64xbf16>) outs(%c : memref<8x128x128xf32>) {
    ^bb0(%x: bf16, %y: bf16, %acc: f32):
      %xf = arith.extf %x : bf16 to f32
      %yf = arith.extf %y : bf16 to f32
      %p = arith.mulf %xf, %yf : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    }
    linalg.generic {indexing_maps = [#id3, #col3, #id3], iterator_types = ["parallel", "parallel", "parallel"], pb.matrix_unit_epilogue}
        ins(%c, %bias : memref<8x128x128xf32>, memref<128xf32>) outs(%out : memref<8x128x128xf32>) {
    ^bb0(%v: f32, %w: f32, %o: f32):
      %s = arith.addf %v, %w : f32
      %r = arith.maximumf %s, %zero : f32
      linalg.yield %r : f32
    }
    memref.dealloc %c : memref<8x128x128xf32>
    return
  }
}

// -----

// C += A x B on a C the caller filled: its tile is read and added (in f32).
// CHECK-LABEL: func.func @accumulate
// CHECK: tileir.mmaf
// CHECK: %[[OLD:.*]], %{{.*}} = tileir.load_view_tko %{{.*}} -> <64x32xf16>
// CHECK: %[[OLD32:.*]] = tileir.ftof %[[OLD]] : <64x32xf16> -> <64x32xf32>
// CHECK: tileir.addf %{{.*}}, %[[OLD32]] : <64x32xf32>
// CHECK: tileir.ftof %{{.*}} : <64x32xf32> -> <64x32xf16>
// EXPLAIN: tile-ir: kernel @accumulate_tile0: batch 1, MxNxK 128x128x64; tiles 64x32x32, grid [2, 4, 1]; C added
module attributes {pb.target = #pb.target<"nvidia-sm90">} {
  func.func @accumulate(%a: memref<128x64xf16>, %b: memref<64x128xf16>, %c: memref<128x128xf16>) {
    linalg.matmul {pb.matrix_unit = "WGMMA_F32_64x128x16_F16"} ins(%a, %b : memref<128x64xf16>, memref<64x128xf16>) outs(%c : memref<128x128xf16>)
    return
  }
}

// -----

// What the path cannot express stays tagged for the PTX path, said why.
// CHECK-LABEL: func.func @i8
// CHECK: linalg.matmul {pb.matrix_unit = "MMA_I32_16x8x32_I8"}
// CHECK-NOT: tileir.module
// EXPLAIN: tile-ir: not a Tile IR kernel (operand types other than f16 or bf16 with f32 (or f16) results, or f32 on tf32 units): left to the PTX path
module attributes {pb.target = #pb.target<"nvidia-sm90">} {
  func.func @i8(%a: memref<64x64xi8>, %b: memref<64x64xi8>, %c: memref<64x64xi32>) {
    linalg.matmul {pb.matrix_unit = "MMA_I32_16x8x32_I8"} ins(%a, %b : memref<64x64xi8>, memref<64x64xi8>) outs(%c : memref<64x64xi32>)
    return
  }
}

// -----

// An epilogue with no tile form (sin) runs as loops after the kernel,
// which then stores C. (erf has none either but becomes a polynomial of
// tile operations: matmul.mlir's GELU.)
// CHECK-LABEL: func.func @sin_epilogue
// CHECK: tileir.launch
// CHECK: linalg.generic
// CHECK: math.sin
// EXPLAIN: tile-ir: epilogue not fused (no tile operation for math.sin): it runs as loops after the kernel
#id = affine_map<(i, j) -> (i, j)>
module attributes {pb.target = #pb.target<"nvidia-sm90">} {
  func.func @sin_epilogue(%a: memref<128x64xf16>, %b: memref<64x128xf16>, %out: memref<128x128xf32>) {
    %c = memref.alloc() : memref<128x128xf32>
    linalg.matmul {pb.matrix_unit = "WGMMA_F32_64x128x16_F16"} ins(%a, %b : memref<128x64xf16>, memref<64x128xf16>) outs(%c : memref<128x128xf32>)
    linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"], pb.matrix_unit_epilogue}
        ins(%c : memref<128x128xf32>) outs(%out : memref<128x128xf32>) {
    ^bb0(%v: f32, %o: f32):
      %e = math.sin %v : f32
      linalg.yield %e : f32
    }
    memref.dealloc %c : memref<128x128xf32>
    return
  }
}

// -----

// A row kernel (pb-group-row-kernels' tags): one launch in the last op's
// place; the input loaded once, through a reshaped view of the plan buffer
// (an expand_shape: its own shape and strides at the buffer's base); the
// per-row maximum a reduce whose padding (rows of 96 in tiles of 128) is
// masked to -inf; the temporary stays in registers and is deallocated
// after the launch; only the output is stored.
// CHECK-LABEL: func.func @row_kernel
// CHECK-NOT: linalg.generic
// CHECK: tileir.launch @row_kernel_tile0::@row_kernel_tile0 grid [{{[0-9]+}}, 8, 1] args(%arg0, %arg1)
// CHECK-NEXT: memref.dealloc
// CHECK: tileir.entry @row_kernel_tile0
// CHECK: tileir.make_tensor_view %arg0 : <!tileir.ptr<f32>> -> <8x16x96xf32, strides=[1536,96,1]>
// CHECK: tileir.load_view_tko
// CHECK: tileir.iota : <128xi32>
// CHECK: tileir.cmpi less_than
// CHECK: tileir.select
// CHECK: tileir.reduce {{.*}} dim = 1 identities = [0xFF800000 : f32]
// CHECK: tileir.maxf %{{.*}}, %{{.*}} {propagate_nan}
// CHECK: tileir.subf
// CHECK: tileir.store_view_tko
// CHECK-NOT: tileir.store_view_tko
// CHECK: tileir.return
// EXPLAIN: tile-ir: row kernel @row_kernel_tile0: 3 ops over 8x16 rows of 96; tiles {{[0-9]+}}x128, grid [{{[0-9]+}}, 8, 1]; 1 loads, 1 stores
#id3 = affine_map<(b, i, j) -> (b, i, j)>
#row3 = affine_map<(b, i, j) -> (b, i)>
module attributes {pb.target = #pb.target<"nvidia-sm90">} {
  func.func @row_kernel(%x: memref<128x96xf32>, %y: memref<8x16x96xf32>) {
    %ninf = arith.constant 0xFF800000 : f32
    %v = memref.expand_shape %x [[0, 1], [2]] output_shape [8, 16, 96] : memref<128x96xf32> into memref<8x16x96xf32>
    %m = memref.alloc() : memref<8x16xf32>
    linalg.fill {pb.row_kernel = 0 : i64} ins(%ninf : f32) outs(%m : memref<8x16xf32>)
    linalg.generic {indexing_maps = [#id3, #row3], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%v : memref<8x16x96xf32>) outs(%m : memref<8x16xf32>) attrs = {pb.row_kernel = 0 : i64} {
    ^bb0(%in: f32, %acc: f32):
      %r = arith.maximumf %in, %acc : f32
      linalg.yield %r : f32
    }
    linalg.generic {indexing_maps = [#id3, #row3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%v, %m : memref<8x16x96xf32>, memref<8x16xf32>) outs(%y : memref<8x16x96xf32>) attrs = {pb.row_kernel = 0 : i64} {
    ^bb0(%in: f32, %mx: f32, %out: f32):
      %d = arith.subf %in, %mx : f32
      linalg.yield %d : f32
    }
    memref.dealloc %m : memref<8x16xf32>
    return
  }
}

// -----

// A row kernel that writes a buffer it also reads through a view that
// reaches other elements of its tiles (a transposed reshape) stays linalg
// ops (lowered to loops later), and says why. (Views that differ in unit
// dimensions only are one value: rows.mlir, BERT's layernorms.)
// CHECK-LABEL: func.func @row_kernel_aliased
// CHECK-NOT: tileir.launch
// CHECK: linalg.generic
// CHECK-NOT: pb.row_kernel
// EXPLAIN: tile-ir: row kernel not emitted (a buffer written and accessed through different views): its ops run as loops (the PTX path)
#id3 = affine_map<(b, i, j) -> (b, i, j)>
#row3 = affine_map<(b, i, j) -> (b, i)>
module attributes {pb.target = #pb.target<"nvidia-sm90">} {
  func.func @row_kernel_aliased(%x: memref<128x96xf32>, %s: memref<8x16xf32>) {
    %v = memref.expand_shape %x [[0, 1], [2]] output_shape [8, 16, 96] : memref<128x96xf32> into memref<8x16x96xf32>
    %w = memref.expand_shape %x [[0, 1], [2]] output_shape [16, 8, 96] : memref<128x96xf32> into memref<16x8x96xf32>
    linalg.generic {indexing_maps = [#id3, #row3], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%v : memref<8x16x96xf32>) outs(%s : memref<8x16xf32>) attrs = {pb.row_kernel = 0 : i64} {
    ^bb0(%in: f32, %acc: f32):
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
    linalg.generic {indexing_maps = [#id3, #row3, affine_map<(b, i, j) -> (i, b, j)>], iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%v, %s : memref<8x16x96xf32>, memref<8x16xf32>) outs(%w : memref<16x8x96xf32>) attrs = {pb.row_kernel = 0 : i64} {
    ^bb0(%in: f32, %sum: f32, %out: f32):
      %d = arith.divf %in, %sum : f32
      linalg.yield %d : f32
    }
    return
  }
}
