// RUN: pb-opt --target=nvidia-sm90 --pb-allow-tf32 --pb-explain --pb-pipeline=s1,s2,s3 %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=S3
// RUN: pb-opt --target=nvidia-sm90 --pb-allow-tf32 --pb-pipeline=s1,s2,s3,host %s | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s
// x @ W^T through S1-S3 for the H200: pb-fold-transposes makes the matmul
// read W as (n, k), which S3 maps onto the tf32 wgmma unit (32-bit operands
// K-major only); on the host the reference lowering computes x[i][k] =
// (i + 2k) mod 7 times W[n][k] = (3n + k) mod 5 transposed, whose values
// NumPy gives: row 0 starts 375, 367, 389, 376, 383, 375; row 127 ends 393,
// 363, 393, 368.

// S3: remark: pb-explain: fold-transposes: B's transpose folded into the contraction
// S3: remark: pb-explain: matrix units: linalg.generic MxNxK 128x96x64 on WGMMA_F32_64x128x8_TF32 (WarpgroupScope), left to S4
// CHECK: {{\[}}[375, 367, 389, 376, 383, 375,
// CHECK: 393, 363, 393, 368]]
func.func @linear(%x: tensor<128x64xf32>, %w: tensor<96x64xf32>) -> tensor<128x96xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x96xf32>
  %wt = linalg.transpose ins(%w : tensor<96x64xf32>) outs(%e : tensor<64x96xf32>) permutation = [1, 0]
  %init = tensor.empty() : tensor<128x96xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<128x96xf32>) -> tensor<128x96xf32>
  %y = linalg.matmul ins(%x, %wt : tensor<128x64xf32>, tensor<64x96xf32>)
                     outs(%acc : tensor<128x96xf32>) -> tensor<128x96xf32>
  return %y : tensor<128x96xf32>
}

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %ex = tensor.empty() : tensor<128x64xf32>
  %ew = tensor.empty() : tensor<96x64xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(i, k) -> (i, k)>],
                       iterator_types = ["parallel", "parallel"]} outs(%ex : tensor<128x64xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %k = linalg.index 1 : index
    %v = affine.apply affine_map<(i, k) -> ((i + k * 2) mod 7)>(%i, %k)
    %n = arith.index_cast %v : index to i32
    %f = arith.sitofp %n : i32 to f32
    linalg.yield %f : f32
  } -> tensor<128x64xf32>
  %w = linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k)>],
                       iterator_types = ["parallel", "parallel"]} outs(%ew : tensor<96x64xf32>) {
  ^bb0(%o: f32):
    %n = linalg.index 0 : index
    %k = linalg.index 1 : index
    %v = affine.apply affine_map<(n, k) -> ((n * 3 + k) mod 5)>(%n, %k)
    %m = arith.index_cast %v : index to i32
    %f = arith.sitofp %m : i32 to f32
    linalg.yield %f : f32
  } -> tensor<96x64xf32>
  %y = call @linear(%x, %w) : (tensor<128x64xf32>, tensor<96x64xf32>) -> tensor<128x96xf32>
  %u = tensor.cast %y : tensor<128x96xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}
