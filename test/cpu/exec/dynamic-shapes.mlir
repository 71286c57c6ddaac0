// One artifact at several run-time sizes, none a multiple of a tile (1, 7,
// 129), against the reference pipeline: a linear layer with a fused bias
// and GELU-like epilogue (M at run time), a row softmax over a run-time
// number of columns (a vector loop to the largest multiple of the lanes and
// a scalar remainder), and q @ k^T, p @ v per head (N, then K at run time).
// RUN: pb-compile %s --target=cpu-host -o %t.opt
// RUN: pb-compile %s --target=cpu-host --options=pipeline=reference -o %t.ref
// RUN: pb-run %t.opt --entry=linear --sizes=1 --check-against=%t.ref | FileCheck %s --check-prefix=LIN1
// RUN: pb-run %t.opt --entry=linear --sizes=7 --check-against=%t.ref | FileCheck %s --check-prefix=LIN7
// RUN: pb-run %t.opt --entry=linear --sizes=129 --check-against=%t.ref | FileCheck %s --check-prefix=LIN129
// RUN: pb-run %t.opt --entry=softmax --sizes=7,129 --check-against=%t.ref | FileCheck %s --check-prefix=SM
// RUN: pb-run %t.opt --entry=attention --sizes=129,7 --check-against=%t.ref --rtol=1e-4 --atol=1e-4 | FileCheck %s --check-prefix=ATT
// RUN: pb-run %t.opt --entry=attention --sizes=1,1 --check-against=%t.ref --rtol=1e-4 --atol=1e-4 | FileCheck %s --check-prefix=ATT1
// Without its sizes, an entry is refused:
// RUN: not pb-run %t.opt --entry=linear 2>&1 | FileCheck %s --check-prefix=NOSIZES
// LIN1: linear: output 0 f32 [1,48]
// LIN1: OK linear: 48 values match the reference
// LIN7: OK linear: 336 values match the reference
// LIN129: OK linear: 6192 values match the reference
// SM: softmax: output 0 f32 [7,129]
// SM: OK softmax
// ATT: attention: output 0 f32 [4,129,32]
// ATT: OK attention
// ATT1: OK attention
// NOSIZES: pb-run: error: entry 'linear' takes 1 sizes (dynamic shapes); --sizes gives 0

#map = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
#rows = affine_map<(d0, d1) -> (d0)>
func.func @linear(%x: tensor<?x64xf32> {pb.dim_args = array<i64: 3, -1>},
                  %w: tensor<64x48xf32>, %bias: tensor<48xf32>, %n: index)
    -> (tensor<?x48xf32> {pb.dim_args = array<i64: 3, -1>}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%n) : tensor<?x48xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x48xf32>) -> tensor<?x48xf32>
  %m = linalg.matmul ins(%x, %w : tensor<?x64xf32>, tensor<64x48xf32>)
                     outs(%f : tensor<?x48xf32>) -> tensor<?x48xf32>
  %e2 = tensor.empty(%n) : tensor<?x48xf32>
  %r = linalg.generic {indexing_maps = [#map, #row, #map],
                       iterator_types = ["parallel", "parallel"]}
      ins(%m, %bias : tensor<?x48xf32>, tensor<48xf32>) outs(%e2 : tensor<?x48xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    %t = math.tanh %s : f32
    %u = arith.mulf %s, %t : f32
    linalg.yield %u : f32
  } -> tensor<?x48xf32>
  return %r : tensor<?x48xf32>
}

func.func @softmax(%x: tensor<?x?xf32> {pb.dim_args = array<i64: 1, 2>},
                   %rows: index, %cols: index)
    -> (tensor<?x?xf32> {pb.dim_args = array<i64: 1, 2>}) {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %em = tensor.empty(%rows) : tensor<?xf32>
  %fm = linalg.fill ins(%ninf : f32) outs(%em : tensor<?xf32>) -> tensor<?xf32>
  %max = linalg.generic {indexing_maps = [#map, #rows],
                         iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<?x?xf32>) outs(%fm : tensor<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.maximumf %a, %o : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  %ee = tensor.empty(%rows, %cols) : tensor<?x?xf32>
  %exp = linalg.generic {indexing_maps = [#map, #rows, #map],
                         iterator_types = ["parallel", "parallel"]}
      ins(%x, %max : tensor<?x?xf32>, tensor<?xf32>) outs(%ee : tensor<?x?xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<?x?xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%em : tensor<?xf32>) -> tensor<?xf32>
  %sum = linalg.generic {indexing_maps = [#map, #rows],
                         iterator_types = ["parallel", "reduction"]}
      ins(%exp : tensor<?x?xf32>) outs(%fs : tensor<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %o : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  %out = linalg.generic {indexing_maps = [#map, #rows, #map],
                         iterator_types = ["parallel", "parallel"]}
      ins(%exp, %sum : tensor<?x?xf32>, tensor<?xf32>) outs(%ee : tensor<?x?xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %r = arith.divf %a, %s : f32
    linalg.yield %r : f32
  } -> tensor<?x?xf32>
  return %out : tensor<?x?xf32>
}

func.func @attention(%q: tensor<4x?x32xf32> {pb.dim_args = array<i64: -1, 3, -1>},
                     %kt: tensor<4x32x?xf32> {pb.dim_args = array<i64: -1, -1, 4>},
                     %v: tensor<4x?x32xf32> {pb.dim_args = array<i64: -1, 4, -1>},
                     %m: index, %n: index)
    -> (tensor<4x?x32xf32> {pb.dim_args = array<i64: -1, 3, -1>}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%m, %n) : tensor<4x?x?xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x?x?xf32>) -> tensor<4x?x?xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<4x?x32xf32>, tensor<4x32x?xf32>)
                           outs(%f : tensor<4x?x?xf32>) -> tensor<4x?x?xf32>
  %e2 = tensor.empty(%m) : tensor<4x?x32xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x?x32xf32>) -> tensor<4x?x32xf32>
  %o = linalg.batch_matmul ins(%s, %v : tensor<4x?x?xf32>, tensor<4x?x32xf32>)
                           outs(%f2 : tensor<4x?x32xf32>) -> tensor<4x?x32xf32>
  return %o : tensor<4x?x32xf32>
}
