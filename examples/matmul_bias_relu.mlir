// A dense layer: relu(A x B + bias), in the input contract (linalg on
// statically shaped tensors).
func.func @matmul_bias_relu(%a: tensor<256x512xf32>, %b: tensor<512x128xf32>,
                            %bias: tensor<128xf32>) -> tensor<256x128xf32> {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<256x128xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<256x128xf32>) -> tensor<256x128xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<256x512xf32>, tensor<512x128xf32>)
                      outs(%acc : tensor<256x128xf32>) -> tensor<256x128xf32>
  %out = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>,
                       affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%mm, %bias : tensor<256x128xf32>, tensor<128xf32>)
      outs(%init : tensor<256x128xf32>) {
  ^bb0(%x: f32, %b0: f32, %o: f32):
    %s = arith.addf %x, %b0 : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<256x128xf32>
  return %out : tensor<256x128xf32>
}
