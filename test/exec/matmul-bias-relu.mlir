// RUN: %s3_on_host %s | FileCheck %s
// A dense layer (matmul 64x48 by 48x96, bias, relu) compiled with S3 for
// every target matches the unoptimized program on the host.
// CHECK: OK amd-gfx90a: 6144 values match
// CHECK: OK cpu-x86-64-v4: 6144 values match
// CHECK: OK nvidia-sm90: 6144 values match
// CHECK: OK toy-chip: 6144 values match

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (j)>
func.func @layer(%a: tensor<64x48xf32>, %b: tensor<48x96xf32>,
                 %bias: tensor<96xf32>) -> tensor<64x96xf32> {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<64x96xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<64x96xf32>) -> tensor<64x96xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<64x48xf32>, tensor<48x96xf32>)
                      outs(%acc : tensor<64x96xf32>) -> tensor<64x96xf32>
  %out = linalg.generic {indexing_maps = [#id, #row, #id],
                         iterator_types = ["parallel", "parallel"]}
      ins(%mm, %bias : tensor<64x96xf32>, tensor<96xf32>)
      outs(%init : tensor<64x96xf32>) {
  ^bb0(%x: f32, %c: f32, %o: f32):
    %s = arith.addf %x, %c : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<64x96xf32>
  return %out : tensor<64x96xf32>
}

// (i * mul + j) mod m: small integers, so every order of summation gives
// the same f32 result. Each input is a slice of one tensor<64x96xf32> of
// these values.
func.func @iota2d(%mul: index, %mod: index) -> tensor<64x96xf32> {
  %init = tensor.empty() : tensor<64x96xf32>
  %r = linalg.generic {indexing_maps = [#id],
                       iterator_types = ["parallel", "parallel"]}
      outs(%init : tensor<64x96xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %t = arith.muli %i, %mul : index
    %u = arith.addi %t, %j : index
    %v = arith.remui %u, %mod : index
    %w = arith.index_cast %v : index to i32
    %f = arith.sitofp %w : i32 to f32
    linalg.yield %f : f32
  } -> tensor<64x96xf32>
  return %r : tensor<64x96xf32>
}

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %a0 = call @iota2d(%c3, %c5) : (index, index) -> tensor<64x96xf32>
  %b0 = call @iota2d(%c7, %c3) : (index, index) -> tensor<64x96xf32>
  %c0 = call @iota2d(%c5, %c7) : (index, index) -> tensor<64x96xf32>
  %a = tensor.extract_slice %a0[0, 0] [64, 48] [1, 1]
      : tensor<64x96xf32> to tensor<64x48xf32>
  %b = tensor.extract_slice %b0[0, 0] [48, 96] [1, 1]
      : tensor<64x96xf32> to tensor<48x96xf32>
  %c2 = tensor.extract_slice %c0[0, 0] [1, 96] [1, 1]
      : tensor<64x96xf32> to tensor<1x96xf32>
  %bias = tensor.collapse_shape %c2 [[0, 1]] : tensor<1x96xf32> into tensor<96xf32>
  %r = call @layer(%a, %b, %bias) : (tensor<64x48xf32>, tensor<48x96xf32>, tensor<96xf32>) -> tensor<64x96xf32>
  %u = tensor.cast %r : tensor<64x96xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}
