# PolyBlocks: `make demo` runs the main job, `make check` runs every test.
# Both install what they need first (scripts/setup, idempotent).

BUILD_DIR ?= build
LLVM_VERSION ?= 22
CMAKE_FLAGS ?=
JOBS ?= $(shell nproc)

.PHONY: all setup configure build check check-lit check-format check-python demo docs clean

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

# Refresh the generated docs/targets.md from the .td files.
docs: build
	ninja -C $(BUILD_DIR) pb-target-docs

clean:
	rm -rf $(BUILD_DIR)
