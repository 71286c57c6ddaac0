// RUN: %s3_on_host %s | FileCheck %s
// A boolean mask held in memory (one byte per i1, as a causal mask is),
// written transposed (a scalar loop) and read by a select in another
// function: loops over i1 buffers stay scalar in S3 (a vector<Nxi1> load
// would read bits where the scalar loop wrote bytes), and for every target
// the result matches the unoptimized program on the host.
// CHECK: OK amd-gfx942: 256 values match
// CHECK: OK cpu-x86-64-v3: 256 values match
// CHECK: OK nvidia-sm80: 256 values match
// CHECK: OK toy-chip: 256 values match

#id = affine_map<(i) -> (i)>
#id2 = affine_map<(i, j) -> (i, j)>
#tr2 = affine_map<(i, j) -> (j, i)>

func.func @mask(%x: tensor<64x4xf32>) -> tensor<4x64xi1> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x64xi1>
  %m = linalg.generic {indexing_maps = [#id2, #tr2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<64x4xf32>) outs(%e : tensor<4x64xi1>) {
  ^bb0(%v: f32, %o: i1):
    %c = arith.cmpf ogt, %v, %zero : f32
    linalg.yield %c : i1
  } -> tensor<4x64xi1>
  return %m : tensor<4x64xi1>
}

func.func @select(%m: tensor<4x64xi1>, %x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %ninf = arith.constant -100.0 : f32
  %e = tensor.empty() : tensor<4x64xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%m, %x : tensor<4x64xi1>, tensor<4x64xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%c: i1, %v: f32, %o: f32):
    %s = arith.select %c, %v, %ninf : f32
    linalg.yield %s : f32
  } -> tensor<4x64xf32>
  return %r : tensor<4x64xf32>
}

func.func @iota() -> tensor<256xf32> {
  %e = tensor.empty() : tensor<256xf32>
  %c7 = arith.constant 7 : index
  %c5 = arith.constant 5 : index
  %r = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]}
      outs(%e : tensor<256xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %t = arith.muli %i, %c7 : index
    %u = arith.remui %t, %c5 : index
    %w = arith.index_cast %u : index to i32
    %f = arith.sitofp %w : i32 to f32
    %two = arith.constant 2.0 : f32
    %g = arith.subf %f, %two : f32
    linalg.yield %g : f32
  } -> tensor<256xf32>
  return %r : tensor<256xf32>
}

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %x1 = call @iota() : () -> tensor<256xf32>
  %x = tensor.expand_shape %x1 [[0, 1]] output_shape [64, 4] : tensor<256xf32> into tensor<64x4xf32>
  %y = tensor.expand_shape %x1 [[0, 1]] output_shape [4, 64] : tensor<256xf32> into tensor<4x64xf32>
  %m = call @mask(%x) : (tensor<64x4xf32>) -> tensor<4x64xi1>
  %r = call @select(%m, %y) : (tensor<4x64xi1>, tensor<4x64xf32>) -> tensor<4x64xf32>
  %u = tensor.cast %r : tensor<4x64xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}
