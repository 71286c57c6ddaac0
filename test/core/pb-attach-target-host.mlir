// RUN: pb-opt --target=cpu-host %s | FileCheck %s
// RUN: env PB_HOST_CLOCK_MHZ=4900 pb-opt --target=cpu-host %s | FileCheck %s --check-prefix=CLOCK
// RUN: env PB_HOST_CLOCK_MHZ=4900 pb-compile --target=cpu-host --estimate %s -o %t.fast > %t.fast.txt
// RUN: env PB_HOST_CLOCK_MHZ=1000 pb-compile --target=cpu-host --estimate %s -o %t.slow > %t.slow.txt
// The passes see the chip at that clock: the matmul's compute-bound
// estimate (its "comp us" column) takes 4.9 times as long at 1000 MHz as
// at 4900 MHz.
// RUN: python3 -c "import sys; c = [float(open(f).read().split()[-4]) for f in sys.argv[1:]]; r = c[1] / c[0]; print(r); sys.exit(0 if 4.8 < r < 5.0 else 1)" %t.fast.txt %t.slow.txt
// cpu-host resolves to a concrete x86 chip of the running machine (one of
// the four it chooses from), at the clock measured on it: the module says
// which clock its figures assume, unless it is the chip's own (.td) clock.
// CHECK: module attributes {{[{]}}{{(pb.host_clock_mhz = [0-9]+ : i64, )?}}pb.target = #pb.target<"cpu-{{x86-64-v[34]|sapphire-rapids|zen4}}">}
// With PB_HOST_CLOCK_MHZ the clock is the one given (no chip's .td states
// 4900 MHz):
// CLOCK: module attributes {pb.host_clock_mhz = 4900 : i64, pb.target = #pb.target<"cpu-{{x86-64-v[34]|sapphire-rapids|zen4}}">}
func.func @f(%a: tensor<256x256xf32>, %b: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x256xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
  %r = linalg.matmul ins(%a, %b : tensor<256x256xf32>, tensor<256x256xf32>)
                     outs(%f : tensor<256x256xf32>) -> tensor<256x256xf32>
  return %r : tensor<256x256xf32>
}
