// Reproducer of a PolyBlocks compiler bug: bf16 arithmetic on the CPU became
// LLVM bf16 fmul/fadd, which the x86 back end rounds with a call to
// compiler-rt's __truncsfbf2; the artifact did not load.
// test/python/test_compiler_bugs.py runs it (a regression test now).
#map = affine_map<(i) -> (i)>
func.func @forward(%a: tensor<4096xbf16>, %b: tensor<4096xbf16>, %c: tensor<4096xbf16>)
    -> (tensor<4096xbf16>, tensor<4096xbf16>, tensor<4096xbf16>) {
  %e = tensor.empty() : tensor<4096xbf16>
  %r:3 = linalg.generic {indexing_maps = [#map, #map, #map, #map, #map, #map], iterator_types = ["parallel"]}
      ins(%a, %b, %c : tensor<4096xbf16>, tensor<4096xbf16>, tensor<4096xbf16>)
      outs(%e, %e, %e : tensor<4096xbf16>, tensor<4096xbf16>, tensor<4096xbf16>) {
  ^bb0(%x: bf16, %y: bf16, %z: bf16, %o0: bf16, %o1: bf16, %o2: bf16):
    %p = arith.mulf %x, %y : bf16
    %s = arith.addf %p, %z : bf16
    %q = arith.divf %x, %y : bf16
    %ab = math.absf %x : bf16
    %r = math.sqrt %ab : bf16
    linalg.yield %s, %q, %r : bf16, bf16, bf16
  } -> (tensor<4096xbf16>, tensor<4096xbf16>, tensor<4096xbf16>)
  return %r#0, %r#1, %r#2 : tensor<4096xbf16>, tensor<4096xbf16>, tensor<4096xbf16>
}
