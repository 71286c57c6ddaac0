//===- pb-run.cpp - Run an artifact's entries
//-------------------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
//   pb-run model.pbart [--entry=f] [--inputs=a.npy,b.npy] [--runs=N]
//          [--warmup=W] [--check-against=ref.pbart] [--save-outputs=DIR]
//          [--emulate] [--sizes=7,3]
//
// Runs each entry (or the one named) on .npy inputs or on seeded random
// inputs, prints a checksum line per output and the median time of --runs
// runs after --warmup runs. --check-against runs a second artifact (for
// example the same module compiled with pipeline=reference) on the same
// inputs and compares every output element, f16 and bf16 ones converted to
// double (|a - b| <= atol + rtol * |b|); any mismatch exits 1. --emulate
// loads the (NVIDIA) artifact with pbExecutableLoadEmulated: its kernels
// run on the CPU in the emulator, on the same host buffers as a CPU
// artifact's, and --check-against's artifact (a CPU build of the same
// module) is loaded as usual. An entry with dynamic shapes (the metadata's
// "sizes") runs at the sizes --sizes gives, in that order. An output that
// updates an input in place (the metadata's "in_place") starts each run as
// a copy of that input, whose buffer the artifact then updates.
//
//===----------------------------------------------------------------------===//

#include "Npy.h"

#include "polyblocks-c/PolyBlocks.h"

#include "ToolOptions.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

using namespace pbrun;

/// The options --help lists; LLVM's back-end flags, linked in with the
/// compiler, are listed by --help-hidden only.
static llvm::cl::OptionCategory toolCategory("pb-run options");

static llvm::cl::opt<std::string> artifactFile(llvm::cl::Positional,
                                               llvm::cl::desc("<artifact>"),
                                               llvm::cl::Required,
                                               llvm::cl::cat(toolCategory));
static llvm::cl::opt<std::string>
    entryName("entry", llvm::cl::desc("Entry to run (default: every entry)"),
              llvm::cl::cat(toolCategory));
static llvm::cl::list<std::string>
    inputFiles("inputs", llvm::cl::CommaSeparated,
               llvm::cl::desc("Input .npy files, in argument order (default: "
                              "random inputs)"),
               llvm::cl::cat(toolCategory));
static llvm::cl::opt<unsigned> seed("seed", llvm::cl::init(0),
                                    llvm::cl::desc("Seed of random inputs"),
                                    llvm::cl::cat(toolCategory));
static llvm::cl::opt<unsigned> runs("runs", llvm::cl::init(1),
                                    llvm::cl::desc("Timed runs"),
                                    llvm::cl::cat(toolCategory));
static llvm::cl::opt<unsigned> warmup("warmup", llvm::cl::init(0),
                                      llvm::cl::desc("Untimed runs first"),
                                      llvm::cl::cat(toolCategory));
static llvm::cl::opt<std::string> checkAgainst(
    "check-against",
    llvm::cl::desc("Compare every output with this artifact's outputs"),
    llvm::cl::cat(toolCategory));
static llvm::cl::opt<double> relTolerance("rtol", llvm::cl::init(1e-4),
                                          llvm::cl::desc("Relative tolerance"),
                                          llvm::cl::cat(toolCategory));
static llvm::cl::opt<double> absTolerance("atol", llvm::cl::init(1e-5),
                                          llvm::cl::desc("Absolute tolerance"),
                                          llvm::cl::cat(toolCategory));
static llvm::cl::opt<bool> emulate(
    "emulate",
    llvm::cl::desc("Run an NVIDIA artifact's kernels on the CPU in the "
                   "emulator, which checks their memory accesses, races and "
                   "barriers (slow; --check-against's artifact runs as "
                   "usual)"),
    llvm::cl::cat(toolCategory));
static llvm::cl::list<int64_t>
    sizeValues("sizes", llvm::cl::CommaSeparated,
               llvm::cl::desc("Values of the entry's sizes (dynamic shapes: "
                              "the metadata's \"sizes\"), in order"),
               llvm::cl::cat(toolCategory));
static llvm::cl::opt<std::string>
    saveOutputs("save-outputs",
                llvm::cl::desc("Write outputs to DIR/<entry>.<i>.npy"),
                llvm::cl::cat(toolCategory));

namespace {
struct Loaded {
  pb_artifact *artifact = nullptr;
  pb_executable *executable = nullptr;
  llvm::json::Value metadata = nullptr;
  ~Loaded() {
    pbExecutableDestroy(executable);
    pbArtifactDestroy(artifact);
  }
};

struct TensorSpec {
  std::string dtype;
  std::vector<int64_t> shape;
};
} // namespace

static bool report(pb_status *status) {
  if (!status)
    return true;
  llvm::errs() << "pb-run: error: " << pbStatusGetMessage(status) << "\n";
  pbStatusDestroy(status);
  return false;
}

static bool load(const std::string &path, Loaded &loaded,
                 bool emulated = false) {
  if (!report(pbArtifactLoad(path.c_str(), &loaded.artifact)) ||
      !report(emulated ? pbExecutableLoadEmulated(loaded.artifact,
                                                  &loaded.executable)
                       : pbExecutableLoad(loaded.artifact, &loaded.executable)))
    return false;
  auto metadata = llvm::json::parse(pbArtifactGetMetadata(loaded.artifact));
  if (!metadata) {
    llvm::errs() << "pb-run: error: bad metadata in '" << path << "'\n";
    llvm::consumeError(metadata.takeError());
    return false;
  }
  loaded.metadata = std::move(*metadata);
  return true;
}

/// The entry's tensors of `key`, a size's name in a shape replaced by its
/// value in `sizes` (the loader checked that every name is a size's).
static std::vector<TensorSpec> getSpecs(const llvm::json::Object &entry,
                                        llvm::StringRef key,
                                        const llvm::StringMap<int64_t> &sizes) {
  std::vector<TensorSpec> specs;
  for (const llvm::json::Value &value : *entry.getArray(key)) {
    const llvm::json::Object *tensor = value.getAsObject();
    TensorSpec spec;
    spec.dtype = tensor->getString("dtype")->str();
    for (const llvm::json::Value &dim : *tensor->getArray("shape"))
      spec.shape.push_back(dim.getAsString() ? sizes.lookup(*dim.getAsString())
                                             : *dim.getAsInteger());
    specs.push_back(std::move(spec));
  }
  return specs;
}

static Tensor makeRandom(const TensorSpec &spec, std::mt19937 &rng) {
  Tensor t = makeTensor(spec.dtype, spec.shape);
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int> small(-4, 4);
  bool isFloat = spec.dtype[0] == 'f' || spec.dtype == "bf16";
  for (int64_t i = 0, e = t.getNumElements(); i < e; ++i) {
    if (isFloat)
      t.set(i, real(rng));
    else if (spec.dtype == "i1")
      t.set(i, small(rng) > 0);
    else
      t.set(i, small(rng));
  }
  return t;
}

/// The metadata's "in_place" pairs of `entry`: (output, input).
static std::vector<std::pair<size_t, size_t>>
getInPlace(const llvm::json::Object &entry) {
  std::vector<std::pair<size_t, size_t>> pairs;
  if (const llvm::json::Array *list = entry.getArray("in_place"))
    for (const llvm::json::Value &value : *list) {
      const llvm::json::Object *pair = value.getAsObject();
      pairs.emplace_back(*pair->getInteger("output"),
                         *pair->getInteger("input"));
    }
  return pairs;
}

/// Runs `entry` `warmupRuns` + `timedRuns` times. An output that updates an
/// input in place (`inPlace`, the metadata's pairs) gets a copy of the input
/// before each run, and its buffer is passed for both: the inputs stay as
/// they are, and every run starts from them.
static bool run(Loaded &loaded, llvm::StringRef entry,
                std::vector<Tensor> &inputs, std::vector<Tensor> &outputs,
                llvm::ArrayRef<int64_t> sizes, unsigned timedRuns,
                unsigned warmupRuns, std::vector<double> *timesMs,
                llvm::ArrayRef<std::pair<size_t, size_t>> inPlace = {}) {
  std::vector<void *> buffers;
  for (Tensor &t : inputs)
    buffers.push_back(t.bytes.data());
  for (Tensor &t : outputs)
    buffers.push_back(t.bytes.data());
  for (auto [output, input] : inPlace)
    buffers[input] = outputs[output].bytes.data();
  std::string name = entry.str();
  for (unsigned i = 0; i < warmupRuns + timedRuns; ++i) {
    for (auto [output, input] : inPlace)
      std::copy(inputs[input].bytes.begin(), inputs[input].bytes.end(),
                outputs[output].bytes.begin());
    auto start = std::chrono::steady_clock::now();
    if (!report(pbExecutableRunWithSizes(loaded.executable, name.c_str(),
                                         buffers.data(), buffers.size(),
                                         sizes.data(), sizes.size(), nullptr)))
      return false;
    auto stop = std::chrono::steady_clock::now();
    if (timesMs && i >= warmupRuns)
      timesMs->push_back(
          std::chrono::duration<double, std::milli>(stop - start).count());
  }
  return true;
}

static std::string shapeString(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (auto [i, d] : llvm::enumerate(shape))
    text += (i ? "," : "") + std::to_string(d);
  return text + "]";
}

static bool runEntry(Loaded &loaded, Loaded *reference,
                     const llvm::json::Object &entry) {
  llvm::StringRef name = *entry.getString("name");
  // An entry with dynamic shapes takes its sizes from --sizes.
  llvm::StringMap<int64_t> sizeOf;
  std::vector<int64_t> sizes;
  const llvm::json::Array *sizeNames = entry.getArray("sizes");
  size_t numSizes = sizeNames ? sizeNames->size() : 0;
  if (sizeValues.size() != numSizes) {
    llvm::errs() << "pb-run: error: entry '" << name << "' takes " << numSizes
                 << " sizes (dynamic shapes); --sizes gives "
                 << sizeValues.size() << "\n";
    return false;
  }
  for (size_t i = 0; i < numSizes; ++i) {
    if (sizeValues[i] < 0) {
      llvm::errs() << "pb-run: error: --sizes: size " << i << " is negative\n";
      return false;
    }
    sizeOf[*(*sizeNames)[i].getAsString()] = sizeValues[i];
    sizes.push_back(sizeValues[i]);
  }
  std::vector<TensorSpec> inSpecs = getSpecs(entry, "inputs", sizeOf);
  std::vector<TensorSpec> outSpecs = getSpecs(entry, "outputs", sizeOf);
  for (const std::vector<TensorSpec> *specs : {&inSpecs, &outSpecs})
    for (const TensorSpec &spec : *specs)
      if (!getElementBytes(spec.dtype)) {
        llvm::errs() << "pb-run: error: entry '" << name
                     << "' has a tensor of element type '" << spec.dtype
                     << "', which pb-run cannot read or make\n";
        return false;
      }

  std::vector<Tensor> inputs;
  if (!inputFiles.empty()) {
    if (inputFiles.size() != inSpecs.size()) {
      llvm::errs() << "pb-run: error: entry '" << name << "' takes "
                   << inSpecs.size() << " inputs; --inputs names "
                   << inputFiles.size() << "\n";
      return false;
    }
    for (auto [file, spec] : llvm::zip(inputFiles, inSpecs)) {
      llvm::Expected<Tensor> t = readNpy(file, spec.dtype);
      if (!t) {
        llvm::errs() << "pb-run: error: " << llvm::toString(t.takeError())
                     << "\n";
        return false;
      }
      if (t->shape != spec.shape) {
        llvm::errs() << "pb-run: error: '" << file << "' has shape "
                     << shapeString(t->shape) << "; entry '" << name
                     << "' expects " << shapeString(spec.shape) << "\n";
        return false;
      }
      inputs.push_back(std::move(*t));
    }
  } else {
    std::mt19937 rng(seed);
    for (const TensorSpec &spec : inSpecs)
      inputs.push_back(makeRandom(spec, rng));
  }
  std::vector<Tensor> outputs;
  for (const TensorSpec &spec : outSpecs)
    outputs.push_back(makeTensor(spec.dtype, spec.shape));

  std::vector<double> times;
  std::vector<std::pair<size_t, size_t>> inPlace = getInPlace(entry);
  if (!run(loaded, name, inputs, outputs, sizes, std::max(1u, unsigned(runs)),
           warmup, &times, inPlace))
    return false;
  for (auto [index, t] : llvm::enumerate(outputs)) {
    double sum = 0, absSum = 0;
    for (int64_t i = 0, e = t.getNumElements(); i < e; ++i) {
      sum += t.get(i);
      absSum += std::fabs(t.get(i));
    }
    llvm::outs() << llvm::formatv("{0}: output {1} {2} {3}: sum={4:e6} "
                                  "abs_sum={5:e6}\n",
                                  name, index, t.dtype, shapeString(t.shape),
                                  sum, absSum);
    if (!saveOutputs.empty()) {
      llvm::SmallString<128> path(saveOutputs);
      llvm::sys::path::append(path,
                              llvm::formatv("{0}.{1}.npy", name, index).str());
      if (llvm::Error error = writeNpy(path, t)) {
        llvm::errs() << "pb-run: error: " << llvm::toString(std::move(error))
                     << "\n";
        return false;
      }
    }
  }
  std::sort(times.begin(), times.end());
  llvm::outs() << llvm::formatv("{0}: median {1:f4} ms over {2} runs\n", name,
                                times[times.size() / 2], times.size());

  if (!reference)
    return true;
  std::vector<Tensor> expected;
  for (const TensorSpec &spec : outSpecs)
    expected.push_back(makeTensor(spec.dtype, spec.shape));
  // The reference's own in-place outputs (a build without them writes its
  // outputs and must not get its inputs' buffers for them).
  std::vector<std::pair<size_t, size_t>> referenceInPlace;
  for (const llvm::json::Value &other :
       *reference->metadata.getAsObject()->getArray("entries"))
    if (other.getAsObject()->getString("name") == name)
      referenceInPlace = getInPlace(*other.getAsObject());
  if (!run(*reference, name, inputs, expected, sizes, 1, 0, nullptr,
           referenceInPlace))
    return false;
  bool ok = true;
  int64_t total = 0;
  for (auto [index, got, want] : llvm::enumerate(outputs, expected)) {
    int64_t bad = 0, firstBad = -1;
    for (int64_t i = 0, e = got.getNumElements(); i < e; ++i) {
      double a = got.get(i), b = want.get(i);
      bool same =
          (std::isnan(a) && std::isnan(b)) || a == b ||
          std::fabs(a - b) <= absTolerance + relTolerance * std::fabs(b);
      if (!same && bad++ == 0)
        firstBad = i;
    }
    total += got.getNumElements();
    if (bad) {
      ok = false;
      llvm::outs() << llvm::formatv(
          "MISMATCH {0}: output {1}: {2} of {3} values differ; first at "
          "flat index {4}: {5:e6} vs reference {6:e6}\n",
          name, index, bad, got.getNumElements(), firstBad, got.get(firstBad),
          want.get(firstBad));
    }
  }
  if (ok)
    llvm::outs() << "OK " << name << ": " << total
                 << " values match the reference\n";
  return ok;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  pbtools::showOnlyInHelp(toolCategory);
  llvm::cl::ParseCommandLineOptions(argc, argv,
                                    "PolyBlocks runner: run an artifact\n");
  Loaded loaded;
  if (!load(artifactFile, loaded, emulate))
    return 1;
  std::unique_ptr<Loaded> reference;
  if (!checkAgainst.empty()) {
    reference = std::make_unique<Loaded>();
    if (!load(checkAgainst, *reference))
      return 1;
  }
  if (!saveOutputs.empty())
    if (std::error_code ec = llvm::sys::fs::create_directories(saveOutputs)) {
      llvm::errs() << "pb-run: error: cannot create '" << saveOutputs
                   << "': " << ec.message() << "\n";
      return 1;
    }
  const llvm::json::Array *entries =
      loaded.metadata.getAsObject()->getArray("entries");
  bool found = false, ok = true;
  for (const llvm::json::Value &value : *entries) {
    const llvm::json::Object &entry = *value.getAsObject();
    if (!entryName.empty() && *entry.getString("name") != entryName)
      continue;
    found = true;
    ok &= runEntry(loaded, reference.get(), entry);
  }
  if (!found) {
    llvm::errs() << "pb-run: error: no entry named '" << entryName << "'\n";
    return 1;
  }
  return ok ? 0 : 1;
}
