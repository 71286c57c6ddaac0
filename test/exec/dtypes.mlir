// RUN: %s3_on_host %s --rtol 1e-5 | FileCheck %s
// The same small matmul (12x16 by 16x10) plus an addend in f16, bf16
// (f16 also with f32 accumulation), i32, and i8 inputs with i32
// accumulation, for every target, match the unoptimized program on the
// host. Inputs are small integers, so every result is exact in its type
// (|values| <= 256 in bf16, <= 2048 in f16); results are converted to f32
// for printing.
// CHECK: OK amd-gfx942: 600 values match
// CHECK: OK cpu-x86-64-v3: 600 values match
// CHECK: OK nvidia-sm80: 600 values match
// CHECK: OK toy-chip: 600 values match

#id = affine_map<(i, j) -> (i, j)>

func.func @mm_f16(%a: tensor<12x16xf16>, %b: tensor<16x10xf16>,
    %c: tensor<12x10xf16>) -> tensor<12x10xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<12x10xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%e : tensor<12x10xf16>) -> tensor<12x10xf16>
  %mm = linalg.matmul ins(%a, %b : tensor<12x16xf16>, tensor<16x10xf16>)
                      outs(%acc : tensor<12x10xf16>) -> tensor<12x10xf16>
  %r = linalg.add ins(%mm, %c : tensor<12x10xf16>, tensor<12x10xf16>)
                  outs(%e : tensor<12x10xf16>) -> tensor<12x10xf16>
  return %r : tensor<12x10xf16>
}

func.func @mm_f16_f32(%a: tensor<12x16xf16>, %b: tensor<16x10xf16>,
    %c: tensor<12x10xf32>) -> tensor<12x10xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<12x10xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<12x10xf32>) -> tensor<12x10xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<12x16xf16>, tensor<16x10xf16>)
                      outs(%acc : tensor<12x10xf32>) -> tensor<12x10xf32>
  %r = linalg.add ins(%mm, %c : tensor<12x10xf32>, tensor<12x10xf32>)
                  outs(%e : tensor<12x10xf32>) -> tensor<12x10xf32>
  return %r : tensor<12x10xf32>
}

func.func @mm_bf16(%a: tensor<12x16xbf16>, %b: tensor<16x10xbf16>,
    %c: tensor<12x10xbf16>) -> tensor<12x10xbf16> {
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<12x10xbf16>
  %acc = linalg.fill ins(%zero : bf16) outs(%e : tensor<12x10xbf16>) -> tensor<12x10xbf16>
  %mm = linalg.matmul ins(%a, %b : tensor<12x16xbf16>, tensor<16x10xbf16>)
                      outs(%acc : tensor<12x10xbf16>) -> tensor<12x10xbf16>
  %r = linalg.add ins(%mm, %c : tensor<12x10xbf16>, tensor<12x10xbf16>)
                  outs(%e : tensor<12x10xbf16>) -> tensor<12x10xbf16>
  return %r : tensor<12x10xbf16>
}

func.func @mm_i32(%a: tensor<12x16xi32>, %b: tensor<16x10xi32>,
    %c: tensor<12x10xi32>) -> tensor<12x10xi32> {
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<12x10xi32>
  %acc = linalg.fill ins(%zero : i32) outs(%e : tensor<12x10xi32>) -> tensor<12x10xi32>
  %mm = linalg.matmul ins(%a, %b : tensor<12x16xi32>, tensor<16x10xi32>)
                      outs(%acc : tensor<12x10xi32>) -> tensor<12x10xi32>
  %r = linalg.add ins(%mm, %c : tensor<12x10xi32>, tensor<12x10xi32>)
                  outs(%e : tensor<12x10xi32>) -> tensor<12x10xi32>
  return %r : tensor<12x10xi32>
}

func.func @mm_i8_i32(%a: tensor<12x16xi8>, %b: tensor<16x10xi8>,
    %c: tensor<12x10xi32>) -> tensor<12x10xi32> {
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<12x10xi32>
  %acc = linalg.fill ins(%zero : i32) outs(%e : tensor<12x10xi32>) -> tensor<12x10xi32>
  %mm = linalg.matmul ins(%a, %b : tensor<12x16xi8>, tensor<16x10xi8>)
                      outs(%acc : tensor<12x10xi32>) -> tensor<12x10xi32>
  %r = linalg.add ins(%mm, %c : tensor<12x10xi32>, tensor<12x10xi32>)
                  outs(%e : tensor<12x10xi32>) -> tensor<12x10xi32>
  return %r : tensor<12x10xi32>
}

// Conversions of the inputs and of the results (for printing).
func.func @to_f16(%x: tensor<16x16xf32>) -> tensor<16x16xf16> {
  %e = tensor.empty() : tensor<16x16xf16>
  %r = linalg.generic {indexing_maps = [#id, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<16x16xf32>) outs(%e : tensor<16x16xf16>) {
  ^bb0(%v: f32, %o: f16):
    %y = arith.truncf %v : f32 to f16
    linalg.yield %y : f16
  } -> tensor<16x16xf16>
  return %r : tensor<16x16xf16>
}

func.func @to_bf16(%x: tensor<16x16xf32>) -> tensor<16x16xbf16> {
  %e = tensor.empty() : tensor<16x16xbf16>
  %r = linalg.generic {indexing_maps = [#id, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<16x16xf32>) outs(%e : tensor<16x16xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %y = arith.truncf %v : f32 to bf16
    linalg.yield %y : bf16
  } -> tensor<16x16xbf16>
  return %r : tensor<16x16xbf16>
}

func.func @to_i32(%x: tensor<16x16xf32>) -> tensor<16x16xi32> {
  %e = tensor.empty() : tensor<16x16xi32>
  %r = linalg.generic {indexing_maps = [#id, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<16x16xf32>) outs(%e : tensor<16x16xi32>) {
  ^bb0(%v: f32, %o: i32):
    %y = arith.fptosi %v : f32 to i32
    linalg.yield %y : i32
  } -> tensor<16x16xi32>
  return %r : tensor<16x16xi32>
}

func.func @to_i8(%x: tensor<16x16xf32>) -> tensor<16x16xi8> {
  %e = tensor.empty() : tensor<16x16xi8>
  %r = linalg.generic {indexing_maps = [#id, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<16x16xf32>) outs(%e : tensor<16x16xi8>) {
  ^bb0(%v: f32, %o: i8):
    %y = arith.fptosi %v : f32 to i8
    linalg.yield %y : i8
  } -> tensor<16x16xi8>
  return %r : tensor<16x16xi8>
}

func.func @from_f16(%x: tensor<12x10xf16>) -> tensor<12x10xf32> {
  %e = tensor.empty() : tensor<12x10xf32>
  %r = linalg.generic {indexing_maps = [#id, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<12x10xf16>) outs(%e : tensor<12x10xf32>) {
  ^bb0(%v: f16, %o: f32):
    %y = arith.extf %v : f16 to f32
    linalg.yield %y : f32
  } -> tensor<12x10xf32>
  return %r : tensor<12x10xf32>
}

func.func @from_bf16(%x: tensor<12x10xbf16>) -> tensor<12x10xf32> {
  %e = tensor.empty() : tensor<12x10xf32>
  %r = linalg.generic {indexing_maps = [#id, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<12x10xbf16>) outs(%e : tensor<12x10xf32>) {
  ^bb0(%v: bf16, %o: f32):
    %y = arith.extf %v : bf16 to f32
    linalg.yield %y : f32
  } -> tensor<12x10xf32>
  return %r : tensor<12x10xf32>
}

func.func @from_i32(%x: tensor<12x10xi32>) -> tensor<12x10xf32> {
  %e = tensor.empty() : tensor<12x10xf32>
  %r = linalg.generic {indexing_maps = [#id, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<12x10xi32>) outs(%e : tensor<12x10xf32>) {
  ^bb0(%v: i32, %o: f32):
    %y = arith.sitofp %v : i32 to f32
    linalg.yield %y : f32
  } -> tensor<12x10xf32>
  return %r : tensor<12x10xf32>
}

// ((i * mul + j + i * j * j) mod m) - off: small integers. Each input is a
// slice of one tensor<16x16xf32> of these values, converted to its type.
func.func @iota(%mul: index, %mod: index, %off: index) -> tensor<16x16xf32> {
  %init = tensor.empty() : tensor<16x16xf32>
  %r = linalg.generic {indexing_maps = [#id],
                       iterator_types = ["parallel", "parallel"]}
      outs(%init : tensor<16x16xf32>) {
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
  } -> tensor<16x16xf32>
  return %r : tensor<16x16xf32>
}

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c7 = arith.constant 7 : index
  %c13 = arith.constant 13 : index
  %c50 = arith.constant 50 : index
  %c100 = arith.constant 100 : index
  %c101 = arith.constant 101 : index
  %c201 = arith.constant 201 : index

  // f16: inputs in [-6, 6], addend in [-50, 50].
  %ha = call @iota(%c3, %c13, %c6) : (index, index, index) -> tensor<16x16xf32>
  %hb = call @iota(%c5, %c13, %c6) : (index, index, index) -> tensor<16x16xf32>
  %hc = call @iota(%c7, %c101, %c50) : (index, index, index) -> tensor<16x16xf32>
  %ha16 = call @to_f16(%ha) : (tensor<16x16xf32>) -> tensor<16x16xf16>
  %hb16 = call @to_f16(%hb) : (tensor<16x16xf32>) -> tensor<16x16xf16>
  %hc16 = call @to_f16(%hc) : (tensor<16x16xf32>) -> tensor<16x16xf16>
  %ha1 = tensor.extract_slice %ha16[0, 0] [12, 16] [1, 1]
      : tensor<16x16xf16> to tensor<12x16xf16>
  %hb1 = tensor.extract_slice %hb16[0, 0] [16, 10] [1, 1]
      : tensor<16x16xf16> to tensor<16x10xf16>
  %hc1 = tensor.extract_slice %hc16[0, 0] [12, 10] [1, 1]
      : tensor<16x16xf16> to tensor<12x10xf16>
  %hr = call @mm_f16(%ha1, %hb1, %hc1) : (tensor<12x16xf16>, tensor<16x10xf16>, tensor<12x10xf16>) -> tensor<12x10xf16>
  %hp = call @from_f16(%hr) : (tensor<12x10xf16>) -> tensor<12x10xf32>
  %hu = tensor.cast %hp : tensor<12x10xf32> to tensor<*xf32>
  call @printMemrefF32(%hu) : (tensor<*xf32>) -> ()

  // f16 inputs, f32 accumulation (same inputs, f32 addend).
  %hc2 = tensor.extract_slice %hc[0, 0] [12, 10] [1, 1]
      : tensor<16x16xf32> to tensor<12x10xf32>
  %gr = call @mm_f16_f32(%ha1, %hb1, %hc2) : (tensor<12x16xf16>, tensor<16x10xf16>, tensor<12x10xf32>) -> tensor<12x10xf32>
  %gu = tensor.cast %gr : tensor<12x10xf32> to tensor<*xf32>
  call @printMemrefF32(%gu) : (tensor<*xf32>) -> ()

  // bf16: inputs in [-2, 2], addend in [-50, 50].
  %ba = call @iota(%c3, %c5, %c2) : (index, index, index) -> tensor<16x16xf32>
  %bb = call @iota(%c5, %c5, %c2) : (index, index, index) -> tensor<16x16xf32>
  %bc = call @iota(%c7, %c101, %c50) : (index, index, index) -> tensor<16x16xf32>
  %ba16 = call @to_bf16(%ba) : (tensor<16x16xf32>) -> tensor<16x16xbf16>
  %bb16 = call @to_bf16(%bb) : (tensor<16x16xf32>) -> tensor<16x16xbf16>
  %bc16 = call @to_bf16(%bc) : (tensor<16x16xf32>) -> tensor<16x16xbf16>
  %ba1 = tensor.extract_slice %ba16[0, 0] [12, 16] [1, 1]
      : tensor<16x16xbf16> to tensor<12x16xbf16>
  %bb1 = tensor.extract_slice %bb16[0, 0] [16, 10] [1, 1]
      : tensor<16x16xbf16> to tensor<16x10xbf16>
  %bc1 = tensor.extract_slice %bc16[0, 0] [12, 10] [1, 1]
      : tensor<16x16xbf16> to tensor<12x10xbf16>
  %br = call @mm_bf16(%ba1, %bb1, %bc1) : (tensor<12x16xbf16>, tensor<16x10xbf16>, tensor<12x10xbf16>) -> tensor<12x10xbf16>
  %bp = call @from_bf16(%br) : (tensor<12x10xbf16>) -> tensor<12x10xf32>
  %bu = tensor.cast %bp : tensor<12x10xf32> to tensor<*xf32>
  call @printMemrefF32(%bu) : (tensor<*xf32>) -> ()

  // i32: inputs in [-100, 100].
  %ia = call @iota(%c3, %c201, %c100) : (index, index, index) -> tensor<16x16xf32>
  %ib = call @iota(%c5, %c201, %c100) : (index, index, index) -> tensor<16x16xf32>
  %ic = call @iota(%c7, %c201, %c100) : (index, index, index) -> tensor<16x16xf32>
  %ia32 = call @to_i32(%ia) : (tensor<16x16xf32>) -> tensor<16x16xi32>
  %ib32 = call @to_i32(%ib) : (tensor<16x16xf32>) -> tensor<16x16xi32>
  %ic32 = call @to_i32(%ic) : (tensor<16x16xf32>) -> tensor<16x16xi32>
  %ia1 = tensor.extract_slice %ia32[0, 0] [12, 16] [1, 1]
      : tensor<16x16xi32> to tensor<12x16xi32>
  %ib1 = tensor.extract_slice %ib32[0, 0] [16, 10] [1, 1]
      : tensor<16x16xi32> to tensor<16x10xi32>
  %ic1 = tensor.extract_slice %ic32[0, 0] [12, 10] [1, 1]
      : tensor<16x16xi32> to tensor<12x10xi32>
  %ir = call @mm_i32(%ia1, %ib1, %ic1) : (tensor<12x16xi32>, tensor<16x10xi32>, tensor<12x10xi32>) -> tensor<12x10xi32>
  %ip = call @from_i32(%ir) : (tensor<12x10xi32>) -> tensor<12x10xf32>
  %iu = tensor.cast %ip : tensor<12x10xf32> to tensor<*xf32>
  call @printMemrefF32(%iu) : (tensor<*xf32>) -> ()

  // i8 inputs in [-100, 100] (sign-extended), i32 accumulation and addend.
  %qa = call @iota(%c2, %c201, %c100) : (index, index, index) -> tensor<16x16xf32>
  %qb = call @iota(%c5, %c201, %c100) : (index, index, index) -> tensor<16x16xf32>
  %qc = call @iota(%c7, %c201, %c100) : (index, index, index) -> tensor<16x16xf32>
  %qa8 = call @to_i8(%qa) : (tensor<16x16xf32>) -> tensor<16x16xi8>
  %qb8 = call @to_i8(%qb) : (tensor<16x16xf32>) -> tensor<16x16xi8>
  %qc32 = call @to_i32(%qc) : (tensor<16x16xf32>) -> tensor<16x16xi32>
  %qa1 = tensor.extract_slice %qa8[0, 0] [12, 16] [1, 1]
      : tensor<16x16xi8> to tensor<12x16xi8>
  %qb1 = tensor.extract_slice %qb8[0, 0] [16, 10] [1, 1]
      : tensor<16x16xi8> to tensor<16x10xi8>
  %qc1 = tensor.extract_slice %qc32[0, 0] [12, 10] [1, 1]
      : tensor<16x16xi32> to tensor<12x10xi32>
  %qr = call @mm_i8_i32(%qa1, %qb1, %qc1) : (tensor<12x16xi8>, tensor<16x10xi8>, tensor<12x10xi32>) -> tensor<12x10xi32>
  %qp = call @from_i32(%qr) : (tensor<12x10xi32>) -> tensor<12x10xf32>
  %qu = tensor.cast %qp : tensor<12x10xf32> to tensor<*xf32>
  call @printMemrefF32(%qu) : (tensor<*xf32>) -> ()
  return
}
