// RUN: pb-opt --pass-pipeline="builtin.module(gpu.module(pb-gpu-align-vector-accesses))" %s | FileCheck %s

// Kernel arguments are aligned to the chip's vector width (16 bytes on
// sm90); an access's offset is aligned when every index term is a multiple
// of the vector's elements: a thread id times 4, a loop stepping by 4 from
// 0, a block id times a row of 1024.
module attributes {gpu.container_module, pb.target = #pb.target<"nvidia-sm90">} {
  gpu.module @m {
    // CHECK-LABEL: gpu.func @aligned
    // CHECK: %[[V:.*]] = vector.load %arg0[%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<64x1024xf32>, vector<4xf32>
    // CHECK: vector.store %[[V]], %arg1[%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<64x1024xf32>, vector<4xf32>
    gpu.func @aligned(%a: memref<64x1024xf32>, %b: memref<64x1024xf32>) kernel {
      %pad = ub.poison : f32
      %c4 = arith.constant 4 : index
      %c1024 = arith.constant 1024 : index
      %row = gpu.block_id x
      %tid = gpu.thread_id x
      %col = arith.muli %tid, %c4 : index
      %v = vector.transfer_read %a[%row, %col], %pad {in_bounds = [true]} : memref<64x1024xf32>, vector<4xf32>
      vector.transfer_write %v, %b[%row, %col] {in_bounds = [true]} : vector<4xf32>, memref<64x1024xf32>
      gpu.return
    }

    // A loop from 0 by 4 keeps 16 bytes; one from 2 by 4, 8 bytes (the
    // largest power of two dividing every offset).
    // CHECK-LABEL: gpu.func @loops
    // CHECK: scf.for
    // CHECK: vector.load %arg0[{{.*}}] {alignment = 16 : i64}
    // CHECK: scf.for
    // CHECK: vector.load %arg0[{{.*}}] {alignment = 8 : i64}
    gpu.func @loops(%a: memref<1024xf32>, %b: memref<4xf32>) kernel {
      %pad = ub.poison : f32
      %c0 = arith.constant 0 : index
      %c2 = arith.constant 2 : index
      %c4 = arith.constant 4 : index
      %c1020 = arith.constant 1020 : index
      scf.for %i = %c0 to %c1020 step %c4 {
        %v = vector.transfer_read %a[%i], %pad {in_bounds = [true]} : memref<1024xf32>, vector<4xf32>
        vector.transfer_write %v, %b[%c0] {in_bounds = [true]} : vector<4xf32>, memref<4xf32>
      }
      scf.for %i = %c2 to %c1020 step %c4 {
        %v = vector.transfer_read %a[%i], %pad {in_bounds = [true]} : memref<1024xf32>, vector<4xf32>
        vector.transfer_write %v, %b[%c0] {in_bounds = [true]} : vector<4xf32>, memref<4xf32>
      }
      gpu.return
    }

    // An index shifted by one element (a convolution's kw + 1), an unknown
    // index (a value loaded from memory) and a buffer that is not a kernel
    // argument keep their transfers.
    // CHECK-LABEL: gpu.func @unaligned
    // CHECK-NOT: vector.load
    // CHECK-NOT: alignment
    // CHECK: gpu.return
    gpu.func @unaligned(%a: memref<1024xf32>, %idx: memref<1xindex>) kernel {
      %pad = ub.poison : f32
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %tid = gpu.thread_id x
      %t4 = arith.muli %tid, %c4 : index
      %shifted = arith.addi %t4, %c1 : index
      %v = vector.transfer_read %a[%shifted], %pad {in_bounds = [true]} : memref<1024xf32>, vector<4xf32>
      %loaded = memref.load %idx[%c0] : memref<1xindex>
      vector.transfer_write %v, %a[%loaded] {in_bounds = [true]} : vector<4xf32>, memref<1024xf32>
      %private = memref.alloca() : memref<8xf32>
      %w = vector.transfer_read %private[%c4], %pad {in_bounds = [true]} : memref<8xf32>, vector<4xf32>
      vector.transfer_write %w, %a[%c0] {in_bounds = [false]} : vector<4xf32>, memref<1024xf32>
      gpu.return
    }

    // Views of the dynamic shared memory at a byte shift: 256 keeps 16
    // bytes, 8 keeps 8.
    // CHECK-LABEL: gpu.func @shared
    // CHECK: vector.load %{{.*}}[%{{.*}}] {alignment = 16 : i64} : memref<64xf32, #gpu.address_space<workgroup>>
    // CHECK: vector.store %{{.*}}, %{{.*}}[%{{.*}}] {alignment = 8 : i64} : memref<64xf32, #gpu.address_space<workgroup>>
    gpu.func @shared() kernel {
      %pad = ub.poison : f32
      %c0 = arith.constant 0 : index
      %c8 = arith.constant 8 : index
      %c256 = arith.constant 256 : index
      %base = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %s = memref.view %base[%c256][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64xf32, #gpu.address_space<workgroup>>
      %t = memref.view %base[%c8][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64xf32, #gpu.address_space<workgroup>>
      %v = vector.transfer_read %s[%c0], %pad {in_bounds = [true]} : memref<64xf32, #gpu.address_space<workgroup>>, vector<4xf32>
      vector.transfer_write %v, %t[%c0] {in_bounds = [true]} : vector<4xf32>, memref<64xf32, #gpu.address_space<workgroup>>
      gpu.return
    }
  }
}
