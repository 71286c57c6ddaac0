// RUN: pb-opt --target=nvidia-sm90 --pb-allow-tf32 --pb-pipeline=s1,s2,s3 %s | FileCheck %s --check-prefix=S3
// RUN: pb-opt --target=nvidia-sm90 --pb-allow-tf32 --pb-pipeline=s1,s2,s3,host %s | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s
// With allow-tf32, S3 leaves the matmul to the H200's tf32 tensor cores: a
// linalg op tagged pb.matrix_unit with the chip's largest tf32 unit, the
// warpgroup's wgmma (its ReLU epilogue tagged for S4 to fuse). On the host, the reference lowering runs both as loops along with
// the rest of S3's output and computes C[i][j] = sum_k 1 * 2 = 2 * 64 = 128.

// S3: linalg.matmul {pb.matrix_unit = "WGMMA_F32_64x128x8_TF32"}
// S3: linalg.generic {{.*}}pb.matrix_unit_epilogue
// CHECK: [128, 128, 128
func.func @matmul(%a: tensor<128x64xf32>, %b: tensor<64x96xf32>) -> tensor<128x96xf32> {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<128x96xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<128x96xf32>) -> tensor<128x96xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<128x64xf32>, tensor<64x96xf32>)
                      outs(%acc : tensor<128x96xf32>) -> tensor<128x96xf32>
  %relu = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                          iterator_types = ["parallel", "parallel"]}
      ins(%mm : tensor<128x96xf32>) outs(%init : tensor<128x96xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = arith.maximumf %x, %zero : f32
    linalg.yield %r : f32
  } -> tensor<128x96xf32>
  return %relu : tensor<128x96xf32>
}

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  %ea = tensor.empty() : tensor<128x64xf32>
  %eb = tensor.empty() : tensor<64x96xf32>
  %a = linalg.fill ins(%one : f32) outs(%ea : tensor<128x64xf32>) -> tensor<128x64xf32>
  %b = linalg.fill ins(%two : f32) outs(%eb : tensor<64x96xf32>) -> tensor<64x96xf32>
  %r = call @matmul(%a, %b) : (tensor<128x64xf32>, tensor<64x96xf32>) -> tensor<128x96xf32>
  %u = tensor.cast %r : tensor<128x96xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}
