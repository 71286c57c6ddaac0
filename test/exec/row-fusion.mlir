// RUN: %s3_on_host %s --rtol 1e-5 | FileCheck %s
// Row-wise computations as the PyTorch frontend writes them, at batch 1:
// a layernorm over 1x6x40 (mean, variance, normalize, scale and shift) and
// a softmax over 1x2x6x40 with maximumf. S3 fuses each at its rows
// (pb-fuse-reductions, after promoting the batch loop that runs once),
// carries the reductions in iter_args (pb-promote-accumulators) and
// vectorizes them; for every target the result matches the unoptimized
// program on the host.
// CHECK: OK amd-gfx942: 720 values match
// CHECK: OK cpu-x86-64-v3: 720 values match
// CHECK: OK nvidia-sm80: 720 values match
// CHECK: OK toy-chip: 720 values match

#x3 = affine_map<(n, s, h) -> (n, s, h)>
#r3 = affine_map<(n, s, h) -> (n, s)>
#c3 = affine_map<(n, s, h) -> (h)>
#x4 = affine_map<(n, a, s, h) -> (n, a, s, h)>
#r4 = affine_map<(n, a, s, h) -> (n, a, s)>

func.func @layernorm(%x: tensor<1x6x40xf32>, %g: tensor<40xf32>,
                     %b: tensor<40xf32>) -> tensor<1x6x40xf32> {
  %zero = arith.constant 0.0 : f32
  %inv = arith.constant 0.025 : f32
  %eps = arith.constant 1.0e-5 : f32
  %er = tensor.empty() : tensor<1x6xf32>
  %zr = linalg.fill ins(%zero : f32) outs(%er : tensor<1x6xf32>) -> tensor<1x6xf32>
  %sum = linalg.generic {indexing_maps = [#x3, #r3],
                         iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<1x6x40xf32>) outs(%zr : tensor<1x6xf32>) {
  ^bb0(%v: f32, %a: f32):
    %s = arith.addf %a, %v : f32
    linalg.yield %s : f32
  } -> tensor<1x6xf32>
  %var = linalg.generic {indexing_maps = [#x3, #r3, #r3],
                         iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %sum : tensor<1x6x40xf32>, tensor<1x6xf32>) outs(%zr : tensor<1x6xf32>) {
  ^bb0(%v: f32, %s: f32, %a: f32):
    %m = arith.mulf %s, %inv : f32
    %d = arith.subf %v, %m : f32
    %q = arith.mulf %d, %d : f32
    %t = arith.addf %a, %q : f32
    linalg.yield %t : f32
  } -> tensor<1x6xf32>
  %e = tensor.empty() : tensor<1x6x40xf32>
  %y = linalg.generic {indexing_maps = [#x3, #r3, #r3, #c3, #c3, #x3],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %sum, %var, %g, %b : tensor<1x6x40xf32>, tensor<1x6xf32>,
          tensor<1x6xf32>, tensor<40xf32>, tensor<40xf32>)
      outs(%e : tensor<1x6x40xf32>) {
  ^bb0(%v: f32, %s: f32, %q: f32, %gv: f32, %bv: f32, %o: f32):
    %m = arith.mulf %s, %inv : f32
    %d = arith.subf %v, %m : f32
    %vq = arith.mulf %q, %inv : f32
    %ve = arith.addf %vq, %eps : f32
    %r = math.rsqrt %ve : f32
    %n = arith.mulf %d, %r : f32
    %sc = arith.mulf %n, %gv : f32
    %sh = arith.addf %sc, %bv : f32
    linalg.yield %sh : f32
  } -> tensor<1x6x40xf32>
  return %y : tensor<1x6x40xf32>
}

func.func @softmax(%x: tensor<1x2x6x40xf32>) -> tensor<1x2x6x40xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %er = tensor.empty() : tensor<1x2x6xf32>
  %mi = linalg.fill ins(%ninf : f32) outs(%er : tensor<1x2x6xf32>) -> tensor<1x2x6xf32>
  %max = linalg.generic {indexing_maps = [#x4, #r4],
                         iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x : tensor<1x2x6x40xf32>) outs(%mi : tensor<1x2x6xf32>) {
  ^bb0(%v: f32, %a: f32):
    %m = arith.maximumf %a, %v : f32
    linalg.yield %m : f32
  } -> tensor<1x2x6xf32>
  %e = tensor.empty() : tensor<1x2x6x40xf32>
  %exp = linalg.generic {indexing_maps = [#x4, #r4, #x4],
                         iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %max : tensor<1x2x6x40xf32>, tensor<1x2x6xf32>)
      outs(%e : tensor<1x2x6x40xf32>) {
  ^bb0(%v: f32, %m: f32, %o: f32):
    %d = arith.subf %v, %m : f32
    %x2 = math.exp %d : f32
    linalg.yield %x2 : f32
  } -> tensor<1x2x6x40xf32>
  %zi = linalg.fill ins(%zero : f32) outs(%er : tensor<1x2x6xf32>) -> tensor<1x2x6xf32>
  %sum = linalg.generic {indexing_maps = [#x4, #r4],
                         iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%exp : tensor<1x2x6x40xf32>) outs(%zi : tensor<1x2x6xf32>) {
  ^bb0(%v: f32, %a: f32):
    %s = arith.addf %a, %v : f32
    linalg.yield %s : f32
  } -> tensor<1x2x6xf32>
  %y = linalg.generic {indexing_maps = [#x4, #r4, #x4],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%exp, %sum : tensor<1x2x6x40xf32>, tensor<1x2x6xf32>)
      outs(%e : tensor<1x2x6x40xf32>) {
  ^bb0(%v: f32, %s: f32, %o: f32):
    %q = arith.divf %v, %s : f32
    linalg.yield %q : f32
  } -> tensor<1x2x6x40xf32>
  return %y : tensor<1x2x6x40xf32>
}

// (i * mul) mod m + 0.25 * (i mod 4) over the flattened index: values a
// few units apart, so that every order of summation agrees to 1e-5.
func.func @iota(%mul: index, %mod: index) -> tensor<720xf32> {
  %quarter = arith.constant 0.25 : f32
  %c4 = arith.constant 4 : index
  %init = tensor.empty() : tensor<720xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      outs(%init : tensor<720xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %t = arith.muli %i, %mul : index
    %u = arith.remui %t, %mod : index
    %w = arith.index_cast %u : index to i32
    %f = arith.sitofp %w : i32 to f32
    %k = arith.remui %i, %c4 : index
    %kw = arith.index_cast %k : index to i32
    %kf = arith.sitofp %kw : i32 to f32
    %kq = arith.mulf %kf, %quarter : f32
    %v = arith.addf %f, %kq : f32
    linalg.yield %v : f32
  } -> tensor<720xf32>
  return %r : tensor<720xf32>
}

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %c11 = arith.constant 11 : index
  %all = call @iota(%c3, %c11) : (index, index) -> tensor<720xf32>
  %x = tensor.extract_slice %all[0] [240] [1] : tensor<720xf32> to tensor<240xf32>
  %x3 = tensor.expand_shape %x [[0, 1, 2]] output_shape [1, 6, 40] : tensor<240xf32> into tensor<1x6x40xf32>
  %gb = call @iota(%c5, %c7) : (index, index) -> tensor<720xf32>
  %g = tensor.extract_slice %gb[0] [40] [1] : tensor<720xf32> to tensor<40xf32>
  %b = tensor.extract_slice %gb[40] [40] [1] : tensor<720xf32> to tensor<40xf32>
  %ln = call @layernorm(%x3, %g, %b) : (tensor<1x6x40xf32>, tensor<40xf32>, tensor<40xf32>) -> tensor<1x6x40xf32>
  %u = tensor.cast %ln : tensor<1x6x40xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  %s = tensor.extract_slice %all[240] [480] [1] : tensor<720xf32> to tensor<480xf32>
  %s4 = tensor.expand_shape %s [[0, 1, 2, 3]] output_shape [1, 2, 6, 40] : tensor<480xf32> into tensor<1x2x6x40xf32>
  %sm = call @softmax(%s4) : (tensor<1x2x6x40xf32>) -> tensor<1x2x6x40xf32>
  %v = tensor.cast %sm : tensor<1x2x6x40xf32> to tensor<*xf32>
  call @printMemrefF32(%v) : (tensor<*xf32>) -> ()
  return
}
