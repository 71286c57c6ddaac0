// RUN: %check_cpu | FileCheck %s
// RUN: pb-opt %s --target=cpu-x86-64-v3 --pb-pipeline=s1,s2,s3 --pb-explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: pb-opt %s --target=cpu-host --pb-pipeline=s1,s2 | FileCheck %s --check-prefix=S2
// A 1x1 convolution (channels last) with a ReLU, padded by one pixel and
// read by a 3x3 depthwise convolution (MobileNet's block), and the same
// padded with -1e30 for a 3x3 max pooling. pb-pad-in-place lets the ReLU
// write the padded buffer's interior, so the ReLU is still the convolution
// kernel's epilogue (the border fills sit between the two and move before
// the kernel, after C's fill was found right before it), and only the
// border is filled.
// EXPLAIN: pad-in-place.mlir:[[#@LINE+21]]:8: remark: pb-explain: matrix units: C's fill folded into the first K block
// EXPLAIN: pad-in-place.mlir:[[#@LINE+28]]:11: remark: pb-explain: matrix units: epilogue of 1 ops fused
// S2-LABEL: func.func @conv_pad_depthwise
// S2-NOT: linalg.copy
// S2-NOT: memref.copy
// S2: return
// CHECK: OK conv_pad_depthwise: 576 values match the reference
// CHECK: OK conv_pad_maxpool: 576 values match the reference
#x = affine_map<(n, h, w, c, k) -> (n, h, w, k)>
#w = affine_map<(n, h, w, c, k) -> (c, k)>
#o = affine_map<(n, h, w, c, k) -> (n, h, w, c)>
#id = affine_map<(n, h, w, c) -> (n, h, w, c)>
#dx = affine_map<(n, h, w, kh, kw, c) -> (n, h + kh, w + kw, c)>
#dw = affine_map<(n, h, w, kh, kw, c) -> (kh, kw, c)>
#dp = affine_map<(n, h, w, kh, kw, c) -> (kh, kw)>
#do = affine_map<(n, h, w, kh, kw, c) -> (n, h, w, c)>
func.func @conv_pad_depthwise(%x: tensor<1x6x6x24xf32>, %w: tensor<16x24xf32>,
                              %dwf: tensor<3x3x16xf32>) -> tensor<1x6x6x16xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x6x6x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x6x6x16xf32>) -> tensor<1x6x6x16xf32>
  %c = linalg.generic {indexing_maps = [#x, #w, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<1x6x6x24xf32>, tensor<16x24xf32>) outs(%f : tensor<1x6x6x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x6x6x16xf32>
  %e2 = tensor.empty() : tensor<1x6x6x16xf32>
  %relu = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c : tensor<1x6x6x16xf32>) outs(%e2 : tensor<1x6x6x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %z : f32
    linalg.yield %m : f32
  } -> tensor<1x6x6x16xf32>
  %pe = tensor.empty() : tensor<1x8x8x16xf32>
  %pf = linalg.fill ins(%z : f32) outs(%pe : tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
  %ps = tensor.extract_slice %pf[0, 1, 1, 0] [1, 6, 6, 16] [1, 1, 1, 1] : tensor<1x8x8x16xf32> to tensor<1x6x6x16xf32>
  %pc = linalg.copy ins(%relu : tensor<1x6x6x16xf32>) outs(%ps : tensor<1x6x6x16xf32>) -> tensor<1x6x6x16xf32>
  %pad = tensor.insert_slice %pc into %pf[0, 1, 1, 0] [1, 6, 6, 16] [1, 1, 1, 1] : tensor<1x6x6x16xf32> into tensor<1x8x8x16xf32>
  %e3 = tensor.empty() : tensor<1x6x6x16xf32>
  %f3 = linalg.fill ins(%z : f32) outs(%e3 : tensor<1x6x6x16xf32>) -> tensor<1x6x6x16xf32>
  %d = linalg.generic {indexing_maps = [#dx, #dw, #do], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]}
      ins(%pad, %dwf : tensor<1x8x8x16xf32>, tensor<3x3x16xf32>) outs(%f3 : tensor<1x6x6x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x6x6x16xf32>
  return %d : tensor<1x6x6x16xf32>
}

func.func @conv_pad_maxpool(%x: tensor<1x6x6x24xf32>, %w: tensor<16x24xf32>,
                            %window: tensor<3x3xf32>) -> tensor<1x6x6x16xf32> {
  %z = arith.constant 0.0 : f32
  %low = arith.constant -1.0e30 : f32
  %e = tensor.empty() : tensor<1x6x6x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x6x6x16xf32>) -> tensor<1x6x6x16xf32>
  %c = linalg.generic {indexing_maps = [#x, #w, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<1x6x6x24xf32>, tensor<16x24xf32>) outs(%f : tensor<1x6x6x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x6x6x16xf32>
  %e2 = tensor.empty() : tensor<1x6x6x16xf32>
  %neg = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c : tensor<1x6x6x16xf32>) outs(%e2 : tensor<1x6x6x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.negf %in : f32
    linalg.yield %m : f32
  } -> tensor<1x6x6x16xf32>
  %pe = tensor.empty() : tensor<1x8x8x16xf32>
  %pf = linalg.fill ins(%low : f32) outs(%pe : tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
  %ps = tensor.extract_slice %pf[0, 1, 1, 0] [1, 6, 6, 16] [1, 1, 1, 1] : tensor<1x8x8x16xf32> to tensor<1x6x6x16xf32>
  %pc = linalg.copy ins(%neg : tensor<1x6x6x16xf32>) outs(%ps : tensor<1x6x6x16xf32>) -> tensor<1x6x6x16xf32>
  %pad = tensor.insert_slice %pc into %pf[0, 1, 1, 0] [1, 6, 6, 16] [1, 1, 1, 1] : tensor<1x6x6x16xf32> into tensor<1x8x8x16xf32>
  %e3 = tensor.empty() : tensor<1x6x6x16xf32>
  %f3 = linalg.fill ins(%low : f32) outs(%e3 : tensor<1x6x6x16xf32>) -> tensor<1x6x6x16xf32>
  %d = linalg.generic {indexing_maps = [#dx, #dp, #do], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]}
      ins(%pad, %window : tensor<1x8x8x16xf32>, tensor<3x3xf32>) outs(%f3 : tensor<1x6x6x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %s = arith.maximumf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<1x6x6x16xf32>
  return %d : tensor<1x6x6x16xf32>
}
