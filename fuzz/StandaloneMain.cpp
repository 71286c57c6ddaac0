//===- StandaloneMain.cpp - Runs a fuzzing harness on given inputs
//---------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The main of a harness built without libFuzzer: runs
// LLVMFuzzerTestOneInput once on each file named on the command line, and on
// each file of each directory named (in name order); arguments that start
// with '-' (libFuzzer's options, e.g. -runs=0) are ignored, so that one
// command line runs a corpus under either main. A harness signals a
// failure by crashing or aborting, as under libFuzzer; this main then prints
// nothing more. It prints the number of inputs run when all passed.
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv) {
  std::vector<std::filesystem::path> inputs;
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] == '-')
      continue;
    std::filesystem::path path(argv[i]);
    if (std::filesystem::is_directory(path)) {
      std::vector<std::filesystem::path> files;
      for (const auto &entry : std::filesystem::directory_iterator(path))
        if (entry.is_regular_file())
          files.push_back(entry.path());
      std::sort(files.begin(), files.end());
      inputs.insert(inputs.end(), files.begin(), files.end());
    } else {
      inputs.push_back(path);
    }
  }
  for (const std::filesystem::path &path : inputs) {
    std::ifstream file(path, std::ios::binary);
    if (!file) {
      std::fprintf(stderr, "%s: cannot read '%s'\n", argv[0], path.c_str());
      return 1;
    }
    std::string bytes((std::istreambuf_iterator<char>(file)),
                      std::istreambuf_iterator<char>());
    // A copy of exactly `size` bytes, so that a read past the input is a
    // read past an allocation (visible to AddressSanitizer).
    std::vector<uint8_t> data(bytes.begin(), bytes.end());
    LLVMFuzzerTestOneInput(data.empty() ? nullptr : data.data(), data.size());
  }
  std::printf("%s: ran %zu inputs\n", argv[0], inputs.size());
  return 0;
}
