#!/usr/bin/env python3
"""Prints what an NVIDIA artifact (payload format nvidia-ptx+plan) holds.

usage: nvidia_artifact.py ARTIFACT [--plan] [--ptx] [--emulation-ir]
                          [--ptxas ARCH] [--tile-ir] [--sass]
  --plan        the launch plan of every entry, one launch a line
  --ptx         the PTX of every kernel module
  --emulation-ir  the MLIR every kernel module keeps for the emulator
                ("emulation_mlir"), after a line "// emulation module NAME",
                or "// module NAME has no emulation IR"
  --ptxas ARCH  assemble every module's PTX with `ptxas -arch=ARCH -v` and
                print ptxas's report ($POLYBLOCKS_PTXAS, else ptxas on PATH,
                else /usr/local/cuda/bin/ptxas)
  --tile-ir     the kernels of every Tile IR module (codegen=tile-ir) as
                MLIR, read back from their bytecode by pb-translate
                ($POLYBLOCKS_TRANSLATE, else pb-translate on PATH), after a
                line "// tile-ir module NAME"
  --sass        per module with a cubin, the counts of the SASS instructions
                that show how it was compiled: tensor-core MMAs (HMMA,
                HGMMA), asynchronous copies (LDGSTS, UTMALDG, UBLKCP) and
                local-memory spills (LDL, STL), from `cuobjdump -sass`
                ($POLYBLOCKS_CUOBJDUMP, else beside $POLYBLOCKS_TILEIRAS,
                else on PATH): "sass NAME HMMA n HGMMA n ..."
The artifact file is the C API's (test/lib/artifact_file.py reads it).
"""
import argparse
import base64
import os
import re
import shutil
import subprocess
import sys
import tempfile

import artifact_file  # test/lib, this script's directory


def find_ptxas():
    return (os.environ.get("POLYBLOCKS_PTXAS") or shutil.which("ptxas")
            or "/usr/local/cuda/bin/ptxas")


SASS_OPCODES = ["HMMA", "HGMMA", "LDGSTS", "UTMALDG", "UBLKCP", "LDL", "STL"]


def find_cuobjdump():
    if os.environ.get("POLYBLOCKS_CUOBJDUMP"):
        return os.environ["POLYBLOCKS_CUOBJDUMP"]
    tileiras = os.environ.get("POLYBLOCKS_TILEIRAS")
    if tileiras:
        beside = os.path.join(os.path.dirname(tileiras), "cuobjdump")
        if os.path.exists(beside):
            return beside
    return shutil.which("cuobjdump") or "cuobjdump"


def count_sass(cubin_bytes):
    """Counts of SASS_OPCODES (by the opcode's name before its first '.')."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "kernel.cubin")
        with open(path, "wb") as f:
            f.write(cubin_bytes)
        proc = subprocess.run([find_cuobjdump(), "-sass", path],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            sys.exit("cuobjdump failed: " + proc.stderr)
    counts = dict.fromkeys(SASS_OPCODES, 0)
    # Instruction lines: /*0040*/  [@P0] OPCODE.MODIFIERS operands ;
    for match in re.finditer(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z0-9]+)",
                             proc.stdout):
        if match.group(1) in counts:
            counts[match.group(1)] += 1
    return counts


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("artifact")
    parser.add_argument("--plan", action="store_true")
    parser.add_argument("--ptx", action="store_true")
    parser.add_argument("--emulation-ir", action="store_true")
    parser.add_argument("--ptxas")
    parser.add_argument("--tile-ir", action="store_true")
    parser.add_argument("--sass", action="store_true")
    args = parser.parse_args()
    payload = artifact_file.read_gpu_payload(args.artifact, "nvidia-ptx+plan", "NVIDIA")
    if args.plan:
        artifact_file.print_plan(payload)
    for module in payload["modules"]:
        if args.tile_ir and "tileir_bytecode_base64" in module:
            translate = (os.environ.get("POLYBLOCKS_TRANSLATE")
                         or shutil.which("pb-translate") or "pb-translate")
            proc = subprocess.run(
                [translate, "--bytecode-to-tileir", "-"],
                input=base64.b64decode(module["tileir_bytecode_base64"]),
                capture_output=True)
            if proc.returncode != 0:
                sys.exit("pb-translate failed on module %s: %s" %
                         (module["name"], proc.stderr.decode()))
            print("// tile-ir module %s" % module["name"])
            print(proc.stdout.decode())
        if args.sass and "cubin_base64" in module:
            counts = count_sass(base64.b64decode(module["cubin_base64"]))
            print("sass %s %s" % (module["name"], " ".join(
                "%s %d" % (op, counts[op]) for op in SASS_OPCODES)))
        if args.ptx and "ptx" in module:
            print("// module %s" % module["name"])
            print(module["ptx"])
        if args.emulation_ir:
            if "emulation_mlir" in module:
                print("// emulation module %s" % module["name"])
                print(module["emulation_mlir"])
            else:
                print("// module %s has no emulation IR" % module["name"])
        if args.ptxas and "ptx" in module:
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
