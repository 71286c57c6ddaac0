#!/usr/bin/env python3
"""Prints what an NVIDIA artifact (payload format nvidia-ptx+plan) holds.

usage: nvidia_artifact.py ARTIFACT [--plan] [--ptx] [--emulation-ir]
                          [--ptxas ARCH]
  --plan        the launch plan of every entry, one launch a line
  --ptx         the PTX of every kernel module
  --emulation-ir  the MLIR every kernel module keeps for the emulator
                ("emulation_mlir"), after a line "// emulation module NAME",
                or "// module NAME has no emulation IR"
  --ptxas ARCH  assemble every module's PTX with `ptxas -arch=ARCH -v` and
                print ptxas's report ($POLYBLOCKS_PTXAS, else ptxas on PATH,
                else /usr/local/cuda/bin/ptxas)
The artifact file is the C API's (test/lib/artifact_file.py reads it).
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

import artifact_file  # test/lib, this script's directory


def find_ptxas():
    return (os.environ.get("POLYBLOCKS_PTXAS") or shutil.which("ptxas")
            or "/usr/local/cuda/bin/ptxas")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("artifact")
    parser.add_argument("--plan", action="store_true")
    parser.add_argument("--ptx", action="store_true")
    parser.add_argument("--emulation-ir", action="store_true")
    parser.add_argument("--ptxas")
    args = parser.parse_args()
    payload = artifact_file.read_gpu_payload(args.artifact, "nvidia-ptx+plan", "NVIDIA")
    if args.plan:
        artifact_file.print_plan(payload)
    for module in payload["modules"]:
        if args.ptx:
            print("// module %s" % module["name"])
            print(module["ptx"])
        if args.emulation_ir:
            if "emulation_mlir" in module:
                print("// emulation module %s" % module["name"])
                print(module["emulation_mlir"])
            else:
                print("// module %s has no emulation IR" % module["name"])
        if args.ptxas:
            with tempfile.TemporaryDirectory() as tmp:
                ptx = os.path.join(tmp, module["name"] + ".ptx")
                with open(ptx, "w") as f:
                    f.write(module["ptx"])
                proc = subprocess.run(
                    [find_ptxas(), "-arch=" + args.ptxas, "-v", ptx, "-o",
                     os.path.join(tmp, "out.cubin")],
                    capture_output=True, text=True)
                print("// module %s" % module["name"])
                print(proc.stdout + proc.stderr)
                if proc.returncode != 0:
                    sys.exit("ptxas failed on module %s" % module["name"])


if __name__ == "__main__":
    main()
