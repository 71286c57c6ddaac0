# PolyBlocks: `make demo` runs the main job, `make check` runs every test.
# Both install what they need first (scripts/setup, idempotent).

BUILD_DIR ?= build
LLVM_VERSION ?= 22
CMAKE_FLAGS ?=
JOBS ?= $(shell nproc)

.PHONY: all setup configure build check check-lit check-format check-python demo docs clean \
	sanitize-build check-sanitize fuzz fuzz-smoke

all: build

setup:
	@scripts/setup

$(BUILD_DIR)/build.ninja:
	cmake -G Ninja -S . -B $(BUILD_DIR) \
	  -DCMAKE_BUILD_TYPE=Release \
	  -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
	  -DPB_LLVM_VERSION=$(LLVM_VERSION) \
	  -DPB_WARNINGS_AS_ERRORS=ON \
	  -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-$(LLVM_VERSION)/bin/lit \
	  $(CMAKE_FLAGS)

configure: setup $(BUILD_DIR)/build.ninja

build: configure
	ninja -C $(BUILD_DIR) -j $(JOBS)

check-lit: build
	ninja -C $(BUILD_DIR) check-pb

check-format: setup
	scripts/check-format

check-python: build
	@if [ -d test/python ]; then python3 -m pytest -q test/python; fi

check: check-format check-lit check-python

demo: build
	scripts/demo

# The project built with clang, AddressSanitizer, UndefinedBehaviorSanitizer
# (every finding fatal), assertions and libFuzzer's coverage instrumentation,
# in its own build directory; its tools run the lit suites and its library
# the C API tests (docs/RELIABILITY.md). Not part of `make check`: it takes
# a second full build.
SANITIZE_DIR ?= build-sanitize
UBSAN_FLAGS = -fsanitize=undefined -fno-sanitize=vptr,function -fno-sanitize-recover=all

$(SANITIZE_DIR)/build.ninja:
	cmake -G Ninja -S . -B $(SANITIZE_DIR) \
	  -DCMAKE_BUILD_TYPE=Release \
	  -DCMAKE_C_COMPILER=clang-$(LLVM_VERSION) \
	  -DCMAKE_CXX_COMPILER=clang++-$(LLVM_VERSION) \
	  -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
	  -DPB_LLVM_VERSION=$(LLVM_VERSION) \
	  -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-$(LLVM_VERSION)/bin/lit \
	  "-DLLVM_USE_SANITIZER=Address;Undefined" \
	  "-DLLVM_UBSAN_FLAGS=$(UBSAN_FLAGS)" \
	  -DLLVM_USE_SANITIZE_COVERAGE=ON \
	  -DPB_BUILD_FUZZERS=ON

sanitize-build: setup $(SANITIZE_DIR)/build.ninja
	ninja -C $(SANITIZE_DIR) -j $(JOBS)

check-sanitize: sanitize-build
	scripts/check-sanitize $(SANITIZE_DIR)

# Each fuzzer for FUZZ_SECONDS (default 30 minutes each, one after the
# other; FUZZ_JOBS fuzzers at a time); findings land in fuzz/findings/.
FUZZ_SECONDS ?= 1800
FUZZ_JOBS ?= 1
fuzz: sanitize-build
	scripts/fuzz $(SANITIZE_DIR) $(FUZZ_SECONDS) $(FUZZ_JOBS)

# Ten seconds of fuzzing each: the harnesses build, load their corpora and run.
fuzz-smoke: sanitize-build
	scripts/fuzz $(SANITIZE_DIR) 10 1

# Refresh the generated docs/targets.md from the .td files.
docs: build
	ninja -C $(BUILD_DIR) pb-target-docs

clean:
	rm -rf $(BUILD_DIR)
