//===- Npy.h - Tensors for pb-run, read from and written to .npy -*- C++
//-*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef PB_TOOLS_PBRUN_NPY_H
#define PB_TOOLS_PBRUN_NPY_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace pbrun {

/// A dense row-major tensor of one of the artifact dtypes (f16, bf16, f32,
/// f64, i1, i8, i16, i32, i64).
struct Tensor {
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;

  int64_t getNumElements() const;
  /// Element `i` as a double.
  double get(int64_t i) const;
  /// Sets element `i` from a double (rounded to the dtype).
  void set(int64_t i, double value);
};

/// Bytes per element of `dtype`, or 0 when unknown.
size_t getElementBytes(llvm::StringRef dtype);

/// A zero tensor of this dtype and shape.
Tensor makeTensor(llvm::StringRef dtype, std::vector<int64_t> shape);

/// Reads a .npy file. bf16 tensors are read from float32 files.
llvm::Expected<Tensor> readNpy(llvm::StringRef path, llvm::StringRef dtype);
/// The same from a .npy file's bytes (`name` names it in messages). Any
/// input is an error or a tensor whose size matches its bytes, never a read
/// past `data` or an allocation larger than `data` needs.
llvm::Expected<Tensor> parseNpy(llvm::StringRef data, llvm::StringRef name,
                                llvm::StringRef dtype);
/// Writes a .npy file. bf16 tensors are written as float32.
llvm::Error writeNpy(llvm::StringRef path, const Tensor &tensor);

} // namespace pbrun

#endif // PB_TOOLS_PBRUN_NPY_H
