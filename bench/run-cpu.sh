#!/usr/bin/env bash
# Runs the CPU benchmark with OpenBLAS free to choose its kernels for this
# CPU: OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE, when set in the environment,
# force its Haswell (AVX2) kernels, which would understate the baseline on
# an AVX-512 machine. Arguments go to pb-bench-cpu (see bench/README.md).
#
#   bench/run-cpu.sh [--runs=N] [--warmup=N] [--only=SUBSTR] [--csv=FILE] ...
#
# BUILD_DIR selects the build directory (default: build).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$root/${BUILD_DIR:-build}/bin/pb-bench-cpu"
if [ ! -x "$bin" ]; then
  echo "run-cpu.sh: $bin not found; build it with: ninja -C ${BUILD_DIR:-build} pb-bench-cpu" >&2
  exit 2
fi
exec env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$bin" "$@"
