// RUN: pb-compile %s --target=nvidia-sm80 -o %t.pbart
// RUN: %nvidia_artifact %t.pbart --plan --ptx | FileCheck %s
// RUN: %if ptxas %{ %nvidia_artifact %t.pbart --ptxas sm_80 | FileCheck %s --check-prefix=PTXAS %}
// An f16 NCHW convolution (a ResNet-50 3x3 layer at 14x14) through S1-S5:
// S1 makes it channels-last, S3 tags it, and S4 runs it as an implicit
// GEMM on the tensor cores (M = 2 x 14 x 14, N = 256, K = 3 x 3 x 256): the
// input tiles are gathered by cp.async straight from the padded input, with
// no im2col buffer (the plan's temporaries are the layout copies only).
// Not run in the emulator here: 231 M multiply-adds take it about 11 s.
// ../emulate-conv2d-tensor-cores.mlir runs the same convolution with 128
// channels (the same three launches and tensor-core kernel) emulated.

// CHECK: entry conv
// CHECK: launch conv_kernel{{.*}} block [256, 1, 1] shared 29184 args
// CHECK: cp.async.cg.shared.global
// CHECK: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK: ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16
// CHECK: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTXAS-NOT: error
// PTXAS-NOT: bytes spill stores, {{[1-9]}}

func.func @conv(%x: tensor<2x256x14x14xf16>, %w: tensor<256x256x3x3xf16>) -> tensor<2x256x14x14xf16> {
  %zero = arith.constant 0.0 : f16
  %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f16
  } : tensor<2x256x14x14xf16> to tensor<2x256x16x16xf16>
  %e = tensor.empty() : tensor<2x256x14x14xf16>
  %z = linalg.fill ins(%zero : f16) outs(%e : tensor<2x256x14x14xf16>) -> tensor<2x256x14x14xf16>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%padded, %w : tensor<2x256x16x16xf16>, tensor<256x256x3x3xf16>) outs(%z : tensor<2x256x14x14xf16>) -> tensor<2x256x14x14xf16>
  return %y : tensor<2x256x14x14xf16>
}
