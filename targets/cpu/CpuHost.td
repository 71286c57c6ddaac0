//===- CpuHost.td - The CPU the compiler runs on -----------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// "cpu-host" resolves, when the compiler runs, to the first candidate whose
// HostCPUFeatures the running CPU reports (llvm::sys::getHostCPUFeatures).
// Candidates are listed most capable first. It carries no figures of its
// own; those of the chosen candidate apply.
//
// Sources: the candidates' files (SapphireRapids.td, Zen4.td, X86_64_V4.td,
// X86_64_V3.td).
//
//===----------------------------------------------------------------------===//

def CpuHost : PBHostChip<"cpu-host", CPU, [SapphireRapids, Zen4,
                                              X86_64_V4, X86_64_V3]> {
  let Description = "the x86-64 CPU the compiler runs on: "
                    # "cpu-sapphire-rapids if it has AMX and AVX512-FP16, "
                    # "else cpu-zen4 if it has AVX512-BF16 and VNNI, "
                    # "else x86-64-v4 if it has AVX-512 F/BW/CD/DQ/VL, else "
                    # "x86-64-v3";
}
