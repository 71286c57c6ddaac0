//===- Npy.cpp - Tensors for pb-run, read from and written to .npy --------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Npy.h"

#include "pb/Support/OutputFile.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

using namespace pbrun;

size_t pbrun::getElementBytes(llvm::StringRef dtype) {
  return llvm::StringSwitch<size_t>(dtype)
      .Cases({"f16", "bf16", "i16"}, 2)
      .Cases({"f32", "i32"}, 4)
      .Cases({"f64", "i64"}, 8)
      .Cases({"i1", "i8"}, 1)
      .Default(0);
}

int64_t Tensor::getNumElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

template <typename T> static T load(const uint8_t *p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

template <typename T> static void store(uint8_t *p, T value) {
  std::memcpy(p, &value, sizeof(T));
}

static double halfToDouble(uint16_t bits, const llvm::fltSemantics &sem) {
  llvm::APFloat value(sem, llvm::APInt(16, bits));
  bool lost;
  value.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
                &lost);
  return value.convertToDouble();
}

static uint16_t doubleToHalf(double d, const llvm::fltSemantics &sem) {
  llvm::APFloat value(d);
  bool lost;
  value.convert(sem, llvm::APFloat::rmNearestTiesToEven, &lost);
  return value.bitcastToAPInt().getZExtValue();
}

double Tensor::get(int64_t i) const {
  const uint8_t *p = bytes.data() + i * getElementBytes(dtype);
  if (dtype == "f32")
    return load<float>(p);
  if (dtype == "f64")
    return load<double>(p);
  if (dtype == "f16")
    return halfToDouble(load<uint16_t>(p), llvm::APFloat::IEEEhalf());
  if (dtype == "bf16")
    return halfToDouble(load<uint16_t>(p), llvm::APFloat::BFloat());
  if (dtype == "i1")
    return load<uint8_t>(p) & 1;
  if (dtype == "i8")
    return load<int8_t>(p);
  if (dtype == "i16")
    return load<int16_t>(p);
  if (dtype == "i32")
    return load<int32_t>(p);
  return static_cast<double>(load<int64_t>(p));
}

void Tensor::set(int64_t i, double value) {
  uint8_t *p = bytes.data() + i * getElementBytes(dtype);
  if (dtype == "f32")
    store<float>(p, value);
  else if (dtype == "f64")
    store<double>(p, value);
  else if (dtype == "f16")
    store<uint16_t>(p, doubleToHalf(value, llvm::APFloat::IEEEhalf()));
  else if (dtype == "bf16")
    store<uint16_t>(p, doubleToHalf(value, llvm::APFloat::BFloat()));
  else if (dtype == "i1")
    store<uint8_t>(p, value != 0);
  else if (dtype == "i8")
    store<int8_t>(p, value);
  else if (dtype == "i16")
    store<int16_t>(p, value);
  else if (dtype == "i32")
    store<int32_t>(p, value);
  else
    store<int64_t>(p, value);
}

Tensor pbrun::makeTensor(llvm::StringRef dtype, std::vector<int64_t> shape) {
  Tensor t{dtype.str(), std::move(shape), {}};
  t.bytes.assign(t.getNumElements() * getElementBytes(dtype), 0);
  return t;
}

/// The .npy descr of a dtype as stored (bf16 is stored as float32).
static llvm::StringRef getDescr(llvm::StringRef dtype) {
  return llvm::StringSwitch<llvm::StringRef>(dtype)
      .Case("f16", "<f2")
      .Cases({"f32", "bf16"}, "<f4")
      .Case("f64", "<f8")
      .Case("i1", "|b1")
      .Case("i8", "|i1")
      .Case("i16", "<i2")
      .Case("i32", "<i4")
      .Case("i64", "<i8")
      .Default("");
}

llvm::Expected<Tensor> pbrun::readNpy(llvm::StringRef path,
                                      llvm::StringRef dtype) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false);
  if (!buffer)
    return llvm::createStringError("'" + path +
                                   "': " + buffer.getError().message());
  return parseNpy((*buffer)->getBuffer(), path, dtype);
}

llvm::Expected<Tensor> pbrun::parseNpy(llvm::StringRef data,
                                       llvm::StringRef name,
                                       llvm::StringRef dtype) {
  auto fail = [&](const llvm::Twine &why) {
    return llvm::createStringError("'" + name + "': " + why);
  };
  size_t elementBytes = getElementBytes(dtype);
  if (!elementBytes)
    return fail("element type '" + dtype + "' has no .npy form");
  if (!data.consume_front("\x93NUMPY") || data.size() < 2)
    return fail("not a .npy file");
  uint8_t major = data[0];
  data = data.drop_front(2);
  // Version 1 stores the header length in 2 bytes, versions 2 and 3 in 4.
  size_t lengthBytes = major == 1 ? 2 : 4;
  if (major < 1 || major > 3)
    return fail("unsupported .npy format version " +
                llvm::Twine(unsigned(major)));
  if (data.size() < lengthBytes)
    return fail("truncated header");
  size_t headerLen = 0;
  for (size_t i = 0; i < lengthBytes; ++i)
    headerLen |= size_t(uint8_t(data[i])) << (8 * i);
  data = data.drop_front(lengthBytes);
  if (data.size() < headerLen)
    return fail("truncated header");
  llvm::StringRef header = data.take_front(headerLen);
  data = data.drop_front(headerLen);
  auto field = [&](llvm::StringRef key) {
    size_t at = header.find(("'" + key + "':").str());
    if (at == llvm::StringRef::npos)
      return llvm::StringRef();
    return header.drop_front(at + key.size() + 3).ltrim();
  };
  llvm::StringRef descr = field("descr");
  if (!descr.consume_front("'"))
    return fail("no descr in header");
  descr = descr.take_until([](char c) { return c == '\''; });
  if (descr != getDescr(dtype))
    return fail("has dtype " + descr + ", expected " + getDescr(dtype) +
                " for " + dtype);
  if (field("fortran_order").starts_with("True"))
    return fail("Fortran order is not supported; save a C-ordered array");
  llvm::StringRef shapeText = field("shape");
  if (!shapeText.consume_front("("))
    return fail("no shape in header");
  shapeText = shapeText.take_until([](char c) { return c == ')'; });
  std::vector<int64_t> shape;
  llvm::SmallVector<llvm::StringRef> dims;
  shapeText.split(dims, ',', -1, /*KeepEmpty=*/false);
  // The data's size is checked against the shape before anything is
  // allocated: extents are non-negative and their product does not overflow.
  size_t storedBytes = dtype == "bf16" ? 4 : elementBytes;
  uint64_t expectedBytes = storedBytes;
  bool overflow = false;
  for (llvm::StringRef dim : dims) {
    int64_t value;
    if (dim.trim().getAsInteger(10, value) || value < 0)
      return fail("bad shape in header");
    shape.push_back(value);
    bool stepOverflow = false;
    expectedBytes =
        llvm::SaturatingMultiply(expectedBytes, uint64_t(value), &stepOverflow);
    overflow |= stepOverflow;
  }
  if (overflow || data.size() != expectedBytes)
    return fail("data size (" + llvm::Twine(data.size()) +
                " bytes) does not match its shape and dtype");
  Tensor t = makeTensor(dtype, shape);
  if (dtype == "bf16") {
    for (int64_t i = 0, e = t.getNumElements(); i < e; ++i)
      t.set(i, load<float>(reinterpret_cast<const uint8_t *>(data.data()) +
                           4 * i));
  } else if (!data.empty()) {
    // (An empty tensor's vector has no storage: memcpy takes no null.)
    std::memcpy(t.bytes.data(), data.data(), data.size());
  }
  return t;
}

llvm::Error pbrun::writeNpy(llvm::StringRef path, const Tensor &tensor) {
  std::string header = "{'descr': '" + getDescr(tensor.dtype).str() +
                       "', 'fortran_order': False, 'shape': (";
  for (int64_t d : tensor.shape)
    header += std::to_string(d) + ", ";
  header += "), }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  return mlir::pb::writeOutputFile(path, [&](llvm::raw_ostream &os) {
    os << "\x93NUMPY" << char(1) << char(0) << char(header.size() & 0xff)
       << char(header.size() >> 8) << header;
    if (tensor.dtype == "bf16") {
      for (int64_t i = 0, e = tensor.getNumElements(); i < e; ++i) {
        float value = tensor.get(i);
        os.write(reinterpret_cast<const char *>(&value), 4);
      }
    } else {
      os.write(reinterpret_cast<const char *>(tensor.bytes.data()),
               tensor.bytes.size());
    }
  });
}
