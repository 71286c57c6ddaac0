// RUN: %check_cpu | FileCheck %s
// relu, a transpose to NCHW, zero padding into a filled buffer, a 3x3
// NCHW convolution on the micro-kernel, a transpose back and relu. The
// micro-kernel reads the padded input and the transposed filter through
// views made inside its scf.parallel; pb-affine-fusion must not move the
// nest that writes them below it.
// CHECK: OK forward: 12544 values match the reference

func.func @forward(%in0: tensor<1x14x14x64xf32>, %in1: tensor<3x3x64x64xf32>) -> (tensor<1x14x14x64xf32>) {
  %v1 = tensor.collapse_shape %in0 [[0, 1], [2], [3]] : tensor<1x14x14x64xf32> into tensor<14x14x64xf32>
  %v2 = tensor.empty() : tensor<14x14x64xf32>
  %v5 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v1 : tensor<14x14x64xf32>) outs(%v2 : tensor<14x14x64xf32>) {
  ^bb0(%a3: f32, %a4: f32):
    %c6 = arith.constant 0x00000000 : f32
    %v7 = arith.maximumf %a3, %c6 : f32
    linalg.yield %v7 : f32
  } -> tensor<14x14x64xf32>
  %v8 = tensor.expand_shape %v5 [[0, 1], [2], [3]] output_shape [1, 14, 14, 64] : tensor<14x14x64xf32> into tensor<1x14x14x64xf32>
  %v9 = tensor.empty() : tensor<1x64x14x14xf32>
  %v10 = linalg.transpose ins(%v8 : tensor<1x14x14x64xf32>) outs(%v9 : tensor<1x64x14x14xf32>) permutation = [0, 3, 1, 2]
  %v11 = tensor.empty() : tensor<64x64x3x3xf32>
  %v12 = linalg.transpose ins(%in1 : tensor<3x3x64x64xf32>) outs(%v11 : tensor<64x64x3x3xf32>) permutation = [3, 2, 0, 1]
  %v13 = tensor.empty() : tensor<1x64x16x16xf32>
  %c14 = arith.constant 0x00000000 : f32
  %v15 = linalg.fill ins(%c14 : f32) outs(%v13 : tensor<1x64x16x16xf32>) -> tensor<1x64x16x16xf32>
  %v16 = tensor.extract_slice %v15[0, 0, 1, 1] [1, 64, 14, 14] [1, 1, 1, 1] : tensor<1x64x16x16xf32> to tensor<1x64x14x14xf32>
  %v17 = linalg.copy ins(%v10 : tensor<1x64x14x14xf32>) outs(%v16 : tensor<1x64x14x14xf32>) -> tensor<1x64x14x14xf32>
  %v18 = tensor.insert_slice %v17 into %v15[0, 0, 1, 1] [1, 64, 14, 14] [1, 1, 1, 1] : tensor<1x64x14x14xf32> into tensor<1x64x16x16xf32>
  %v19 = tensor.empty() : tensor<1x64x14x14xf32>
  %c20 = arith.constant 0x00000000 : f32
  %v21 = linalg.fill ins(%c20 : f32) outs(%v19 : tensor<1x64x14x14xf32>) -> tensor<1x64x14x14xf32>
  %v22 = linalg.conv_2d_nchw_fchw {dilations = dense<[1, 1]> : tensor<2xi64>, strides = dense<[1, 1]> : tensor<2xi64>} ins(%v18, %v12 : tensor<1x64x16x16xf32>, tensor<64x64x3x3xf32>) outs(%v21 : tensor<1x64x14x14xf32>) -> tensor<1x64x14x14xf32>
  %v23 = tensor.empty() : tensor<1x14x14x64xf32>
  %v24 = linalg.transpose ins(%v22 : tensor<1x64x14x14xf32>) outs(%v23 : tensor<1x14x14x64xf32>) permutation = [0, 2, 3, 1]
  %v25 = tensor.collapse_shape %v24 [[0, 1], [2], [3]] : tensor<1x14x14x64xf32> into tensor<14x14x64xf32>
  %v26 = tensor.empty() : tensor<14x14x64xf32>
  %v29 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v25 : tensor<14x14x64xf32>) outs(%v26 : tensor<14x14x64xf32>) {
  ^bb0(%a27: f32, %a28: f32):
    %c30 = arith.constant 0x00000000 : f32
    %v31 = arith.maximumf %a27, %c30 : f32
    linalg.yield %v31 : f32
  } -> tensor<14x14x64xf32>
  %v32 = tensor.expand_shape %v29 [[0, 1], [2], [3]] output_shape [1, 14, 14, 64] : tensor<14x14x64xf32> into tensor<1x14x14x64xf32>
  return %v32 : tensor<1x14x14x64xf32>
}
