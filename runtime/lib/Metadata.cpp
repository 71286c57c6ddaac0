//===- Metadata.cpp - The schema of an artifact's metadata
//-----------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Every consumer of an artifact (the loaders here, pb-run, the Python
// executor) reads the entries' names, shapes and element types from the
// metadata. Loading checks their schema once, so that none of them meets a
// missing field, a negative extent or a tensor whose byte size overflows.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir::pb::runtime;

/// Bytes per element of a metadata dtype ("index" as 8), 0 when unknown.
size_t mlir::pb::runtime::getDTypeBytes(llvm::StringRef dtype) {
  return llvm::StringSwitch<size_t>(dtype)
      .Cases({"i1", "i8"}, 1)
      .Cases({"f16", "bf16", "i16"}, 2)
      .Cases({"f32", "i32"}, 4)
      .Cases({"f64", "i64", "index"}, 8)
      .Default(0);
}

size_t EntryDescription::getNumBuffers() const {
  return inputs->size() + outputs->size();
}

size_t EntryDescription::getNumSizes() const {
  return sizes ? sizes->size() : 0;
}

std::optional<EntryDescription>
mlir::pb::runtime::readEntry(const llvm::json::Value &value) {
  const llvm::json::Object *entry = value.getAsObject();
  std::optional<llvm::StringRef> name =
      entry ? entry->getString("name") : std::nullopt;
  const llvm::json::Array *inputs = entry ? entry->getArray("inputs") : nullptr;
  const llvm::json::Array *outputs =
      entry ? entry->getArray("outputs") : nullptr;
  if (!name || !inputs || !outputs)
    return std::nullopt;
  const llvm::json::Array *sizes = entry->getArray("sizes");
  if (!sizes && entry->get("sizes"))
    return std::nullopt;
  return EntryDescription{*name, inputs, outputs, sizes};
}

/// Checks one {"shape": [...], "dtype": "..."} of an entry whose sizes are
/// `sizes`: an extent is a non-negative integer or the name of a size.
static bool checkTensor(const llvm::json::Value &value,
                        const llvm::StringSet<> &sizes, std::string &why) {
  const llvm::json::Object *tensor = value.getAsObject();
  if (!tensor) {
    why = "describes a tensor with something that is not an object";
    return false;
  }
  std::optional<llvm::StringRef> dtype = tensor->getString("dtype");
  const llvm::json::Array *shape = tensor->getArray("shape");
  if (!dtype || !shape) {
    why = "describes a tensor without 'dtype' or 'shape'";
    return false;
  }
  size_t elementBytes = getDTypeBytes(*dtype);
  if (!elementBytes) {
    why = ("names the unknown element type '" + *dtype + "'").str();
    return false;
  }
  // Extents are non-negative and the tensor's bytes fit in 2^62.
  uint64_t bytes = elementBytes;
  bool empty = false;
  for (const llvm::json::Value &dim : *shape) {
    if (std::optional<llvm::StringRef> size = dim.getAsString()) {
      if (!sizes.contains(*size)) {
        why = ("has a tensor extent '" + *size +
               "' that names none of the entry's sizes")
                  .str();
        return false;
      }
      continue; // its bytes are known at run time
    }
    std::optional<int64_t> extent = dim.getAsInteger();
    if (!extent || *extent < 0) {
      why = "has a tensor extent that is not a non-negative integer";
      return false;
    }
    empty |= *extent == 0;
    if (!empty) {
      bool overflow = false;
      bytes = llvm::SaturatingMultiply(bytes, uint64_t(*extent), &overflow);
      if (overflow || bytes > (uint64_t(1) << 62)) {
        why = "describes a tensor of more than 2^62 bytes";
        return false;
      }
    }
  }
  return true;
}

bool mlir::pb::runtime::checkMetadata(llvm::StringRef text, std::string &why) {
  llvm::Expected<llvm::json::Value> metadata = llvm::json::parse(text);
  if (!metadata) {
    why = "is not JSON: " + llvm::toString(metadata.takeError());
    return false;
  }
  const llvm::json::Object *root = metadata->getAsObject();
  if (!root) {
    why = "is not a JSON object";
    return false;
  }
  std::optional<llvm::StringRef> format = root->getString("format");
  const llvm::json::Array *entries = root->getArray("entries");
  if (!format || format->empty() || !entries) {
    why = "lacks 'format' or 'entries'";
    return false;
  }
  if (const llvm::json::Value *alignment = root->get("buffer_alignment")) {
    std::optional<int64_t> bytes = alignment->getAsInteger();
    if (!bytes || *bytes < 1 || *bytes > 4096 || !llvm::isPowerOf2_64(*bytes)) {
      why = "has a 'buffer_alignment' that is not a power of two up to 4096";
      return false;
    }
  }
  llvm::StringSet<> names;
  for (const llvm::json::Value &value : *entries) {
    std::optional<EntryDescription> entry = readEntry(value);
    if (!entry || entry->name.empty()) {
      why = "has an entry without 'name', 'inputs' or 'outputs'";
      return false;
    }
    llvm::StringRef name = entry->name;
    if (name.contains('\0')) {
      why = "has an entry name with a NUL character";
      return false;
    }
    if (!names.insert(name).second) {
      why = ("lists entry '" + name + "' twice").str();
      return false;
    }
    llvm::StringSet<> sizes;
    if (entry->sizes)
      for (const llvm::json::Value &size : *entry->sizes) {
        std::optional<llvm::StringRef> sizeName = size.getAsString();
        if (!sizeName || sizeName->empty() || !sizes.insert(*sizeName).second) {
          why = ("(entry '" + name + "') has sizes that are no distinct names")
                    .str();
          return false;
        }
      }
    for (const llvm::json::Array *tensors : {entry->inputs, entry->outputs})
      for (const llvm::json::Value &tensor : *tensors)
        if (!checkTensor(tensor, sizes, why)) {
          why = ("(entry '" + name + "') ").str() + why;
          return false;
        }
    // Outputs that update an input in place: distinct outputs and inputs in
    // range, each pair of one description.
    const llvm::json::Object *object = value.getAsObject();
    if (const llvm::json::Value *inPlace = object->get("in_place")) {
      const llvm::json::Array *pairs = inPlace->getAsArray();
      llvm::SmallDenseSet<int64_t> outputs, inputs;
      for (size_t i = 0, e = pairs ? pairs->size() : 0; i < e; ++i) {
        const llvm::json::Object *pair = (*pairs)[i].getAsObject();
        std::optional<int64_t> output =
            pair ? pair->getInteger("output") : std::nullopt;
        std::optional<int64_t> input =
            pair ? pair->getInteger("input") : std::nullopt;
        if (!output || !input || *output < 0 ||
            *output >= int64_t(entry->outputs->size()) || *input < 0 ||
            *input >= int64_t(entry->inputs->size()) ||
            !outputs.insert(*output).second || !inputs.insert(*input).second ||
            (*entry->inputs)[*input] != (*entry->outputs)[*output]) {
          pairs = nullptr;
          break;
        }
      }
      if (!pairs) {
        why = ("(entry '" + name +
               "') has an 'in_place' that is no list of distinct "
               "{output, input} pairs of equal tensors")
                  .str();
        return false;
      }
    }
  }
  return true;
}
