"""python -m polyblocks.bench --suite jax: Flax models through
polyblocks.jax.jit against jax.jit (XLA) on the CPU.

For each model (polyblocks.bench.jax_models at full size, random weights:
ResNet-50 224x224, ViT-B/16 224x224, the diffusion UNet on a 64x64x4
latent-like input and a timestep) and each --batch, it measures in one
process, on the same inputs and parameters (passed as jit arguments, as
Flax code does):
  - the compile time: the first call, traced, converted and compiled with
    an empty PolyBlocks compile cache (polyblocks.jax.jit(strict=True)),
    and the first call of jax.jit (XLA's tracing and compilation);
  - the median time of --runs calls after --warmup calls, for each, in the
    models suite's interleaved rounds (a round times one call of each
    engine, after a quarter second of its own untimed calls), each call
    waiting for its results (block_until_ready);
  - PolyBlocks' accuracy against XLA by the rule of the torch models suite
    (torch._dynamo.utils.same: allclose at 1e-3, else RMSE against a
    float64 reference, here XLA with jax_enable_x64).
It prints a Markdown table with the speedups over XLA and their geometric
mean, and writes jax.md and jax.csv to --out. A model that fails to convert
or compile is reported as such and left out of the geomean.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
import tempfile
import time
import traceback
from pathlib import Path

from .._output import write_csv, write_output

from . import jax_models

BASELINES = ("xla",)


def _blocking(fn, params):
    import jax

    def call(*inputs):
        return jax.block_until_ready(fn(params, *inputs))
    return call


def bench_model(name: str, batch: int, args, step) -> dict:
    """One row: times, compile times and accuracy of ``name`` at ``batch``."""
    import jax

    import polyblocks.jax as pj
    from .__main__ import _interleaved_median_ms

    row: dict = {"model": name, "batch": batch}
    step(f"{name} b{batch}: build")
    apply, params, inputs = jax_models.build(name, batch=batch)
    step(f"{name} b{batch}: xla compile")
    xla = jax.jit(apply)
    t = time.perf_counter()
    ref = jax_models.output_arrays(jax.block_until_ready(xla(params, *inputs)))
    row["xla_compile_s"] = time.perf_counter() - t
    step(f"{name} b{batch}: polyblocks compile")
    ours = pj.jit(apply, target=args.target, strict=True)
    t = time.perf_counter()
    try:
        res = jax_models.output_arrays(jax.block_until_ready(ours(params, *inputs)))
    except Exception as e:  # reported in the table, not fatal
        row["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"
        traceback.print_exc(file=sys.stderr)
        return row
    row["polyblocks_compile_s"] = time.perf_counter() - t
    step(f"{name} b{batch}: float64 reference")
    fp64 = jax_models.fp64_outputs(apply, params, inputs)
    row["accurate"] = jax_models.matches(ref, res, fp64)
    row["max_abs_err"] = max(float(abs(o - r).max()) for r, o in zip(ref, res))
    step(f"{name} b{batch}: runs")
    engines = {"polyblocks": _blocking(ours, params), "xla": _blocking(xla, params)}
    for engine, ms in _interleaved_median_ms(engines, inputs, args.runs,
                                             args.warmup).items():
        row[f"{engine}_ms"] = ms
    return row


def report(rows: list[dict]) -> str:
    """The Markdown table, with the geometric mean of the speedups."""
    from .__main__ import _geomean

    head = ["model", "batch", "PolyBlocks ms", "xla ms", "vs xla", "PB compile s",
            "xla compile s", "accuracy"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    speedups = []
    fmt = lambda v, f="{:.2f}": f.format(v) if isinstance(v, (int, float)) else "—"  # noqa: E731
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['model']} | {r['batch']} | failed: {r['error']} |"
                         + " |" * (len(head) - 3))
            continue
        s = r["xla_ms"] / r["polyblocks_ms"]
        speedups.append(s)
        cells = [r["model"], str(r["batch"]), fmt(r["polyblocks_ms"]), fmt(r["xla_ms"]),
                 fmt(s, "{:.2f}x"), fmt(r["polyblocks_compile_s"], "{:.1f}"),
                 fmt(r["xla_compile_s"], "{:.1f}"),
                 "pass" if r["accurate"] else f"FAIL ({r['max_abs_err']:.2e})"]
        lines.append("| " + " | ".join(cells) + " |")
    geo = ["**geomean**", "", "", "", f"**{_geomean(speedups):.2f}x**", "", "", ""]
    lines.append("| " + " | ".join(geo) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    from .__main__ import _progress

    p = argparse.ArgumentParser(prog="python -m polyblocks.bench --suite jax",
                                description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--suite", choices=["jax"], default="jax")
    p.add_argument("--target", default="cpu-host")
    p.add_argument("--baseline", default="xla", help="xla (the only one)")
    p.add_argument("--models", default=",".join(jax_models.JAX_MODELS),
                   help="comma-separated subset of: " + ", ".join(jax_models.JAX_MODELS))
    p.add_argument("--batch", default="1",
                   help="a batch size, or several comma-separated (1,8)")
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--out", default="bench-results")
    args = p.parse_args(argv)
    for b in args.baseline.split(","):
        if b.strip() and b.strip() not in BASELINES:
            p.error(f"unknown baseline {b!r}; known: {', '.join(BASELINES)}")
    try:
        batches = [int(b) for b in args.batch.split(",") if b.strip()]
    except ValueError:
        p.error(f"--batch {args.batch!r}: integers, comma-separated")
    names = [m.strip() for m in args.models.split(",") if m.strip()]
    for n in names:
        if n not in jax_models.JAX_MODELS:
            p.error(f"unknown model {n!r}; known: {', '.join(jax_models.JAX_MODELS)}")
    if not args.target.startswith("cpu"):
        p.error(f"target {args.target!r}: only CPU targets run in this benchmark")

    # Compile times are measured cold: a private, empty compile cache.
    os.environ["POLYBLOCKS_CACHE_DIR"] = tempfile.mkdtemp(prefix="polyblocks-bench-")
    import flax
    import jax

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    steps = len(names) * len(batches) * 5
    state = {"i": 0}

    def step(text):
        _progress(min(state["i"], steps), steps, text)
        state["i"] += 1

    rows = [bench_model(name, batch, args, step) for batch in batches for name in names]
    _progress(steps, steps, "done")
    table = report(rows)
    header = (f"JAX (Flax) models, batch {args.batch}, target {args.target}, against jax.jit "
              f"(XLA CPU); median of {args.runs} interleaved runs after {args.warmup} warm-ups; "
              f"{datetime.date.today()}, {platform.processor() or platform.machine()}, "
              f"{os.cpu_count()} CPUs, jax {jax.__version__}, flax {flax.__version__}.")
    write_output(out / "jax.md", header + "\n\n" + table + "\n")
    keys = sorted({k for r in rows for k in r}, key=lambda k: (k not in ("model", "batch"), k))
    write_csv(out / "jax.csv", keys, rows)
    print(header + "\n\n" + table)
    print(f"\nwritten: {out / 'jax.md'}, {out / 'jax.csv'}")
    return 1 if any("error" in r or not r.get("accurate", False) for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
