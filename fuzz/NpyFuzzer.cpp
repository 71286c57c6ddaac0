//===- NpyFuzzer.cpp - Fuzzes pb-run's .npy reader
//-------------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Input: one byte that selects the element type asked for, then the bytes of
// a .npy file. Invariants checked: parsing fails with a message, or gives a
// tensor whose byte size is its element count times its element size and
// whose elements can all be read.
//
//===----------------------------------------------------------------------===//

#include "Npy.h"

#include <cstdio>
#include <cstdlib>

static const char *const kDTypes[] = {"f16", "bf16", "f32", "f64", "i1",
                                      "i8",  "i16",  "i32", "i64"};

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  const char *dtype = kDTypes[data[0] % std::size(kDTypes)];
  llvm::StringRef bytes(reinterpret_cast<const char *>(data) + 1, size - 1);
  llvm::Expected<pbrun::Tensor> tensor = pbrun::parseNpy(bytes, "input", dtype);
  if (!tensor) {
    std::string message = llvm::toString(tensor.takeError());
    if (message.empty())
      std::abort();
    return 0;
  }
  int64_t n = tensor->getNumElements();
  if (n < 0 || tensor->bytes.size() !=
                   size_t(n) * pbrun::getElementBytes(tensor->dtype)) {
    std::fprintf(stderr, "a tensor's bytes do not match its shape\n");
    std::abort();
  }
  double sum = 0;
  for (int64_t i = 0; i < n; ++i)
    sum += tensor->get(i);
  (void)sum;
  return 0;
}
