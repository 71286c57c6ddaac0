// RUN: pb-compile %s --target=nvidia-sm80 --options=codegen=tile-ir -o %t.sm80.pbart
// RUN: pb-compile %s --target=nvidia-sm90 --options=codegen=tile-ir -o %t.sm90.pbart
// RUN: pb-compile %s --target=cpu-host --options=pipeline=reference -o %t.ref.pbart
// RUN: %nvidia_artifact %t.sm80.pbart --plan | FileCheck %s --check-prefix=PLAN
// RUN: %nvidia_artifact %t.sm90.pbart --plan | FileCheck %s --check-prefix=PLAN
// RUN: %if tileiras %{ %nvidia_artifact %t.sm80.pbart --sass | FileCheck %s --check-prefix=SASS80 %}
// RUN: %if tileiras %{ %nvidia_artifact %t.sm90.pbart --sass | FileCheck %s --check-prefix=SASS90 %}
// RUN: pb-run --emulate %t.sm80.pbart --entry=attention128 --check-against=%t.ref.pbart --rtol=2e-2 --atol=2e-3 | FileCheck %s --check-prefix=EMU
// RUN: pb-run --emulate %t.sm90.pbart --entry=attention128 --check-against=%t.ref.pbart --rtol=2e-2 --atol=2e-3 | FileCheck %s --check-prefix=EMU
// Attention of 12 heads of 64 at sequence 128 and 1024 in f16 (f32
// scores and softmax, the probabilities rounded to f16 for the second
// product) with codegen=tile-ir: three Tile IR kernels, nothing on the PTX
// path: q @ k^T with the scale as its epilogue (its zero fill removed),
// the softmax and the rounding as one row kernel, p @ v. tileiras
// assembles all of them for sm_80 and sm_90, tensor-core instructions in
// the products and no local-memory spills anywhere; at sequence 128 the
// tile interpreter runs them against a cpu-host build.

// PLAN: entry attention128
// PLAN-NEXT: launch attention128_tile{{[0-9]+}}
// PLAN-NEXT: launch attention128_tile{{[0-9]+}}
// PLAN-NEXT: launch attention128_tile{{[0-9]+}}
// PLAN-NEXT: entry attention1024
// PLAN-NEXT: launch attention1024_tile{{[0-9]+}}
// PLAN-NEXT: launch attention1024_tile{{[0-9]+}}
// PLAN-NEXT: launch attention1024_tile{{[0-9]+}}
// PLAN-NOT: launch

// The products on the tensor cores (HMMA on both chips: batched products
// get no warpgroup MMAs from tileiras), the row kernels without them; no
// kernel spills.
// SASS80-NOT: {{LDL [1-9]|STL [1-9]}}
// SASS80: sass attention128_tile0 HMMA {{[1-9][0-9]*}} {{.*}} LDL 0 STL 0
// SASS80: sass attention128_tile1 HMMA {{[1-9][0-9]*}} {{.*}} LDL 0 STL 0
// SASS80: sass attention128_tile2 HMMA 0 {{.*}} LDL 0 STL 0
// SASS80: sass attention1024_tile3 HMMA {{[1-9][0-9]*}} {{.*}} LDL 0 STL 0
// SASS80: sass attention1024_tile4 HMMA {{[1-9][0-9]*}} {{.*}} LDL 0 STL 0
// SASS80: sass attention1024_tile5 HMMA 0 {{.*}} LDL 0 STL 0
// SASS90-NOT: {{LDL [1-9]|STL [1-9]}}
// SASS90: sass attention128_tile0 {{.*}} LDL 0 STL 0
// SASS90: sass attention128_tile1 {{.*}} LDL 0 STL 0
// SASS90: sass attention128_tile2 {{.*}} LDL 0 STL 0
// SASS90: sass attention1024_tile3 {{.*}} LDL 0 STL 0
// SASS90: sass attention1024_tile4 {{.*}} LDL 0 STL 0
// SASS90: sass attention1024_tile5 {{.*}} LDL 0 STL 0
// SASS90-NOT: {{LDL [1-9]|STL [1-9]}}

// EMU: OK attention128: 98304 values match the reference

#q = affine_map<(b, i, j, d) -> (b, i, d)>
#k = affine_map<(b, i, j, d) -> (b, j, d)>
#s = affine_map<(b, i, j, d) -> (b, i, j)>
#p = affine_map<(b, i, d, j) -> (b, i, j)>
#v = affine_map<(b, i, d, j) -> (b, j, d)>
#o = affine_map<(b, i, d, j) -> (b, i, d)>
#id = affine_map<(b, i, j) -> (b, i, j)>

func.func @attention128(%q: tensor<12x128x64xf16>, %k: tensor<12x128x64xf16>, %v: tensor<12x128x64xf16>) -> tensor<12x128x64xf32> {
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant 0.125 : f32
  %e = tensor.empty() : tensor<12x128x128xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<12x128x128xf32>) -> tensor<12x128x128xf32>
  %s = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<12x128x64xf16>, tensor<12x128x64xf16>) outs(%z : tensor<12x128x128xf32>) {
  ^bb0(%a: f16, %b: f16, %c: f32):
    %a32 = arith.extf %a : f16 to f32
    %b32 = arith.extf %b : f16 to f32
    %m = arith.mulf %a32, %b32 : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<12x128x128xf32>
  %sc = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<12x128x128xf32>) outs(%e : tensor<12x128x128xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.mulf %a, %scale : f32
    linalg.yield %r : f32
  } -> tensor<12x128x128xf32>
  %p = linalg.softmax dimension(2) ins(%sc : tensor<12x128x128xf32>) outs(%e : tensor<12x128x128xf32>) -> tensor<12x128x128xf32>
  %e16 = tensor.empty() : tensor<12x128x128xf16>
  %p16 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%p : tensor<12x128x128xf32>) outs(%e16 : tensor<12x128x128xf16>) {
  ^bb0(%a: f32, %o: f16):
    %r = arith.truncf %a : f32 to f16
    linalg.yield %r : f16
  } -> tensor<12x128x128xf16>
  %eo = tensor.empty() : tensor<12x128x64xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<12x128x64xf32>) -> tensor<12x128x64xf32>
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%p16, %v : tensor<12x128x128xf16>, tensor<12x128x64xf16>) outs(%zo : tensor<12x128x64xf32>) {
  ^bb0(%a: f16, %b: f16, %c: f32):
    %a32 = arith.extf %a : f16 to f32
    %b32 = arith.extf %b : f16 to f32
    %m = arith.mulf %a32, %b32 : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<12x128x64xf32>
  return %o : tensor<12x128x64xf32>
}

func.func @attention1024(%q: tensor<12x1024x64xf16>, %k: tensor<12x1024x64xf16>, %v: tensor<12x1024x64xf16>) -> tensor<12x1024x64xf32> {
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant 0.125 : f32
  %e = tensor.empty() : tensor<12x1024x1024xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<12x1024x1024xf32>) -> tensor<12x1024x1024xf32>
  %s = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<12x1024x64xf16>, tensor<12x1024x64xf16>) outs(%z : tensor<12x1024x1024xf32>) {
  ^bb0(%a: f16, %b: f16, %c: f32):
    %a32 = arith.extf %a : f16 to f32
    %b32 = arith.extf %b : f16 to f32
    %m = arith.mulf %a32, %b32 : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<12x1024x1024xf32>
  %sc = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<12x1024x1024xf32>) outs(%e : tensor<12x1024x1024xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.mulf %a, %scale : f32
    linalg.yield %r : f32
  } -> tensor<12x1024x1024xf32>
  %p = linalg.softmax dimension(2) ins(%sc : tensor<12x1024x1024xf32>) outs(%e : tensor<12x1024x1024xf32>) -> tensor<12x1024x1024xf32>
  %e16 = tensor.empty() : tensor<12x1024x1024xf16>
  %p16 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%p : tensor<12x1024x1024xf32>) outs(%e16 : tensor<12x1024x1024xf16>) {
  ^bb0(%a: f32, %o: f16):
    %r = arith.truncf %a : f32 to f16
    linalg.yield %r : f16
  } -> tensor<12x1024x1024xf16>
  %eo = tensor.empty() : tensor<12x1024x64xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<12x1024x64xf32>) -> tensor<12x1024x64xf32>
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%p16, %v : tensor<12x1024x1024xf16>, tensor<12x1024x64xf16>) outs(%zo : tensor<12x1024x64xf32>) {
  ^bb0(%a: f16, %b: f16, %c: f32):
    %a32 = arith.extf %a : f16 to f32
    %b32 = arith.extf %b : f16 to f32
    %m = arith.mulf %a32, %b32 : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<12x1024x64xf32>
  return %o : tensor<12x1024x64xf32>
}
