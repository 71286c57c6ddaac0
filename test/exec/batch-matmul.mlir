// RUN: %s3_on_host %s --rtol 1e-5 | FileCheck %s
// linalg.batch_matmul f32 (batch 3, 17x33 by 33x20) plus a broadcast bias,
// and a batch_matmul with a transposed B (indexing_maps; batch 4, 9x64 by
// (5x64)^T), for every target, match the unoptimized program on the host
// (small integers: exact in any order).
// CHECK: OK amd-gfx942: 1200 values match
// CHECK: OK cpu-x86-64-v3: 1200 values match
// CHECK: OK nvidia-sm80: 1200 values match
// CHECK: OK toy-chip: 1200 values match

#id3 = affine_map<(b, i, j) -> (b, i, j)>
#bias = affine_map<(b, i, j) -> (b, j)>
#bmk = affine_map<(b, m, n, k) -> (b, m, k)>
#bnk = affine_map<(b, m, n, k) -> (b, n, k)>
#bmn = affine_map<(b, m, n, k) -> (b, m, n)>

func.func @bmm_bias(%a: tensor<3x17x33xf32>, %b: tensor<3x33x20xf32>,
                    %c: tensor<3x20xf32>) -> tensor<3x17x20xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x17x20xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<3x17x20xf32>) -> tensor<3x17x20xf32>
  %mm = linalg.batch_matmul ins(%a, %b : tensor<3x17x33xf32>, tensor<3x33x20xf32>)
                            outs(%acc : tensor<3x17x20xf32>) -> tensor<3x17x20xf32>
  %r = linalg.generic {indexing_maps = [#id3, #bias, #id3],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%mm, %c : tensor<3x17x20xf32>, tensor<3x20xf32>)
      outs(%e : tensor<3x17x20xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<3x17x20xf32>
  return %r : tensor<3x17x20xf32>
}

func.func @bmm_bt(%a: tensor<4x9x64xf32>, %b: tensor<4x5x64xf32>) -> tensor<4x9x5xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x9x5xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x9x5xf32>) -> tensor<4x9x5xf32>
  %r = linalg.batch_matmul indexing_maps = [#bmk, #bnk, #bmn]
                           ins(%a, %b : tensor<4x9x64xf32>, tensor<4x5x64xf32>)
                           outs(%acc : tensor<4x9x5xf32>) -> tensor<4x9x5xf32>
  return %r : tensor<4x9x5xf32>
}

// ((b * 5 + i * mul + j + i * j * j + b * j) mod m) - off: small integers, so
// every order of summation gives the same f32 result. Each input is a slice
// of one tensor<4x33x64xf32> of these values.
func.func @iota(%mul: index, %mod: index, %off: index) -> tensor<4x33x64xf32> {
  %init = tensor.empty() : tensor<4x33x64xf32>
  %c5 = arith.constant 5 : index
  %r = linalg.generic {indexing_maps = [#id3],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      outs(%init : tensor<4x33x64xf32>) {
  ^bb0(%o: f32):
    %b = linalg.index 0 : index
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %b5 = arith.muli %b, %c5 : index
    %t = arith.muli %i, %mul : index
    %jj = arith.muli %j, %j : index
    %ijj = arith.muli %i, %jj : index
    %bj = arith.muli %b, %j : index
    %s0 = arith.addi %b5, %t : index
    %s1 = arith.addi %s0, %j : index
    %s2 = arith.addi %s1, %ijj : index
    %u = arith.addi %s2, %bj : index
    %v = arith.remui %u, %mod : index
    %w = arith.index_cast %v : index to i32
    %z = arith.index_cast %off : index to i32
    %d = arith.subi %w, %z : i32
    %f = arith.sitofp %d : i32 to f32
    linalg.yield %f : f32
  } -> tensor<4x33x64xf32>
  return %r : tensor<4x33x64xf32>
}

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %c9 = arith.constant 9 : index
  %c11 = arith.constant 11 : index
  %c13 = arith.constant 13 : index

  %ad = call @iota(%c3, %c11, %c5) : (index, index, index) -> tensor<4x33x64xf32>
  %bd = call @iota(%c7, %c9, %c4) : (index, index, index) -> tensor<4x33x64xf32>
  %cd = call @iota(%c2, %c13, %c7) : (index, index, index) -> tensor<4x33x64xf32>
  %a = tensor.extract_slice %ad[0, 0, 0] [3, 17, 33] [1, 1, 1]
      : tensor<4x33x64xf32> to tensor<3x17x33xf32>
  %b = tensor.extract_slice %bd[0, 0, 0] [3, 33, 20] [1, 1, 1]
      : tensor<4x33x64xf32> to tensor<3x33x20xf32>
  %c3d = tensor.extract_slice %cd[0, 0, 0] [1, 3, 20] [1, 1, 1]
      : tensor<4x33x64xf32> to tensor<1x3x20xf32>
  %c = tensor.collapse_shape %c3d [[0, 1], [2]] : tensor<1x3x20xf32> into tensor<3x20xf32>
  %r = call @bmm_bias(%a, %b, %c) : (tensor<3x17x33xf32>, tensor<3x33x20xf32>, tensor<3x20xf32>) -> tensor<3x17x20xf32>
  %u = tensor.cast %r : tensor<3x17x20xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()

  %a2d = call @iota(%c5, %c7, %c3) : (index, index, index) -> tensor<4x33x64xf32>
  %b2d = call @iota(%c3, %c11, %c5) : (index, index, index) -> tensor<4x33x64xf32>
  %a2 = tensor.extract_slice %a2d[0, 0, 0] [4, 9, 64] [1, 1, 1]
      : tensor<4x33x64xf32> to tensor<4x9x64xf32>
  %b2 = tensor.extract_slice %b2d[0, 0, 0] [4, 5, 64] [1, 1, 1]
      : tensor<4x33x64xf32> to tensor<4x5x64xf32>
  %r2 = call @bmm_bt(%a2, %b2) : (tensor<4x9x64xf32>, tensor<4x5x64xf32>) -> tensor<4x9x5xf32>
  %u2 = tensor.cast %r2 : tensor<4x9x5xf32> to tensor<*xf32>
  call @printMemrefF32(%u2) : (tensor<*xf32>) -> ()
  return
}
