// RUN: pb-compile %s --target=nvidia-sm80 --options=codegen=tile-ir -o %t.sm80.pbart
// RUN: pb-compile %s --target=nvidia-sm90 --options=codegen=tile-ir -o %t.sm90.pbart
// RUN: %nvidia_artifact %t.sm90.pbart --plan | FileCheck %s --check-prefix=PLAN
// RUN: %if tileiras %{ %nvidia_artifact %t.sm80.pbart --sass | FileCheck %s --check-prefix=SASS80 %}
// RUN: %if tileiras %{ %nvidia_artifact %t.sm90.pbart --sass | FileCheck %s --check-prefix=SASS90 %}
// resnet50's twelve distinct convolution shapes (batch 1, 224 x 224, f16,
// padding already applied as S1 leaves it; the stem's 7x7 stride 2
// included), compile only: one Tile IR kernel each (C's zero fill gone),
// on the tensor cores, with no local-memory spills on either chip (sm_80
// with channel tiles of 16: with 32, tileiras unrolled two of them whole
// and spilled, docs/TileIR.md).

// PLAN-COUNT-12: launch {{.*}}_tile{{[0-9]+}} grid
// PLAN-NOT: launch
// SASS90-COUNT-12: sass {{.*}}_tile{{[0-9]+}} HMMA 0 HGMMA {{[1-9][0-9]*}} {{.*}} LDL 0 STL 0
// SASS80-COUNT-12: sass {{.*}}_tile{{[0-9]+}} HMMA {{[1-9][0-9]*}} HGMMA 0 {{.*}} LDL 0 STL 0
func.func @stem7x7s2(%x: tensor<1x230x230x3xf16>, %w: tensor<7x7x3x64xf16>) -> tensor<1x112x112x64xf16> {
  %z = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<1x112x112x64xf16>
  %fl = linalg.fill ins(%z : f16) outs(%e : tensor<1x112x112x64xf16>) -> tensor<1x112x112x64xf16>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<1x230x230x3xf16>, tensor<7x7x3x64xf16>) outs(%fl : tensor<1x112x112x64xf16>) -> tensor<1x112x112x64xf16>
  return %r : tensor<1x112x112x64xf16>
}
func.func @l1_1x1_64(%x: tensor<1x56x56x64xf16>, %w: tensor<1x1x64x64xf16>) -> tensor<1x56x56x64xf16> {
  %z = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<1x56x56x64xf16>
  %fl = linalg.fill ins(%z : f16) outs(%e : tensor<1x56x56x64xf16>) -> tensor<1x56x56x64xf16>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x56x56x64xf16>, tensor<1x1x64x64xf16>) outs(%fl : tensor<1x56x56x64xf16>) -> tensor<1x56x56x64xf16>
  return %r : tensor<1x56x56x64xf16>
}
func.func @l1_3x3_64(%x: tensor<1x58x58x64xf16>, %w: tensor<3x3x64x64xf16>) -> tensor<1x56x56x64xf16> {
  %z = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<1x56x56x64xf16>
  %fl = linalg.fill ins(%z : f16) outs(%e : tensor<1x56x56x64xf16>) -> tensor<1x56x56x64xf16>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x58x58x64xf16>, tensor<3x3x64x64xf16>) outs(%fl : tensor<1x56x56x64xf16>) -> tensor<1x56x56x64xf16>
  return %r : tensor<1x56x56x64xf16>
}
func.func @l1_1x1_256(%x: tensor<1x56x56x64xf16>, %w: tensor<1x1x64x256xf16>) -> tensor<1x56x56x256xf16> {
  %z = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<1x56x56x256xf16>
  %fl = linalg.fill ins(%z : f16) outs(%e : tensor<1x56x56x256xf16>) -> tensor<1x56x56x256xf16>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x56x56x64xf16>, tensor<1x1x64x256xf16>) outs(%fl : tensor<1x56x56x256xf16>) -> tensor<1x56x56x256xf16>
  return %r : tensor<1x56x56x256xf16>
}
func.func @l1_1x1_256to64(%x: tensor<1x56x56x256xf16>, %w: tensor<1x1x256x64xf16>) -> tensor<1x56x56x64xf16> {
  %z = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<1x56x56x64xf16>
  %fl = linalg.fill ins(%z : f16) outs(%e : tensor<1x56x56x64xf16>) -> tensor<1x56x56x64xf16>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x56x56x256xf16>, tensor<1x1x256x64xf16>) outs(%fl : tensor<1x56x56x64xf16>) -> tensor<1x56x56x64xf16>
  return %r : tensor<1x56x56x64xf16>
}
func.func @l2_3x3s2_128(%x: tensor<1x58x58x128xf16>, %w: tensor<3x3x128x128xf16>) -> tensor<1x28x28x128xf16> {
  %z = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<1x28x28x128xf16>
  %fl = linalg.fill ins(%z : f16) outs(%e : tensor<1x28x28x128xf16>) -> tensor<1x28x28x128xf16>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<1x58x58x128xf16>, tensor<3x3x128x128xf16>) outs(%fl : tensor<1x28x28x128xf16>) -> tensor<1x28x28x128xf16>
  return %r : tensor<1x28x28x128xf16>
}
func.func @l2_3x3_128(%x: tensor<1x30x30x128xf16>, %w: tensor<3x3x128x128xf16>) -> tensor<1x28x28x128xf16> {
  %z = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<1x28x28x128xf16>
  %fl = linalg.fill ins(%z : f16) outs(%e : tensor<1x28x28x128xf16>) -> tensor<1x28x28x128xf16>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x30x30x128xf16>, tensor<3x3x128x128xf16>) outs(%fl : tensor<1x28x28x128xf16>) -> tensor<1x28x28x128xf16>
  return %r : tensor<1x28x28x128xf16>
}
func.func @l2_1x1_512(%x: tensor<1x28x28x128xf16>, %w: tensor<1x1x128x512xf16>) -> tensor<1x28x28x512xf16> {
  %z = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<1x28x28x512xf16>
  %fl = linalg.fill ins(%z : f16) outs(%e : tensor<1x28x28x512xf16>) -> tensor<1x28x28x512xf16>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x28x28x128xf16>, tensor<1x1x128x512xf16>) outs(%fl : tensor<1x28x28x512xf16>) -> tensor<1x28x28x512xf16>
  return %r : tensor<1x28x28x512xf16>
}
func.func @l3_3x3_256(%x: tensor<1x16x16x256xf16>, %w: tensor<3x3x256x256xf16>) -> tensor<1x14x14x256xf16> {
  %z = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<1x14x14x256xf16>
  %fl = linalg.fill ins(%z : f16) outs(%e : tensor<1x14x14x256xf16>) -> tensor<1x14x14x256xf16>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x16x16x256xf16>, tensor<3x3x256x256xf16>) outs(%fl : tensor<1x14x14x256xf16>) -> tensor<1x14x14x256xf16>
  return %r : tensor<1x14x14x256xf16>
}
func.func @l3_1x1_1024(%x: tensor<1x14x14x256xf16>, %w: tensor<1x1x256x1024xf16>) -> tensor<1x14x14x1024xf16> {
  %z = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<1x14x14x1024xf16>
  %fl = linalg.fill ins(%z : f16) outs(%e : tensor<1x14x14x1024xf16>) -> tensor<1x14x14x1024xf16>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x14x14x256xf16>, tensor<1x1x256x1024xf16>) outs(%fl : tensor<1x14x14x1024xf16>) -> tensor<1x14x14x1024xf16>
  return %r : tensor<1x14x14x1024xf16>
}
func.func @l4_3x3_512(%x: tensor<1x9x9x512xf16>, %w: tensor<3x3x512x512xf16>) -> tensor<1x7x7x512xf16> {
  %z = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<1x7x7x512xf16>
  %fl = linalg.fill ins(%z : f16) outs(%e : tensor<1x7x7x512xf16>) -> tensor<1x7x7x512xf16>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x9x9x512xf16>, tensor<3x3x512x512xf16>) outs(%fl : tensor<1x7x7x512xf16>) -> tensor<1x7x7x512xf16>
  return %r : tensor<1x7x7x512xf16>
}
func.func @l4_1x1_2048(%x: tensor<1x7x7x512xf16>, %w: tensor<1x1x512x2048xf16>) -> tensor<1x7x7x2048xf16> {
  %z = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<1x7x7x2048xf16>
  %fl = linalg.fill ins(%z : f16) outs(%e : tensor<1x7x7x2048xf16>) -> tensor<1x7x7x2048xf16>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x7x7x512xf16>, tensor<1x1x512x2048xf16>) outs(%fl : tensor<1x7x7x2048xf16>) -> tensor<1x7x7x2048xf16>
  return %r : tensor<1x7x7x2048xf16>
}
