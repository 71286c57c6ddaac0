#!/usr/bin/env python3
"""Runs pb-run on damaged copies of an artifact and sorts the outcomes.

usage: mutate_artifact.py PB_RUN ARTIFACT COUNT [--seed S] [--workdir DIR]

Each copy has 1-3 random bytes changed, or is truncated at a random length
(one copy in four). Every copy is run with `pb-run COPY --runs 1`; the
outcome is one of
  error   pb-run exited 1 with an "error:" line on stderr (what must happen)
  crash   pb-run died of a signal (SIGSEGV, SIGILL, ...) or a sanitizer
  wrong   pb-run exited 0 with other output than the intact artifact's
  same    pb-run exited 0 with the intact artifact's output (a change that
          does not matter; impossible while the digest covers every byte)
  other   any other exit status
Prints one line per outcome and exits 1 unless every copy is an `error`.
"""
import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile


def run(pb_run, path):
    return subprocess.run([pb_run, path, "--runs", "1"], capture_output=True,
                          text=True, errors="replace", timeout=120)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("pb_run")
    parser.add_argument("artifact")
    parser.add_argument("count", type=int)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workdir")
    args = parser.parse_args()

    intact = open(args.artifact, "rb").read()
    reference = run(args.pb_run, args.artifact)
    if reference.returncode != 0:
        sys.exit("the intact artifact does not run: " + reference.stderr)
    # The median time differs from run to run; the checksums must not.
    expected = [l for l in reference.stdout.splitlines() if "median" not in l]

    rng = random.Random(args.seed)
    counts = {"error": 0, "crash": 0, "wrong": 0, "same": 0, "other": 0}
    examples = {}
    workdir = args.workdir or tempfile.mkdtemp(prefix="pb-mutants-")
    for i in range(args.count):
        data = bytearray(intact)
        if rng.random() < 0.25:
            kind = "truncated"
            data = data[:rng.randrange(len(data))]
        else:
            kind = "flipped"
            for _ in range(rng.randint(1, 3)):
                at = rng.randrange(len(data))
                data[at] = (data[at] + rng.randint(1, 255)) % 256
        path = os.path.join(workdir, "mutant-%d.pbart" % i)
        with open(path, "wb") as f:
            f.write(data)
        r = run(args.pb_run, path)
        if r.returncode < 0 or "Sanitizer" in r.stderr:
            outcome = "crash"
        elif r.returncode == 0:
            got = [l for l in r.stdout.splitlines() if "median" not in l]
            outcome = "same" if got == expected else "wrong"
        elif r.returncode == 1 and "error:" in r.stderr:
            outcome = "error"
        else:
            outcome = "other"
        counts[outcome] += 1
        if outcome != "error":
            detail = (signal.Signals(-r.returncode).name if r.returncode < 0
                      else "exit %d" % r.returncode)
            examples.setdefault(outcome, "%s (%s copy): %s %s" % (
                path, kind, detail, r.stderr.strip()[:300]))
        else:
            os.unlink(path)
    print("%d damaged copies: %s" % (args.count, ", ".join(
        "%d %s" % (n, k) for k, n in counts.items())))
    for outcome, example in examples.items():
        print("first %s: %s" % (outcome, example))
    sys.exit(0 if counts["error"] == args.count else 1)


if __name__ == "__main__":
    main()
