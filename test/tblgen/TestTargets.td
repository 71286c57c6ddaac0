//===- TestTargets.td - Real chips plus test-only chips ----*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Root file for tests: every real chip plus the test-only ones. Run as
//   pb-tblgen -I targets -I test/tblgen test/tblgen/TestTargets.td
//
//===----------------------------------------------------------------------===//

include "AllTargets.td"
include "ToyChip.td"
