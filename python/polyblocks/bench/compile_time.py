"""python -m polyblocks.bench --suite compile: how long the first call of a
torch.compile'd model takes, PolyBlocks against Inductor, each in a new
process.

For each model (batch 1 unless --batch) three processes run one after the
other, each building the model (random weights) and timing its first call
through torch.compile, which traces, compiles and runs it once:
  - polyblocks cold: an empty PolyBlocks cache directory;
  - polyblocks warm: a new process on the cache the cold run filled (the
    compiled artifact is read back, nothing is compiled);
  - inductor cold: Inductor with empty caches (its own and Triton's, in a
    fresh temporary directory, FX graph cache off).
The eager time of one call is printed beside them (the part of a first call
that is not compilation), and for PolyBlocks the time spent in
polyblocks.compile (MLIR in, artifact out, the caches included): the rest of
a first call is torch.compile's own tracing (Dynamo, AOTAutograd), the
backend's graph emission and the one run. Depth scaling: --models resnet50,resnet101,
resnet152 (torchvision, also accepted here).

It prints a Markdown table and writes compile.md and compile.csv to --out.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .._output import write_csv, write_output

from . import models

# Deeper CNNs for the depth-scaling table, besides the suite's models.
EXTRA = {"resnet101": "resnet101", "resnet152": "resnet152"}


def _build(name: str, batch: int):
    if name in EXTRA:
        import torch
        torch.manual_seed(0)
        model, inputs = models._torchvision(EXTRA[name])(batch, {})
        return model.eval(), inputs
    return models.build(name, batch=batch)


def _child(args) -> int:
    """One measurement, in this (new) process; prints one JSON line."""
    import torch
    import torch._dynamo
    model, inputs = _build(args.model, args.batch)
    with torch.no_grad():
        t = time.perf_counter()
        model(*inputs)
        eager_s = time.perf_counter() - t
        in_compiler = [0.0]
        if args.backend == "polyblocks":
            import polyblocks  # noqa: F401  (registers the backend)
            from polyblocks import compiler
            original = compiler.compile

            def timed(*a, **kw):
                t0 = time.perf_counter()
                try:
                    return original(*a, **kw)
                finally:
                    in_compiler[0] += time.perf_counter() - t0
            compiler.compile = timed
            compiled = torch.compile(model, backend="polyblocks",
                                     options={"target": args.target})
        else:
            compiled = torch.compile(model, backend="inductor")
        t = time.perf_counter()
        compiled(*inputs)
        first_s = time.perf_counter() - t
    print(json.dumps({"first_call_s": first_s, "eager_s": eager_s,
                      "compiler_s": in_compiler[0]}))
    return 0


def _run(model: str, backend: str, batch: int, target: str, env: dict) -> dict:
    cmd = [sys.executable, "-m", "polyblocks.bench.compile_time", "--child",
           "--model", model, "--backend", backend, "--batch", str(batch),
           "--target", target]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m polyblocks.bench --suite compile",
                                description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--suite", default="compile")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--backend", default="polyblocks", help=argparse.SUPPRESS)
    p.add_argument("--model", help=argparse.SUPPRESS)
    p.add_argument("--models", default=",".join(models.MODELS),
                   help="comma-separated subset of: " +
                   ", ".join(list(models.MODELS) + list(EXTRA)))
    p.add_argument("--baseline", default="inductor",
                   help="inductor, or none (PolyBlocks only)")
    p.add_argument("--target", default="cpu-host")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--out", default="bench-results")
    args = p.parse_args(argv)
    if args.child:
        return _child(args)

    names = [n for n in args.models.split(",") if n]
    unknown = [n for n in names if n not in models.MODELS and n not in EXTRA]
    if unknown:
        p.error(f"unknown models {unknown}")
    rows = []
    for i, name in enumerate(names):
        sys.stderr.write(f"[{i + 1}/{len(names)}] {name}\n")
        row = {"model": name}
        with tempfile.TemporaryDirectory(prefix="pb-compile-bench-") as tmp:
            env = dict(os.environ, POLYBLOCKS_CACHE="1",
                       POLYBLOCKS_CACHE_DIR=str(Path(tmp) / "polyblocks"))
            cold = _run(name, "polyblocks", args.batch, args.target, env)
            warm = _run(name, "polyblocks", args.batch, args.target, env)
            row["polyblocks_cold_s"] = cold.get("first_call_s")
            row["polyblocks_warm_s"] = warm.get("first_call_s")
            row["compiler_cold_s"] = cold.get("compiler_s")
            row["compiler_warm_s"] = warm.get("compiler_s")
            row["eager_s"] = cold.get("eager_s")
            row["error"] = cold.get("error") or warm.get("error")
            if args.baseline == "inductor":
                ienv = dict(os.environ,
                            TORCHINDUCTOR_CACHE_DIR=str(Path(tmp) / "inductor"),
                            TRITON_CACHE_DIR=str(Path(tmp) / "triton"),
                            TORCHINDUCTOR_FX_GRAPH_CACHE="0",
                            TORCHINDUCTOR_AUTOGRAD_CACHE="0")
                ind = _run(name, "inductor", args.batch, args.target, ienv)
                row["inductor_cold_s"] = ind.get("first_call_s")
                row["error"] = row["error"] or ind.get("error")
        rows.append(row)

    def cell(v):
        return "-" if v is None else f"{v:.2f}"

    header = ("| model | PolyBlocks cold (s) | of which polyblocks.compile (s) | "
              "PolyBlocks warm (s) | of which polyblocks.compile (s) | "
              "Inductor cold (s) | eager call (s) |")
    lines = [f"Compile time, first call through torch.compile, batch {args.batch}, "
             f"{datetime.date.today()}, {platform.node()}, "
             f"{os.cpu_count()} CPUs; each cell a new process",
             "", header, "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['model']} | {cell(r['polyblocks_cold_s'])} | "
                     f"{cell(r['compiler_cold_s'])} | "
                     f"{cell(r['polyblocks_warm_s'])} | {cell(r['compiler_warm_s'])} | "
                     f"{cell(r.get('inductor_cold_s'))} | {cell(r['eager_s'])} |"
                     + (f" error: {r['error']}" if r["error"] else ""))
    cold = [r["polyblocks_cold_s"] for r in rows if r["polyblocks_cold_s"] is not None]
    if cold:
        lines.append("")
        lines.append(f"PolyBlocks cold: median {statistics.median(cold):.2f} s, "
                     f"max {max(cold):.2f} s")
    text = "\n".join(lines)
    print(text)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_output(out / "compile.md", text + "\n")
    write_csv(out / "compile.csv", ["model", "polyblocks_cold_s", "compiler_cold_s",
                                    "polyblocks_warm_s", "compiler_warm_s",
                                    "inductor_cold_s", "eager_s", "error"], rows)
    return 0 if all(not r["error"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
