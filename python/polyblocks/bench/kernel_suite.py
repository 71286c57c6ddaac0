"""python -m polyblocks.bench --suite kernels: single contractions in f32
and bf16 through torch.compile on the CPU, against torch's own kernels
(eager: oneDNN, AMX or AVX512-BF16 where the CPU has them) and Inductor.

Cases (--cases, a comma-separated subset; default all):
  gemm<N>        C = A @ B, N x N x N (512, 1024, 2048, 4096)
  linear_<M>x<N>x<K>  x @ W^T with W an input (a transformer's projections:
                 128x768x768, 128x3072x768, 128x768x3072, 1024x3072x768)
  conv3x3_<C>    a 3x3 convolution, stride 1, padding 1, C -> C channels on
                 a batch of 8 56x56 (64) or 28x28 (128) maps, NCHW
in each --dtypes (default f32,bf16; bf16 with f32 accumulation, the result
in bf16, as torch computes it; i8: the gemm cases only, as torch._int_mm,
int8 x int8 -> int32, which eager runs on oneDNN).

For each case, in one process, every engine gets the same random inputs;
its result is checked against an f64 computation on the same (rounded)
inputs: the error relative to the largest magnitude of the result must stay
under 1e-4 (f32) or 1e-2 (bf16), and be 0 for i8. Times are the median of --runs
interleaved calls after --warmup (each engine timed in turn, as the models
suite does); GFLOP/s = 2 x M x N x K / time. Writes kernels.md and
kernels.csv to --out.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys

import torch

from .._output import write_csv, write_output

CASES = ("gemm512", "gemm1024", "gemm2048", "gemm4096",
         "linear_128x768x768", "linear_128x3072x768", "linear_128x768x3072",
         "linear_1024x3072x768", "conv3x3_64", "conv3x3_128")
BASELINES = ("eager", "inductor")
DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "i8": torch.int8}
TOLERANCE = {"f32": 1e-4, "bf16": 1e-2, "i8": 1e-12}


def applies(case: str, dtype_name: str) -> bool:
    """Whether `case` is measured in that dtype (i8: the GEMMs only)."""
    return dtype_name != "i8" or case.startswith("gemm")


def build(case: str, dtype: torch.dtype) -> tuple[callable, tuple, float]:
    """The function, its inputs and its flop count."""
    g = torch.Generator().manual_seed(0)

    def rand(*shape):
        if dtype == torch.int8:
            return torch.randint(-128, 128, shape, generator=g, dtype=torch.int8)
        return torch.randn(*shape, generator=g).to(dtype)

    if case.startswith("gemm"):
        n = int(case[4:])
        if dtype == torch.int8:
            return (lambda a, b: torch._int_mm(a, b)), (rand(n, n), rand(n, n)), 2.0 * n ** 3
        return (lambda a, b: a @ b), (rand(n, n), rand(n, n)), 2.0 * n ** 3
    if case.startswith("linear_"):
        m, n, k = (int(v) for v in case[7:].split("x"))
        return ((lambda x, w: torch.nn.functional.linear(x, w)),
                (rand(m, k), rand(n, k)), 2.0 * m * n * k)
    if case.startswith("conv3x3_"):
        c = int(case[8:])
        size = 56 if c <= 64 else 28
        x, w = rand(8, c, size, size), rand(c, c, 3, 3)
        return ((lambda x, w: torch.nn.functional.conv2d(x, w, padding=1)), (x, w),
                2.0 * 8 * size * size * c * c * 9)
    raise ValueError(case)


def _relative_error(result: torch.Tensor, reference: torch.Tensor) -> float:
    scale = reference.abs().max().item() or 1.0
    return (result.double() - reference).abs().max().item() / scale


def bench_case(case: str, dtype_name: str, args, progress) -> dict:
    from .__main__ import _compile, _interleaved_median_ms
    fn, inputs, flops = build(case, DTYPES[dtype_name])
    row: dict = {"case": case, "dtype": dtype_name}
    if DTYPES[dtype_name] == torch.int8:
        reference = (inputs[0].long() @ inputs[1].long()).double()
    else:
        reference = fn(*(t.double() for t in inputs))
    engines = {}
    for engine in ["polyblocks"] + list(args.baselines):
        progress(f"{case} {dtype_name}: {engine}")
        try:
            compiled = fn if engine == "eager" else _compile(fn, engine, args.target)
            with torch.no_grad():
                out = compiled(*inputs)
            row[f"{engine}_error"] = _relative_error(out, reference)
            engines[engine] = compiled
        except Exception as e:  # noqa: BLE001  (reported in the table)
            row[f"{engine}_failed"] = f"{type(e).__name__}: {str(e).splitlines()[0][:60]}"
    row["accurate"] = row.get("polyblocks_error", 1.0) < TOLERANCE[dtype_name]
    if not row["accurate"]:
        engines.pop("polyblocks", None)
    with torch.no_grad():
        for engine, ms in _interleaved_median_ms(engines, inputs, args.runs,
                                                 args.warmup).items():
            row[f"{engine}_ms"] = ms
            row[f"{engine}_gflops"] = flops / (ms * 1e6)
    return row


def report(rows: list[dict], args) -> str:
    from .__main__ import _geomean
    others = list(args.baselines)
    head = (["case", "dtype", "PolyBlocks GFLOP/s"] + [f"{b} GFLOP/s" for b in others]
            + [f"vs {b}" for b in others] + ["PB rel. error", "accuracy"])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    speedups: dict = {(b, d): [] for b in others for d in args.dtypes}
    for r in rows:
        cells = [r["case"], r["dtype"]]
        cells.append(f"{r['polyblocks_gflops']:.0f}" if "polyblocks_gflops" in r
                     else r.get("polyblocks_failed", "—"))
        cells += [f"{r[f'{b}_gflops']:.0f}" if f"{b}_gflops" in r
                  else r.get(f"{b}_failed", "—") for b in others]
        for b in others:
            if "polyblocks_ms" in r and f"{b}_ms" in r:
                s = r[f"{b}_ms"] / r["polyblocks_ms"]
                speedups[(b, r["dtype"])].append(s)
                cells.append(f"{s:.2f}x")
            else:
                cells.append("—")
        cells.append(f"{r['polyblocks_error']:.1e}" if "polyblocks_error" in r else "—")
        cells.append("pass" if r["accurate"] else "FAIL")
        lines.append("| " + " | ".join(cells) + " |")
    for d in args.dtypes:
        geo = ["**geomean**", d, ""] + [""] * len(others)
        geo += [f"**{_geomean(speedups[(b, d)]):.2f}x**" if speedups[(b, d)] else "—"
                for b in others]
        lines.append("| " + " | ".join(geo + ["", ""]) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    from .__main__ import _check_args, _counter, _progress, _start_run
    p = argparse.ArgumentParser(prog="python -m polyblocks.bench --suite kernels",
                                description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--suite", choices=["kernels"], default="kernels")
    p.add_argument("--target", default="cpu-host")
    p.add_argument("--baseline", default="eager,inductor",
                   help="comma-separated: " + ", ".join(BASELINES))
    p.add_argument("--cases", default=",".join(CASES),
                   help="comma-separated subset of: " + ", ".join(CASES))
    p.add_argument("--dtypes", default="f32,bf16", help="comma-separated: f32, bf16, i8")
    p.add_argument("--runs", type=int, default=7)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--out", default="bench-results")
    args = p.parse_args(argv)
    args.models = args.cases
    names = _check_args(p, args, BASELINES, CASES)
    args.dtypes = [d.strip() for d in args.dtypes.split(",") if d.strip()]
    for d in args.dtypes:
        if d not in DTYPES:
            p.error(f"unknown dtype {d!r}; known: {', '.join(DTYPES)}")
    out = _start_run(args.out)
    cases = [(name, d) for d in args.dtypes for name in names if applies(name, d)]
    total = len(cases) * (1 + len(args.baselines))
    progress = _counter(total)
    rows = [bench_case(name, d, args, progress) for name, d in cases]
    _progress(total, total, "done")
    table = report(rows, args)
    header = (f"Single contractions, target {args.target}; median of {args.runs} interleaved "
              f"calls after {args.warmup} warm-ups; {datetime.date.today()}, "
              f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
              f"torch {torch.__version__}, {torch.get_num_threads()} torch threads.")
    write_output(out / "kernels.md", header + "\n\n" + table + "\n")
    keys = sorted({k for r in rows for k in r}, key=lambda k: (k not in ("case", "dtype"), k))
    write_csv(out / "kernels.csv", keys, rows)
    print(header + "\n\n" + table)
    print(f"\nwritten: {out / 'kernels.md'}, {out / 'kernels.csv'}")
    return 1 if any(not r["accurate"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
