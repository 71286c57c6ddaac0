#!/usr/bin/env python3
"""Prints what an AMD artifact (payload format amd-hsaco+plan) holds.

usage: amd_artifact.py ARTIFACT [--plan] [--isa] [--notes]
                       [--tools DIR] [--save DIR]
  --plan   the launch plan of every entry, one launch a line
  --isa    the disassembly of every module's code object
           (llvm-objdump -d --mcpu=ARCH), after a line "// module NAME"
  --notes  the code objects' AMDHSA notes (llvm-readelf --notes): the
           kernel metadata (registers, scratch, LDS, workgroup sizes)
  --tools  where llvm-objdump and llvm-readelf are (default:
           /usr/lib/llvm-22/bin, else on PATH; they need LLVM's AMDGPU target)
  --save   also write each code object to DIR/NAME.hsaco
The artifact file is the C API's (test/lib/artifact_file.py reads it).
"""
import argparse
import base64
import os
import shutil
import subprocess
import sys
import tempfile

import artifact_file  # test/lib, this script's directory


def find_tool(name, tools):
    for candidate in ([os.path.join(tools, name)] if tools else []) + [
            os.path.join("/usr/lib/llvm-22/bin", name), shutil.which(name)]:
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    sys.exit("%s not found (use --tools)" % name)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("artifact")
    parser.add_argument("--plan", action="store_true")
    parser.add_argument("--isa", action="store_true")
    parser.add_argument("--notes", action="store_true")
    parser.add_argument("--tools")
    parser.add_argument("--save")
    args = parser.parse_args()
    payload = artifact_file.read_gpu_payload(args.artifact, "amd-hsaco+plan", "AMD")
    if args.plan:
        artifact_file.print_plan(payload)
    with tempfile.TemporaryDirectory() as tmp:
        for module in payload["modules"]:
            path = os.path.join(args.save or tmp, module["name"] + ".hsaco")
            with open(path, "wb") as f:
                f.write(base64.b64decode(module["hsaco_base64"]))
            for wanted, command in (
                    (args.isa, [find_tool("llvm-objdump", args.tools), "-d",
                                "--triple=amdgcn-amd-amdhsa",
                                "--mcpu=" + payload["arch"], path]),
                    (args.notes, [find_tool("llvm-readelf", args.tools),
                                  "--notes", path])):
                if not wanted:
                    continue
                proc = subprocess.run(command, capture_output=True, text=True)
                print("// module %s" % module["name"])
                print(proc.stdout)
                if proc.returncode != 0:
                    sys.exit("%s failed on module %s: %s" % (
                        command[0], module["name"], proc.stderr))


if __name__ == "__main__":
    main()
