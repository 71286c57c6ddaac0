// RUN: pb-compile %s --target=cpu-host -o %t.opt
// RUN: pb-compile %s --target=cpu-host --options=pipeline=reference -o %t.ref
// RUN: pb-run %t.opt --entry=elementwise --check-against=%t.ref --rtol=0 --atol=0 | FileCheck %s --check-prefix=EW
// RUN: pb-run %t.opt --entry=half --check-against=%t.ref --rtol=0 --atol=0 | FileCheck %s --check-prefix=HALF
// RUN: pb-run %t.opt --entry=matmul --check-against=%t.ref --rtol=2e-2 --atol=0.25 | FileCheck %s --check-prefix=MM
// RUN: pb-run %t.opt --entry=fill --check-against=%t.ref --rtol=0 --atol=0 | FileCheck %s --check-prefix=FILL
// The code of both artifacts calls no compiler-rt conversion builtin:
// RUN: python3 -c "import sys; sys.path.insert(0, sys.argv[1]); import artifact_file as a; open(sys.argv[3], 'wb').write(a.split(open(sys.argv[2], 'rb').read())[1])" %pb_test_lib %t.opt %t.opt.so
// RUN: python3 -c "import sys; sys.path.insert(0, sys.argv[1]); import artifact_file as a; open(sys.argv[3], 'wb').write(a.split(open(sys.argv[2], 'rb').read())[1])" %pb_test_lib %t.ref %t.ref.so
// RUN: llvm-nm -D %t.opt.so | FileCheck %s --check-prefix=SYMS --implicit-check-not=__trunc --implicit-check-not=__extend
// RUN: llvm-nm -D %t.ref.so | FileCheck %s --check-prefix=SYMS --implicit-check-not=__trunc --implicit-check-not=__extend
// Nor does the LLVM dialect that S4 and the host reference lowering leave
// compute on bf16, or round from f64 to f16:
// RUN: pb-opt %s --target=cpu-x86-64-v4 --pb-pipeline=s1,s2,s3,s4 | FileCheck %s --check-prefix=LLVM \
// RUN:   --implicit-check-not='{{llvm\.(fadd|fsub|fmul|fdiv|frem|fneg|fcmp|fptrunc|fpext|sitofp|uitofp|fptosi|fptoui|intr\.[a-z.]+).*bf16}}' \
// RUN:   --implicit-check-not='{{llvm\.fptrunc .*xf64> to vector<[0-9]+xf16>}}' --implicit-check-not='{{llvm\.intr\.fma.*f16>}}'
// RUN: pb-opt %s --target=cpu-x86-64-v4 --pb-pipeline=s1,s2,host | FileCheck %s --check-prefix=LLVM \
// RUN:   --implicit-check-not='{{llvm\.(fadd|fsub|fmul|fdiv|frem|fneg|fcmp|fptrunc|fpext|sitofp|uitofp|fptosi|fptoui|intr\.[a-z.]+).*bf16}}' \
// RUN:   --implicit-check-not='{{llvm\.fptrunc .*f64 to f16}}' --implicit-check-not='{{llvm\.intr\.fma.*f16}}'
//
// bf16 arithmetic on the CPU: x86 has none, and LLVM's x86 back end would
// compute a bf16 fmul or fadd in f32 and round it back with a call to
// compiler-rt's __truncsfbf2, which nothing defines where the artifact is
// loaded (it did not load). pb-emulate-bf16 computes each op in f32 and
// rounds its result to bf16 with integer operations, to nearest even, as
// the program says; f64 -> bf16 and f64 -> f16 truncations round once
// (through f32 rounded to odd), an f16 fma computes in f64 (LLVM would
// round it with __truncdfhf2). The optimized build and the reference
// (pipeline=reference: S3 left out, same S4) compute the elementwise ops
// identically. In the matmul (a bf16 accumulator: every product and
// partial sum rounded to bf16) the optimized build sums in another order
// (partial accumulators, a tree at the end), each partial sum rounded to
// bf16 too: over 96 products of inputs in [-1, 1], sums up to about 14,
// where a bf16 ulp is 2^-4, the two differ by up to 0.28.

// EW: elementwise: output 0 bf16 [1000]
// EW: OK elementwise: 5000 values match the reference
// HALF: half: output 0 f16 [1000]
// HALF: OK half: 2000 values match the reference
// MM: matmul: output 0 bf16 [70,130]
// MM: OK matmul: 9100 values match the reference
// A bf16 scalar read from memory, filled into a tensor and added: the
// vector of its copies is a kernel's argument, passed as 16-bit integers
// (as bf16, x86's calling convention rounds it through f32 with
// __truncsfbf2: the artifact did not load).
// FILL: fill: output 0 bf16 [6,40]
// FILL: OK fill: 240 values match the reference

// SYMS: T __pb_entry_elementwise
// SYMS: T __pb_entry_half
// SYMS: T __pb_entry_matmul

// LLVM: llvm.func @elementwise
// LLVM: llvm.fmul {{.*}} : {{(vector<[0-9]+x)?}}f32
// LLVM: llvm.func @matmul
// LLVM: llvm.func @half

#map = affine_map<(i) -> (i)>
func.func @elementwise(%a: tensor<1000xbf16>, %b: tensor<1000xbf16>, %c: tensor<1000xbf16>, %d: tensor<1000xf64>)
    -> (tensor<1000xbf16>, tensor<1000xbf16>, tensor<1000xbf16>, tensor<1000xbf16>, tensor<1000xbf16>) {
  %e = tensor.empty() : tensor<1000xbf16>
  %r:5 = linalg.generic {indexing_maps = [#map, #map, #map, #map, #map, #map, #map, #map, #map],
                         iterator_types = ["parallel"]}
      ins(%a, %b, %c, %d : tensor<1000xbf16>, tensor<1000xbf16>, tensor<1000xbf16>, tensor<1000xf64>)
      outs(%e, %e, %e, %e, %e : tensor<1000xbf16>, tensor<1000xbf16>, tensor<1000xbf16>, tensor<1000xbf16>, tensor<1000xbf16>) {
  ^bb0(%x: bf16, %y: bf16, %z: bf16, %w: f64, %o0: bf16, %o1: bf16, %o2: bf16, %o3: bf16, %o4: bf16):
    %p = arith.mulf %x, %y : bf16
    %s = arith.addf %p, %z : bf16
    %q = arith.divf %x, %y : bf16
    %m = arith.maximumf %q, %s : bf16
    %n = arith.negf %z : bf16
    %ab = math.absf %x : bf16
    %r = math.sqrt %ab : bf16
    %t = math.exp %n : bf16
    %u = arith.subf %r, %t : bf16
    %f = math.fma %x, %y, %u : bf16
    %lt = arith.cmpf olt, %x, %y : bf16
    %sel = arith.select %lt, %f, %m : bf16
    %v = arith.truncf %w : f64 to bf16
    linalg.yield %s, %m, %u, %sel, %v : bf16, bf16, bf16, bf16, bf16
  } -> (tensor<1000xbf16>, tensor<1000xbf16>, tensor<1000xbf16>, tensor<1000xbf16>, tensor<1000xbf16>)
  return %r#0, %r#1, %r#2, %r#3, %r#4 : tensor<1000xbf16>, tensor<1000xbf16>, tensor<1000xbf16>, tensor<1000xbf16>, tensor<1000xbf16>
}

func.func @matmul(%a: tensor<70x96xbf16>, %b: tensor<96x130xbf16>) -> tensor<70x130xbf16> {
  %zero = arith.constant 0.0 : bf16
  %init = tensor.empty() : tensor<70x130xbf16>
  %acc = linalg.fill ins(%zero : bf16) outs(%init : tensor<70x130xbf16>) -> tensor<70x130xbf16>
  %mm = linalg.matmul ins(%a, %b : tensor<70x96xbf16>, tensor<96x130xbf16>)
                      outs(%acc : tensor<70x130xbf16>) -> tensor<70x130xbf16>
  return %mm : tensor<70x130xbf16>
}

func.func @half(%a: tensor<1000xf16>, %b: tensor<1000xf16>, %d: tensor<1000xf64>) -> (tensor<1000xf16>, tensor<1000xf16>) {
  %e = tensor.empty() : tensor<1000xf16>
  %r:2 = linalg.generic {indexing_maps = [#map, #map, #map, #map, #map], iterator_types = ["parallel"]}
      ins(%a, %b, %d : tensor<1000xf16>, tensor<1000xf16>, tensor<1000xf64>) outs(%e, %e : tensor<1000xf16>, tensor<1000xf16>) {
  ^bb0(%x: f16, %y: f16, %w: f64, %o0: f16, %o1: f16):
    %p = arith.mulf %x, %y : f16
    %f = math.fma %x, %y, %p : f16
    %v = arith.truncf %w : f64 to f16
    linalg.yield %f, %v : f16, f16
  } -> (tensor<1000xf16>, tensor<1000xf16>)
  return %r#0, %r#1 : tensor<1000xf16>, tensor<1000xf16>
}

func.func @fill(%s: tensor<bf16>, %a: tensor<6x40xbf16>) -> tensor<6x40xbf16> {
  %v = tensor.extract %s[] : tensor<bf16>
  %e = tensor.empty() : tensor<6x40xbf16>
  %f = linalg.fill ins(%v : bf16) outs(%e : tensor<6x40xbf16>) -> tensor<6x40xbf16>
  %r = linalg.add ins(%f, %a : tensor<6x40xbf16>, tensor<6x40xbf16>) outs(%e : tensor<6x40xbf16>) -> tensor<6x40xbf16>
  return %r : tensor<6x40xbf16>
}
