// RUN: pb-opt %s | pb-opt | FileCheck %s
// RUN: pb-opt %s -o %t.text.mlir
// RUN: pb-translate --tileir-to-bytecode %s -o %t.tilebc
// RUN: pb-translate --bytecode-to-tileir %t.tilebc | pb-opt -o %t.read.mlir
// RUN: diff %t.text.mlir %t.read.mlir
// RUN: %if tileiras %{ %tileirdisasm %t.tilebc | FileCheck %s --check-prefix=DISASM %}
// Every operation of the Tile IR dialect printed, parsed, written as
// bytecode and read back unchanged (values renumbered by the reader are
// the same after printing); NVIDIA's disassembler reads the same bytes.

// CHECK-LABEL: tileir.entry @matmul(
// CHECK-SAME: !tileir.tile<!tileir.ptr<f16>>
// CHECK: tileir.make_token : !tileir.token
// CHECK: tileir.make_partition_view %{{.*}} -> <tile=(128x64), !tileir.tensor_view<512x256xf16, strides=[256,1]>>
// CHECK: tileir.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} : !tileir.tile<i32> iter_values(%{{.*}} = %{{.*}}) -> (!tileir.tile<128x128xf32>)
// CHECK: tileir.load_view_tko %{{.*}}[%{{.*}}, %{{.*}}] token = %{{.*}}
// CHECK: tileir.mmaf
// CHECK: tileir.continue %{{.*}} : !tileir.tile<128x128xf32>
// CHECK: tileir.ftof %{{.*}} : <128x128xf32> -> <128x128xf16>
// CHECK: tileir.store_view_tko
// DISASM: entry @matmul(%arg0: tile<ptr<f16>>, %arg1: tile<ptr<f16>>, %arg2: tile<ptr<f16>>)
// DISASM: load_view_tko weak
// DISASM: mmaf %{{.*}} : tile<128x64xf16>, tile<64x128xf16>, tile<128x128xf32>
// DISASM: ftof %{{.*}} : tile<128x128xf32> -> tile<128x128xf16>
tileir.entry @matmul(%a: !tileir.tile<!tileir.ptr<f16>>, %b: !tileir.tile<!tileir.ptr<f16>>, %c: !tileir.tile<!tileir.ptr<f16>>) {
  %t0 = tileir.make_token : !tileir.token
  %av = tileir.make_tensor_view %a : !tileir.tile<!tileir.ptr<f16>> -> !tileir.tensor_view<512x256xf16, strides=[256,1]>
  %bv = tileir.make_tensor_view %b : !tileir.tile<!tileir.ptr<f16>> -> !tileir.tensor_view<256x384xf16, strides=[384,1]>
  %cv = tileir.make_tensor_view %c : !tileir.tile<!tileir.ptr<f16>> -> !tileir.tensor_view<512x384xf16, strides=[384,1]>
  %ap = tileir.make_partition_view %av : !tileir.tensor_view<512x256xf16, strides=[256,1]> -> !tileir.partition_view<tile=(128x64), !tileir.tensor_view<512x256xf16, strides=[256,1]>>
  %bp = tileir.make_partition_view %bv : !tileir.tensor_view<256x384xf16, strides=[384,1]> -> !tileir.partition_view<tile=(64x128), !tileir.tensor_view<256x384xf16, strides=[384,1]>>
  %cp = tileir.make_partition_view %cv : !tileir.tensor_view<512x384xf16, strides=[384,1]> -> !tileir.partition_view<tile=(128x128), !tileir.tensor_view<512x384xf16, strides=[384,1]>>
  %x, %y, %z = tileir.get_tile_block_id : !tileir.tile<i32>
  %zero = tileir.constant dense<0.0> : tensor<128x128xf32> : !tileir.tile<128x128xf32>
  %c0 = tileir.constant dense<0> : tensor<i32> : !tileir.tile<i32>
  %c1 = tileir.constant dense<1> : tensor<i32> : !tileir.tile<i32>
  %c4 = tileir.constant dense<4> : tensor<i32> : !tileir.tile<i32>
  %acc = tileir.for %k = %c0 to %c4 step %c1 : !tileir.tile<i32> iter_values(%s = %zero) -> (!tileir.tile<128x128xf32>) {
    %at, %t1 = tileir.load_view_tko %ap[%x, %k] token = %t0 : !tileir.partition_view<tile=(128x64), !tileir.tensor_view<512x256xf16, strides=[256,1]>> -> !tileir.tile<128x64xf16>
    %bt, %t2 = tileir.load_view_tko %bp[%k, %y] token = %t0 : !tileir.partition_view<tile=(64x128), !tileir.tensor_view<256x384xf16, strides=[384,1]>> -> !tileir.tile<64x128xf16>
    %r = tileir.mmaf %at, %bt, %s : !tileir.tile<128x64xf16>, !tileir.tile<64x128xf16>, !tileir.tile<128x128xf32>
    tileir.continue %r : !tileir.tile<128x128xf32>
  }
  %h = tileir.ftof %acc : !tileir.tile<128x128xf32> -> !tileir.tile<128x128xf16>
  %t3 = tileir.store_view_tko %h, %cp[%x, %y] token = %t0 : !tileir.tile<128x128xf16>, !tileir.partition_view<tile=(128x128), !tileir.tensor_view<512x384xf16, strides=[384,1]>>
  tileir.return
}

// CHECK-LABEL: tileir.entry @elementwise(
// CHECK: tileir.get_num_tile_blocks
// CHECK: tileir.addi
// CHECK: tileir.muli
// CHECK: tileir.divi
// CHECK: tileir.remi
// CHECK: tileir.offset %{{.*}}, %{{.*}} : <!tileir.ptr<f32>>, <i32>
// CHECK: padding_value=neg_inf
// CHECK: tileir.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xbf16>
// CHECK: tileir.reshape %{{.*}} : <4xbf16> -> <1x4xbf16>
// CHECK: tileir.broadcast %{{.*}} : <1x4xf32> -> <8x4xf32>
// CHECK: tileir.addf
// CHECK: tileir.subf
// CHECK: tileir.mulf
// CHECK: tileir.divf
// CHECK: tileir.maxf %{{.*}}, %{{.*}} {propagate_nan}
// CHECK: tileir.minf %{{.*}}, %{{.*}} :
// CHECK: tileir.negf
// CHECK: tileir.exp
// CHECK: tileir.tanh
// CHECK: tileir.sqrt
// CHECK: tileir.rsqrt
// CHECK: tileir.absf
// CHECK: tileir.fma
// CHECK: tileir.cmpf less_than ordered %{{.*}}, %{{.*}} : <8x4xf32> -> <8x4xi1>
// CHECK: tileir.select
// CHECK: tileir.store_view_tko
// CHECK: tileir.return
// DISASM-LABEL: entry @elementwise
// DISASM: divi
// DISASM: remi
// DISASM: offset
// DISASM: constant <bf16: [1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tile<4xbf16>
// DISASM: maxf
// DISASM: tanh
// DISASM: fma
// DISASM: cmpf less_than ordered
// DISASM: select
tileir.entry @elementwise(%x: !tileir.tile<!tileir.ptr<f32>>, %out: !tileir.tile<!tileir.ptr<f32>>) {
  %xv = tileir.make_tensor_view %x : !tileir.tile<!tileir.ptr<f32>> -> !tileir.tensor_view<64x4xf32, strides=[4,1]>
  %ov = tileir.make_tensor_view %out : !tileir.tile<!tileir.ptr<f32>> -> !tileir.tensor_view<64x4xf32, strides=[4,1]>
  %xp = tileir.make_partition_view %xv : !tileir.tensor_view<64x4xf32, strides=[4,1]> -> !tileir.partition_view<tile=(8x4), !tileir.tensor_view<64x4xf32, strides=[4,1]>, padding_value=neg_inf>
  %op = tileir.make_partition_view %ov : !tileir.tensor_view<64x4xf32, strides=[4,1]> -> !tileir.partition_view<tile=(8x4), !tileir.tensor_view<64x4xf32, strides=[4,1]>>
  %bx, %by, %bz = tileir.get_tile_block_id : !tileir.tile<i32>
  %nx, %ny, %nz = tileir.get_num_tile_blocks : !tileir.tile<i32>
  %i0 = tileir.addi %bx, %nx : !tileir.tile<i32>
  %i1 = tileir.muli %i0, %ny : !tileir.tile<i32>
  %i2 = tileir.divi %i1, %nx : !tileir.tile<i32>
  %i3 = tileir.remi %i2, %nx : !tileir.tile<i32>
  %xo = tileir.offset %x, %i3 : !tileir.tile<!tileir.ptr<f32>>, !tileir.tile<i32>
  %zero = tileir.constant dense<0> : tensor<i32> : !tileir.tile<i32>
  %v, %t = tileir.load_view_tko %xp[%bx, %zero] : !tileir.partition_view<tile=(8x4), !tileir.tensor_view<64x4xf32, strides=[4,1]>, padding_value=neg_inf> -> !tileir.tile<8x4xf32>
  %w16 = tileir.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xbf16> : !tileir.tile<4xbf16>
  %w2 = tileir.reshape %w16 : !tileir.tile<4xbf16> -> !tileir.tile<1x4xbf16>
  %w32 = tileir.ftof %w2 : !tileir.tile<1x4xbf16> -> !tileir.tile<1x4xf32>
  %w = tileir.broadcast %w32 : !tileir.tile<1x4xf32> -> !tileir.tile<8x4xf32>
  %a = tileir.addf %v, %w : !tileir.tile<8x4xf32>
  %b = tileir.subf %a, %v : !tileir.tile<8x4xf32>
  %c = tileir.mulf %a, %b : !tileir.tile<8x4xf32>
  %d = tileir.divf %c, %w : !tileir.tile<8x4xf32>
  %e = tileir.maxf %d, %v {propagate_nan} : !tileir.tile<8x4xf32>
  %f = tileir.minf %e, %a : !tileir.tile<8x4xf32>
  %g = tileir.negf %f : !tileir.tile<8x4xf32>
  %h = tileir.exp %g : !tileir.tile<8x4xf32>
  %i = tileir.tanh %h : !tileir.tile<8x4xf32>
  %j = tileir.sqrt %i : !tileir.tile<8x4xf32>
  %k0 = tileir.rsqrt %j : !tileir.tile<8x4xf32>
  %l = tileir.absf %k0 : !tileir.tile<8x4xf32>
  %m = tileir.fma %l, %k0, %a : !tileir.tile<8x4xf32>
  %n = tileir.cmpf less_than ordered %m, %v : !tileir.tile<8x4xf32> -> !tileir.tile<8x4xi1>
  %k = tileir.select %n, %m, %l : !tileir.tile<8x4xi1>, !tileir.tile<8x4xf32>
  %s = tileir.store_view_tko %k, %op[%bx, %zero] token = %t : !tileir.tile<8x4xf32>, !tileir.partition_view<tile=(8x4), !tileir.tensor_view<64x4xf32, strides=[4,1]>>
  tileir.return
}

// CHECK-LABEL: tileir.entry @rows(
// CHECK: padding_value=zero
// CHECK: dim_map=[1,0]
// CHECK: tileir.iota : <8xi32>
// CHECK: tileir.cmpi less_than %{{.*}}, %{{.*}} : <8xi32> -> <8xi1>
// CHECK: tileir.log
// CHECK: tileir.reduce %{{.*}} dim = 1 identities = [0xFF800000 : f32] : !tileir.tile<4x8xf32> -> !tileir.tile<4xf32>
// CHECK: tileir.maxf %{{.*}}, %{{.*}} : <f32>
// CHECK: tileir.yield %{{.*}} : !tileir.tile<f32>
// CHECK: tileir.reduce %{{.*}} dim = 0 identities = [0.000000e+00 : f16] : !tileir.tile<4x8xf16> -> !tileir.tile<8xf16>
// DISASM-LABEL: entry @rows
// DISASM: iota
// DISASM: cmpi less_than
// DISASM: log
// DISASM: reduce
// DISASM: maxf
// DISASM: yield
tileir.entry @rows(%x: !tileir.tile<!tileir.ptr<f32>>, %out: !tileir.tile<!tileir.ptr<f32>>) {
  %t0 = tileir.make_token : !tileir.token
  %xv = tileir.make_tensor_view %x : !tileir.tile<!tileir.ptr<f32>> -> !tileir.tensor_view<6x64xf32, strides=[1,6]>
  %xp = tileir.make_partition_view %xv : !tileir.tensor_view<6x64xf32, strides=[1,6]> -> !tileir.partition_view<tile=(4x8), !tileir.tensor_view<6x64xf32, strides=[1,6]>, dim_map=[1, 0], padding_value=zero>
  %ov = tileir.make_tensor_view %out : !tileir.tile<!tileir.ptr<f32>> -> !tileir.tensor_view<64xf32, strides=[1]>
  %op = tileir.make_partition_view %ov : !tileir.tensor_view<64xf32, strides=[1]> -> !tileir.partition_view<tile=(4), !tileir.tensor_view<64xf32, strides=[1]>>
  %bx, %by, %bz = tileir.get_tile_block_id : !tileir.tile<i32>
  %zero = tileir.constant dense<0> : tensor<i32> : !tileir.tile<i32>
  %v, %t1 = tileir.load_view_tko %xp[%bx, %zero] token = %t0 : !tileir.partition_view<tile=(4x8), !tileir.tensor_view<6x64xf32, strides=[1,6]>, dim_map=[1, 0], padding_value=zero> -> !tileir.tile<4x8xf32>
  %i = tileir.iota : !tileir.tile<8xi32>
  %six = tileir.constant dense<6> : tensor<8xi32> : !tileir.tile<8xi32>
  %in = tileir.cmpi less_than %i, %six : !tileir.tile<8xi32> -> !tileir.tile<8xi1>
  %in2 = tileir.reshape %in : !tileir.tile<8xi1> -> !tileir.tile<1x8xi1>
  %mask = tileir.broadcast %in2 : !tileir.tile<1x8xi1> -> !tileir.tile<4x8xi1>
  %l = tileir.log %v : !tileir.tile<4x8xf32>
  %ninf = tileir.constant dense<0xFF800000> : tensor<4x8xf32> : !tileir.tile<4x8xf32>
  %m = tileir.select %mask, %l, %ninf : !tileir.tile<4x8xi1>, !tileir.tile<4x8xf32>
  %r = tileir.reduce %m dim = 1 identities = [0xFF800000 : f32] : !tileir.tile<4x8xf32> -> !tileir.tile<4xf32> {
  ^bb0(%a: !tileir.tile<f32>, %b: !tileir.tile<f32>):
    %c = tileir.maxf %a, %b : !tileir.tile<f32>
    tileir.yield %c : !tileir.tile<f32>
  }
  %h = tileir.ftof %v : !tileir.tile<4x8xf32> -> !tileir.tile<4x8xf16>
  %s = tileir.reduce %h dim = 0 identities = [0.0 : f16] : !tileir.tile<4x8xf16> -> !tileir.tile<8xf16> {
  ^bb0(%a: !tileir.tile<f16>, %b: !tileir.tile<f16>):
    %c = tileir.addf %a, %b : !tileir.tile<f16>
    tileir.yield %c : !tileir.tile<f16>
  }
  %t2 = tileir.store_view_tko %r, %op[%bx] token = %t1 : !tileir.tile<4xf32>, !tileir.partition_view<tile=(4), !tileir.tensor_view<64xf32, strides=[1]>>
  tileir.return
}
