// RUN: %check_cpu | FileCheck %s
// RUN: sed -e 's/ {pb.in_place = 0 : i64}//' %s > %t.plain.mlir
// RUN: pb-compile %t.plain.mlir --target=cpu-host --options=pipeline=reference -o %t.plain
// RUN: pb-run %t.opt --check-against=%t.plain | FileCheck %s
// RUN: pb-compile %s --target=cpu-host --print-metadata -o %t.art | FileCheck %s --check-prefix=META
// Results that update an argument in place (pb.in_place): a KV cache whose
// row at a run-time position is replaced, then read (scores against the
// updated cache); and an update that bufferization cannot write into the
// argument's buffer (the old cache is read after it: computed in a buffer
// of its own, copied into the argument at the end). pb-run passes a copy of
// the input as the output buffer for both; compared with the reference
// pipeline, and with the reference pipeline's build of the same functions
// without pb.in_place (results in their own buffers).
// CHECK: OK update: 80 values match the reference
// CHECK: OK update_then_read_old: 66 values match the reference
// META: "in_place": [
// META-NEXT: {
// META-NEXT: "input": 0,
// META-NEXT: "output": 0

func.func @update(%cache: tensor<2x8x4xf32>, %row: tensor<2x1x4xf32>, %pos: tensor<1xi64>,
                  %q: tensor<2x4xf32>) -> (tensor<2x8x4xf32> {pb.in_place = 0 : i64}, tensor<2x8xf32>) {
  %c0 = arith.constant 0 : index
  %c7 = arith.constant 7 : index
  %p = tensor.extract %pos[%c0] : tensor<1xi64>
  %i = arith.index_cast %p : i64 to index
  %lo = arith.maxsi %i, %c0 : index
  %at = arith.minsi %lo, %c7 : index
  %s = tensor.extract_slice %cache[0, %at, 0] [2, 1, 4] [1, 1, 1] : tensor<2x8x4xf32> to tensor<2x1x4xf32>
  %c = linalg.copy ins(%row : tensor<2x1x4xf32>) outs(%s : tensor<2x1x4xf32>) -> tensor<2x1x4xf32>
  %u = tensor.insert_slice %c into %cache[0, %at, 0] [2, 1, 4] [1, 1, 1] : tensor<2x1x4xf32> into tensor<2x8x4xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<2x8xf32>) -> tensor<2x8xf32>
  %scores = linalg.generic {indexing_maps = [affine_map<(b, t, d) -> (b, t, d)>, affine_map<(b, t, d) -> (b, d)>, affine_map<(b, t, d) -> (b, t)>],
                            iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%u, %q : tensor<2x8x4xf32>, tensor<2x4xf32>) outs(%f : tensor<2x8xf32>) {
  ^bb0(%k: f32, %x: f32, %acc: f32):
    %m = arith.mulf %k, %x : f32
    %a = arith.addf %acc, %m : f32
    linalg.yield %a : f32
  } -> tensor<2x8xf32>
  return %u, %scores : tensor<2x8x4xf32>, tensor<2x8xf32>
}

func.func @update_then_read_old(%cache: tensor<8x8xf32>, %row: tensor<1x8xf32>)
    -> (tensor<8x8xf32> {pb.in_place = 0 : i64}, tensor<2xf32>) {
  %u = tensor.insert_slice %row into %cache[2, 0] [1, 8] [1, 1] : tensor<1x8xf32> into tensor<8x8xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<2xf32>) -> tensor<2xf32>
  // Row 2 of the old cache and of the updated one, summed.
  %old = tensor.extract_slice %cache[2, 0] [1, 8] [1, 1] : tensor<8x8xf32> to tensor<8xf32>
  %new = tensor.extract_slice %u[2, 0] [1, 8] [1, 1] : tensor<8x8xf32> to tensor<8xf32>
  %sums = linalg.generic {indexing_maps = [affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i)>],
                          iterator_types = ["parallel", "reduction"]}
      ins(%old, %new : tensor<8xf32>, tensor<8xf32>) outs(%f : tensor<2xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %i = linalg.index 0 : index
    %c0 = arith.constant 0 : index
    %first = arith.cmpi eq, %i, %c0 : index
    %v = arith.select %first, %a, %b : f32
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<2xf32>
  return %u, %sums : tensor<8x8xf32>, tensor<2xf32>
}
