// RUN: pb-compile %s --target=nvidia-sm80 --options=codegen=tile-ir -o %t.sm80.pbart
// RUN: pb-compile %s --target=nvidia-sm90 --options=codegen=tile-ir -o %t.sm90.pbart
// RUN: pb-compile %s --target=cpu-host --options=pipeline=reference -o %t.ref.pbart
// RUN: %nvidia_artifact %t.sm90.pbart --plan | FileCheck %s --check-prefix=PLAN
// RUN: %nvidia_artifact %t.sm90.pbart --tile-ir | FileCheck %s --check-prefix=TILE
// RUN: %if tileiras %{ %nvidia_artifact %t.sm80.pbart --sass | FileCheck %s --check-prefix=SASS %}
// RUN: %if tileiras %{ %nvidia_artifact %t.sm90.pbart --sass | FileCheck %s --check-prefix=SASS %}
// RUN: pb-run --emulate %t.sm80.pbart --check-against=%t.ref.pbart | FileCheck %s --check-prefix=EMU
// RUN: pb-run --emulate %t.sm90.pbart --check-against=%t.ref.pbart | FileCheck %s --check-prefix=EMU
// Softmax and layernorm through S1-S5 with codegen=tile-ir: each is one
// row kernel (pb-group-row-kernels in S2, then pb-nvidia-emit-tile-ir): a
// tile block loads its rows once, reduces them along the row
// (tileir.reduce; rows of 100 and 768 are padded to 128 and 1024, the
// padding masked to the fold's identity) and stores only the result. The
// kernels go through tileiras for sm_80 and sm_90 without local-memory
// spills, and the tile interpreter runs them against a cpu-host build.

// PLAN: entry softmax
// PLAN-NEXT: launch softmax_tile0 grid [{{[0-9]+}}, 1, 1]
// PLAN-NOT: launch
// PLAN: entry softmax_rows100
// PLAN-NEXT: launch softmax_rows100_tile1 grid [{{[0-9]+}}, 6, 1]
// PLAN-NOT: launch
// PLAN: entry layernorm
// PLAN-NEXT: launch layernorm_tile2 grid [{{[0-9]+}}, 1, 1]
// PLAN-NOT: launch

// TILE-LABEL: tileir.entry @softmax_tile0
// TILE: tileir.load_view_tko
// TILE: tileir.reduce {{.*}} dim = 1 identities = [0xFF800000 : f32]
// TILE: tileir.maxf
// TILE: tileir.exp
// TILE: tileir.reduce {{.*}} dim = 1 identities = [0.000000e+00 : f32]
// TILE: tileir.addf
// TILE: tileir.divf
// TILE: tileir.store_view_tko
// TILE-NOT: tileir.store_view_tko
// TILE-LABEL: tileir.entry @softmax_rows100_tile1
// TILE: tileir.iota : <128xi32>
// TILE: tileir.cmpi less_than
// TILE: tileir.select
// TILE: tileir.reduce
// TILE-LABEL: tileir.entry @layernorm_tile2
// TILE: tileir.reduce
// TILE: tileir.rsqrt
// TILE: tileir.store_view_tko
// TILE-NOT: tileir.store_view_tko

// SASS-NOT: spill
// SASS: softmax_tile0
// SASS-NOT: spill

// EMU: OK softmax: 8192 values match the reference
// EMU: OK softmax_rows100: 2400 values match the reference
// EMU: OK layernorm: 98304 values match the reference

func.func @softmax(%x: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %e = tensor.empty() : tensor<64x128xf32>
  %y = linalg.softmax dimension(1) ins(%x : tensor<64x128xf32>)
                      outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %y : tensor<64x128xf32>
}

func.func @softmax_rows100(%x: tensor<2x3x4x100xf32>) -> tensor<2x3x4x100xf32> {
  %e = tensor.empty() : tensor<2x3x4x100xf32>
  %y = linalg.softmax dimension(3) ins(%x : tensor<2x3x4x100xf32>)
                      outs(%e : tensor<2x3x4x100xf32>) -> tensor<2x3x4x100xf32>
  return %y : tensor<2x3x4x100xf32>
}

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>

func.func @layernorm(%x: tensor<128x768xf32>, %g: tensor<768xf32>,
                     %b: tensor<768xf32>) -> tensor<128x768xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 768.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %e1 = tensor.empty() : tensor<128xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<128xf32>) -> tensor<128xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<128x768xf32>) outs(%z1 : tensor<128xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<128xf32>
  %e2 = tensor.empty() : tensor<128x768xf32>
  %xc = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum : tensor<128x768xf32>, tensor<128xf32>) outs(%e2 : tensor<128x768xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %mean = arith.divf %s, %n : f32
    %r = arith.subf %in, %mean : f32
    linalg.yield %r : f32
  } -> tensor<128x768xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<128xf32>) -> tensor<128xf32>
  %sq = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%xc : tensor<128x768xf32>) outs(%z2 : tensor<128xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.mulf %in, %in : f32
    %r = arith.addf %s, %acc : f32
    linalg.yield %r : f32
  } -> tensor<128xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #col, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%xc, %sq, %g, %b : tensor<128x768xf32>, tensor<128xf32>, tensor<768xf32>, tensor<768xf32>)
      outs(%e2 : tensor<128x768xf32>) {
  ^bb0(%in: f32, %v: f32, %gamma: f32, %beta: f32, %out: f32):
    %var = arith.divf %v, %n : f32
    %ve = arith.addf %var, %eps : f32
    %rs = math.rsqrt %ve : f32
    %a = arith.mulf %in, %rs : f32
    %c = arith.mulf %a, %gamma : f32
    %d = arith.addf %c, %beta : f32
    linalg.yield %d : f32
  } -> tensor<128x768xf32>
  return %y : tensor<128x768xf32>
}
