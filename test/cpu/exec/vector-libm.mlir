// RUN: %check_cpu | FileCheck %s
// RUN: pb-opt %s --target=cpu-x86-64-v3 --pb-pipeline=s1,s2,s3 -o - | FileCheck %s --check-prefix=S3
// A math op without an LLVM intrinsic or an approximation (asinh) in a loop
// that S3 vectorizes: the S4 lowering calls libm per lane, and the
// vector.extract / vector.insert around those calls are lowered to LLVM too.
// S3: math.asinh %{{.*}} : vector<8xf32>
// CHECK: OK asinh: 12 values match the reference
func.func @asinh(%x: tensor<12xf32>) -> tensor<12xf32> {
  %e = tensor.empty() : tensor<12xf32>
  %r = linalg.generic {
      indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
      iterator_types = ["parallel"]}
      ins(%x : tensor<12xf32>) outs(%e : tensor<12xf32>) {
  ^bb0(%v: f32, %o: f32):
    %a = math.asinh %v : f32
    linalg.yield %a : f32
  } -> tensor<12xf32>
  return %r : tensor<12xf32>
}
