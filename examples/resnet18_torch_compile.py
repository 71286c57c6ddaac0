"""torchvision resnet18 (random weights, batch 1, 224x224) through
torch.compile(backend="polyblocks") on the CPU: checks the result against
eager PyTorch (the dynamo benchmark harness's rule) and times both.

    python3 examples/resnet18_torch_compile.py [--runs 10]

Exits 1 when the compiled model's output does not match eager's.
"""

import argparse
import copy
import statistics
import sys
import time

import torch
from torch._dynamo.utils import same

import polyblocks  # noqa: F401  (registers the "polyblocks" backend)
from polyblocks.bench import models


def median_ms(fn, x, runs, warmup=3):
    for _ in range(warmup):
        fn(x)
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn(x)
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--runs", type=int, default=10)
    args = p.parse_args()
    model, (x,) = models.build("resnet18")
    with torch.no_grad():
        ref = model(x)
        compiled = torch.compile(model, backend="polyblocks", options={"target": "cpu-host"})
        t = time.perf_counter()
        out = compiled(x)
        compile_s = time.perf_counter() - t
        ref64 = copy.deepcopy(model).double()(x.double())
        ok = same(ref, out, fp64_ref=ref64, tol=1e-3)
        err = (out - ref).abs().max().item()
        print(f"resnet18: compiled in {compile_s:.1f} s (cached artifacts are reused)")
        print(f"resnet18: accuracy vs eager: {'OK' if ok else 'MISMATCH'} "
              f"(max abs error {err:.2e}, top-1 class {'agrees' if out.argmax() == ref.argmax() else 'differs'})")
        eager_ms = median_ms(model, x, args.runs)
        pb_ms = median_ms(compiled, x, args.runs)
    print(f"resnet18: eager {eager_ms:.2f} ms, polyblocks {pb_ms:.2f} ms, "
          f"speedup {eager_ms / pb_ms:.2f}x (median of {args.runs} runs, "
          f"{torch.get_num_threads()} threads)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
