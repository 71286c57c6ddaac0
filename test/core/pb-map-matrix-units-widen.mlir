// RUN: pb-opt %s --split-input-file --pass-pipeline='builtin.module(pb-attach-target{target=cpu-x86-64-v3},pb-map-matrix-units)' | FileCheck %s
// RUN: pb-opt %s --split-input-file --pb-explain --pass-pipeline='builtin.module(pb-attach-target{target=cpu-x86-64-v3},pb-map-matrix-units)' -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN

// bf16 operands into an f32 accumulator (torch's bf16 mm) on a chip whose
// .td states its f32 FMA fed bf16 operands as a unit: the micro-kernel
// widens B as it packs its panels and copies A's rows widened, so the K
// loop is the f32 one.
// EXPLAIN: remark: pb-explain: matrix units: linalg.matmul MxNxK 64x64x128 -> VFMA_BF16_1x8x1_F32 register tile {{.*}}, A copied by rows, widened to f32
// CHECK-LABEL: func.func @matmul_bf16
// CHECK-NOT: linalg.matmul
// CHECK: memref.alloc() {{.*}} : memref<{{.*}}x128x16xf32>
// CHECK: %[[B:.*]] = vector.load %{{.*}} : memref<128x64xbf16>, vector<8xbf16>
// CHECK: %[[BW:.*]] = arith.extf %[[B]] : vector<8xbf16> to vector<8xf32>
// CHECK: vector.store %[[BW]]
// CHECK: memref.alloc() {{.*}} : memref<{{[0-9]+}}x{{[0-9]+}}xf32>
// CHECK: %[[A:.*]] = vector.load %{{.*}} : memref<64x128xbf16>, vector<8xbf16>
// CHECK: %[[AW:.*]] = arith.extf %[[A]] : vector<8xbf16> to vector<8xf32>
// CHECK: vector.store %[[AW]]
// CHECK: vector.transfer_read %{{.*}} : memref<64x128xbf16>, vector<8xbf16>
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (vector<8xf32>, {{.*}}vector<8xf32>)
// CHECK-NOT: bf16
// CHECK: vector.fma {{.*}} : vector<8xf32>
func.func @matmul_bf16(%a: memref<64x128xbf16>, %b: memref<128x64xbf16>,
                       %c: memref<64x64xf32>) {
  linalg.matmul ins(%a, %b : memref<64x128xbf16>, memref<128x64xbf16>)
                outs(%c : memref<64x64xf32>)
  return
}

// -----

// f16 the same way (F16C converts).
// EXPLAIN: remark: pb-explain: matrix units: linalg.matmul MxNxK 64x64x128 -> VFMA_F16_1x8x1_F32
// CHECK-LABEL: func.func @matmul_f16
// CHECK-NOT: linalg.matmul
// CHECK: arith.extf %{{.*}} : vector<8xf16> to vector<8xf32>
func.func @matmul_f16(%a: memref<64x128xf16>, %b: memref<128x64xf16>,
                      %c: memref<64x64xf32>) {
  linalg.matmul ins(%a, %b : memref<64x128xf16>, memref<128x64xf16>)
                outs(%c : memref<64x64xf32>)
  return
}

// -----

// A bf16 accumulator: no unit accumulates in bf16; left to loop tiling.
// EXPLAIN: remark: pb-explain: matrix units: linalg.matmul left to loop tiling: the target has no thread-scope vector outer-product unit for these element types
// CHECK-LABEL: func.func @matmul_bf16_acc
// CHECK: linalg.matmul
func.func @matmul_bf16_acc(%a: memref<64x128xbf16>, %b: memref<128x64xbf16>,
                           %c: memref<64x64xbf16>) {
  linalg.matmul ins(%a, %b : memref<64x128xbf16>, memref<128x64xbf16>)
                outs(%c : memref<64x64xbf16>)
  return
}
