"""python -m polyblocks.bench --suite models: whole models through
torch.compile(backend="polyblocks") against eager and Inductor.

For each model (polyblocks.bench.models, random weights, batch 1 by default)
it measures, in one process and one after the other on the same inputs:
  - the compile time (the first call of the compiled model, with an empty
    PolyBlocks compile cache), for PolyBlocks and for each compiled baseline;
  - the median time of --runs calls after --warmup calls, for each, in
    interleaved rounds: each round times one call of every engine in turn,
    after a quarter second of its untimed calls, so that a change in the
    machine's speed during the run (a shared VM's) slows them alike instead
    of whichever ran then, and no engine is timed while the previous one's
    threads still spin;
  - PolyBlocks' accuracy against eager by the dynamo benchmark harness's rule
    (allclose at 1e-3, else RMSE against a float64 reference); the cell
    also counts the backend's warnings that a graph or an op runs in eager
    ("pass (1 in eager)"): such a model's times are partly eager's. An op
    that falls back is warned about once per process, so only its first
    model counts it.
It prints a Markdown table with the speedups over each baseline and their
geometric mean, and writes models.md, models.csv and models.png (a bar chart)
to --out. A model that fails to compile is reported as such and left out of
the geomean.

With --dtype bf16 the models' parameters and floating-point inputs are
bfloat16 (model.to(torch.bfloat16)) for every engine, and the accuracy rule's
tolerance is 1e-2 instead of 1e-3 (the float64 reference stays float64).

With --dtype int8 each model is quantized as PyTorch's PT2E flow does it
(torch.export with strict tracing, torchao's X86InductorQuantizer with its
default static config: u8 activations per tensor, i8 weights per channel, one
calibration call on the input, convert_pt2e), and every engine runs that
quantized model: eager its reference ops (f32 on dequantized values),
Inductor its x86 int8 lowering (which needs --freeze to reach oneDNN's
quantized kernels), PolyBlocks its integer linear layers and convolutions
(see polyblocks.torch.quantized). Accuracy: the RMSE of the output against the f32
model's at most 1.1 x that of the quantized model in eager (plus 1e-6
relative). Needs the torchao package.

With --freeze, PolyBlocks compiles with freeze=True (parameters become
constants) and Inductor with torch._inductor.config.freezing = True, so that
both baselines fold the weights the same way. The header names the torch
thread count and whether eager's convolutions and matmuls may use oneDNN
(torch.backends.mkldnn), the library eager and Inductor call into.
"""

from __future__ import annotations

import argparse
import copy
import datetime
import io
import logging
import math
import os
import platform
import re
import statistics
import sys
import tempfile
import time
import traceback
from pathlib import Path

import torch

from .._output import write_csv, write_output
from . import models

BASELINES = ("eager", "inductor")


def _progress(i: int, n: int, text: str) -> None:
    width = 24
    done = int(width * i / n)
    bar = "#" * done + "." * (width - done)
    sys.stderr.write(f"\r[{bar}] {i}/{n} {text[:60]:<60}")
    sys.stderr.flush()
    if i == n:
        sys.stderr.write("\n")


def _check_args(p, args, baselines, known_models) -> list[str]:
    """args.baselines from --baseline (eager always, first) and the model
    names of --models; p.error for an unknown one or a non-CPU target."""
    args.baselines = [b.strip() for b in args.baseline.split(",") if b.strip()]
    for b in args.baselines:
        if b not in baselines:
            p.error(f"unknown baseline {b!r}; known: {', '.join(baselines)}")
    if "eager" not in args.baselines:
        args.baselines.insert(0, "eager")
    names = [m.strip() for m in args.models.split(",") if m.strip()]
    for n in names:
        if n not in known_models:
            p.error(f"unknown model {n!r}; known: {', '.join(known_models)}")
    if not args.target.startswith("cpu"):
        p.error(f"target {args.target!r}: only CPU targets run in this benchmark")
    return names


def _start_run(out: str) -> Path:
    """The output folder, made; compile times measured cold from here on
    (a private, empty compile cache)."""
    os.environ["POLYBLOCKS_CACHE_DIR"] = tempfile.mkdtemp(prefix="polyblocks-bench-")
    path = Path(out)
    path.mkdir(parents=True, exist_ok=True)
    return path


def _counter(total: int):
    """A progress callback: each call shows the next of `total` steps."""
    state = {"i": 0}

    def step(text):
        _progress(min(state["i"], total), total, text)
        state["i"] += 1
    return step


# Untimed calls an engine makes at the start of each round, for at least
# this long: the thread pool of the engine before it (LLVM's OpenMP spins
# for 200 ms after a parallel region by default) has gone to sleep by then,
# and this engine's own is awake.
_SETTLE_S = 0.25


def _interleaved_median_ms(engines: dict, inputs, runs: int, warmup: int) -> dict:
    """The median time in ms of each of `engines` (name -> callable) over
    `runs` rounds, after `warmup` calls of each. Each round times one call
    of every engine in turn, each after calls of its own for _SETTLE_S
    seconds (at least one), so that a change in the machine's speed during
    the run slows all engines alike, and no engine is timed while another
    one's threads still spin."""
    for fn in engines.values():
        for _ in range(warmup):
            fn(*inputs)
    times: dict = {name: [] for name in engines}
    for _ in range(runs):
        for name, fn in engines.items():
            start = time.perf_counter()
            fn(*inputs)
            while time.perf_counter() - start < _SETTLE_S:
                fn(*inputs)
            t = time.perf_counter()
            fn(*inputs)
            times[name].append(time.perf_counter() - t)
    return {name: statistics.median(t) * 1e3 for name, t in times.items()}


def _compile(model, backend: str, target: str, freeze: bool = False):
    import torch._dynamo
    torch._dynamo.reset()
    if backend == "polyblocks":
        import polyblocks  # noqa: F401  (registers the backend)
        return torch.compile(model, backend="polyblocks",
                             options={"target": target, "freeze": freeze})
    if backend == "inductor":
        import torch._inductor.config as inductor_config
        inductor_config.freezing = freeze
    return torch.compile(model, backend=backend)


DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "int8": torch.int8}
# The accuracy rule's tolerance per dtype (allclose, then the RMSE test).
TOLERANCES = {torch.float32: 1e-3, torch.bfloat16: 1e-2}


def _to_dtype(model, inputs, dtype):
    """`model` and its floating-point inputs in `dtype` (f32: unchanged)."""
    if dtype == torch.float32:
        return model, inputs
    return model.to(dtype), tuple(x.to(dtype) if x.is_floating_point() else x
                                  for x in inputs)


def _quantize_pt2e(model, inputs):
    """`model` quantized with PT2E and the x86 quantizer (see the module
    docstring), calibrated on `inputs`."""
    try:
        from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
        from torchao.quantization.pt2e.quantizer import x86_inductor_quantizer as xiq
    except ImportError as e:
        raise RuntimeError("--dtype int8 needs the torchao package (PT2E quantization)") from e
    exported = torch.export.export(model, inputs, strict=True).module()
    quantizer = xiq.X86InductorQuantizer()
    quantizer.set_global(xiq.get_default_x86_inductor_quantization_config())
    prepared = prepare_pt2e(exported, quantizer)
    prepared(*inputs)
    return convert_pt2e(prepared)


def _rmse(a, b) -> float:
    return (a.double() - b.double()).pow(2).mean().sqrt().item()


def _accurate_quantized(f32_out, eager_out, res) -> bool:
    """Each output's RMSE against the f32 model's at most 1.1 x the
    quantized eager model's (plus 1e-6 of the f32 output's magnitude)."""
    return len(f32_out) == len(res) == len(eager_out) and all(
        _rmse(o, f) <= 1.1 * _rmse(e, f) + 1e-6 * f.abs().max().item()
        for f, e, o in zip(f32_out, eager_out, res))


def _accurate(model, inputs, ref, res) -> bool:
    from torch._dynamo.utils import same
    floats = [p.dtype for p in model.parameters() if p.is_floating_point()]
    tol = TOLERANCES.get(floats[0] if floats else torch.float32, 1e-3)
    model64 = copy.deepcopy(model).double()
    inputs64 = tuple(x.double() if x.is_floating_point() else x for x in inputs)
    fp64 = models.output_tensors(model64(*inputs64))
    return len(ref) == len(res) and all(
        same(r, o, fp64_ref=f, tol=tol) for r, o, f in zip(ref, res, fp64))


class _FallbackRecorder(logging.Handler):
    """Counts the backend's warnings that a graph or an op runs in eager,
    and keeps what fell back in `ops`: the op ("aten.foo.default") or the
    graph ("a graph of 7 nodes"), once each."""

    def __init__(self):
        super().__init__(level=logging.WARNING)
        self.count = 0
        self.ops: list[str] = []

    def emit(self, record):
        message = record.getMessage()
        if "runs in eager" in message:
            self.count += 1
        m = re.match(r"polyblocks: (.+?) runs in eager", message)
        if m and m.group(1) not in self.ops:
            self.ops.append(m.group(1))


def _error_line(e: BaseException) -> str:
    return f"{type(e).__name__}: {str(e).splitlines()[0][:120]}"


def _compile_baselines(model, inputs, baselines, target: str, freeze: bool, row: dict,
                       engines: dict, step=lambda base: None, error_line=_error_line):
    """Compiles `model` with each compiled baseline (not eager) and runs it
    once: its compile time goes to row["BASE_compile_s"] and the engine to
    `engines`, or its failure (the baseline's, not PolyBlocks') to
    row["BASE_error"]. `step(base)` is called before each."""
    for base in baselines:
        if base == "eager":
            continue
        step(base)
        t = time.perf_counter()
        try:
            other = _compile(model, base, target, freeze)
            other(*inputs)
        except Exception as e:
            row[f"{base}_error"] = error_line(e)
            continue
        row[f"{base}_compile_s"] = time.perf_counter() - t
        engines[base] = other


def bench_model(name: str, args, step) -> dict:
    row: dict = {"model": name}
    model, inputs = models.build(name, batch=args.batch)
    f32_out = None
    with torch.no_grad():
        if args.dtype == "int8":
            f32_out = models.output_tensors(model(*inputs))
            try:
                model = _quantize_pt2e(model, inputs)
            except Exception as e:  # reported in the table, not fatal
                row["error"] = "quantization: " + _error_line(e)
                traceback.print_exc(file=sys.stderr)
                return row
        else:
            model, inputs = _to_dtype(model, inputs, DTYPES[args.dtype])
        step(f"{name}: eager")
        ref = models.output_tensors(model(*inputs))
        engines = {"eager": model}
        step(f"{name}: polyblocks compile")
        t = time.perf_counter()
        # Graphs the backend could not compile run in eager: the table says
        # so, or its times would be eager's under PolyBlocks' name.
        fallbacks = _FallbackRecorder()
        logging.getLogger("polyblocks").addHandler(fallbacks)
        try:
            compiled = _compile(model, "polyblocks", args.target, args.freeze)
            res = models.output_tensors(compiled(*inputs))
        except Exception as e:  # reported in the table, not fatal
            row["error"] = _error_line(e)
            traceback.print_exc(file=sys.stderr)
            return row
        finally:
            logging.getLogger("polyblocks").removeHandler(fallbacks)
        row["polyblocks_compile_s"] = time.perf_counter() - t
        row["eager_fallbacks"] = fallbacks.count
        row["accurate"] = (_accurate_quantized(f32_out, ref, res) if f32_out is not None
                           else _accurate(model, inputs, ref, res))
        engines["polyblocks"] = compiled
        _compile_baselines(model, inputs, args.baselines, args.target, args.freeze, row,
                           engines, step=lambda base: step(f"{name}: {base}"))
        # Compiling a baseline reset Dynamo: PolyBlocks' graphs are traced
        # again (from the compile cache) before the timed rounds.
        step(f"{name}: runs")
        compiled(*inputs)
        for engine, ms in _interleaved_median_ms(engines, inputs, args.runs,
                                                 args.warmup).items():
            row[f"{engine}_ms"] = ms
    return row


def _geomean(values):
    values = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def report(rows: list[dict], args) -> str:
    bases = list(args.baselines)
    head = ["model", "PolyBlocks ms"] + [f"{b} ms" for b in bases] + \
        [f"vs {b}" for b in bases] + ["PB compile s"] + \
        [f"{b} compile s" for b in bases if b != "eager"] + ["accuracy"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    speedups = {b: [] for b in bases}
    fmt = lambda v, f="{:.2f}": f.format(v) if isinstance(v, (int, float)) else "—"  # noqa: E731
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['model']} | failed: {r['error']} |" + " |" * (len(head) - 2))
            continue
        cells = [r["model"], fmt(r["polyblocks_ms"])]
        cells += [fmt(r.get(f"{b}_ms")) for b in bases]
        for b in bases:
            other = r.get(f"{b}_ms")
            s = other / r["polyblocks_ms"] if other else None
            if s:
                speedups[b].append(s)
            cells.append(fmt(s, "{:.2f}x") if s else r.get(f"{b}_error", "—")[:40])
        cells.append(fmt(r["polyblocks_compile_s"], "{:.1f}"))
        cells += [fmt(r.get(f"{b}_compile_s"), "{:.1f}") for b in bases if b != "eager"]
        accuracy = "pass" if r["accurate"] else "FAIL"
        if r.get("eager_fallbacks"):
            accuracy += f" ({r['eager_fallbacks']} in eager)"
        cells.append(accuracy)
        lines.append("| " + " | ".join(cells) + " |")
    geo = ["**geomean**", "", *["" for _ in bases]]
    geo += [f"**{_geomean(speedups[b]):.2f}x**" for b in bases]
    geo += [""] * (len(head) - len(geo))
    lines.append("| " + " | ".join(geo) + " |")
    return "\n".join(lines)


def chart(rows: list[dict], args, path: Path) -> bool:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("polyblocks.bench: matplotlib is not installed; no chart", file=sys.stderr)
        return False
    ok = [r for r in rows if "error" not in r]
    bases = list(args.baselines)
    fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(ok) + 2), 4))
    width = 0.8 / max(1, len(bases))
    for j, b in enumerate(bases):
        ys = [(r.get(f"{b}_ms") or 0) / r["polyblocks_ms"] for r in ok]
        xs = [i + (j - (len(bases) - 1) / 2) * width for i in range(len(ok))]
        ax.bar(xs, ys, width, label=f"speedup over {b}")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(ok)), [r["model"] for r in ok], rotation=30, ha="right")
    ax.set_ylabel("speedup (higher is better)")
    ax.set_title(f"PolyBlocks ({args.target}), batch {args.batch}")
    ax.legend()
    fig.tight_layout()
    png = io.BytesIO()
    fig.savefig(png, format="png", dpi=120)
    write_output(path, png.getvalue())
    return True


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--suite=gpu" in argv or any(a == "--suite" and b == "gpu"
                                    for a, b in zip(argv, argv[1:])):
        from . import gpu
        return gpu.main(argv)
    if "--suite=compile" in argv or any(a == "--suite" and b == "compile"
                                        for a, b in zip(argv, argv[1:])):
        from . import compile_time
        return compile_time.main(argv)
    if "--suite=jax" in argv or any(a == "--suite" and b == "jax"
                                    for a, b in zip(argv, argv[1:])):
        from . import jax_suite
        return jax_suite.main(argv)
    if "--suite=tf" in argv or any(a == "--suite" and b == "tf"
                                   for a, b in zip(argv, argv[1:])):
        from . import tf_suite
        return tf_suite.main(argv)
    if "--suite=train" in argv or any(a == "--suite" and b == "train"
                                      for a, b in zip(argv, argv[1:])):
        from . import train_suite
        return train_suite.main(argv)
    if "--suite=sweep" in argv or any(a == "--suite" and b == "sweep"
                                      for a, b in zip(argv, argv[1:])):
        from . import sweep
        return sweep.main(argv)
    if "--suite=kernels" in argv or any(a == "--suite" and b == "kernels"
                                        for a, b in zip(argv, argv[1:])):
        from . import kernel_suite
        return kernel_suite.main(argv)
    if "--suite=dynamic" in argv or any(a == "--suite" and b == "dynamic"
                                        for a, b in zip(argv, argv[1:])):
        from . import dynamic_suite
        return dynamic_suite.main(argv)
    if "--suite=generate" in argv or any(a == "--suite" and b == "generate"
                                         for a, b in zip(argv, argv[1:])):
        from . import generate_suite
        return generate_suite.main(argv)
    p = argparse.ArgumentParser(prog="python -m polyblocks.bench", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--suite", required=True,
                   choices=["models", "gpu", "compile", "jax", "tf", "sweep", "train",
                            "kernels", "dynamic", "generate"],
                   help="models: this docstring; gpu: see --suite gpu --help; "
                   "compile: see --suite compile --help; jax: see --suite jax --help; "
                   "tf: see --suite tf --help; train: see --suite train --help; "
                   "sweep: see --suite sweep --help; kernels: see --suite kernels --help; "
                   "dynamic: see --suite dynamic --help; "
                   "generate: see --suite generate --help")
    p.add_argument("--target", default="cpu-host")
    p.add_argument("--baseline", default="eager,inductor",
                   help="comma-separated: eager, inductor")
    p.add_argument("--models", default=",".join(models.MODELS),
                   help="comma-separated subset of: " + ", ".join(models.MODELS))
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--out", default="bench-results")
    p.add_argument("--dtype", choices=sorted(DTYPES), default="f32",
                   help="the models' parameter and input dtype (bf16: model.to(torch.bfloat16); "
                   "int8: PT2E-quantized with the x86 quantizer)")
    p.add_argument("--freeze", action="store_true",
                   help="PolyBlocks freeze=True against Inductor with freezing on")
    args = p.parse_args(argv)
    names = _check_args(p, args, BASELINES, models.MODELS)
    out = _start_run(args.out)
    steps = len(names) * (2 + len(args.baselines))
    step = _counter(steps)
    rows = []
    for name in names:
        rows.append(bench_model(name, args, step))
    _progress(steps, steps, "done")

    table = report(rows, args)
    onednn = ("on" if torch.backends.mkldnn.is_available() and torch.backends.mkldnn.enabled
              else "off")
    header = (f"Models, batch {args.batch}, {args.dtype}, target {args.target}, freeze "
              f"{'on' if args.freeze else 'off'} (Inductor freezing likewise); median of "
              f"{args.runs} interleaved runs after {args.warmup} warm-ups; {datetime.date.today()}, "
              f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
              f"torch {torch.__version__}, {torch.get_num_threads()} torch threads, "
              f"oneDNN for eager {onednn}.")
    write_output(out / "models.md", header + "\n\n" + table + "\n")
    keys = sorted({k for r in rows for k in r}, key=lambda k: (k != "model", k))
    write_csv(out / "models.csv", keys, rows)
    charted = chart(rows, args, out / "models.png")
    print(header + "\n\n" + table)
    print(f"\nwritten: {out / 'models.md'}, {out / 'models.csv'}"
          + (f", {out / 'models.png'}" if charted else ""))
    return 1 if any("error" in r or not r.get("accurate", False) for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
