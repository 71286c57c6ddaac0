//===- Roofline.h - Work of a statement and a launch's estimated time -*- C++
//-*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A roofline model of one kernel launch, every figure from the chip's .td:
// the bytes it moves to and from main memory and its floating-point
// operations per unit (vector or matrix) and element type, against the
// memory bandwidth and the peaks; the fraction of the chip its grid can use
// (blocks against SMs and the blocks an SM holds at once: threads,
// registers and shared memory against the SM's); the launch overhead.
// It is a model, not a measurement (docs/NVIDIA.md states its limits).
//
//===----------------------------------------------------------------------===//

#ifndef PB_TRANSFORMS_ROOFLINE_H
#define PB_TRANSFORMS_ROOFLINE_H

#include "pb/Target/TargetDesc.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"
#include "llvm/Support/JSON.h"

#include <optional>
#include <string>

namespace mlir::pb {

/// The arithmetic and memory traffic of one statement (one launch).
struct Work {
  /// Floating-point operations per element type: on vector units (CUDA
  /// cores, SIMD) and on matrix units (tensor cores).
  llvm::SmallVector<std::pair<ElementType, double>, 2> vectorFlops;
  llvm::SmallVector<std::pair<ElementType, double>, 2> matrixFlops;
  /// Bytes of main memory moved: each buffer the statement reads or writes
  /// counted once (data a launch reads again is assumed cached).
  double bytes = 0;
  /// False when a trip count or a buffer size had to be guessed.
  bool exact = true;

  void addFlops(bool matrix, ElementType type, double flops);
  double totalFlops() const;
  Work &operator+=(const Work &other);

  /// The attribute S4 keeps on a launch until S5 (`pb.work`).
  DictionaryAttr toAttr(MLIRContext *ctx) const;
  static std::optional<Work> fromAttr(Attribute attr);
};

/// Counts the work of `statements` (run by one launch): floating-point
/// arithmetic (vector ops by their lanes, fma as 2) times the trip counts of
/// the loops around it (constants, or the constant distance of bounds such
/// as `%i` to `%i + 64`; otherwise 1 and `exact` is false), and the buffers
/// they access that are defined outside them in the default memory space,
/// each once.
Work countWork(ArrayRef<Operation *> statements);

/// "file:line:col" of the first file location in `loc` (a kernel's or a
/// launch's op, for the artifact's estimate), or "".
std::string describeFileLocation(Location loc);

/// The shape of one launch.
struct LaunchShape {
  int64_t blocks = 1;
  int64_t threadsPerBlock = 1;
  /// Dynamic and static shared memory of one block.
  int64_t sharedBytesPerBlock = 0;
  /// From ptxas when it ran.
  std::optional<int64_t> registersPerThread;
};

/// The model's result for one launch.
struct LaunchEstimate {
  /// Blocks an SM holds at once and what limits them ("blocks", "threads",
  /// "registers", "shared memory").
  int64_t residentBlocksPerUnit = 1;
  std::string occupancyLimit;
  int64_t units = 1;
  int64_t waves = 1;
  /// The fraction of the chip's units the grid keeps busy on average.
  double chipFraction = 1;
  double memorySeconds = 0;
  double computeSeconds = 0;
  double overheadSeconds = 0;
  /// max(memory, compute) / chipFraction + overhead.
  double seconds = 0;
  bool memoryBound = true;
};

/// The seconds of `work`'s FLOPs at the chip's peaks (per element type and
/// unit; vector FLOPs of a type without a peak at the f32 vector peak) and
/// of its bytes at the main-memory bandwidth, with the figures as the .td
/// states them (the whole chip on GPUs, one core on CPUs).
struct RooflineSeconds {
  double compute = 0;
  double memory = 0;
};
FailureOr<RooflineSeconds> getRooflineParts(const ChipDesc &chip,
                                            const Work &work, std::string &why);

/// Estimates a launch of `shape` doing `work` on `chip`; fails (with a
/// reason) when the chip's .td lacks a figure the model needs.
FailureOr<LaunchEstimate> estimateLaunch(const ChipDesc &chip, const Work &work,
                                         const LaunchShape &shape,
                                         std::string &why);

/// The roofline bound of `work` on `chip`: max(bytes / bandwidth, FLOPs /
/// peak) with the whole chip, no overhead.
double getRooflineSeconds(const ChipDesc &chip, const Work &work);

/// JSON of one launch's work, shape and estimate (the artifact's metadata).
llvm::json::Object toJSON(const Work &work, const LaunchShape &shape,
                          const LaunchEstimate &estimate);

} // namespace mlir::pb

#endif // PB_TRANSFORMS_ROOFLINE_H
