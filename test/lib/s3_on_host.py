#!/usr/bin/env python3
"""Runs a program's S3 output for every target on the host and compares it.

DESIGN.md's S3 invariant: whatever S3 decides for a chip (fusion, tiling,
vectorization, parallel loops), its output lowers to host code through the
reference lowering and computes what the unoptimized program computes.

usage: s3_on_host.py PB_OPT RUNNER LIBDIR PROGRAM [--rtol R]
The program has a `func.func @main()` that prints its results with
printMemrefF32. The reference is `pb-s1,pb-s2,host` (no S3); every target
`pb-opt --list-targets` names is compiled with S3 and must match it.
"""
import argparse
import re
import subprocess
import sys

NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|nan|inf)")


def run(cmd, stdin=None):
    proc = subprocess.run(cmd, input=stdin, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit("command failed (%d): %s\n%s" %
                 (proc.returncode, " ".join(cmd), proc.stderr))
    return proc.stdout


# Ops of a chip's own instructions that the host lowering leaves as they
# are (AMX tiles, AVX512-BF16 dot products): the host may lack them, and
# AMX needs the tile state that only an artifact's entries request. Their
# code is checked by the exec tests of pb-compile'd artifacts
# (test/cpu/exec/matmul-amx-*.mlir, matmul-dot-bf16.mlir).
CHIP_OPS = re.compile(r"\b(amx|x86vector)\.")


def execute(args, pipeline, target=None, extra=()):
    cmd = [args.pb_opt, "--pb-pipeline=" + pipeline, *extra, args.program]
    if target:
        cmd.insert(1, "--target=" + target)
    llvm_ir = run(cmd)
    if target and not extra and CHIP_OPS.search(llvm_ir):
        # The rest of S3 still checked: the contractions as the chip's
        # other units (or loops) compute them.
        print("note %s: its matrix units emit amx/x86vector ops; checked "
              "with --pb-matrix-units=false" % target)
        return execute(args, pipeline, target, ("--pb-matrix-units=false",))
    libs = ",".join("%s/lib%s.so" % (args.libdir, name)
                    for name in ("mlir_runner_utils", "mlir_c_runner_utils"))
    out = run([args.runner, "-e", "main", "-entry-point-result=void",
               "-shared-libs=" + libs], stdin=llvm_ir)
    # Only the data lines of printMemrefF32 (the header has shapes/strides).
    data = [l for l in out.splitlines() if not l.startswith("Unranked")]
    return [float(x) for l in data for x in NUMBER.findall(l)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("pb_opt")
    parser.add_argument("runner")
    parser.add_argument("libdir")
    parser.add_argument("program")
    parser.add_argument("--rtol", type=float, default=1e-5)
    args = parser.parse_args()

    reference = execute(args, "s1,s2,host")
    if not reference:
        sys.exit("the reference run printed no numbers")
    listing = run([args.pb_opt, "--list-targets"]).splitlines()[1:]
    targets = [line.split()[0] for line in listing]
    failed = False
    for target in targets:
        values = execute(args, "s1,s2,s3,host", target)
        bad = [i for i, (r, v) in enumerate(zip(reference, values))
               if abs(r - v) > args.rtol * max(1.0, abs(r))]
        if len(values) != len(reference) or bad:
            failed = True
            first = bad[0] if bad else min(len(values), len(reference))
            print("MISMATCH %s: %d values vs %d, %d differ, first at %d"
                  % (target, len(values), len(reference), len(bad), first))
        else:
            print("OK %s: %d values match" % (target, len(values)))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
