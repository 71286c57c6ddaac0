// RUN: pb-opt --target=cpu-host %s | FileCheck %s
// cpu-host resolves to a concrete x86 chip of the running machine (one of
// the four it chooses from).
// CHECK: module attributes {pb.target = #pb.target<"cpu-{{x86-64-v[34]|sapphire-rapids|zen4}}">}
func.func @f() { return }
