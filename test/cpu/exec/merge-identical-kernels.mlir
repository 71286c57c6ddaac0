// RUN: pb-compile %s --target=cpu-host --options=fusion=0 --print-metadata -o %t.opt | FileCheck %s --check-prefix=KERNELS
// RUN: pb-compile %s --target=cpu-host --options=pipeline=reference -o %t.ref
// RUN: pb-run %t.opt --check-against=%t.ref | FileCheck %s
// Two identical row reductions and their fills (unfused, fusion=0) are four
// kernels, two pairs of the same code: pb-outline-kernels makes each pair
// one function that S5 compiles once, and each call still reads its own
// input and writes its own output.
// KERNELS:      "kernels": {
// KERNELS-NEXT:   "compiled": 2,
// KERNELS-NEXT:   "total": 4
// CHECK: OK f: 128 values match the reference

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @f(%a: tensor<64x256xf32>, %b: tensor<64x256xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %s1 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%a : tensor<64x256xf32>) outs(%f : tensor<64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %t = math.tanh %x : f32
    %r = arith.addf %t, %o : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  %s2 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%b : tensor<64x256xf32>) outs(%f : tensor<64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %t = math.tanh %x : f32
    %r = arith.addf %t, %o : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  return %s1, %s2 : tensor<64xf32>, tensor<64xf32>
}
