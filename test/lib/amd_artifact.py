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
import json
import os
import shutil
import subprocess
import sys
import tempfile

import artifact_file  # test/lib, this script's directory


def read_payload(path):
    try:
        meta, payload = artifact_file.split(open(path, "rb").read())
    except artifact_file.ArtifactFileError as e:
        sys.exit("%s: %s" % (path, e))
    if meta.get("format") != "amd-hsaco+plan":
        sys.exit("not an AMD artifact: format %r" % meta.get("format"))
    return json.loads(payload)


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
    payload = read_payload(args.artifact)
    if args.plan:
        print("arch %s" % payload["arch"])
        for entry in payload["entries"]:
            print("entry %s buffers %s" % (entry["name"], json.dumps(
                entry["buffers"], sort_keys=True)))
            for launch in entry["launches"]:
                print("launch %s grid %s block %s shared %d args %s" % (
                    launch["kernel"], launch["grid"], launch["block"],
                    launch["static_shared_memory_bytes"] +
                    launch["dynamic_shared_memory_bytes"], launch["args"]))
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
