// RUN: %s3_on_host %s --rtol 1e-5 | FileCheck %s
// linalg.broadcast (alone, and feeding a linalg.add), linalg.transpose
// (3-d permutation, and a 2-d transpose feeding an elementwise op) and an
// elementwise linalg.generic mixing operands of ranks 0 to 3 (broadcast and
// transposed indexing maps), for every target, match the unoptimized
// program on the host.
// CHECK: OK amd-gfx942: 1084 values match
// CHECK: OK cpu-x86-64-v3: 1084 values match
// CHECK: OK nvidia-sm80: 1084 values match
// CHECK: OK toy-chip: 1084 values match

#id = affine_map<(i, j) -> (i, j)>
#id3 = affine_map<(i, j, k) -> (i, j, k)>

func.func @bcast(%x: tensor<4x6xf32>) -> tensor<4x3x6xf32> {
  %e = tensor.empty() : tensor<4x3x6xf32>
  %r = linalg.broadcast ins(%x : tensor<4x6xf32>) outs(%e : tensor<4x3x6xf32>)
                        dimensions = [1]
  return %r : tensor<4x3x6xf32>
}

func.func @bcast_add(%v: tensor<7xf32>, %x: tensor<5x7x3xf32>) -> tensor<5x7x3xf32> {
  %e = tensor.empty() : tensor<5x7x3xf32>
  %b = linalg.broadcast ins(%v : tensor<7xf32>) outs(%e : tensor<5x7x3xf32>)
                        dimensions = [0, 2]
  %r = linalg.add ins(%b, %x : tensor<5x7x3xf32>, tensor<5x7x3xf32>)
                  outs(%e : tensor<5x7x3xf32>) -> tensor<5x7x3xf32>
  return %r : tensor<5x7x3xf32>
}

func.func @transpose3d(%x: tensor<4x6x9xf32>) -> tensor<9x4x6xf32> {
  %e = tensor.empty() : tensor<9x4x6xf32>
  %r = linalg.transpose ins(%x : tensor<4x6x9xf32>) outs(%e : tensor<9x4x6xf32>)
                        permutation = [2, 0, 1]
  return %r : tensor<9x4x6xf32>
}

func.func @transpose_scale(%x: tensor<13x37xf32>) -> tensor<37x13xf32> {
  %two = arith.constant 2.0 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<37x13xf32>
  %t = linalg.transpose ins(%x : tensor<13x37xf32>) outs(%e : tensor<37x13xf32>)
                        permutation = [1, 0]
  %r = linalg.generic {indexing_maps = [#id, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%t : tensor<37x13xf32>) outs(%e : tensor<37x13xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.mulf %v, %two : f32
    %a = arith.addf %m, %one : f32
    linalg.yield %a : f32
  } -> tensor<37x13xf32>
  return %r : tensor<37x13xf32>
}

// out(i, j, k) = a(i, j, k) + b(j, k) * c(i) - d(k) + e() + f(k, i)
func.func @mix(%a: tensor<6x5x7xf32>, %b: tensor<5x7xf32>, %c: tensor<6xf32>,
               %d: tensor<7xf32>, %s: tensor<f32>, %f: tensor<7x6xf32>) -> tensor<6x5x7xf32> {
  %e = tensor.empty() : tensor<6x5x7xf32>
  %r = linalg.generic {indexing_maps = [#id3,
                                        affine_map<(i, j, k) -> (j, k)>,
                                        affine_map<(i, j, k) -> (i)>,
                                        affine_map<(i, j, k) -> (k)>,
                                        affine_map<(i, j, k) -> ()>,
                                        affine_map<(i, j, k) -> (k, i)>,
                                        #id3],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a, %b, %c, %d, %s, %f : tensor<6x5x7xf32>, tensor<5x7xf32>, tensor<6xf32>,
                                   tensor<7xf32>, tensor<f32>, tensor<7x6xf32>)
      outs(%e : tensor<6x5x7xf32>) {
  ^bb0(%va: f32, %vb: f32, %vc: f32, %vd: f32, %ve: f32, %vf: f32, %o: f32):
    %m = arith.mulf %vb, %vc : f32
    %t0 = arith.addf %va, %m : f32
    %t1 = arith.subf %t0, %vd : f32
    %t2 = arith.addf %t1, %ve : f32
    %t3 = arith.addf %t2, %vf : f32
    linalg.yield %t3 : f32
  } -> tensor<6x5x7xf32>
  return %r : tensor<6x5x7xf32>
}

// ((i * mul + j + i * j * j) mod m) - off: small integers, so every order of
// summation gives the same f32 result. Each input is a slice of one
// tensor<24x37xf32> of these values.
func.func @iota(%mul: index, %mod: index, %off: index) -> tensor<24x37xf32> {
  %init = tensor.empty() : tensor<24x37xf32>
  %r = linalg.generic {indexing_maps = [#id],
                       iterator_types = ["parallel", "parallel"]}
      outs(%init : tensor<24x37xf32>) {
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
  } -> tensor<24x37xf32>
  return %r : tensor<24x37xf32>
}

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  %c9 = arith.constant 9 : index
  %c11 = arith.constant 11 : index
  %c13 = arith.constant 13 : index
  %c17 = arith.constant 17 : index
  %c30 = arith.constant 30 : index

  %x1d = call @iota(%c5, %c11, %c5) : (index, index, index) -> tensor<24x37xf32>
  %x1 = tensor.extract_slice %x1d[0, 0] [4, 6] [1, 1]
      : tensor<24x37xf32> to tensor<4x6xf32>
  %r1 = call @bcast(%x1) : (tensor<4x6xf32>) -> tensor<4x3x6xf32>
  %u1 = tensor.cast %r1 : tensor<4x3x6xf32> to tensor<*xf32>
  call @printMemrefF32(%u1) : (tensor<*xf32>) -> ()

  %v2d = call @iota(%c1, %c13, %c6) : (index, index, index) -> tensor<24x37xf32>
  %v2s = tensor.extract_slice %v2d[0, 0] [1, 7] [1, 1]
      : tensor<24x37xf32> to tensor<1x7xf32>
  %v2 = tensor.collapse_shape %v2s [[0, 1]] : tensor<1x7xf32> into tensor<7xf32>
  %x2d = call @iota(%c3, %c9, %c4) : (index, index, index) -> tensor<24x37xf32>
  %x2s = tensor.extract_slice %x2d[0, 0] [5, 21] [1, 1]
      : tensor<24x37xf32> to tensor<5x21xf32>
  %x2 = tensor.expand_shape %x2s [[0], [1, 2]] output_shape [5, 7, 3]
      : tensor<5x21xf32> into tensor<5x7x3xf32>
  %r2 = call @bcast_add(%v2, %x2) : (tensor<7xf32>, tensor<5x7x3xf32>) -> tensor<5x7x3xf32>
  %u2 = tensor.cast %r2 : tensor<5x7x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u2) : (tensor<*xf32>) -> ()

  %x3d = call @iota(%c7, %c17, %c8) : (index, index, index) -> tensor<24x37xf32>
  %x3s = tensor.extract_slice %x3d[0, 0] [24, 9] [1, 1]
      : tensor<24x37xf32> to tensor<24x9xf32>
  %x3 = tensor.expand_shape %x3s [[0, 1], [2]] output_shape [4, 6, 9]
      : tensor<24x9xf32> into tensor<4x6x9xf32>
  %r3 = call @transpose3d(%x3) : (tensor<4x6x9xf32>) -> tensor<9x4x6xf32>
  %u3 = tensor.cast %r3 : tensor<9x4x6xf32> to tensor<*xf32>
  call @printMemrefF32(%u3) : (tensor<*xf32>) -> ()

  %x4d = call @iota(%c3, %c11, %c5) : (index, index, index) -> tensor<24x37xf32>
  %x4 = tensor.extract_slice %x4d[0, 0] [13, 37] [1, 1]
      : tensor<24x37xf32> to tensor<13x37xf32>
  %r4 = call @transpose_scale(%x4) : (tensor<13x37xf32>) -> tensor<37x13xf32>
  %u4 = tensor.cast %r4 : tensor<37x13xf32> to tensor<*xf32>
  call @printMemrefF32(%u4) : (tensor<*xf32>) -> ()

  %ad = call @iota(%c2, %c9, %c4) : (index, index, index) -> tensor<24x37xf32>
  %as = tensor.extract_slice %ad[0, 0] [6, 35] [1, 1]
      : tensor<24x37xf32> to tensor<6x35xf32>
  %a = tensor.expand_shape %as [[0], [1, 2]] output_shape [6, 5, 7]
      : tensor<6x35xf32> into tensor<6x5x7xf32>
  %bd = call @iota(%c3, %c7, %c3) : (index, index, index) -> tensor<24x37xf32>
  %b = tensor.extract_slice %bd[0, 0] [5, 7] [1, 1]
      : tensor<24x37xf32> to tensor<5x7xf32>
  %cd = call @iota(%c1, %c5, %c2) : (index, index, index) -> tensor<24x37xf32>
  %cs = tensor.extract_slice %cd[0, 0] [1, 6] [1, 1]
      : tensor<24x37xf32> to tensor<1x6xf32>
  %c = tensor.collapse_shape %cs [[0, 1]] : tensor<1x6xf32> into tensor<6xf32>
  %dd = call @iota(%c1, %c11, %c5) : (index, index, index) -> tensor<24x37xf32>
  %ds = tensor.extract_slice %dd[0, 0] [1, 7] [1, 1]
      : tensor<24x37xf32> to tensor<1x7xf32>
  %d = tensor.collapse_shape %ds [[0, 1]] : tensor<1x7xf32> into tensor<7xf32>
  %sd = call @iota(%c1, %c30, %c13) : (index, index, index) -> tensor<24x37xf32>
  %ss = tensor.extract_slice %sd[0, 0] [1, 1] [1, 1]
      : tensor<24x37xf32> to tensor<1x1xf32>
  %s = tensor.collapse_shape %ss [] : tensor<1x1xf32> into tensor<f32>
  %fd = call @iota(%c5, %c13, %c6) : (index, index, index) -> tensor<24x37xf32>
  %f = tensor.extract_slice %fd[0, 0] [7, 6] [1, 1]
      : tensor<24x37xf32> to tensor<7x6xf32>
  %r5 = call @mix(%a, %b, %c, %d, %s, %f) : (tensor<6x5x7xf32>, tensor<5x7xf32>, tensor<6xf32>,
                                             tensor<7xf32>, tensor<f32>, tensor<7x6xf32>) -> tensor<6x5x7xf32>
  %u5 = tensor.cast %r5 : tensor<6x5x7xf32> to tensor<*xf32>
  call @printMemrefF32(%u5) : (tensor<*xf32>) -> ()
  return
}
