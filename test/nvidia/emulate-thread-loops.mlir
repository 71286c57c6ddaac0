// RUN: pb-compile %s --target=nvidia-sm80 -o %t.sm80.pbart
// RUN: pb-compile %s --target=cpu-host --options=pipeline=reference -o %t.ref.pbart
// RUN: pb-run --emulate %t.sm80.pbart --check-against=%t.ref.pbart --rtol=1e-5 --atol=1e-5 | FileCheck %s
// RUN: python3 %pb_test_lib/nvidia_artifact.py %t.sm80.pbart --emulation-ir | FileCheck %s --check-prefix=IR
//
// A sum over the rows and columns of a channels-last map (a global average
// pool's sum): the kernel's threads keep a parallel loop over the channels
// of their own, which runs sequentially, as nested scf.for (upstream's
// scf-parallel-for-to-nested-fors, before the emulator's copy is taken;
// the emulator took no scf.parallel and refused the kernel).
// CHECK: OK forward: 8 values match the reference
// IR-NOT: scf.parallel
// IR: scf.for
func.func @forward(%x: tensor<1x4x4x8xf32>) -> tensor<1x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8xf32>) -> tensor<1x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(n, h, w, c) -> (n, h, w, c)>,
                                        affine_map<(n, h, w, c) -> (n, c)>],
                       iterator_types = ["parallel", "reduction", "reduction", "parallel"]}
      ins(%x : tensor<1x4x4x8xf32>) outs(%init : tensor<1x8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<1x8xf32>
  return %r : tensor<1x8xf32>
}
