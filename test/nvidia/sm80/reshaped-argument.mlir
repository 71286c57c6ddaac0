// RUN: pb-compile %s --target=nvidia-sm80 -o %t.pbart
// RUN: %nvidia_artifact %t.pbart --plan | FileCheck %s
// RUN: pb-compile %s --target=cpu-host --options=pipeline=reference -o %t.ref.pbart
// RUN: pb-run --emulate %t.pbart --check-against=%t.ref.pbart --rtol=0 --atol=0 \
// RUN:   | FileCheck %s --check-prefix=EMU
// A kernel that reads an argument only through a reshape (a bias broadcast
// as 1x64) takes the argument itself: the reshape is cloned into the kernel
// even though nothing else in it uses the argument (upstream's sinking
// leaves it outside, which made the launch plan impossible). Run in the
// emulator, the kernel adds the right bias: it matches a cpu-host build
// (pipeline=reference) exactly.
// EMU: bias_add: output 0 f32 [8,64]
// EMU: OK bias_add: 512 values match the reference

// CHECK: entry bias_add buffers [{"index": 0, "kind": "argument"}, {"index": 1, "kind": "argument"}, {"index": 2, "kind": "argument"}]
// CHECK: launch bias_add_kernel grid [{{.*}}] block [{{.*}}] shared 0 args [{{[0-2]}}, {{[0-2]}}, {{[0-2]}}]
func.func @bias_add(%x: tensor<8x64xf32>, %b: tensor<64xf32>) -> tensor<8x64xf32> {
  %bb = tensor.expand_shape %b [[0, 1]] output_shape [1, 64] : tensor<64xf32> into tensor<1x64xf32>
  %e = tensor.empty() : tensor<8x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (0, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x, %bb : tensor<8x64xf32>, tensor<1x64xf32>) outs(%e : tensor<8x64xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<8x64xf32>
  return %r : tensor<8x64xf32>
}
