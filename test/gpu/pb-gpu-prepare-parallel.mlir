// RUN: pb-opt --target=nvidia-sm80 --pb-pipeline=s1,s2,s3 %s | pb-opt --pass-pipeline='builtin.module(func.func(pb-gpu-prepare-parallel))' > %t.prepared.mlir
// RUN: FileCheck %s < %t.prepared.mlir
// RUN: pb-opt --pb-lower-to-host %t.prepared.mlir | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | grep -v base@ > %t.out
// RUN: pb-opt --target=nvidia-sm80 --pb-pipeline=s1,s2,host %s | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | grep -v base@ > %t.ref
// RUN: diff %t.ref %t.out
// RUN: FileCheck %s --check-prefix=VALUES < %t.out
// pb-gpu-prepare-parallel coalesces the parallel point loops of S3's
// tiles into one thread-level affine.parallel. Their normalized IVs are
// recovered from the coalesced one (mod / floordiv); the prepared IR runs
// on the host and must print what S1, S2 and the reference lowering print.
// Inputs vary by row and column, so a row recovered from the wrong IV
// changes the output.

// VALUES: {{\[\[}}3213,   3016,   3270,
// The copy of A's tile that pb-promote-to-scratchpad made (one flat loop
// marked pb.parallel) becomes a thread loop too.
// CHECK-LABEL: func.func @matmul
// CHECK: memref.alloc() {pb.scratchpad} : memref<32x132xf32>
// CHECK-NEXT: affine.parallel (%{{.*}}) = (0) to (4096) {
// The 32 x 64 tile's three parallel loops (the 64 columns in two 32-wide
// sub-tiles, the 32 rows; pb-tile marked them) become one thread loop;
// each IV is recovered from the coalesced one by a mod and a floordiv.
// CHECK: affine.parallel (%[[T:.*]]) = (0) to (2048) {
// CHECK-NEXT: affine.apply #{{.*}}(%[[T]])[%{{.*}}]
// CHECK-NEXT: %[[REST:.*]] = affine.apply #{{.*}}(%[[T]])[%{{.*}}]
// CHECK-NEXT: affine.apply #{{.*}}(%[[REST]])[%{{.*}}]
// CHECK-NEXT: affine.apply #{{.*}}(%[[REST]])[%{{.*}}]
// CHECK: affine.store %{{.*}}, %arg2
// CHECK-NEXT: affine.for
func.func @matmul(%a: tensor<256x128xf32>, %b: tensor<128x192xf32>) -> tensor<256x192xf32> {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<256x192xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<256x192xf32>) -> tensor<256x192xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<256x128xf32>, tensor<128x192xf32>)
                      outs(%acc : tensor<256x192xf32>) -> tensor<256x192xf32>
  return %mm : tensor<256x192xf32>
}

func.func private @printMemrefF32(tensor<*xf32>)

// Inputs: x[i][j] = (i * p + j * q) mod 11.
func.func @main() {
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %c11 = arith.constant 11 : index
  %ea = tensor.empty() : tensor<256x128xf32>
  %eb = tensor.empty() : tensor<128x192xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      outs(%ea : tensor<256x128xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %ip = arith.muli %i, %c7 : index
    %jq = arith.muli %j, %c3 : index
    %s = arith.addi %ip, %jq : index
    %m = arith.remui %s, %c11 : index
    %v = arith.index_cast %m : index to i32
    %f = arith.sitofp %v : i32 to f32
    linalg.yield %f : f32
  } -> tensor<256x128xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      outs(%eb : tensor<128x192xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %ip = arith.muli %i, %c5 : index
    %jq = arith.muli %j, %c7 : index
    %s = arith.addi %ip, %jq : index
    %m = arith.remui %s, %c11 : index
    %v = arith.index_cast %m : index to i32
    %f = arith.sitofp %v : i32 to f32
    linalg.yield %f : f32
  } -> tensor<128x192xf32>
  %r = call @matmul(%a, %b) : (tensor<256x128xf32>, tensor<128x192xf32>) -> tensor<256x192xf32>
  %u = tensor.cast %r : tensor<256x192xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}
