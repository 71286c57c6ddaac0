# -*- Python -*-
# Lit configuration of the PolyBlocks suites (test/core, test/tblgen,
# test/nvidia, test/amd, test/cpu).

import os
import shutil

import lit.formats
from lit.llvm import llvm_config

config.name = "PolyBlocks"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".td", ".test"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py",
                   "Inputs", "ToyChip.td", "TestTargets.td", "python"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.pb_obj_root, "test")

config.substitutions.append(("%pb_src_root", config.pb_src_root))
config.substitutions.append(("%pb_obj_root", config.pb_obj_root))
config.substitutions.append(
    ("%targets_td", os.path.join(config.pb_src_root, "targets")))
# Python helpers of the tests (test/lib).
config.substitutions.append(
    ("%pb_test_lib", os.path.join(config.pb_src_root, "test", "lib")))

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

# One feature per vendor whose S4/S5 code is built; suites of vendors not
# built report UNSUPPORTED (see each suite's lit.local.cfg).
for vendor in config.pb_targets_to_build:
    config.available_features.add("pb-vendor-" + vendor)

# Execution tests on x86 AMX tile units and AVX512-BF16 dot products run
# where the CPU reports them.
try:
    with open("/proc/cpuinfo") as cpuinfo:
        cpu_flags = set(
            next((line for line in cpuinfo if line.startswith("flags")), "")
            .split())
except OSError:
    cpu_flags = set()
if {"amx_tile", "amx_bf16"} <= cpu_flags:
    config.available_features.add("host-amx-bf16")
if {"amx_tile", "amx_int8"} <= cpu_flags:
    config.available_features.add("host-amx-int8")
if "avx512_bf16" in cpu_flags:
    config.available_features.add("host-avx512-bf16")
if "avx512_vnni" in cpu_flags:
    config.available_features.add("host-avx512-vnni")

if shutil.which("ptxas") or os.path.exists("/usr/local/cuda/bin/ptxas"):
    config.available_features.add("ptxas")

# NVIDIA's Tile IR assembler and SASS tools from their pip packages (pinned
# in python/requirements.txt): %tileiras, %cuobjdump, feature "tileiras".
# tileiras loads libnvvm from $CUDA_HOME: the packages' own directory.
def find_tileir_toolchain():
    # The project's Python (scripts/setup installs the packages there), not
    # necessarily the one running lit.
    import subprocess
    python = os.environ.get("PYTHON") or shutil.which("python3")
    if not python:
        return None
    proc = subprocess.run(
        [python, "-c",
         "import nvidia, os\n"
         "for base in getattr(nvidia, '__path__', []):\n"
         "    root = os.path.join(base, 'cu13')\n"
         "    if os.path.exists(os.path.join(root, 'bin', 'tileiras')):\n"
         "        print(root); break\n"],
        capture_output=True, text=True)
    root = proc.stdout.strip()
    return root if proc.returncode == 0 and root else None


tileir_root = find_tileir_toolchain()
if tileir_root:
    config.available_features.add("tileiras")
    config.environment["CUDA_HOME"] = tileir_root
    config.environment["POLYBLOCKS_TILEIRAS"] = os.path.join(
        tileir_root, "bin", "tileiras")
    for tool in ("tileiras", "cuobjdump", "tileirdisasm"):
        config.substitutions.append(
            ("%" + tool, os.path.join(tileir_root, "bin", tool)))

tool_dirs = [config.pb_tools_dir, config.llvm_tools_dir]
tools = ["pb-opt", "pb-opt-test-targets", "pb-tblgen", "pb-compile", "pb-run",
         "pb-translate",
         "pb-fuzz-artifact", "pb-fuzz-npy", "pb-fuzz-compile",
         "FileCheck", "not",
         "split-file", "count"]
llvm_config.add_tool_substitutions(tools, tool_dirs)
