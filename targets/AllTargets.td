//===- AllTargets.td - Every chip PolyBlocks knows ---------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The root file pb-tblgen reads (run with -I targets). Adding a chip means
// writing its targets/<vendor>/<Chip>.td and adding one include line below;
// a new vendor also adds its feature and matrix-unit files first.
//
// Order: the schema, then each vendor's features and matrix units (chips
// refer to them), then the chips. CpuHost.td comes after the CPU chips it
// names as candidates.
//
//===----------------------------------------------------------------------===//

include "Target.td"

// Vendor capabilities and matrix units.
include "nvidia/NVIDIAFeatures.td"
include "nvidia/NVIDIAMatrixUnits.td"
include "amd/AMDFeatures.td"
include "amd/AMDMatrixUnits.td"
include "cpu/CPUFeatures.td"
include "cpu/CPUMatrixUnits.td"

// NVIDIA.
include "nvidia/SM80.td"
include "nvidia/SM90.td"

// AMD.
include "amd/GFX90A.td"
include "amd/GFX942.td"

// CPU.
include "cpu/X86_64_V3.td"
include "cpu/X86_64_V4.td"
include "cpu/Zen4.td"
include "cpu/SapphireRapids.td"
include "cpu/CpuHost.td"
