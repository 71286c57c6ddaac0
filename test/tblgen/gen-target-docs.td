// RUN: pb-tblgen -gen-target-docs -I %targets_td -I %S/Inputs %s | FileCheck %s
// docs/targets.md: a summary table, then every figure of every chip.
include "MinimalChip.td"
def Chip : MinimalChip<"minimal">;

// CHECK: | `minimal` | test | minimal test chip |
// CHECK: ## `minimal`
// CHECK: - Features: matrix-units, scratchpad, test-mma
// CHECK: | lane | Lane | 16 | 0 | 0 |
// CHECK: | memory level | kind | scope | capacity (bytes) | bandwidth (GB/s) | latency (cycles) | banks | bank width (bytes) | line (bytes) | ways | address space |
// CHECK: | scratch | Scratchpad | Block | 49152 | 500 | 20 | 16 | 4 | 0 | 0 | 3 |
// CHECK-NEXT: | l2 | Cache | Grid | 4194304 | 2000 | 200 | 0 | 0 | 128 | 16 | -1 |
// CHECK: | TEST_I32_4x4x4_I8 (`test.mma.4x4x4`) | 4x4x4 | i8, i8 -> i32 | SubgroupScope | RegistersRowCol | `gpu.subgroup_mma_compute` | 8 |
// CHECK: | i8 | matrix | 1000 |
// CHECK: - invented for tests
