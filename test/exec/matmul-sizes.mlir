// RUN: %s3_on_host %s --rtol 1e-5 | FileCheck %s
// f32 matmuls at awkward sizes (1, 7, 129, 1000 as M, K or N: 1x129x7,
// 7x1x129, 129x7x33, 13x1000x9), and matmuls with a transposed B
// (linalg.matmul with indexing_maps, and the same as a linalg.generic),
// for every target, match the unoptimized program on the host (small
// integers: exact in any order).
// CHECK: OK amd-gfx942: 5690 values match
// CHECK: OK cpu-x86-64-v3: 5690 values match
// CHECK: OK nvidia-sm80: 5690 values match
// CHECK: OK toy-chip: 5690 values match

#id = affine_map<(i, j) -> (i, j)>
#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>

func.func @mm_1x129x7(%a: tensor<1x129xf32>, %b: tensor<129x7xf32>) -> tensor<1x7xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x7xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x7xf32>) -> tensor<1x7xf32>
  %r = linalg.matmul ins(%a, %b : tensor<1x129xf32>, tensor<129x7xf32>)
                     outs(%acc : tensor<1x7xf32>) -> tensor<1x7xf32>
  return %r : tensor<1x7xf32>
}

func.func @mm_7x1x129(%a: tensor<7x1xf32>, %b: tensor<1x129xf32>) -> tensor<7x129xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<7x129xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<7x129xf32>) -> tensor<7x129xf32>
  %r = linalg.matmul ins(%a, %b : tensor<7x1xf32>, tensor<1x129xf32>)
                     outs(%acc : tensor<7x129xf32>) -> tensor<7x129xf32>
  return %r : tensor<7x129xf32>
}

func.func @mm_129x7x33(%a: tensor<129x7xf32>, %b: tensor<7x33xf32>) -> tensor<129x33xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<129x33xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<129x33xf32>) -> tensor<129x33xf32>
  %r = linalg.matmul ins(%a, %b : tensor<129x7xf32>, tensor<7x33xf32>)
                     outs(%acc : tensor<129x33xf32>) -> tensor<129x33xf32>
  return %r : tensor<129x33xf32>
}

func.func @mm_13x1000x9(%a: tensor<13x1000xf32>, %b: tensor<1000x9xf32>) -> tensor<13x9xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<13x9xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<13x9xf32>) -> tensor<13x9xf32>
  %r = linalg.matmul ins(%a, %b : tensor<13x1000xf32>, tensor<1000x9xf32>)
                     outs(%acc : tensor<13x9xf32>) -> tensor<13x9xf32>
  return %r : tensor<13x9xf32>
}

// C = A * B^T with B given as NxK.
func.func @mm_bt(%a: tensor<20x30xf32>, %b: tensor<17x30xf32>) -> tensor<20x17xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<20x17xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<20x17xf32>) -> tensor<20x17xf32>
  %r = linalg.matmul indexing_maps = [#mk, #nk, #mn]
                     ins(%a, %b : tensor<20x30xf32>, tensor<17x30xf32>)
                     outs(%acc : tensor<20x17xf32>) -> tensor<20x17xf32>
  return %r : tensor<20x17xf32>
}

func.func @mm_bt_generic(%a: tensor<11x45xf32>, %b: tensor<6x45xf32>) -> tensor<11x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<11x6xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<11x6xf32>) -> tensor<11x6xf32>
  %r = linalg.generic {indexing_maps = [#mk, #nk, #mn],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<11x45xf32>, tensor<6x45xf32>)
      outs(%acc : tensor<11x6xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<11x6xf32>
  return %r : tensor<11x6xf32>
}

// ((i * mul + j + i * j * j) mod m) - off: small integers, so every order of
// summation gives the same f32 result. Each input is a slice of one
// tensor<1000x1000xf32> of these values.
func.func @iota(%mul: index, %mod: index, %off: index) -> tensor<1000x1000xf32> {
  %init = tensor.empty() : tensor<1000x1000xf32>
  %r = linalg.generic {indexing_maps = [#id],
                       iterator_types = ["parallel", "parallel"]}
      outs(%init : tensor<1000x1000xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %t = arith.muli %i, %mul : index
    %jj = arith.muli %j, %j : index
    %ijj = arith.muli %i, %jj : index
    %t2 = arith.addi %t, %ijj : index
    %u = arith.addi %t2, %j : index
    %v = arith.remui %u, %mod : index
    %w = arith.index_cast %v : index to i32
    %z = arith.index_cast %off : index to i32
    %d = arith.subi %w, %z : i32
    %f = arith.sitofp %d : i32 to f32
    linalg.yield %f : f32
  } -> tensor<1000x1000xf32>
  return %r : tensor<1000x1000xf32>
}

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c7 = arith.constant 7 : index
  %c9 = arith.constant 9 : index
  %c11 = arith.constant 11 : index

  // 1x129x7
  %a1d = call @iota(%c1, %c7, %c3) : (index, index, index) -> tensor<1000x1000xf32>
  %b1d = call @iota(%c3, %c5, %c2) : (index, index, index) -> tensor<1000x1000xf32>
  %a1 = tensor.extract_slice %a1d[0, 0] [1, 129] [1, 1]
      : tensor<1000x1000xf32> to tensor<1x129xf32>
  %b1 = tensor.extract_slice %b1d[0, 0] [129, 7] [1, 1]
      : tensor<1000x1000xf32> to tensor<129x7xf32>
  %r1 = call @mm_1x129x7(%a1, %b1) : (tensor<1x129xf32>, tensor<129x7xf32>) -> tensor<1x7xf32>
  %u1 = tensor.cast %r1 : tensor<1x7xf32> to tensor<*xf32>
  call @printMemrefF32(%u1) : (tensor<*xf32>) -> ()

  // 7x1x129
  %a2d = call @iota(%c1, %c5, %c2) : (index, index, index) -> tensor<1000x1000xf32>
  %b2d = call @iota(%c1, %c9, %c0) : (index, index, index) -> tensor<1000x1000xf32>
  %a2 = tensor.extract_slice %a2d[0, 0] [7, 1] [1, 1]
      : tensor<1000x1000xf32> to tensor<7x1xf32>
  %b2 = tensor.extract_slice %b2d[0, 0] [1, 129] [1, 1]
      : tensor<1000x1000xf32> to tensor<1x129xf32>
  %r2 = call @mm_7x1x129(%a2, %b2) : (tensor<7x1xf32>, tensor<1x129xf32>) -> tensor<7x129xf32>
  %u2 = tensor.cast %r2 : tensor<7x129xf32> to tensor<*xf32>
  call @printMemrefF32(%u2) : (tensor<*xf32>) -> ()

  // 129x7x33
  %a3d = call @iota(%c3, %c11, %c5) : (index, index, index) -> tensor<1000x1000xf32>
  %b3d = call @iota(%c2, %c7, %c3) : (index, index, index) -> tensor<1000x1000xf32>
  %a3 = tensor.extract_slice %a3d[0, 0] [129, 7] [1, 1]
      : tensor<1000x1000xf32> to tensor<129x7xf32>
  %b3 = tensor.extract_slice %b3d[0, 0] [7, 33] [1, 1]
      : tensor<1000x1000xf32> to tensor<7x33xf32>
  %r3 = call @mm_129x7x33(%a3, %b3) : (tensor<129x7xf32>, tensor<7x33xf32>) -> tensor<129x33xf32>
  %u3 = tensor.cast %r3 : tensor<129x33xf32> to tensor<*xf32>
  call @printMemrefF32(%u3) : (tensor<*xf32>) -> ()

  // 13x1000x9
  %a4d = call @iota(%c7, %c5, %c2) : (index, index, index) -> tensor<1000x1000xf32>
  %b4d = call @iota(%c1, %c3, %c1) : (index, index, index) -> tensor<1000x1000xf32>
  %a4 = tensor.extract_slice %a4d[0, 0] [13, 1000] [1, 1]
      : tensor<1000x1000xf32> to tensor<13x1000xf32>
  %b4 = tensor.extract_slice %b4d[0, 0] [1000, 9] [1, 1]
      : tensor<1000x1000xf32> to tensor<1000x9xf32>
  %r4 = call @mm_13x1000x9(%a4, %b4) : (tensor<13x1000xf32>, tensor<1000x9xf32>) -> tensor<13x9xf32>
  %u4 = tensor.cast %r4 : tensor<13x9xf32> to tensor<*xf32>
  call @printMemrefF32(%u4) : (tensor<*xf32>) -> ()

  // 20x30x17, B transposed (linalg.matmul indexing_maps)
  %a5d = call @iota(%c3, %c7, %c3) : (index, index, index) -> tensor<1000x1000xf32>
  %b5d = call @iota(%c5, %c9, %c4) : (index, index, index) -> tensor<1000x1000xf32>
  %a5 = tensor.extract_slice %a5d[0, 0] [20, 30] [1, 1]
      : tensor<1000x1000xf32> to tensor<20x30xf32>
  %b5 = tensor.extract_slice %b5d[0, 0] [17, 30] [1, 1]
      : tensor<1000x1000xf32> to tensor<17x30xf32>
  %r5 = call @mm_bt(%a5, %b5) : (tensor<20x30xf32>, tensor<17x30xf32>) -> tensor<20x17xf32>
  %u5 = tensor.cast %r5 : tensor<20x17xf32> to tensor<*xf32>
  call @printMemrefF32(%u5) : (tensor<*xf32>) -> ()

  // 11x45x6, B transposed (linalg.generic)
  %a6d = call @iota(%c2, %c5, %c2) : (index, index, index) -> tensor<1000x1000xf32>
  %b6d = call @iota(%c7, %c6, %c3) : (index, index, index) -> tensor<1000x1000xf32>
  %a6 = tensor.extract_slice %a6d[0, 0] [11, 45] [1, 1]
      : tensor<1000x1000xf32> to tensor<11x45xf32>
  %b6 = tensor.extract_slice %b6d[0, 0] [6, 45] [1, 1]
      : tensor<1000x1000xf32> to tensor<6x45xf32>
  %r6 = call @mm_bt_generic(%a6, %b6) : (tensor<11x45xf32>, tensor<6x45xf32>) -> tensor<11x6xf32>
  %u6 = tensor.cast %r6 : tensor<11x6xf32> to tensor<*xf32>
  call @printMemrefF32(%u6) : (tensor<*xf32>) -> ()
  return
}
