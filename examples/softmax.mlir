// Row softmax of a 128x1024 matrix, in the input contract.
func.func @softmax(%x: tensor<128x1024xf32>) -> tensor<128x1024xf32> {
  %init = tensor.empty() : tensor<128x1024xf32>
  %out = linalg.softmax dimension(1) ins(%x : tensor<128x1024xf32>)
                        outs(%init : tensor<128x1024xf32>) -> tensor<128x1024xf32>
  return %out : tensor<128x1024xf32>
}
