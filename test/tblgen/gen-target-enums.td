// RUN: pb-tblgen -gen-target-enums -I %targets_td %targets_td/Target.td | FileCheck %s
// The schema's enumeration classes become C++ enums with string conversions.

// CHECK: enum class ElementType : uint8_t {
// CHECK:   BF16,
// CHECK: case ElementType::F8E4M3FN: return "f8E4M3FN";
// CHECK: enum class ComputeLevelKind : uint8_t {
// CHECK: enum class MemoryKind : uint8_t {
// CHECK: enum class MatrixScope : uint8_t {
// CHECK: enum class OperandLayout : uint8_t {
// CHECK: enum class MatrixLowering : uint8_t {
// CHECK:   NVGPUWarpgroupMma,
// CHECK: case MatrixLowering::NVGPUWarpgroupMma: return "NVGPUWarpgroupMma";
// CHECK: enum class Vendor : uint8_t {
// CHECK: case Vendor::NVIDIA: return "nvidia";
// CHECK: inline unsigned getElementTypeBitWidth(ElementType type) {
// CHECK:   case ElementType::BF16: return 16;
