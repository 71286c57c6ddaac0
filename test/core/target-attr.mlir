// RUN: pb-opt %s | pb-opt | FileCheck %s
// #pb.target round-trips through the printer and the parser.

// CHECK: module attributes {pb.target = #pb.target<"amd-gfx90a">}
module attributes {pb.target = #pb.target<"amd-gfx90a">} {
}
