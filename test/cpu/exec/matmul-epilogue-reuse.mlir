// RUN: %check_cpu | FileCheck %s
// RUN: pb-opt %s --target=cpu-x86-64-v3 --pb-pipeline=s1,s2,s3 --pb-explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// Epilogues fused into the micro-kernel where bufferization reuses buffers
// across layers and where the GEMM writes a reshape of its buffer.
//
// Two layers relu(x @ W^T + b) whose fills and epilogue outputs share one
// tensor.empty each (as CSE leaves a model's layers): every layer gets its
// own fill (pb-clone-fills). The first layer's epilogue runs in place on
// the result buffer, which the second layer reads: later readers see the
// epilogue's values either way, so it is fused. The second layer's is not:
// its output is that same buffer, the GEMM's A, still read by other blocks
// while the kernel stores.
// EXPLAIN: matrix units: linalg.generic MxNxK 16x64x64
// EXPLAIN: matrix units: epilogue of 2 ops fused
// EXPLAIN: matrix units: linalg.generic MxNxK 16x64x64
// EXPLAIN-NOT: epilogue of 2 ops fused
// EXPLAIN: MxNxK 24x64x32
// CHECK: OK two_layers: 1024 values match the reference
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (n, k)>
#c = affine_map<(m, n, k) -> (m, n)>
#row = affine_map<(m, n) -> (n)>
#id = affine_map<(m, n) -> (m, n)>
func.func @two_layers(%x: tensor<16x64xf32>, %w1: tensor<64x64xf32>, %b1: tensor<64xf32>,
                      %w2: tensor<64x64xf32>, %b2: tensor<64xf32>) -> tensor<16x64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  %m1 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w1 : tensor<16x64xf32>, tensor<64x64xf32>) outs(%f : tensor<16x64xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %t : f32
    linalg.yield %s : f32
  } -> tensor<16x64xf32>
  %y1 = linalg.generic {indexing_maps = [#row, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b1, %m1 : tensor<64xf32>, tensor<16x64xf32>) outs(%e : tensor<16x64xf32>) {
  ^bb0(%bb: f32, %v: f32, %o: f32):
    %s = arith.addf %bb, %v : f32
    %r = arith.maximumf %s, %z : f32
    linalg.yield %r : f32
  } -> tensor<16x64xf32>
  %m2 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%y1, %w2 : tensor<16x64xf32>, tensor<64x64xf32>) outs(%f : tensor<16x64xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %t : f32
    linalg.yield %s : f32
  } -> tensor<16x64xf32>
  %y2 = linalg.generic {indexing_maps = [#row, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b2, %m2 : tensor<64xf32>, tensor<16x64xf32>) outs(%e : tensor<16x64xf32>) {
  ^bb0(%bb: f32, %v: f32, %o: f32):
    %s = arith.addf %bb, %v : f32
    %r = arith.maximumf %s, %z : f32
    linalg.yield %r : f32
  } -> tensor<16x64xf32>
  return %y2 : tensor<16x64xf32>
}

// torch's linear on a (batch, seq, features) input: the GEMM runs on the
// collapsed rows and writes its buffer through the expand_shape back to
// three dimensions, which the bias add then reads; the bias add is still
// fused into the kernel.
// EXPLAIN: matrix units: epilogue of 1 ops fused
// CHECK: OK linear_3d: 1536 values match the reference
#row3 = affine_map<(b, m, n) -> (n)>
#id3 = affine_map<(b, m, n) -> (b, m, n)>
func.func @linear_3d(%x: tensor<1x24x32xf32>, %w: tensor<64x32xf32>, %bias: tensor<64xf32>) -> tensor<1x24x64xf32> {
  %z = arith.constant 0.0 : f32
  %x2 = tensor.collapse_shape %x [[0, 1], [2]] : tensor<1x24x32xf32> into tensor<24x32xf32>
  %et = tensor.empty() : tensor<32x64xf32>
  %wt = linalg.transpose ins(%w : tensor<64x32xf32>) outs(%et : tensor<32x64xf32>) permutation = [1, 0]
  %e = tensor.empty() : tensor<24x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<24x64xf32>) -> tensor<24x64xf32>
  %m = linalg.matmul ins(%x2, %wt : tensor<24x32xf32>, tensor<32x64xf32>) outs(%f : tensor<24x64xf32>) -> tensor<24x64xf32>
  %m3 = tensor.expand_shape %m [[0, 1], [2]] output_shape [1, 24, 64] : tensor<24x64xf32> into tensor<1x24x64xf32>
  %e3 = tensor.empty() : tensor<1x24x64xf32>
  %y = linalg.generic {indexing_maps = [#row3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%bias, %m3 : tensor<64xf32>, tensor<1x24x64xf32>) outs(%e3 : tensor<1x24x64xf32>) {
  ^bb0(%bb: f32, %v: f32, %o: f32):
    %s = arith.addf %bb, %v : f32
    linalg.yield %s : f32
  } -> tensor<1x24x64xf32>
  return %y : tensor<1x24x64xf32>
}

// Two layers tanh(x @ W^T + b) / 2 whose GEMMs write one buffer (S1's CSE
// leaves one tensor.empty for both) and whose epilogues write a reshape of
// it elsewhere (as BERT's linear layers after the first: C is expanded to
// batch x sequence x features). The first layer's C is read by no one
// after its epilogue: the next op on the buffer, the second layer's fill,
// overwrites all of it, so the epilogue is fused. The second layer's is
// not: its output is the GEMM's A.
// EXPLAIN: matrix units: linalg.generic MxNxK 16x64x64
// EXPLAIN: matrix units: epilogue of 3 ops fused
// EXPLAIN: matrix units: linalg.generic MxNxK 16x64x64
// EXPLAIN-NOT: epilogue of 3 ops fused
// CHECK: OK reused_result: 1024 values match the reference
#row3r = affine_map<(b, s, n) -> (n)>
#id3r = affine_map<(b, s, n) -> (b, s, n)>
func.func @reused_result(%x: tensor<16x64xf32>, %w1: tensor<64x64xf32>, %b1: tensor<64xf32>,
                         %w2: tensor<64x64xf32>, %b2: tensor<64xf32>) -> tensor<2x8x64xf32> {
  %z = arith.constant 0.0 : f32
  %h = arith.constant 0.5 : f32
  %e = tensor.empty() : tensor<16x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  %m1 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w1 : tensor<16x64xf32>, tensor<64x64xf32>) outs(%f : tensor<16x64xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %t : f32
    linalg.yield %s : f32
  } -> tensor<16x64xf32>
  %m1e = tensor.expand_shape %m1 [[0, 1], [2]] output_shape [2, 8, 64] : tensor<16x64xf32> into tensor<2x8x64xf32>
  %o1 = tensor.empty() : tensor<2x8x64xf32>
  %y1 = linalg.generic {indexing_maps = [#row3r, #id3r, #id3r], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%b1, %m1e : tensor<64xf32>, tensor<2x8x64xf32>) outs(%o1 : tensor<2x8x64xf32>) {
  ^bb0(%bb: f32, %v: f32, %o: f32):
    %s = arith.addf %bb, %v : f32
    %t = math.tanh %s : f32
    %r = arith.mulf %t, %h : f32
    linalg.yield %r : f32
  } -> tensor<2x8x64xf32>
  %y1c = tensor.collapse_shape %y1 [[0, 1], [2]] : tensor<2x8x64xf32> into tensor<16x64xf32>
  %f2 = linalg.fill ins(%z : f32) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  %m2 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%y1c, %w2 : tensor<16x64xf32>, tensor<64x64xf32>) outs(%f2 : tensor<16x64xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %t : f32
    linalg.yield %s : f32
  } -> tensor<16x64xf32>
  %m2e = tensor.expand_shape %m2 [[0, 1], [2]] output_shape [2, 8, 64] : tensor<16x64xf32> into tensor<2x8x64xf32>
  %o2 = tensor.empty() : tensor<2x8x64xf32>
  %y2 = linalg.generic {indexing_maps = [#row3r, #id3r, #id3r], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%b2, %m2e : tensor<64xf32>, tensor<2x8x64xf32>) outs(%o2 : tensor<2x8x64xf32>) {
  ^bb0(%bb: f32, %v: f32, %o: f32):
    %s = arith.addf %bb, %v : f32
    %t = math.tanh %s : f32
    %r = arith.mulf %t, %h : f32
    linalg.yield %r : f32
  } -> tensor<2x8x64xf32>
  return %y2 : tensor<2x8x64xf32>
}
