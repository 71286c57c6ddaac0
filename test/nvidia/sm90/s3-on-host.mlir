// RUN: pb-opt --target=nvidia-sm90 --pb-pipeline=s1,s2,s3,host %s | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s
// S3's output for the H200 (tiling and parallel loops chosen for its shared
// memory and grid, A and B tiles promoted into shared-memory buffers) runs
// on the host through the reference lowering and computes the matmul of
// A[i][k] = (i + 2k) mod 7 and B[k][j] = (3k + j) mod 5 (values from NumPy):
// row 0 starts 375, 369, 378, 392, 376, 375; row 127 ends 364, 389, 379, 384.

// CHECK: {{\[}}[375, 369, 378, 392, 376, 375,
// CHECK: 364, 389, 379, 384]]
func.func @matmul(%a: tensor<128x64xf32>, %b: tensor<64x96xf32>) -> tensor<128x96xf32> {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<128x96xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<128x96xf32>) -> tensor<128x96xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<128x64xf32>, tensor<64x96xf32>)
                      outs(%acc : tensor<128x96xf32>) -> tensor<128x96xf32>
  return %mm : tensor<128x96xf32>
}

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %ea = tensor.empty() : tensor<128x64xf32>
  %eb = tensor.empty() : tensor<64x96xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(i, k) -> (i, k)>],
                       iterator_types = ["parallel", "parallel"]} outs(%ea : tensor<128x64xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %k = linalg.index 1 : index
    %v = affine.apply affine_map<(i, k) -> ((i + k * 2) mod 7)>(%i, %k)
    %w = arith.index_cast %v : index to i32
    %f = arith.sitofp %w : i32 to f32
    linalg.yield %f : f32
  } -> tensor<128x64xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(k, j) -> (k, j)>],
                       iterator_types = ["parallel", "parallel"]} outs(%eb : tensor<64x96xf32>) {
  ^bb0(%o: f32):
    %k = linalg.index 0 : index
    %j = linalg.index 1 : index
    %v = affine.apply affine_map<(k, j) -> ((k * 3 + j) mod 5)>(%k, %j)
    %w = arith.index_cast %v : index to i32
    %f = arith.sitofp %w : i32 to f32
    linalg.yield %f : f32
  } -> tensor<64x96xf32>
  %r = call @matmul(%a, %b) : (tensor<128x64xf32>, tensor<64x96xf32>) -> tensor<128x96xf32>
  %u = tensor.cast %r : tensor<128x96xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}
