module {
func.func @forward(%in0: tensor<1x17x64xf32>, %in1: tensor<64x64xf32>, %in2: tensor<64x64xf32>, %in3: tensor<64x64xf32>) -> (tensor<1x17x64xf32>) {
  %v1 = tensor.collapse_shape %in0 [[0, 1], [2]] : tensor<1x17x64xf32> into tensor<17x64xf32>
  %v2 = tensor.empty() : tensor<17x64xf32>
  %c3 = arith.constant 0x00000000 : f32
  %v4 = linalg.fill ins(%c3 : f32) outs(%v2 : tensor<17x64xf32>) -> tensor<17x64xf32>
  %v5 = linalg.matmul ins(%v1, %in1 : tensor<17x64xf32>, tensor<64x64xf32>) outs(%v4 : tensor<17x64xf32>) -> tensor<17x64xf32>
  %v6 = tensor.expand_shape %v5 [[0, 1], [2]] output_shape [1, 17, 64] : tensor<17x64xf32> into tensor<1x17x64xf32>
  %v7 = tensor.expand_shape %v6 [[0], [1], [2, 3]] output_shape [1, 17, 4, 16] : tensor<1x17x64xf32> into tensor<1x17x4x16xf32>
  %v8 = tensor.collapse_shape %in0 [[0, 1], [2]] : tensor<1x17x64xf32> into tensor<17x64xf32>
  %v9 = tensor.empty() : tensor<17x64xf32>
  %c10 = arith.constant 0x00000000 : f32
  %v11 = linalg.fill ins(%c10 : f32) outs(%v9 : tensor<17x64xf32>) -> tensor<17x64xf32>
  %v12 = linalg.matmul ins(%v8, %in2 : tensor<17x64xf32>, tensor<64x64xf32>) outs(%v11 : tensor<17x64xf32>) -> tensor<17x64xf32>
  %v13 = tensor.expand_shape %v12 [[0, 1], [2]] output_shape [1, 17, 64] : tensor<17x64xf32> into tensor<1x17x64xf32>
  %v14 = tensor.expand_shape %v13 [[0], [1], [2, 3]] output_shape [1, 17, 4, 16] : tensor<1x17x64xf32> into tensor<1x17x4x16xf32>
  %v15 = tensor.collapse_shape %in0 [[0, 1], [2]] : tensor<1x17x64xf32> into tensor<17x64xf32>
  %v16 = tensor.empty() : tensor<17x64xf32>
  %c17 = arith.constant 0x00000000 : f32
  %v18 = linalg.fill ins(%c17 : f32) outs(%v16 : tensor<17x64xf32>) -> tensor<17x64xf32>
  %v19 = linalg.matmul ins(%v15, %in3 : tensor<17x64xf32>, tensor<64x64xf32>) outs(%v18 : tensor<17x64xf32>) -> tensor<17x64xf32>
  %v20 = tensor.expand_shape %v19 [[0, 1], [2]] output_shape [1, 17, 64] : tensor<17x64xf32> into tensor<1x17x64xf32>
  %v21 = tensor.expand_shape %v20 [[0], [1], [2, 3]] output_shape [1, 17, 4, 16] : tensor<1x17x64xf32> into tensor<1x17x4x16xf32>
  %v22 = tensor.empty() : tensor<1x4x17x17xf32>
  %c23 = arith.constant 0x00000000 : f32
  %v24 = linalg.fill ins(%c23 : f32) outs(%v22 : tensor<1x4x17x17xf32>) -> tensor<1x4x17x17xf32>
  %v28 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d1, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d1, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%v7, %v14 : tensor<1x17x4x16xf32>, tensor<1x17x4x16xf32>) outs(%v24 : tensor<1x4x17x17xf32>) {
  ^bb0(%a25: f32, %a26: f32, %a27: f32):
    %v29 = arith.mulf %a25, %a26 : f32
    %v30 = arith.addf %a27, %v29 : f32
    linalg.yield %v30 : f32
  } -> tensor<1x4x17x17xf32>
  %v31 = tensor.empty() : tensor<4x17x17xf32>
  %v34 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (0, d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v28 : tensor<1x4x17x17xf32>) outs(%v31 : tensor<4x17x17xf32>) {
  ^bb0(%a32: f32, %a33: f32):
    linalg.yield %a32 : f32
  } -> tensor<4x17x17xf32>
  %v35 = tensor.empty() : tensor<4x17x17xf32>
  %v38 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v34 : tensor<4x17x17xf32>) outs(%v35 : tensor<4x17x17xf32>) {
  ^bb0(%a36: f32, %a37: f32):
    %c39 = arith.constant 0x40800000 : f32
    %v40 = arith.divf %a36, %c39 : f32
    linalg.yield %v40 : f32
  } -> tensor<4x17x17xf32>
  %v41 = tensor.expand_shape %v38 [[0, 1], [2], [3]] output_shape [1, 4, 17, 17] : tensor<4x17x17xf32> into tensor<1x4x17x17xf32>
  %v42 = tensor.empty() : tensor<1x4x17xf32>
  %c43 = arith.constant 0xFF800000 : f32
  %v44 = linalg.fill ins(%c43 : f32) outs(%v42 : tensor<1x4x17xf32>) -> tensor<1x4x17xf32>
  %v47 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%v41 : tensor<1x4x17x17xf32>) outs(%v44 : tensor<1x4x17xf32>) {
  ^bb0(%a45: f32, %a46: f32):
    %v48 = arith.maximumf %a46, %a45 : f32
    linalg.yield %v48 : f32
  } -> tensor<1x4x17xf32>
  %v49 = tensor.empty() : tensor<4x17xf32>
  %v52 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (0, d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v47 : tensor<1x4x17xf32>) outs(%v49 : tensor<4x17xf32>) {
  ^bb0(%a50: f32, %a51: f32):
    linalg.yield %a50 : f32
  } -> tensor<4x17xf32>
  %v53 = tensor.empty() : tensor<4x17xf32>
  %v56 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v52 : tensor<4x17xf32>) outs(%v53 : tensor<4x17xf32>) {
  ^bb0(%a54: f32, %a55: f32):
    %c57 = arith.constant 0xFF800000 : f32
    %v58 = arith.maximumf %c57, %a54 : f32
    linalg.yield %v58 : f32
  } -> tensor<4x17xf32>
  %v63 = tensor.empty() : tensor<4x17x17xf32>
  %v67 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v38, %v56 : tensor<4x17x17xf32>, tensor<4x17xf32>) outs(%v63 : tensor<4x17x17xf32>) {
  ^bb0(%a64: f32, %a65: f32, %a66: f32):
    %v68 = arith.subf %a64, %a65 : f32
    linalg.yield %v68 : f32
  } -> tensor<4x17x17xf32>
  %v70 = tensor.empty() : tensor<4x17x17xf32>
  %v73 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v67 : tensor<4x17x17xf32>) outs(%v70 : tensor<4x17x17xf32>) {
  ^bb0(%a71: f32, %a72: f32):
    %v74 = math.exp %a71 : f32
    linalg.yield %v74 : f32
  } -> tensor<4x17x17xf32>
  %v75 = tensor.expand_shape %v73 [[0, 1], [2], [3]] output_shape [1, 4, 17, 17] : tensor<4x17x17xf32> into tensor<1x4x17x17xf32>
  %v76 = tensor.empty() : tensor<1x4x17xf32>
  %c77 = arith.constant 0x00000000 : f32
  %v78 = linalg.fill ins(%c77 : f32) outs(%v76 : tensor<1x4x17xf32>) -> tensor<1x4x17xf32>
  %v81 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%v75 : tensor<1x4x17x17xf32>) outs(%v78 : tensor<1x4x17xf32>) {
  ^bb0(%a79: f32, %a80: f32):
    %v82 = arith.addf %a80, %a79 : f32
    linalg.yield %v82 : f32
  } -> tensor<1x4x17xf32>
  %v83 = tensor.empty() : tensor<1x4x17x1xf32>
  %v86 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%v81 : tensor<1x4x17xf32>) outs(%v83 : tensor<1x4x17x1xf32>) {
  ^bb0(%a84: f32, %a85: f32):
    linalg.yield %a84 : f32
  } -> tensor<1x4x17x1xf32>
  %v87 = tensor.empty() : tensor<1x4x17x1xf32>
  %v90 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%v81 : tensor<1x4x17xf32>) outs(%v87 : tensor<1x4x17x1xf32>) {
  ^bb0(%a88: f32, %a89: f32):
    linalg.yield %a88 : f32
  } -> tensor<1x4x17x1xf32>
  %v91 = tensor.empty() : tensor<4x17xf32>
  %v94 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (0, d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v81 : tensor<1x4x17xf32>) outs(%v91 : tensor<4x17xf32>) {
  ^bb0(%a92: f32, %a93: f32):
    linalg.yield %a92 : f32
  } -> tensor<4x17xf32>
  %v95 = tensor.empty() : tensor<4x17x17xf32>
  %v99 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v73, %v94 : tensor<4x17x17xf32>, tensor<4x17xf32>) outs(%v95 : tensor<4x17x17xf32>) {
  ^bb0(%a96: f32, %a97: f32, %a98: f32):
    %v100 = arith.divf %a96, %a97 : f32
    linalg.yield %v100 : f32
  } -> tensor<4x17x17xf32>
  %v101 = tensor.expand_shape %v99 [[0, 1], [2], [3]] output_shape [1, 4, 17, 17] : tensor<4x17x17xf32> into tensor<1x4x17x17xf32>
  %v102 = tensor.empty() : tensor<1x17x4x16xf32>
  %c103 = arith.constant 0x00000000 : f32
  %v104 = linalg.fill ins(%c103 : f32) outs(%v102 : tensor<1x17x4x16xf32>) -> tensor<1x17x4x16xf32>
  %v108 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d1, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d4, d2, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%v101, %v21 : tensor<1x4x17x17xf32>, tensor<1x17x4x16xf32>) outs(%v104 : tensor<1x17x4x16xf32>) {
  ^bb0(%a105: f32, %a106: f32, %a107: f32):
    %v109 = arith.mulf %a105, %a106 : f32
    %v110 = arith.addf %a107, %v109 : f32
    linalg.yield %v110 : f32
  } -> tensor<1x17x4x16xf32>
  %v111 = tensor.collapse_shape %v108 [[0], [1], [2, 3]] : tensor<1x17x4x16xf32> into tensor<1x17x64xf32>
  return %v111 : tensor<1x17x64xf32>
}
}
