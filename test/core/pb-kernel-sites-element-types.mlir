// RUN: pb-opt --target=cpu-x86-64-v3 --pb-outline-kernels --pb-kernel-sites %s | FileCheck %s

// Buffers of index (a gather's index table) and of vectors (a packed
// layout) are counted at their storage size: 64 x 8 B of indices, 64 x 4 B
// read and 64 x 4 B written = 1024 B; then 16 x vector<4xf32> = 256 B read
// and 256 B written = 512 B. They used to crash the byte count.
// CHECK: pb.kernel_sites
// CHECK-SAME: bytes = 1.024000e+03 : f64
// CHECK-SAME: work_exact = true
// CHECK-SAME: bytes = 5.120000e+02 : f64
// CHECK-SAME: work_exact = true
func.func @gather(%table: memref<64xindex>, %src: memref<64xf32>,
                  %dst: memref<64xf32>) {
  affine.for %i = 0 to 64 {
    %j = affine.load %table[%i] : memref<64xindex>
    %x = memref.load %src[%j] : memref<64xf32>
    affine.store %x, %dst[%i] : memref<64xf32>
  }
  return
}

func.func @packed(%src: memref<16xvector<4xf32>>,
                  %dst: memref<16xvector<4xf32>>) {
  affine.for %i = 0 to 16 {
    %x = affine.load %src[%i] : memref<16xvector<4xf32>>
    affine.store %x, %dst[%i] : memref<16xvector<4xf32>>
  }
  return
}
