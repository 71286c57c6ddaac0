"""python -m polyblocks.bench --suite gpu: PolyBlocks on an NVIDIA GPU
against the vendor libraries and the other compilers, side by side.

Cases, in this order, each while the --budget (seconds) lasts:
  - matmul f16, bf16 and tf32 at 4096^3 and f16 at odd sizes: polyblocks.compile
    of the contraction for the device's chip vs torch.matmul (cuBLAS; tf32
    allowed for the tf32 case), in TFLOP/s;
  - conv2d layers of ResNet-50, softmax and layernorm: torch.compile(backend=
    "polyblocks") vs eager (cuDNN for convolutions) and Inductor;
  - resnet50 and bert_base (polyblocks.bench.models) at batch 1 and 8 through
    torch.compile vs eager and Inductor.
Times are medians of --runs CUDA-event timings after --warmup calls. Every
case also records PolyBlocks' largest error relative to the largest
reference magnitude. Writes gpu.md and gpu.csv to --out; a case that fails
is reported with its error and does not stop the others.
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import sys
import tempfile
import time
import traceback
from pathlib import Path

import torch

from .._output import write_csv, write_output

_MLIR_TYPES = {torch.float16: "f16", torch.bfloat16: "bf16", torch.float32: "f32"}


def matmul_text(m: int, n: int, k: int, dtype: torch.dtype, batch: int = 0,
                b_transposed: bool = False) -> str:
    """MLIR for C = A @ B (B given as (n, k) when ``b_transposed``), with an
    optional leading batch dimension, in ``dtype`` throughout."""
    t = _MLIR_TYPES[dtype]
    lead = f"{batch}x" if batch else ""
    a_shape = f"{lead}{m}x{k}x{t}"
    b_shape = f"{lead}{n}x{k}x{t}" if b_transposed else f"{lead}{k}x{n}x{t}"
    c_shape = f"{lead}{m}x{n}x{t}"
    loops = "b, m, n, k" if batch else "m, n, k"
    bl = "b, " if batch else ""
    b_map = f"({bl}n, k)" if b_transposed else f"({bl}k, n)"
    iters = ('"parallel", ' if batch else "") + '"parallel", "parallel", "reduction"'
    return f"""
func.func @mm(%a: tensor<{a_shape}>, %b: tensor<{b_shape}>) -> tensor<{c_shape}> {{
  %zero = arith.constant 0.0 : {t}
  %e = tensor.empty() : tensor<{c_shape}>
  %z = linalg.fill ins(%zero : {t}) outs(%e : tensor<{c_shape}>) -> tensor<{c_shape}>
  %c = linalg.generic {{indexing_maps = [affine_map<({loops}) -> ({bl}m, k)>,
                                         affine_map<({loops}) -> {b_map}>,
                                         affine_map<({loops}) -> ({bl}m, n)>],
                       iterator_types = [{iters}]}}
      ins(%a, %b : tensor<{a_shape}>, tensor<{b_shape}>) outs(%z : tensor<{c_shape}>) {{
  ^bb0(%x: {t}, %y: {t}, %acc: {t}):
    %p = arith.mulf %x, %y : {t}
    %s = arith.addf %acc, %p : {t}
    linalg.yield %s : {t}
  }} -> tensor<{c_shape}>
  return %c : tensor<{c_shape}>
}}
"""


def relative_error(result: torch.Tensor, reference: torch.Tensor) -> float:
    """Largest absolute difference over the largest reference magnitude."""
    ref = reference.double()
    scale = ref.abs().max().item() or 1.0
    return (result.double() - ref).abs().max().item() / scale


def cuda_ms(fn, runs: int, warmup: int) -> float:
    """Median milliseconds of ``fn()`` by CUDA events on the current stream."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


# (name, dtype, M, N, K, B given as (n, k), compile options). On sm90 the
# default is the warpgroup units (wgmma); "warp-level" rows force mma.sync.
MATMULS = [
    ("matmul f16 4096^3", torch.float16, 4096, 4096, 4096, False, {}),
    ("matmul f16 4096^3 warp-level", torch.float16, 4096, 4096, 4096, False,
     {"warpgroup_units": False}),
    ("matmul bf16 4096^3", torch.bfloat16, 4096, 4096, 4096, False, {}),
    ("linear bf16 4096^3 (x @ W^T)", torch.bfloat16, 4096, 4096, 4096, True, {}),
    ("matmul tf32 4096^3", torch.float32, 4096, 4096, 4096, False, {}),
    ("linear tf32 4096^3 (x @ W^T)", torch.float32, 4096, 4096, 4096, True, {}),
    ("matmul f16 2000x3000x1000", torch.float16, 2000, 3000, 1000, False, {}),
    ("matmul f16 77x130x200", torch.float16, 77, 130, 200, False, {}),
]

# ResNet-50 convolutions (in, out, kernel, stride, spatial size), batch 8.
CONVS = [
    ("conv 3x3 64->64 56x56", 64, 64, 3, 1, 56),
    ("conv 1x1 256->64 56x56", 256, 64, 1, 1, 56),
    ("conv 3x3 128->128 28x28", 128, 128, 3, 1, 28),
    ("conv 3x3 s2 256->256 28x28", 256, 256, 3, 2, 28),
    ("conv 1x1 1024->512 14x14", 1024, 512, 1, 1, 14),
]


def estimate_ms(metadata: dict):
    """The roofline estimate of an artifact's launches (all entries), in ms,
    or None: a model from the chip's .td, recorded next to the measured time
    so that the model can be calibrated (docs/NVIDIA.md)."""
    estimate = metadata.get("estimate")
    if not estimate:
        return None
    return sum(e["estimate_us"] for e in estimate["entries"]) / 1e3


def bench_matmul(name, dtype, m, n, k, b_transposed, options, args) -> dict:
    import polyblocks
    row = {"case": name, "baseline": "cublas"}
    options = dict(options)
    if dtype == torch.float32:
        options["allow_tf32"] = True
    t = time.perf_counter()
    artifact = polyblocks.compile(matmul_text(m, n, k, dtype, 0, b_transposed),
                                  target="nvidia-auto", options=options)
    exe = artifact.executable()
    row["compile_s"] = time.perf_counter() - t
    row["estimate_ms"] = estimate_ms(artifact.metadata)
    a = torch.randn(m, k, device="cuda").to(dtype)
    b = torch.randn(*((n, k) if b_transposed else (k, n)), device="cuda").to(dtype)
    bm = b.t() if b_transposed else b
    (c,) = exe.run("mm", [a, b])
    row["error"] = relative_error(c, a.double() @ bm.double())
    row["polyblocks_ms"] = cuda_ms(lambda: exe.run("mm", [a, b]), args.runs, args.warmup)
    previous = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = dtype == torch.float32
    try:
        row["cublas_ms"] = cuda_ms(lambda: torch.matmul(a, bm), args.runs, args.warmup)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = previous
    flops = 2.0 * m * n * k
    row["polyblocks_tflops"] = flops / row["polyblocks_ms"] / 1e9
    row["cublas_tflops"] = flops / row["cublas_ms"] / 1e9
    row["speedup"] = row["cublas_ms"] / row["polyblocks_ms"]
    return row


def _compiled(module, backend: str, options: dict | None = None):
    import torch._dynamo
    torch._dynamo.reset()
    if backend == "polyblocks":
        import polyblocks  # noqa: F401  (registers the backend)
        return torch.compile(module, backend="polyblocks",
                             options={"strict": True, **(options or {})})
    return torch.compile(module, backend=backend)


def bench_module(name: str, module, inputs, args, baseline_name="eager",
                 options: dict | None = None) -> dict:
    """torch.compile(polyblocks) vs eager and Inductor on ``module(*inputs)``
    (``options``: the polyblocks backend's)."""
    row = {"case": name, "baseline": baseline_name}
    with torch.no_grad():
        ref = module(*inputs)
        row["eager_ms"] = cuda_ms(lambda: module(*inputs), args.runs, args.warmup)
        t = time.perf_counter()
        ours = _compiled(module, "polyblocks", options)
        out = ours(*inputs)
        torch.cuda.synchronize()
        row["compile_s"] = time.perf_counter() - t
        refs = ref if isinstance(ref, (tuple, list)) else [ref]
        outs = out if isinstance(out, (tuple, list)) else [out]
        row["error"] = max(relative_error(o, r) for o, r in zip(outs, refs)
                           if isinstance(r, torch.Tensor))
        row["polyblocks_ms"] = cuda_ms(lambda: ours(*inputs), args.runs, args.warmup)
        row["speedup"] = row["eager_ms"] / row["polyblocks_ms"]
        if "inductor" in args.baselines:
            try:
                other = _compiled(module, "inductor")
                other(*inputs)
                row["inductor_ms"] = cuda_ms(lambda: other(*inputs), args.runs, args.warmup)
                row["speedup_vs_inductor"] = row["inductor_ms"] / row["polyblocks_ms"]
            except Exception as e:  # reported, not fatal
                row["inductor_error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:100]}"
    return row


def cases(args):
    """(name, thunk) for every case, in run order."""
    import torch.nn as nn
    from . import models
    result = []
    for name, dtype, m, n, k, b_transposed, options in MATMULS:
        result.append((name, lambda d=dtype, m=m, n=n, k=k, nm=name, bt=b_transposed,
                       o=options: bench_matmul(nm, d, m, n, k, bt, o, args)))
    for name, cin, cout, kernel, stride, size in CONVS:
        def conv(nm=name, cin=cin, cout=cout, kernel=kernel, stride=stride, size=size):
            module = nn.Conv2d(cin, cout, kernel, stride, kernel // 2, bias=False).cuda().eval()
            x = torch.randn(8, cin, size, size, device="cuda")
            # cuDNN runs f32 convolutions on tf32 tensor cores by default
            # (torch.backends.cudnn.allow_tf32); PolyBlocks gets the same.
            tf32 = torch.backends.cudnn.allow_tf32
            return bench_module(nm, module, (x,), args,
                                "eager (cudnn, tf32)" if tf32 else "eager (cudnn)",
                                {"allow_tf32": tf32})
        result.append((name, conv))
    result.append(("softmax 8192x1024", lambda: bench_module(
        "softmax 8192x1024", nn.Softmax(dim=-1).cuda(),
        (torch.randn(8192, 1024, device="cuda"),), args)))
    result.append(("layernorm 8192x768", lambda: bench_module(
        "layernorm 8192x768", nn.LayerNorm(768).cuda().eval(),
        (torch.randn(8192, 768, device="cuda"),), args)))
    for model in args.models:
        for batch in (1, 8):
            nm = f"{model} batch {batch}"

            def run(model=model, batch=batch, nm=nm):
                module, inputs = models.build(model, batch=batch)
                module = module.cuda().eval()
                inputs = tuple(x.cuda() for x in inputs)
                return bench_module(nm, module, inputs, args)
            result.append((nm, run))
    return result


def report(rows: list[dict]) -> str:
    lines = ["| case | PolyBlocks ms | estimate ms | baseline | baseline ms | speedup "
             "| Inductor ms | vs Inductor | TFLOP/s (ours / cuBLAS) | rel. error "
             "| compile s |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]

    def f(v, fmt="{:.3f}"):
        return fmt.format(v) if isinstance(v, (int, float)) else (v or "")
    for r in rows:
        if "failure" in r or "skipped" in r:
            lines.append(f"| {r['case']} | {r.get('failure') or r.get('skipped')} "
                         "| | | | | | | | | |")
            continue
        base_ms = r.get("cublas_ms", r.get("eager_ms"))
        tflops = (f"{r['polyblocks_tflops']:.1f} / {r['cublas_tflops']:.1f}"
                  if "cublas_tflops" in r else "")
        lines.append(
            f"| {r['case']} | {f(r.get('polyblocks_ms'))} | {f(r.get('estimate_ms'))} "
            f"| {r['baseline']} | {f(base_ms)} "
            f"| {f(r.get('speedup'), '{:.2f}x')} | {f(r.get('inductor_ms'))} "
            f"| {f(r.get('speedup_vs_inductor'), '{:.2f}x')} | {tflops} "
            f"| {f(r.get('error'), '{:.1e}')} | {f(r.get('compile_s'), '{:.1f}')} |")
    return "\n".join(lines)


def _write(out: Path, header: str, rows: list[dict]) -> None:
    """gpu.md (the table) and gpu.csv (every field) of ``rows`` under ``out``."""
    write_output(out / "gpu.md", header + "\n\n" + report(rows) + "\n")
    keys = sorted({k for r in rows for k in r}, key=lambda k: (k != "case", k))
    write_csv(out / "gpu.csv", keys, rows)


def main(argv=None) -> int:
    from . import models
    p = argparse.ArgumentParser(prog="python -m polyblocks.bench --suite gpu",
                                description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--suite", choices=["gpu"], default="gpu")
    p.add_argument("--baseline", default="eager,inductor",
                   help="comma-separated: eager (always), inductor")
    p.add_argument("--models", default="resnet50,bert_base",
                   help="comma-separated subset of: " + ", ".join(models.MODELS))
    p.add_argument("--cases", default="",
                   help="only the cases whose name contains one of these "
                        "comma-separated words")
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--budget", type=float, default=130.0,
                   help="seconds; cases not started by then are reported as skipped")
    p.add_argument("--out", default="bench-results")
    p.add_argument("--list", action="store_true", help="print the cases and stop")
    args = p.parse_args(argv)
    args.baselines = [b.strip() for b in args.baseline.split(",") if b.strip()]
    args.models = [m.strip() for m in args.models.split(",") if m.strip()]
    for m in args.models:
        if m not in models.MODELS:
            p.error(f"unknown model {m!r}; known: {', '.join(models.MODELS)}")
    names = [w.strip() for w in args.cases.split(",") if w.strip()]
    selected = [(n, fn) for n, fn in cases(args)
                if not names or any(w in n for w in names)]
    if args.list:
        print("\n".join(n for n, _ in selected))
        return 0
    if not torch.cuda.is_available():
        print("polyblocks.bench --suite gpu: needs a CUDA device "
              "(torch.cuda.is_available() is False)", file=sys.stderr)
        return 2

    os.environ.setdefault("POLYBLOCKS_CACHE_DIR", tempfile.mkdtemp(prefix="polyblocks-gpu-"))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + args.budget
    header = (f"GPU benchmarks, {datetime.date.today()}, {torch.cuda.get_device_name()}, "
              f"torch {torch.__version__} (CUDA {torch.version.cuda}); median of "
              f"{args.runs} CUDA-event timings after {args.warmup} warm-ups.")
    rows = []
    for name, fn in selected:
        if time.monotonic() > deadline:
            rows.append({"case": name, "skipped": "skipped (time budget)"})
            continue
        sys.stderr.write(f"gpu bench: {name}\n")
        try:
            rows.append(fn())
        except Exception as e:  # reported in the table
            traceback.print_exc(file=sys.stderr)
            rows.append({"case": name,
                         "failure": f"{type(e).__name__}: {str(e).splitlines()[0][:120]}"})
        torch.cuda.synchronize()
        # Written after every case: a run killed past its budget (a long
        # compile of the last case) keeps the rows it finished.
        _write(out, header, rows)
    _write(out, header, rows)
    print(header + "\n\n" + report(rows))
    return 1 if any("failure" in r for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
