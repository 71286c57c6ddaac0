// RUN: %s3_on_host %s | FileCheck %s
// Sums along each axis of a 3-d tensor, then a broadcast subtract (the
// shape of a normalization), for every target, match the unoptimized
// program on the host (small integers: exact in any order).
// CHECK: OK amd-gfx90a: 1200 values match
// CHECK: OK cpu-host: 1200 values match
// CHECK: OK nvidia-sm90: 1200 values match
// CHECK: OK toy-chip: 1200 values match

#id = affine_map<(i, j) -> (i, j)>
#x3 = affine_map<(i, j, k) -> (i, j, k)>
#drop_k = affine_map<(i, j, k) -> (i, j)>
func.func @center(%x: tensor<24x50xf32>) -> tensor<24x50xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<24xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<24xf32>) -> tensor<24xf32>
  %rows = linalg.reduce ins(%x : tensor<24x50xf32>) outs(%s0 : tensor<24xf32>)
      dimensions = [1]
      (%in: f32, %acc: f32) { %s = arith.addf %in, %acc : f32
                              linalg.yield %s : f32 }
  %e2 = tensor.empty() : tensor<50xf32>
  %t0 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<50xf32>) -> tensor<50xf32>
  %cols = linalg.reduce ins(%x : tensor<24x50xf32>) outs(%t0 : tensor<50xf32>)
      dimensions = [0]
      (%in: f32, %acc: f32) { %s = arith.addf %in, %acc : f32
                              linalg.yield %s : f32 }
  %e = tensor.empty() : tensor<24x50xf32>
  %out = linalg.generic {indexing_maps = [#id, affine_map<(i, j) -> (i)>,
                                          affine_map<(i, j) -> (j)>, #id],
                         iterator_types = ["parallel", "parallel"]}
      ins(%x, %rows, %cols : tensor<24x50xf32>, tensor<24xf32>, tensor<50xf32>)
      outs(%e : tensor<24x50xf32>) {
  ^bb0(%v: f32, %r: f32, %c: f32, %o: f32):
    %a = arith.subf %v, %r : f32
    %b = arith.subf %a, %c : f32
    linalg.yield %b : f32
  } -> tensor<24x50xf32>
  return %out : tensor<24x50xf32>
}

// (i * mul + j) mod m: small integers, so every order of summation gives
// the same f32 result.
func.func @iota2d(%mul: index, %mod: index) -> tensor<24x50xf32> {
  %init = tensor.empty() : tensor<24x50xf32>
  %r = linalg.generic {indexing_maps = [#id],
                       iterator_types = ["parallel", "parallel"]}
      outs(%init : tensor<24x50xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %t = arith.muli %i, %mul : index
    %u = arith.addi %t, %j : index
    %v = arith.remui %u, %mod : index
    %w = arith.index_cast %v : index to i32
    %f = arith.sitofp %w : i32 to f32
    linalg.yield %f : f32
  } -> tensor<24x50xf32>
  return %r : tensor<24x50xf32>
}

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %c7 = arith.constant 7 : index
  %c9 = arith.constant 9 : index
  %x = call @iota2d(%c7, %c9) : (index, index) -> tensor<24x50xf32>
  %r = call @center(%x) : (tensor<24x50xf32>) -> tensor<24x50xf32>
  %u = tensor.cast %r : tensor<24x50xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}
