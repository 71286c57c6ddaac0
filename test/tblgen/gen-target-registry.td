// RUN: pb-tblgen -gen-target-registry -I %targets_td -I %S/Inputs %s | FileCheck %s
// Registry entries sorted by name; host-resolved entries list candidates.
include "MinimalChip.td"
def Big : MinimalChip<"b-big"> { let HostCPUFeatures = ["big"]; }
def Small : MinimalChip<"c-small">;
def Host : PBHostChip<"a-host", TestVendor, [Big, Small]> {
  let Description = "resolved from the running machine";
}

// CHECK: static const ChipDesc *const kHostCandidates_Host[] = {&kChips[0], &kChips[1], };
// CHECK: static const TargetRegistryEntry kTargetRegistry[] = {
// CHECK-NEXT:   {"a-host", Vendor::TestVendor,
// CHECK-NEXT:    "resolved from the running machine",
// CHECK-NEXT:    nullptr, kHostCandidates_Host},
// CHECK-NEXT:   {"b-big", Vendor::TestVendor,
// CHECK-NEXT:    "minimal test chip",
// CHECK-NEXT:    &kChips[0], {}},
// CHECK-NEXT:   {"c-small", Vendor::TestVendor,
// CHECK:    &kChips[1], {}},
