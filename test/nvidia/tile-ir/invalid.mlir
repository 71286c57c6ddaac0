// RUN: pb-opt %s -split-input-file -verify-diagnostics
// The Tile IR dialect's verifiers: what tileiras would reject (or the
// writer could not encode) is an error at the operation.

// expected-error @+1 {{tile extents must be powers of two, got 48}}
tileir.entry @odd(%a: !tileir.tile<48xf32>) {
  tileir.return
}

// -----

// expected-error @+1 {{kernel arguments must be scalar tiles}}
tileir.entry @shaped(%a: !tileir.tile<4xf32>) {
  tileir.return
}

// -----

tileir.entry @view(%a: !tileir.tile<!tileir.ptr<f16>>) {
  // expected-error @+1 {{pointer to 'f16' viewed as 'f32'}}
  %v = tileir.make_tensor_view %a : !tileir.tile<!tileir.ptr<f16>> -> !tileir.tensor_view<4xf32, strides=[1]>
  tileir.return
}

// -----

tileir.entry @load(%a: !tileir.tile<!tileir.ptr<f32>>) {
  %v = tileir.make_tensor_view %a : !tileir.tile<!tileir.ptr<f32>> -> !tileir.tensor_view<64x64xf32, strides=[64,1]>
  %p = tileir.make_partition_view %v : !tileir.tensor_view<64x64xf32, strides=[64,1]> -> !tileir.partition_view<tile=(16x16), !tileir.tensor_view<64x64xf32, strides=[64,1]>>
  %i = tileir.constant dense<0> : tensor<i32> : !tileir.tile<i32>
  // expected-error @+1 {{expects 2 indices, got 1}}
  %t, %k = tileir.load_view_tko %p[%i] : !tileir.partition_view<tile=(16x16), !tileir.tensor_view<64x64xf32, strides=[64,1]>> -> !tileir.tile<16x16xf32>
  tileir.return
}

// -----

tileir.entry @load_type(%a: !tileir.tile<!tileir.ptr<f32>>) {
  %v = tileir.make_tensor_view %a : !tileir.tile<!tileir.ptr<f32>> -> !tileir.tensor_view<64x64xf32, strides=[64,1]>
  %p = tileir.make_partition_view %v : !tileir.tensor_view<64x64xf32, strides=[64,1]> -> !tileir.partition_view<tile=(16x16), !tileir.tensor_view<64x64xf32, strides=[64,1]>>
  %i = tileir.constant dense<0> : tensor<i32> : !tileir.tile<i32>
  // expected-error @+1 {{does not match the view's tiles}}
  %t, %k = tileir.load_view_tko %p[%i, %i] : !tileir.partition_view<tile=(16x16), !tileir.tensor_view<64x64xf32, strides=[64,1]>> -> !tileir.tile<16x32xf32>
  tileir.return
}

// -----

tileir.entry @mma_shape(%a: !tileir.tile<f32>) {
  %x = tileir.constant dense<0.0> : tensor<16x32xf16> : !tileir.tile<16x32xf16>
  %y = tileir.constant dense<0.0> : tensor<16x16xf16> : !tileir.tile<16x16xf16>
  %c = tileir.constant dense<0.0> : tensor<16x16xf32> : !tileir.tile<16x16xf32>
  // expected-error @+1 {{shapes do not form MxK x KxN -> MxN}}
  %r = tileir.mmaf %x, %y, %c : !tileir.tile<16x32xf16>, !tileir.tile<16x16xf16>, !tileir.tile<16x16xf32>
  tileir.return
}

// -----

tileir.entry @mma_types(%a: !tileir.tile<f32>) {
  %x = tileir.constant dense<0.0> : tensor<16x16xbf16> : !tileir.tile<16x16xbf16>
  %c = tileir.constant dense<0.0> : tensor<16x16xf16> : !tileir.tile<16x16xf16>
  // expected-error @+1 {{no tensor-core form for 'bf16' inputs accumulating in 'f16'}}
  %r = tileir.mmaf %x, %x, %c : !tileir.tile<16x16xbf16>, !tileir.tile<16x16xbf16>, !tileir.tile<16x16xf16>
  tileir.return
}

// -----

tileir.entry @broadcast(%a: !tileir.tile<f32>) {
  %x = tileir.constant dense<0.0> : tensor<2x4xf32> : !tileir.tile<2x4xf32>
  // expected-error @+1 {{only extents of 1 are broadcast}}
  %r = tileir.broadcast %x : !tileir.tile<2x4xf32> -> !tileir.tile<8x4xf32>
  tileir.return
}

// -----

tileir.entry @partition(%a: !tileir.tile<!tileir.ptr<f32>>) {
  %v = tileir.make_tensor_view %a : !tileir.tile<!tileir.ptr<f32>> -> !tileir.tensor_view<64x64xf32, strides=[64,1]>
  // expected-error @+1 {{dim_map must be a permutation}}
  %p = tileir.make_partition_view %v : !tileir.tensor_view<64x64xf32, strides=[64,1]> -> !tileir.partition_view<tile=(16x16), !tileir.tensor_view<64x64xf32, strides=[64,1]>, dim_map=[0,0]>
  tileir.return
}

// -----

tileir.entry @padding(%a: !tileir.tile<!tileir.ptr<f32>>) {
  %v = tileir.make_tensor_view %a : !tileir.tile<!tileir.ptr<f32>> -> !tileir.tensor_view<64x64xf32, strides=[64,1]>
  // expected-error @+1 {{unknown padding value one}}
  %p = tileir.make_partition_view %v : !tileir.tensor_view<64x64xf32, strides=[64,1]> -> !tileir.partition_view<tile=(16x16), !tileir.tensor_view<64x64xf32, strides=[64,1]>, padding_value=one>
  tileir.return
}

// -----

// tileiras takes no broadcast through a stride of 0.
// expected-error @+1 {{tensor view extents and strides must be positive}}
tileir.entry @stride(%a: !tileir.tile<!tileir.tensor_view<4x4xf32, strides=[0,1]>>) {
  tileir.return
}

// -----

tileir.entry @reduce_shape(%a: !tileir.tile<!tileir.ptr<f32>>) {
  %x = tileir.constant dense<1.0> : tensor<4x8xf32> : !tileir.tile<4x8xf32>
  // expected-error @+1 {{result 0 is not operand 0 without dimension 1}}
  %r = tileir.reduce %x dim = 1 identities = [0.0 : f32] : !tileir.tile<4x8xf32> -> !tileir.tile<8xf32> {
  ^bb0(%l: !tileir.tile<f32>, %r2: !tileir.tile<f32>):
    %s = tileir.addf %l, %r2 : !tileir.tile<f32>
    tileir.yield %s : !tileir.tile<f32>
  }
  tileir.return
}

// -----

tileir.entry @reduce_identity(%a: !tileir.tile<!tileir.ptr<f32>>) {
  %x = tileir.constant dense<1.0> : tensor<4x8xf32> : !tileir.tile<4x8xf32>
  // expected-error @+1 {{identity 0 is not a float of the operand's element type}}
  %r = tileir.reduce %x dim = 1 identities = [0.0 : f16] : !tileir.tile<4x8xf32> -> !tileir.tile<4xf32> {
  ^bb0(%l: !tileir.tile<f32>, %r2: !tileir.tile<f32>):
    %s = tileir.addf %l, %r2 : !tileir.tile<f32>
    tileir.yield %s : !tileir.tile<f32>
  }
  tileir.return
}

// -----

tileir.entry @reduce_combiner(%a: !tileir.tile<!tileir.ptr<f32>>) {
  %x = tileir.constant dense<1.0> : tensor<4x8xf32> : !tileir.tile<4x8xf32>
  // expected-error @+1 {{the combiner's values of operand 0 are not '!tileir.tile<f32>'}}
  %r = tileir.reduce %x dim = 1 identities = [0.0 : f32] : !tileir.tile<4x8xf32> -> !tileir.tile<4xf32> {
  ^bb0(%l: !tileir.tile<4xf32>, %r2: !tileir.tile<4xf32>):
    %s = tileir.addf %l, %r2 : !tileir.tile<4xf32>
    tileir.yield %s : !tileir.tile<4xf32>
  }
  tileir.return
}

// -----

tileir.entry @iota_rank(%a: !tileir.tile<!tileir.ptr<f32>>) {
  // expected-error @+1 {{makes a 1-d integer tile}}
  %i = tileir.iota : !tileir.tile<4x4xi32>
  tileir.return
}

// -----

tileir.entry @cmpi_float(%a: !tileir.tile<!tileir.ptr<f32>>) {
  %x = tileir.constant dense<1.0> : tensor<4xf32> : !tileir.tile<4xf32>
  // expected-error @+1 {{compares integer tiles into an i1 tile of their shape}}
  %c = tileir.cmpi less_than %x, %x : !tileir.tile<4xf32> -> !tileir.tile<4xi1>
  tileir.return
}
