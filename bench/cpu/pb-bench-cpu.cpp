//===- pb-bench-cpu.cpp - CPU benchmark of PolyBlocks against baselines ---===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
//   pb-bench-cpu [--target=cpu-host] [--runs=10] [--warmup=2]
//                [--only=SUBSTR[,SUBSTR...]] [--csv=FILE] [--options=k=v,...]
//
// Generates an input-contract MLIR module for each case, compiles it with
// pbCompile, runs it on seeded random inputs (--warmup untimed runs, then
// --runs timed runs) and reports the median time:
//
//   - f32 matmul 512^3, 1024^3, 2048^3 and transformer-sized x @ W^T
//     ("linear") against OpenBLAS's cblas_sgemm on the same inputs (GFLOP/s,
//     ratio ours/OpenBLAS, max error vs OpenBLAS);
//   - ResNet-50 conv2d layers, batch 1, NHWC (GFLOP/s, checked against a
//     naive C++ reference);
//   - the vector units' peaks: f32 FMA, VDPBF16PS and VPDPBUSD issued as
//     fast as the cores go (UnitPeaks.h), against the peaks that
//     `pb-opt --print-target` states for the target (GFLOP/s, ratio
//     measured/stated);
//   - softmax, layernorm, RMSNorm and a 6-op elementwise chain: effective
//     bandwidth
//     (bytes the program must read and write / time) as a fraction of a
//     STREAM-like copy bandwidth measured in the same run.
//
// The Markdown table goes to stdout at the end (with a header: date, CPU,
// threads, pbVersion, OpenBLAS build); progress and errors go to stderr.
// Errors are max|ours - ref| / max|ref| over the whole output; a case whose
// error exceeds 1e-4, or that fails to compile or run, makes the exit status
// 1. Not run by any test: see bench/README.md.
//
//===----------------------------------------------------------------------===//

#include "UnitPeaks.h"

#include "pb/Support/OutputFile.h"
#include "polyblocks-c/PolyBlocks.h"

#include "llvm/Support/JSON.h"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <memory>
#include <sched.h>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

//===----------------------------------------------------------------------===//
// Options
//===----------------------------------------------------------------------===//

struct Options {
  std::string target = "cpu-host";
  std::string compileOptions;
  unsigned runs = 10;
  unsigned warmup = 2;
  std::vector<std::string> only;
  std::string csv;
  /// OpenBLAS's kernel set (OPENBLAS_CORETYPE) to run the baseline with;
  /// empty: OpenBLAS's own choice unless that is a generic fallback.
  std::string openblasCore;
};

const char *const usage =
    "usage: pb-bench-cpu [--target=NAME] [--runs=N] [--warmup=N]\n"
    "                    [--only=SUBSTR[,SUBSTR...]] [--csv=FILE]\n"
    "                    [--options=k=v,...]\n"
    "  --target   PolyBlocks target (default cpu-host)\n"
    "  --runs     timed runs per measurement; the median is reported "
    "(default 10)\n"
    "  --warmup   untimed runs before them (default 2)\n"
    "  --only     run only the cases whose name contains one of the "
    "substrings\n"
    "  --csv      also write the results as CSV to FILE\n"
    "  --options  pbCompile options (e.g. fusion=0)\n"
    "  --openblas-core  OpenBLAS kernel set for the baseline (e.g. Haswell);\n"
    "             default: OpenBLAS's choice, or the best set this CPU runs\n"
    "             when OpenBLAS falls back to a generic one (Prescott)\n"
    "Run it as `env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE pb-bench-cpu` "
    "(bench/run-cpu.sh)\nso that OpenBLAS picks its kernels for this CPU.\n";

bool parseUnsigned(const std::string &text, unsigned &out) {
  if (text.empty())
    return false;
  char *end = nullptr;
  unsigned long value = std::strtoul(text.c_str(), &end, 10);
  if (*end != '\0' || value > 1000000)
    return false;
  out = static_cast<unsigned>(value);
  return true;
}

std::vector<std::string> splitComma(const std::string &text) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos)
      comma = text.size();
    if (comma > start)
      parts.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return parts;
}

/// Parses `--key=value` and `--key value`; returns false (after printing why)
/// on a bad command line.
bool parseOptions(int argc, char **argv, Options &options, bool &help) {
  help = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      help = true;
      return true;
    }
    std::string key = arg, value;
    bool hasValue = false;
    size_t eq = arg.find('=');
    if (eq != std::string::npos) {
      key = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      hasValue = true;
    }
    bool known = key == "--target" || key == "--runs" || key == "--warmup" ||
                 key == "--only" || key == "--csv" || key == "--options" ||
                 key == "--openblas-core";
    if (!known) {
      std::fprintf(stderr, "pb-bench-cpu: unknown argument '%s'\n%s",
                   arg.c_str(), usage);
      return false;
    }
    if (!hasValue) {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "pb-bench-cpu: %s needs a value\n", key.c_str());
        return false;
      }
      value = argv[++i];
    }
    if (key == "--target") {
      options.target = value;
    } else if (key == "--options") {
      options.compileOptions = value;
    } else if (key == "--openblas-core") {
      options.openblasCore = value;
    } else if (key == "--csv") {
      options.csv = value;
    } else if (key == "--only") {
      options.only = splitComma(value);
    } else {
      unsigned &out = key == "--runs" ? options.runs : options.warmup;
      if (!parseUnsigned(value, out) || (key == "--runs" && out == 0)) {
        std::fprintf(stderr, "pb-bench-cpu: bad value '%s' for %s\n",
                     value.c_str(), key.c_str());
        return false;
      }
    }
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Buffers, random data, timing
//===----------------------------------------------------------------------===//

/// A 64-byte aligned, zero-filled (hence already faulted in) f32 buffer.
class Buffer {
public:
  explicit Buffer(size_t count) : count(count) {
    size_t bytes = (count * sizeof(float) + 63) / 64 * 64;
    data.reset(static_cast<float *>(std::aligned_alloc(64, bytes)));
    if (!data) {
      std::fprintf(stderr, "pb-bench-cpu: out of memory (%zu bytes)\n", bytes);
      std::exit(2);
    }
    std::memset(data.get(), 0, bytes);
  }
  float *get() const { return data.get(); }
  size_t size() const { return count; }
  float &operator[](size_t i) const { return data.get()[i]; }

private:
  struct Free {
    void operator()(float *p) const { std::free(p); }
  };
  std::unique_ptr<float, Free> data;
  size_t count;
};

/// Fills `buffer` with uniform values in [lo, hi) (xorshift64*, seeded).
void fillRandom(Buffer &buffer, uint64_t seed, float lo = -1.0f,
                float hi = 1.0f) {
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
  for (size_t i = 0, e = buffer.size(); i < e; ++i) {
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    uint64_t bits = state * 0x2545F4914F6CDD1Dull;
    float unit = static_cast<float>(bits >> 40) * (1.0f / 16777216.0f);
    buffer[i] = lo + (hi - lo) * unit;
  }
}

using Clock = std::chrono::steady_clock;

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  if (n == 0)
    return NAN;
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

/// Median seconds of `fn` over `runs` calls after `warmup` calls; false if a
/// call fails.
bool timeMedian(unsigned warmup, unsigned runs, const std::function<bool()> &fn,
                double &seconds) {
  std::vector<double> times;
  for (unsigned i = 0; i < warmup + runs; ++i) {
    auto start = Clock::now();
    if (!fn())
      return false;
    auto stop = Clock::now();
    if (i >= warmup)
      times.push_back(std::chrono::duration<double>(stop - start).count());
  }
  seconds = median(times);
  return true;
}

/// Lets the worker threads of the previous measurement (libomp's and
/// OpenBLAS's spin-wait after a parallel region, ~200 ms by default) go to
/// sleep before the next measurement starts, so that they do not steal cores
/// from it.
void quiesce() { std::this_thread::sleep_for(std::chrono::milliseconds(300)); }

/// max|got - want| / max|want|; +inf if `got` holds a NaN or an infinity.
double maxRelError(const float *got, const double *want, size_t n) {
  double maxDiff = 0, maxRef = 0;
  for (size_t i = 0; i < n; ++i) {
    double g = got[i];
    if (!std::isfinite(g))
      return INFINITY;
    maxDiff = std::max(maxDiff, std::fabs(g - want[i]));
    maxRef = std::max(maxRef, std::fabs(want[i]));
  }
  return maxRef > 0 ? maxDiff / maxRef : maxDiff;
}

double maxRelError(const float *got, const float *want, size_t n) {
  std::vector<double> wantD(want, want + n);
  return maxRelError(got, wantD.data(), n);
}

//===----------------------------------------------------------------------===//
// Machine description
//===----------------------------------------------------------------------===//

std::string cpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      size_t colon = line.find(':');
      if (colon != std::string::npos) {
        size_t start = line.find_first_not_of(" \t", colon + 1);
        return start == std::string::npos ? "" : line.substr(start);
      }
    }
  }
  return "unknown";
}

unsigned availableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    return static_cast<unsigned>(CPU_COUNT(&set));
  unsigned n = std::thread::hardware_concurrency();
  return n ? n : 1;
}

/// The thread count of the generated code (libomp): OMP_NUM_THREADS if set,
/// else the CPUs this process may run on (what `nproc` prints).
unsigned threadCount(std::string &source) {
  if (const char *env = std::getenv("OMP_NUM_THREADS")) {
    unsigned n;
    std::string first = splitComma(env).empty() ? "" : splitComma(env)[0];
    if (parseUnsigned(first, n) && n > 0) {
      source = "OMP_NUM_THREADS";
      return n;
    }
  }
  source = "nproc";
  return availableCpus();
}

/// CPU time (clock ticks) all CPUs spent busy and in total, and that this
/// process (all its threads, and its children) spent, from /proc.
struct CpuTimes {
  unsigned long long busy = 0, total = 0, self = 0;
};

CpuTimes readCpuTimes() {
  CpuTimes times;
  std::ifstream stat("/proc/stat");
  std::string cpu;
  unsigned long long v[8] = {};
  if (stat >> cpu && cpu == "cpu") {
    for (unsigned long long &value : v)
      stat >> value;
    // user nice system idle iowait irq softirq steal
    times.busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
    times.total = times.busy + v[3] + v[4];
  }
  std::ifstream self("/proc/self/stat");
  std::string line;
  std::getline(self, line);
  size_t paren = line.rfind(')');
  if (paren != std::string::npos) {
    // Fields after "(comm)": state is field 3; utime, stime are 14 and 15,
    // cutime, cstime (waited-for children: the linker) 16 and 17.
    std::vector<std::string> fields;
    size_t at = paren + 2;
    while (at < line.size()) {
      size_t space = line.find(' ', at);
      if (space == std::string::npos)
        space = line.size();
      fields.push_back(line.substr(at, space - at));
      at = space + 1;
    }
    for (size_t i = 11; i <= 14 && i < fields.size(); ++i)
      times.self += std::strtoull(fields[i].c_str(), nullptr, 10);
  }
  return times;
}

std::string nowString() {
  std::time_t now = std::time(nullptr);
  char text[64];
  std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M:%S %Z",
                std::localtime(&now));
  return text;
}

std::string format(const char *fmt, double value) {
  char text[64];
  std::snprintf(text, sizeof(text), fmt, value);
  return text;
}

//===----------------------------------------------------------------------===//
// STREAM-like copy bandwidth
//===----------------------------------------------------------------------===//

/// Median GB/s (1e9 bytes/s, counting the bytes read plus the bytes written)
/// of copying a 64 MiB buffer with `threads` threads, each memcpy-ing its own
/// contiguous slice.
double copyBandwidth(unsigned threads, unsigned warmup, unsigned runs) {
  const size_t count = (64u << 20) / sizeof(float);
  Buffer src(count), dst(count);
  fillRandom(src, 7);
  auto copy = [&]() {
    size_t chunk = (count + threads - 1) / threads;
    std::vector<std::thread> workers;
    for (unsigned t = 1; t < threads; ++t) {
      size_t begin = std::min(count, t * chunk);
      size_t end = std::min(count, begin + chunk);
      workers.emplace_back([&, begin, end]() {
        std::memcpy(dst.get() + begin, src.get() + begin,
                    (end - begin) * sizeof(float));
      });
    }
    std::memcpy(dst.get(), src.get(), std::min(count, chunk) * sizeof(float));
    for (std::thread &worker : workers)
      worker.join();
    return true;
  };
  double seconds = 0;
  timeMedian(warmup, runs, copy, seconds);
  if (std::memcmp(src.get(), dst.get(), count * sizeof(float)) != 0) {
    std::fprintf(stderr, "pb-bench-cpu: the copy benchmark copied wrongly\n");
    std::exit(2);
  }
  return 2.0 * count * sizeof(float) / seconds / 1e9;
}

//===----------------------------------------------------------------------===//
// Compiling and running through the C API
//===----------------------------------------------------------------------===//

using Shape = std::vector<int64_t>;

std::string tensorType(const Shape &shape) {
  std::string text = "tensor<";
  for (int64_t d : shape)
    text += std::to_string(d) + "x";
  return text + "f32>";
}

int64_t numElements(const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// Takes `status`; returns its message ("" for success) and releases it.
std::string takeMessage(pb_status *status) {
  if (!status)
    return "";
  std::string message = pbStatusGetMessage(status);
  if (message.empty())
    message = "error code " + std::to_string(pbStatusGetCode(status));
  pbStatusDestroy(status);
  return message;
}

/// Checks that the artifact's only entry `name` has exactly the f32 inputs
/// and outputs the benchmark will pass (so no buffer is over- or under-run).
std::string checkMetadata(const char *metadataText, const std::string &name,
                          const std::vector<Shape> &inputs,
                          const std::vector<Shape> &outputs,
                          std::string &resolvedTarget) {
  llvm::Expected<llvm::json::Value> metadata = llvm::json::parse(metadataText);
  if (!metadata) {
    llvm::consumeError(metadata.takeError());
    return "the artifact's metadata is not JSON";
  }
  const llvm::json::Object *root = metadata->getAsObject();
  if (!root)
    return "the artifact's metadata is not a JSON object";
  if (std::optional<llvm::StringRef> target = root->getString("target"))
    resolvedTarget = target->str();
  const llvm::json::Array *entries = root->getArray("entries");
  if (!entries)
    return "the artifact's metadata has no entries";
  for (const llvm::json::Value &entryValue : *entries) {
    const llvm::json::Object *entry = entryValue.getAsObject();
    if (!entry || entry->getString("name") != llvm::StringRef(name))
      continue;
    auto matches = [&](llvm::StringRef key, const std::vector<Shape> &want) {
      const llvm::json::Array *got = entry->getArray(key);
      if (!got || got->size() != want.size())
        return false;
      for (size_t i = 0; i < want.size(); ++i) {
        const llvm::json::Object *tensor = (*got)[i].getAsObject();
        if (!tensor || tensor->getString("dtype") != llvm::StringRef("f32"))
          return false;
        const llvm::json::Array *shape = tensor->getArray("shape");
        if (!shape || shape->size() != want[i].size())
          return false;
        for (size_t d = 0; d < want[i].size(); ++d)
          if ((*shape)[d].getAsInteger() != want[i][d])
            return false;
      }
      return true;
    };
    if (!matches("inputs", inputs) || !matches("outputs", outputs))
      return "entry '" + name +
             "' has other inputs or outputs than the benchmark expects";
    return "";
  }
  return "the artifact has no entry '" + name + "'";
}

/// One compiled module, loaded and ready to run.
class Kernel {
public:
  ~Kernel() {
    if (executable)
      pbExecutableDestroy(executable);
  }

  /// Compiles and loads `module`, whose entry `name` takes `inputs` and
  /// returns `outputs`; returns "" or the error.
  std::string compile(const Options &options, const std::string &module,
                      const std::string &name, const std::vector<Shape> &inputs,
                      const std::vector<Shape> &outputs,
                      std::string &resolvedTarget, double &compileSeconds) {
    entry = name;
    auto start = Clock::now();
    pb_artifact *artifact = nullptr;
    std::string error = takeMessage(pbCompile(
        module.data(), module.size(), options.target.c_str(),
        options.compileOptions.empty() ? nullptr
                                       : options.compileOptions.c_str(),
        &artifact));
    if (!error.empty())
      return "pbCompile failed: " + error;
    compileSeconds =
        std::chrono::duration<double>(Clock::now() - start).count();
    error = checkMetadata(pbArtifactGetMetadata(artifact), name, inputs,
                          outputs, resolvedTarget);
    if (error.empty())
      error = takeMessage(pbExecutableLoad(artifact, &executable));
    pbArtifactDestroy(artifact);
    return error;
  }

  /// Runs the entry on `buffers` (inputs, then outputs).
  bool run(const std::vector<float *> &buffers) {
    std::vector<void *> pointers(buffers.begin(), buffers.end());
    std::string error = takeMessage(pbExecutableRun(
        executable, entry.c_str(), pointers.data(), pointers.size(), nullptr));
    if (error.empty())
      return true;
    lastError = "pbExecutableRun failed: " + error;
    return false;
  }

  std::string lastError;

private:
  pb_executable *executable = nullptr;
  std::string entry;
};

//===----------------------------------------------------------------------===//
// Results
//===----------------------------------------------------------------------===//

constexpr double errorTolerance = 1e-4;

struct Result {
  std::string name;
  std::string unit;    // "GFLOP/s" or "GB/s"
  double ours = NAN;   // in `unit`
  double oursMs = NAN; // median time
  std::string baselineName;
  double baseline = NAN; // in `unit`; NaN when there is none
  double baselineMs = NAN;
  double ratio = NAN; // ours / baseline
  std::string checkedAgainst;
  double error = NAN;
  std::string failure; // "" when the case compiled and ran
  double compileSeconds = NAN;

  /// A row with no result to check (the units' peaks).
  bool unchecked() const { return checkedAgainst.empty(); }
  bool ok() const {
    if (unchecked())
      return failure.empty();
    return failure.empty() && !(error > errorTolerance) && !std::isnan(error);
  }
};

class Bench {
public:
  explicit Bench(const Options &options) : options(options) {}

  /// Threads of the generated code (the copy benchmark uses as many).
  unsigned threads = 1;
  /// The target `--target` resolved to, from the artifacts' metadata.
  std::string resolvedTarget;
  /// Copy bandwidth with `threads` threads and with one (NaN until measured).
  double copyBandwidthGBs = NAN;
  double copyBandwidth1GBs = NAN;

  bool selected(const std::string &name) const {
    if (options.only.empty())
      return true;
    for (const std::string &part : options.only)
      if (name.find(part) != std::string::npos)
        return true;
    return false;
  }

  void matmul(int64_t m, int64_t n, int64_t k, bool transposeB = false);
  void conv2d(int64_t h, int64_t w, int64_t c, int64_t kh, int64_t kw,
              int64_t f, int64_t stride, int64_t pad);
  void softmax(int64_t rows, int64_t cols);
  void layernorm(int64_t rows, int64_t cols);
  void rmsnorm(int64_t rows, int64_t cols);
  void elementwiseChain(int64_t rows, int64_t cols);
  void unitPeaks();

  void print(FILE *out) const;
  bool writeCsv(const std::string &path) const;
  bool empty() const { return results.empty(); }
  bool allOk() const {
    for (const Result &result : results)
      if (!result.ok())
        return false;
    return true;
  }

private:
  /// Compiles `module` and times it on `buffers`; fills `result` (failure,
  /// oursMs, compileSeconds). Returns false if it failed.
  bool runOurs(const std::string &module, const std::string &entry,
               const std::vector<Shape> &inputs,
               const std::vector<Shape> &outputs,
               const std::vector<float *> &buffers, Result &result);
  /// The copy bandwidth, measured on first use.
  double copyGBs();
  void record(Result result);

  const Options &options;
  std::vector<Result> results;
};

bool Bench::runOurs(const std::string &module, const std::string &entry,
                    const std::vector<Shape> &inputs,
                    const std::vector<Shape> &outputs,
                    const std::vector<float *> &buffers, Result &result) {
  std::fprintf(stderr, "[%s] compiling...\n", result.name.c_str());
  Kernel kernel;
  double compileSeconds = 0;
  std::string error = kernel.compile(options, module, entry, inputs, outputs,
                                     resolvedTarget, compileSeconds);
  if (!error.empty()) {
    result.failure = error;
    return false;
  }
  result.compileSeconds = compileSeconds;
  std::fprintf(stderr, "[%s] compiled in %.2f s; running %u+%u times...\n",
               result.name.c_str(), compileSeconds, options.warmup,
               options.runs);
  quiesce();
  double seconds = 0;
  if (!timeMedian(
          options.warmup, options.runs, [&]() { return kernel.run(buffers); },
          seconds)) {
    result.failure = kernel.lastError;
    return false;
  }
  result.oursMs = seconds * 1e3;
  return true;
}

double Bench::copyGBs() {
  if (std::isnan(copyBandwidthGBs)) {
    std::fprintf(stderr, "[copy] measuring 64 MiB copy bandwidth...\n");
    quiesce();
    unsigned runs = std::max(options.runs, 5u);
    copyBandwidth1GBs = copyBandwidth(1, 2, runs);
    copyBandwidthGBs = copyBandwidth(threads, 2, runs);
  }
  return copyBandwidthGBs;
}

void Bench::record(Result result) {
  if (!result.failure.empty())
    std::fprintf(stderr, "[%s] FAILED: %s\n", result.name.c_str(),
                 result.failure.c_str());
  else
    std::fprintf(stderr, "[%s] %.3f ms, %.2f %s, error %.2e\n",
                 result.name.c_str(), result.oursMs, result.ours,
                 result.unit.c_str(), result.error);
  results.push_back(std::move(result));
}

//===----------------------------------------------------------------------===//
// Cases
//===----------------------------------------------------------------------===//

/// C[m x n] = A[m x k] * B[k x n], against cblas_sgemm; with `transposeB`,
/// B is stored n x k (torch's linear: x @ W^T) and read as a linalg.generic.
void Bench::matmul(int64_t m, int64_t n, int64_t k, bool transposeB) {
  Result result;
  result.name = std::string(transposeB ? "linear " : "matmul ") +
                std::to_string(m) + "x" + std::to_string(n) + "x" +
                std::to_string(k);
  if (!selected(result.name))
    return;
  result.unit = "GFLOP/s";
  result.baselineName = "OpenBLAS sgemm";
  result.checkedAgainst = "OpenBLAS";
  Shape a{m, k}, b = transposeB ? Shape{n, k} : Shape{k, n}, c{m, n};
  std::string contraction =
      transposeB
          ? "  %r = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> "
            "(m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) "
            "-> (m, n)>], iterator_types = [\"parallel\", \"parallel\", "
            "\"reduction\"]} ins(%a, %b : " +
                tensorType(a) + ", " + tensorType(b) +
                ") outs(%f : " + tensorType(c) +
                ") {\n"
                "  ^bb0(%x: f32, %y: f32, %acc: f32):\n"
                "    %p = arith.mulf %x, %y : f32\n"
                "    %s = arith.addf %acc, %p : f32\n"
                "    linalg.yield %s : f32\n"
                "  } -> " +
                tensorType(c) + "\n"
          : "  %r = linalg.matmul ins(%a, %b : " + tensorType(a) + ", " +
                tensorType(b) + ") outs(%f : " + tensorType(c) + ") -> " +
                tensorType(c) + "\n";
  std::string module = "func.func @mm(%a: " + tensorType(a) +
                       ", %b: " + tensorType(b) + ") -> " + tensorType(c) +
                       " {\n"
                       "  %z = arith.constant 0.0 : f32\n"
                       "  %e = tensor.empty() : " +
                       tensorType(c) +
                       "\n"
                       "  %f = linalg.fill ins(%z : f32) outs(%e : " +
                       tensorType(c) + ") -> " + tensorType(c) + "\n" +
                       contraction + "  return %r : " + tensorType(c) + "\n}\n";

  Buffer bufA(numElements(a)), bufB(numElements(b)), ours(numElements(c)),
      blas(numElements(c));
  fillRandom(bufA, 1);
  fillRandom(bufB, 2);
  if (!runOurs(module, "mm", {a, b}, {c}, {bufA.get(), bufB.get(), ours.get()},
               result))
    return record(result);

  std::fprintf(stderr, "[%s] running OpenBLAS %u+%u times...\n",
               result.name.c_str(), options.warmup, options.runs);
  quiesce();
  double seconds = 0;
  timeMedian(
      options.warmup, options.runs,
      [&]() {
        cblas_sgemm(CblasRowMajor, CblasNoTrans,
                    transposeB ? CblasTrans : CblasNoTrans, m, n, k, 1.0f,
                    bufA.get(), k, bufB.get(), transposeB ? k : n, 0.0f,
                    blas.get(), n);
        return true;
      },
      seconds);
  double flop = 2.0 * m * n * k;
  result.baselineMs = seconds * 1e3;
  result.ours = flop / (result.oursMs * 1e-3) / 1e9;
  result.baseline = flop / seconds / 1e9;
  result.ratio = result.ours / result.baseline;
  result.error = maxRelError(ours.get(), blas.get(), ours.size());
  quiesce();
  record(result);
}

/// A batch-1 NHWC convolution of an h x w x c image with a kh x kw x c x f
/// filter, zero padding `pad` on each side of H and W (tensor.pad), stride
/// `stride`; checked against a naive C++ loop nest.
void Bench::conv2d(int64_t h, int64_t w, int64_t c, int64_t kh, int64_t kw,
                   int64_t f, int64_t stride, int64_t pad) {
  Result result;
  result.name = "conv2d " + std::to_string(h) + "x" + std::to_string(w) + "x" +
                std::to_string(c) + " * " + std::to_string(kh) + "x" +
                std::to_string(kw) + "x" + std::to_string(c) + "x" +
                std::to_string(f) + " s" + std::to_string(stride) + " p" +
                std::to_string(pad);
  if (!selected(result.name))
    return;
  result.unit = "GFLOP/s";
  result.checkedAgainst = "naive C++";
  int64_t ph = h + 2 * pad, pw = w + 2 * pad;
  int64_t oh = (ph - kh) / stride + 1, ow = (pw - kw) / stride + 1;
  Shape x{1, h, w, c}, padded{1, ph, pw, c}, filter{kh, kw, c, f},
      y{1, oh, ow, f};
  std::string module = "func.func @conv(%x: " + tensorType(x) +
                       ", %w: " + tensorType(filter) + ") -> " + tensorType(y) +
                       " {\n  %zero = arith.constant 0.0 : f32\n";
  std::string input = "%x";
  if (pad > 0) {
    std::string p = std::to_string(pad);
    module += "  %p = tensor.pad %x low[0, " + p + ", " + p + ", 0] high[0, " +
              p + ", " + p +
              ", 0] {\n"
              "  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):\n"
              "    tensor.yield %zero : f32\n"
              "  } : " +
              tensorType(x) + " to " + tensorType(padded) + "\n";
    input = "%p";
  }
  module += "  %e = tensor.empty() : " + tensorType(y) +
            "\n"
            "  %acc = linalg.fill ins(%zero : f32) outs(%e : " +
            tensorType(y) + ") -> " + tensorType(y) +
            "\n"
            "  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : "
            "tensor<2xi64>, strides = dense<" +
            std::to_string(stride) +
            "> : tensor<2xi64>}\n"
            "       ins(" +
            input + ", %w : " + tensorType(padded) + ", " + tensorType(filter) +
            ") outs(%acc : " + tensorType(y) + ") -> " + tensorType(y) +
            "\n"
            "  return %r : " +
            tensorType(y) + "\n}\n";

  Buffer bufX(numElements(x)), bufW(numElements(filter)), bufY(numElements(y));
  fillRandom(bufX, 3);
  fillRandom(bufW, 4);
  if (!runOurs(module, "conv", {x, filter}, {y},
               {bufX.get(), bufW.get(), bufY.get()}, result))
    return record(result);

  double flop = 2.0 * oh * ow * f * kh * kw * c;
  result.ours = flop / (result.oursMs * 1e-3) / 1e9;

  // Reference: for each output pixel, accumulate over the window into a row
  // of `f` doubles (inner loop over f is contiguous in both W and Y).
  std::vector<double> ref(numElements(y), 0.0);
  for (int64_t i = 0; i < oh; ++i)
    for (int64_t j = 0; j < ow; ++j) {
      double *out = &ref[(i * ow + j) * f];
      for (int64_t di = 0; di < kh; ++di)
        for (int64_t dj = 0; dj < kw; ++dj) {
          int64_t yi = i * stride + di - pad, xj = j * stride + dj - pad;
          if (yi < 0 || yi >= h || xj < 0 || xj >= w)
            continue;
          const float *in = &bufX[(yi * w + xj) * c];
          const float *wt = &bufW[(di * kw + dj) * c * f];
          for (int64_t ci = 0; ci < c; ++ci) {
            double v = in[ci];
            const float *row = wt + ci * f;
            for (int64_t fi = 0; fi < f; ++fi)
              out[fi] += v * row[fi];
          }
        }
    }
  result.error = maxRelError(bufY.get(), ref.data(), bufY.size());
  record(result);
}

/// linalg.softmax over the last dimension.
void Bench::softmax(int64_t rows, int64_t cols) {
  Result result;
  result.name = "softmax " + std::to_string(rows) + "x" + std::to_string(cols);
  if (!selected(result.name))
    return;
  result.unit = "GB/s";
  result.baselineName = "copy";
  result.checkedAgainst = "naive C++";
  Shape s{rows, cols};
  std::string t = tensorType(s);
  std::string module = "func.func @softmax(%x: " + t + ") -> " + t +
                       " {\n"
                       "  %e = tensor.empty() : " +
                       t +
                       "\n"
                       "  %r = linalg.softmax dimension(1) ins(%x : " +
                       t + ") outs(%e : " + t + ") -> " + t +
                       "\n"
                       "  return %r : " +
                       t + "\n}\n";
  Buffer x(numElements(s)), y(numElements(s));
  fillRandom(x, 5, -4.0f, 4.0f);
  if (!runOurs(module, "softmax", {s}, {s}, {x.get(), y.get()}, result))
    return record(result);

  double bytes = 2.0 * numElements(s) * sizeof(float);
  result.ours = bytes / (result.oursMs * 1e-3) / 1e9;
  result.baseline = copyGBs();
  result.ratio = result.ours / result.baseline;

  std::vector<double> ref(numElements(s));
  for (int64_t i = 0; i < rows; ++i) {
    const float *in = &x[i * cols];
    double *out = &ref[i * cols];
    double maxValue = -INFINITY, sum = 0;
    for (int64_t j = 0; j < cols; ++j)
      maxValue = std::max(maxValue, double(in[j]));
    for (int64_t j = 0; j < cols; ++j)
      sum += out[j] = std::exp(in[j] - maxValue);
    for (int64_t j = 0; j < cols; ++j)
      out[j] /= sum;
  }
  result.error = maxRelError(y.get(), ref.data(), y.size());
  record(result);
}

/// A linalg.generic for `out[idx] = body(ins...)` over a 1-d or 2-d
/// iteration space: `maps` are the indexing maps' results of the inputs then
/// the output, e.g. {"(i, j)", "(i)"}.
std::string generic(const std::string &result, const std::string &dims,
                    const std::vector<std::string> &maps,
                    const std::vector<std::string> &iterators,
                    const std::vector<std::string> &ins,
                    const std::vector<std::string> &inTypes,
                    const std::string &out, const std::string &outType,
                    const std::string &body) {
  std::string text = "  " + result + " = linalg.generic {indexing_maps = [";
  for (size_t i = 0; i < maps.size(); ++i)
    text += (i ? ", " : "") + std::string("affine_map<") + dims + " -> " +
            maps[i] + ">";
  text += "], iterator_types = [";
  for (size_t i = 0; i < iterators.size(); ++i)
    text += (i ? ", \"" : "\"") + iterators[i] + "\"";
  text += "]}\n      ins(";
  for (size_t i = 0; i < ins.size(); ++i)
    text += (i ? ", " : "") + ins[i];
  text += " : ";
  for (size_t i = 0; i < inTypes.size(); ++i)
    text += (i ? ", " : "") + inTypes[i];
  text += ") outs(" + out + " : " + outType + ") {\n  ^bb0(";
  for (size_t i = 0; i < ins.size(); ++i)
    text += "%a" + std::to_string(i) + ": f32, ";
  text += "%o: f32):\n" + body + "  } -> " + outType + "\n";
  return text;
}

/// Layernorm over the last dimension in linalg.generic ops: mean, variance
/// (two reductions), then (x - mean) * rsqrt(var + eps) * gamma + beta.
void Bench::layernorm(int64_t rows, int64_t cols) {
  Result result;
  result.name =
      "layernorm " + std::to_string(rows) + "x" + std::to_string(cols);
  if (!selected(result.name))
    return;
  result.unit = "GB/s";
  result.baselineName = "copy";
  result.checkedAgainst = "naive C++";
  const double eps = 1e-5;
  Shape s{rows, cols}, row{rows}, vec{cols};
  std::string t = tensorType(s), tr = tensorType(row), tv = tensorType(vec);
  std::string ij = "(i, j)", i = "(i)", j = "(j)";
  std::string par = "parallel", red = "reduction";
  char constants[256];
  std::snprintf(constants, sizeof(constants),
                "  %%zero = arith.constant 0.0 : f32\n"
                "  %%invn = arith.constant %.9e : f32\n"
                "  %%eps = arith.constant %.9e : f32\n",
                1.0 / double(cols), eps);
  std::string module =
      "func.func @layernorm(%x: " + t + ", %gamma: " + tv + ", %beta: " + tv +
      ") -> " + t + " {\n" + constants + "  %er = tensor.empty() : " + tr +
      "\n  %zr = linalg.fill ins(%zero : f32) outs(%er : " + tr + ") -> " + tr +
      "\n  %e = tensor.empty() : " + t + "\n" +
      generic("%sum", ij, {ij, i}, {par, red}, {"%x"}, {t}, "%zr", tr,
              "    %s = arith.addf %a0, %o : f32\n"
              "    linalg.yield %s : f32\n") +
      generic("%mean", i, {i, i}, {par}, {"%sum"}, {tr}, "%er", tr,
              "    %m = arith.mulf %a0, %invn : f32\n"
              "    linalg.yield %m : f32\n") +
      generic("%vsum", ij, {ij, i, i}, {par, red}, {"%x", "%mean"}, {t, tr},
              "%zr", tr,
              "    %d = arith.subf %a0, %a1 : f32\n"
              "    %sq = arith.mulf %d, %d : f32\n"
              "    %s = arith.addf %sq, %o : f32\n"
              "    linalg.yield %s : f32\n") +
      generic("%rstd", i, {i, i}, {par}, {"%vsum"}, {tr}, "%er", tr,
              "    %v = arith.mulf %a0, %invn : f32\n"
              "    %ve = arith.addf %v, %eps : f32\n"
              "    %r = math.rsqrt %ve : f32\n"
              "    linalg.yield %r : f32\n") +
      generic("%y", ij, {ij, i, i, j, j, ij}, {par, par},
              {"%x", "%mean", "%rstd", "%gamma", "%beta"}, {t, tr, tr, tv, tv},
              "%e", t,
              "    %d = arith.subf %a0, %a1 : f32\n"
              "    %n = arith.mulf %d, %a2 : f32\n"
              "    %g = arith.mulf %n, %a3 : f32\n"
              "    %b = arith.addf %g, %a4 : f32\n"
              "    linalg.yield %b : f32\n") +
      "  return %y : " + t + "\n}\n";

  Buffer x(numElements(s)), gamma(cols), beta(cols), y(numElements(s));
  fillRandom(x, 6, -2.0f, 2.0f);
  fillRandom(gamma, 7, 0.5f, 1.5f);
  fillRandom(beta, 8, -0.5f, 0.5f);
  if (!runOurs(module, "layernorm", {s, vec, vec}, {s},
               {x.get(), gamma.get(), beta.get(), y.get()}, result))
    return record(result);

  double bytes = (2.0 * numElements(s) + 2.0 * cols) * sizeof(float);
  result.ours = bytes / (result.oursMs * 1e-3) / 1e9;
  result.baseline = copyGBs();
  result.ratio = result.ours / result.baseline;

  std::vector<double> ref(numElements(s));
  for (int64_t r = 0; r < rows; ++r) {
    const float *in = &x[r * cols];
    double mean = 0, var = 0;
    for (int64_t c = 0; c < cols; ++c)
      mean += in[c];
    mean /= cols;
    for (int64_t c = 0; c < cols; ++c)
      var += (in[c] - mean) * (in[c] - mean);
    double rstd = 1.0 / std::sqrt(var / cols + eps);
    for (int64_t c = 0; c < cols; ++c)
      ref[r * cols + c] = (in[c] - mean) * rstd * gamma[c] + beta[c];
  }
  result.error = maxRelError(y.get(), ref.data(), y.size());
  record(result);
}

/// RMSNorm over the last dimension in linalg.generic ops, as LLaMA-style
/// models write it: the mean of squares (one reduction), then
/// x * rsqrt(mean + eps) * gamma.
void Bench::rmsnorm(int64_t rows, int64_t cols) {
  Result result;
  result.name = "rmsnorm " + std::to_string(rows) + "x" + std::to_string(cols);
  if (!selected(result.name))
    return;
  result.unit = "GB/s";
  result.baselineName = "copy";
  result.checkedAgainst = "naive C++";
  const double eps = 1e-6;
  Shape s{rows, cols}, row{rows}, vec{cols};
  std::string t = tensorType(s), tr = tensorType(row), tv = tensorType(vec);
  std::string ij = "(i, j)", i = "(i)", j = "(j)";
  std::string par = "parallel", red = "reduction";
  char constants[256];
  std::snprintf(constants, sizeof(constants),
                "  %%zero = arith.constant 0.0 : f32\n"
                "  %%invn = arith.constant %.9e : f32\n"
                "  %%eps = arith.constant %.9e : f32\n",
                1.0 / double(cols), eps);
  std::string module =
      "func.func @rmsnorm(%x: " + t + ", %gamma: " + tv + ") -> " + t + " {\n" +
      constants + "  %er = tensor.empty() : " + tr +
      "\n  %zr = linalg.fill ins(%zero : f32) outs(%er : " + tr + ") -> " + tr +
      "\n  %e = tensor.empty() : " + t + "\n" +
      generic("%ssq", ij, {ij, i}, {par, red}, {"%x"}, {t}, "%zr", tr,
              "    %q = arith.mulf %a0, %a0 : f32\n"
              "    %s = arith.addf %q, %o : f32\n"
              "    linalg.yield %s : f32\n") +
      generic("%y", ij, {ij, i, j, ij}, {par, par}, {"%x", "%ssq", "%gamma"},
              {t, tr, tv}, "%e", t,
              "    %m = arith.mulf %a1, %invn : f32\n"
              "    %me = arith.addf %m, %eps : f32\n"
              "    %r = math.rsqrt %me : f32\n"
              "    %n = arith.mulf %a0, %r : f32\n"
              "    %g = arith.mulf %n, %a2 : f32\n"
              "    linalg.yield %g : f32\n") +
      "  return %y : " + t + "\n}\n";

  Buffer x(numElements(s)), gamma(cols), y(numElements(s));
  fillRandom(x, 9, -2.0f, 2.0f);
  fillRandom(gamma, 10, 0.5f, 1.5f);
  if (!runOurs(module, "rmsnorm", {s, vec}, {s},
               {x.get(), gamma.get(), y.get()}, result))
    return record(result);

  double bytes = (2.0 * numElements(s) + cols) * sizeof(float);
  result.ours = bytes / (result.oursMs * 1e-3) / 1e9;
  result.baseline = copyGBs();
  result.ratio = result.ours / result.baseline;

  std::vector<double> ref(numElements(s));
  for (int64_t r = 0; r < rows; ++r) {
    const float *in = &x[r * cols];
    double ssq = 0;
    for (int64_t c = 0; c < cols; ++c)
      ssq += double(in[c]) * in[c];
    double rrms = 1.0 / std::sqrt(ssq / cols + eps);
    for (int64_t c = 0; c < cols; ++c)
      ref[r * cols + c] = in[c] * rrms * gamma[c];
  }
  result.error = maxRelError(y.get(), ref.data(), y.size());
  record(result);
}

/// Six elementwise linalg.generic ops, each its own op (so fusion matters):
/// t1 = x + y; t2 = t1 * x; t3 = t2 - y; t4 = max(t3, -0.5);
/// t5 = min(t4, 0.5); out = t5 + x. It must read x and y and write out.
void Bench::elementwiseChain(int64_t rows, int64_t cols) {
  Result result;
  int64_t count = rows * cols;
  result.name = "elementwise chain of 6 ops, " +
                std::to_string(count % (1 << 20) ? count : count >> 20) +
                (count % (1 << 20) ? "" : "M") + " elements";
  if (!selected(result.name))
    return;
  result.unit = "GB/s";
  result.baselineName = "copy";
  result.checkedAgainst = "naive C++";
  Shape s{rows, cols};
  std::string t = tensorType(s), ij = "(i, j)", par = "parallel";
  auto binary = [&](const std::string &res, const std::string &lhs,
                    const std::string &rhs, const std::string &op) {
    return generic(res, ij, {ij, ij, ij}, {par, par}, {lhs, rhs}, {t, t}, "%e",
                   t,
                   "    %r = arith." + op +
                       " %a0, %a1 : f32\n    linalg.yield %r : f32\n");
  };
  auto withConstant = [&](const std::string &res, const std::string &in,
                          const std::string &constant, const std::string &op) {
    return generic(res, ij, {ij, ij}, {par, par}, {in}, {t}, "%e", t,
                   "    %r = arith." + op + " %a0, " + constant +
                       " : f32\n    linalg.yield %r : f32\n");
  };
  std::string module =
      "func.func @chain(%x: " + t + ", %y: " + t + ") -> " + t +
      " {\n"
      "  %lo = arith.constant -5.000000e-01 : f32\n"
      "  %hi = arith.constant 5.000000e-01 : f32\n"
      "  %e = tensor.empty() : " +
      t + "\n" + binary("%t1", "%x", "%y", "addf") +
      binary("%t2", "%t1", "%x", "mulf") + binary("%t3", "%t2", "%y", "subf") +
      withConstant("%t4", "%t3", "%lo", "maximumf") +
      withConstant("%t5", "%t4", "%hi", "minimumf") +
      binary("%t6", "%t5", "%x", "addf") + "  return %t6 : " + t + "\n}\n";

  Buffer x(count), y(count), out(count);
  fillRandom(x, 9);
  fillRandom(y, 10);
  if (!runOurs(module, "chain", {s, s}, {s}, {x.get(), y.get(), out.get()},
               result))
    return record(result);

  double bytes = 3.0 * count * sizeof(float);
  result.ours = bytes / (result.oursMs * 1e-3) / 1e9;
  result.baseline = copyGBs();
  result.ratio = result.ours / result.baseline;

  std::vector<double> ref(count);
  for (int64_t k = 0; k < count; ++k) {
    double a = x[k], b = y[k];
    double v = (a + b) * a - b;
    ref[k] = std::min(std::max(v, -0.5), 0.5) + a;
  }
  result.error = maxRelError(out.get(), ref.data(), out.size());
  record(result);
}

/// The vector units' issue rates (UnitPeaks.h) against the peaks that
/// `pb-opt --print-target` states for --target, per core times the threads.
void Bench::unitPeaks() {
  if (!selected("peak"))
    return;
  std::string statedError;
  std::string exe = "/proc/self/exe";
  char path[4096];
  ssize_t size = readlink(exe.c_str(), path, sizeof(path) - 1);
  std::string dir = size > 0 ? std::string(path, size) : std::string();
  dir = dir.substr(0, dir.find_last_of('/') + 1);
  std::vector<std::pair<std::string, double>> stated =
      pb::bench::readStatedPeaks(dir + "pb-opt", options.target, statedError);
  std::fprintf(stderr, "[peak] timing the vector units on %u threads...\n",
               threads);
  quiesce();
  for (const pb::bench::UnitPeak &peak :
       pb::bench::measureUnitPeaks(threads, options.runs)) {
    Result result;
    result.name = "peak " + peak.type + " (" + peak.instruction + ")";
    result.unit = "GFLOP/s";
    result.ours = peak.gops;
    result.baselineName = "stated by " + options.target;
    for (const auto &[type, gflops] : stated)
      if (type == peak.type)
        result.baseline = gflops * threads;
    if (!std::isnan(result.baseline))
      result.ratio = result.ours / result.baseline;
    else if (!statedError.empty())
      result.baselineName += " (" + statedError + ")";
    record(result);
  }
}

//===----------------------------------------------------------------------===//
// Output
//===----------------------------------------------------------------------===//

/// `value` with one decimal, or three significant digits below 10.
std::string number(double value) {
  return format(std::fabs(value) >= 10 ? "%.1f" : "%.3g", value);
}

std::string valueText(double value, const std::string &unit) {
  if (std::isnan(value))
    return "—";
  return number(value) + " " + unit;
}

void Bench::print(FILE *out) const {
  std::fprintf(out,
               "| case | ours | baseline | ratio | ours (ms) | baseline (ms) "
               "| max rel. error |\n"
               "|---|---:|---:|---:|---:|---:|---|\n");
  for (const Result &r : results) {
    if (!r.failure.empty()) {
      // One line, no '|', at most ~160 characters; stderr has all of it.
      std::string why;
      for (char ch : r.failure)
        why += ch == '\n'  ? std::string("; ")
               : ch == '|' ? std::string("/")
                           : std::string(1, ch);
      if (why.size() > 160)
        why = why.substr(0, 157) + "...";
      std::fprintf(out, "| %s | FAILED: %s | | | | | |\n", r.name.c_str(),
                   why.c_str());
      continue;
    }
    std::string baseline =
        std::isnan(r.baseline)
            ? "—"
            : r.baselineName + " " + valueText(r.baseline, r.unit);
    std::string ratio = "—";
    if (!std::isnan(r.ratio))
      ratio = r.unit == "GB/s" ? number(r.ratio) + " of copy"
                               : number(r.ratio) + "x";
    std::string baselineMs =
        std::isnan(r.baselineMs) ? "—" : format("%.3f", r.baselineMs);
    std::string error = r.unchecked() ? std::string("—")
                                      : format("%.1e", r.error) + " vs " +
                                            r.checkedAgainst +
                                            (r.ok() ? "" : " **MISMATCH**");
    std::fprintf(out, "| %s | %s | %s | %s | %s | %s | %s |\n", r.name.c_str(),
                 valueText(r.ours, r.unit).c_str(), baseline.c_str(),
                 ratio.c_str(),
                 std::isnan(r.oursMs) ? "—" : format("%.3f", r.oursMs).c_str(),
                 baselineMs.c_str(), error.c_str());
  }
}

std::string csvField(const std::string &text) {
  if (text.find_first_of(",\"\n") == std::string::npos)
    return text;
  std::string quoted = "\"";
  for (char ch : text)
    quoted += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return quoted + "\"";
}

std::string csvNumber(double value) {
  return std::isnan(value) ? "" : format("%.6g", value);
}

bool Bench::writeCsv(const std::string &path) const {
  llvm::Error error = mlir::pb::writeOutputFile(path, [&](llvm::raw_ostream
                                                              &out) {
    out << "case,unit,ours,baseline_name,baseline,ratio,ours_ms,baseline_ms,"
           "max_rel_error,checked_against,compile_s,status\n";
    for (const Result &r : results) {
      std::string status = !r.failure.empty() ? "failed: " + r.failure
                           : r.ok()           ? "ok"
                                              : "mismatch";
      out << csvField(r.name) << ',' << r.unit << ',' << csvNumber(r.ours)
          << ',' << csvField(r.baselineName) << ',' << csvNumber(r.baseline)
          << ',' << csvNumber(r.ratio) << ',' << csvNumber(r.oursMs) << ','
          << csvNumber(r.baselineMs) << ',' << csvNumber(r.error) << ','
          << csvField(r.checkedAgainst) << ',' << csvNumber(r.compileSeconds)
          << ',' << csvField(status) << '\n';
    }
  });
  if (!error)
    return true;
  std::fprintf(stderr, "pb-bench-cpu: %s\n",
               llvm::toString(std::move(error)).c_str());
  return false;
}

//===----------------------------------------------------------------------===//
// OpenBLAS's kernel set
//===----------------------------------------------------------------------===//

/// The environment variable that tells a re-executed pb-bench-cpu why it
/// set OPENBLAS_CORETYPE.
const char *const kCoreChoiceVar = "PB_BENCH_OPENBLAS_CORE_CHOICE";

/// OpenBLAS's generic x86-64 kernel sets: what its CPU detection falls back
/// to for a processor it does not know (0.3.21 on Sapphire Rapids).
bool isGenericCore(const std::string &core) {
  for (const char *generic : {"Prescott", "Core2", "Katmai", "Coppermine",
                              "Northwood", "Banias", "Atom", "Unknown"})
    if (core == generic)
      return true;
  return false;
}

/// The best OpenBLAS kernel set this CPU can run, from its features.
std::string bestCoreForThisCpu() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
    return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return __builtin_cpu_is("amd") ? "Zen" : "Haswell";
  if (__builtin_cpu_supports("avx"))
    return "SandyBridge";
  return "";
}

/// OpenBLAS reads OPENBLAS_CORETYPE once, when it is loaded: to change its
/// kernels, pb-bench-cpu sets the variable and runs itself again. It does
/// so for --openblas-core, and when OpenBLAS chose a generic fallback on a
/// CPU that runs a better set. Returns only when no re-run is needed;
/// `why` is set in the re-run to what its header reports.
void chooseOpenBlasCore(char **argv, const Options &options, std::string &why) {
#ifdef OPENBLAS_VERSION
  if (const char *choice = std::getenv(kCoreChoiceVar)) {
    why = choice;
    return;
  }
  std::string target = options.openblasCore;
  std::string reason;
  if (!target.empty()) {
    reason = "--openblas-core";
  } else if (!std::getenv("OPENBLAS_CORETYPE")) {
    std::string detected = openblas_get_corename();
    std::string best = bestCoreForThisCpu();
    if (!isGenericCore(detected) || best.empty())
      return;
    target = best;
    reason = "OpenBLAS detected '" + detected +
             "' (its generic kernels) on a CPU that runs " + best;
  }
  if (target.empty() || target == openblas_get_corename())
    return;
  setenv("OPENBLAS_CORETYPE", target.c_str(), 1);
  setenv(kCoreChoiceVar, ("chosen by pb-bench-cpu: " + reason).c_str(), 1);
  std::fflush(nullptr);
  execv("/proc/self/exe", argv);
  std::fprintf(stderr,
               "pb-bench-cpu: cannot re-run itself with "
               "OPENBLAS_CORETYPE=%s; the baseline uses '%s'\n",
               target.c_str(), openblas_get_corename());
#else
  (void)argv;
  (void)options;
  (void)why;
#endif
}

} // namespace

int main(int argc, char **argv) {
  Options options;
  bool help = false;
  if (!parseOptions(argc, argv, options, help))
    return 2;
  if (help) {
    std::fputs(usage, stdout);
    return 0;
  }

  std::string coreChoice;
  chooseOpenBlasCore(argv, options, coreChoice);

  Bench bench(options);
  CpuTimes startTimes = readCpuTimes();
  std::string threadSource;
  bench.threads = threadCount(threadSource);

  // 0. What the vector units issue, against the target's stated peaks:
  // first, before any library's worker threads exist to spin beside them.
  bench.unitPeaks();
  // 1. Matmul against OpenBLAS.
  for (int64_t size : {512, 1024, 2048})
    bench.matmul(size, size, size);
  // Transformer GEMMs at batch 1: ViT-B/16's MLP (197 tokens) and BERT-base's
  // projections (128 tokens), with torch's weight layout (x @ W^T).
  bench.matmul(197, 3072, 768, /*transposeB=*/true);
  bench.matmul(197, 768, 3072, /*transposeB=*/true);
  bench.matmul(128, 768, 768, /*transposeB=*/true);
  // 2. ResNet-50 convolutions (batch 1, NHWC): conv2_x 3x3 and 1x1
  // expansion, conv3_1's stride-2 3x3 (torchvision v1.5), conv4_x and
  // conv5_x 3x3.
  bench.conv2d(56, 56, 64, 3, 3, 64, 1, 1);
  bench.conv2d(56, 56, 64, 1, 1, 256, 1, 0);
  bench.conv2d(56, 56, 128, 3, 3, 128, 2, 1);
  bench.conv2d(14, 14, 256, 3, 3, 256, 1, 1);
  bench.conv2d(7, 7, 512, 3, 3, 512, 1, 1);
  // 3. Memory-bound programs against copy bandwidth.
  bench.softmax(4096, 1024);
  bench.layernorm(4096, 1024);
  bench.rmsnorm(4096, 1024);
  bench.elementwiseChain(4096, 4096);

  if (bench.empty()) {
    std::fprintf(stderr, "pb-bench-cpu: no case matches --only\n");
    return 2;
  }

  // Other processes' share of the machine while the benchmark ran: the
  // numbers are only meaningful on an otherwise idle machine.
  CpuTimes endTimes = readCpuTimes();
  double otherLoad = NAN;
  if (endTimes.total > startTimes.total) {
    double otherBusy = double(endTimes.busy - startTimes.busy) -
                       double(endTimes.self - startTimes.self);
    otherLoad =
        std::max(0.0, otherBusy) / double(endTimes.total - startTimes.total);
  }

  std::printf("# PolyBlocks CPU benchmark\n\n");
  std::printf("- date: %s\n", nowString().c_str());
  std::printf("- CPU: %s (%u CPUs available)\n", cpuModel().c_str(),
              availableCpus());
  std::printf("- threads: %u (%s)\n", bench.threads, threadSource.c_str());
  std::string target = options.target;
  if (!bench.resolvedTarget.empty() && bench.resolvedTarget != target)
    target += " (" + bench.resolvedTarget + ")";
  std::printf("- PolyBlocks: %s; target %s; options \"%s\"\n", pbVersion(),
              target.c_str(), options.compileOptions.c_str());
#ifdef OPENBLAS_VERSION
  std::printf("- OpenBLAS: %s; core %s%s%s%s, %d threads\n",
              openblas_get_config(), openblas_get_corename(),
              coreChoice.empty() ? "" : " (", coreChoice.c_str(),
              coreChoice.empty() ? "" : ")", openblas_get_num_threads());
  if (coreChoice.empty() && isGenericCore(openblas_get_corename()))
    std::printf("- **warning**: OpenBLAS runs its generic '%s' kernels; the "
                "baseline is understated\n",
                openblas_get_corename());
#endif
  for (const char *var : {"OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"})
    if (const char *value = std::getenv(var);
        value &&
        !(coreChoice.size() && std::string(var) == "OPENBLAS_CORETYPE"))
      std::printf("- **warning**: %s=%s is set, which forces OpenBLAS's "
                  "kernel choice; run via bench/run-cpu.sh\n",
                  var, value);
  if (!std::isnan(bench.copyBandwidthGBs))
    std::printf("- copy bandwidth (64 MiB memcpy, bytes read + written, the "
                "baseline of GB/s cases): %.1f GB/s with %u threads, %.1f "
                "GB/s with 1\n",
                bench.copyBandwidthGBs, bench.threads, bench.copyBandwidth1GBs);
  if (!std::isnan(otherLoad))
    std::printf("- other processes' load during the run: %.0f%% of the "
                "CPUs%s\n",
                otherLoad * 100,
                otherLoad > 0.05 ? " (**warning**: the machine was not idle; "
                                   "the numbers are unreliable)"
                                 : "");
  std::printf("- median of %u runs after %u warm-up runs; GB/s = 1e9 "
              "bytes/s\n\n",
              options.runs, options.warmup);
  bench.print(stdout);
  std::fflush(stdout);

  if (!options.csv.empty() && !bench.writeCsv(options.csv))
    return 2;
  return bench.allOk() ? 0 : 1;
}
