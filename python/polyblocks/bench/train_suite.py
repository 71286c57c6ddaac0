"""python -m polyblocks.bench --suite train: full training steps (forward,
loss, backward, optimizer) through torch.compile on the CPU.

Models (random weights, no download): torchvision resnet18 and
mobilenet_v2 on --image-size images (default 64x64) with 1000 classes and
cross-entropy; BERT-base with its masked-LM head (BertForMaskedLM) and
GPT-2 small with its LM head (GPT2LMHeadModel), --seq-len tokens (default
128), the inputs as the labels. Dropout is off in every model (each engine
draws its own random numbers: with dropout on, the losses of two engines
would differ by the masks, not by their arithmetic). Optimizer: AdamW (lr
1e-4, torch.optim's default foreach implementation).

For each model, in one process, each engine (eager, PolyBlocks, and the
--baseline engines, e.g. Inductor) starts from the same weights and:
  - runs --steps steps on the same batch; the first compiles (its time is
    the compile time); the losses of every step are compared with eager's
    by the suite's accuracy rule (torch._dynamo.utils.same, 1e-3);
  - runs one more step with the peak resident memory reset before it
    (Linux's /proc/self/clear_refs): "step MiB" is the peak during the step
    above the resident memory before it;
  - is timed: the median of --runs interleaved steps after --warmup, as
    the models suite does.
PolyBlocks compiles the model and, with --compile-optimizer (the default),
optimizer.step; so does every compiled baseline. Ops that run in eager
under PolyBlocks are counted ("fallbacks"). Writes train.md, train.csv
and train.png to --out.
"""

from __future__ import annotations

import argparse
import copy
import ctypes
import datetime
import gc
import logging
import os
import platform
import sys
import time
import traceback

import torch

from .._output import write_csv, write_output

MODELS = ("resnet18", "mobilenet_v2", "bert_base", "gpt2_small")
BASELINES = ("eager", "inductor")


def build(name: str, batch: int, args) -> tuple[torch.nn.Module, tuple, callable]:
    """The model in train mode without dropout, its inputs and its loss
    function loss(model, *inputs)."""
    torch.manual_seed(0)
    if name in ("resnet18", "mobilenet_v2"):
        import torchvision
        extra = {"dropout": 0.0} if name == "mobilenet_v2" else {}
        model = getattr(torchvision.models, name)(weights=None, **extra)
        size = args.image_size
        inputs = (torch.randn(batch, 3, size, size), torch.randint(0, 1000, (batch,)))

        def loss(m, x, y):
            return torch.nn.functional.cross_entropy(m(x), y)
    elif name in ("bert_base", "gpt2_small"):
        import transformers
        if name == "bert_base":
            config = transformers.BertConfig(num_hidden_layers=args.layers,
                                             hidden_dropout_prob=0.0,
                                             attention_probs_dropout_prob=0.0)
            model = transformers.BertForMaskedLM(config)
        else:
            config = transformers.GPT2Config(n_layer=args.layers, use_cache=False,
                                             resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
            model = transformers.GPT2LMHeadModel(config)
        ids = torch.randint(0, config.vocab_size, (batch, args.seq_len))
        inputs = (ids,)

        def loss(m, x):
            return m(input_ids=x, labels=x).loss
    else:
        raise ValueError(f"unknown model {name!r}; known: {', '.join(MODELS)}")
    return model.train(), inputs, loss


def _malloc_trim() -> None:
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def _status_kib(field: str) -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def peak_step_mib(step) -> float | None:
    """The peak resident memory during one call of `step` above the
    resident memory before it, in MiB (None where Linux's peak reset is not
    available)."""
    gc.collect()
    _malloc_trim()
    before = _status_kib("VmRSS")
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # resets VmHWM to the current resident size
    except OSError:
        return None
    step()
    peak = _status_kib("VmHWM")
    if before is None or peak is None:
        return None
    return max(0, peak - before) / 1024


def _engine(name: str, model, inputs, loss, args):
    """(step, optimizer) for `model` under engine `name`."""
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    forward, update = model, opt.step
    if name != "eager":
        options = {"backend": name}
        if name == "polyblocks":
            import polyblocks  # noqa: F401  (registers the backend)
            options["options"] = {"target": args.target}
        forward = torch.compile(model, **options)
        if args.compile_optimizer:
            update = torch.compile(opt.step, **options)

    def step():
        opt.zero_grad(set_to_none=True)
        value = loss(forward, *inputs)
        value.backward()
        update()
        return value.detach()
    return step


def bench_model(name: str, args, progress) -> dict:
    from torch._dynamo.utils import same

    from ..torch import backend
    from .__main__ import _FallbackRecorder, _error_line, _interleaved_median_ms
    row: dict = {"model": name, "batch": args.batch}
    base, inputs, loss = build(name, args.batch, args)
    torch._dynamo.reset()
    engines, losses = {}, {}
    for engine in ["eager", "polyblocks"] + [b for b in args.baselines if b != "eager"]:
        progress(f"{name}: {engine}")
        model = copy.deepcopy(base)
        fallbacks = _FallbackRecorder()
        logging.getLogger("polyblocks").addHandler(fallbacks)
        backend._logged_fallbacks.clear()  # count this model's own
        try:
            step = _engine(engine, model, inputs, loss, args)
            t = time.perf_counter()
            values = [step()]
            row[f"{engine}_compile_s"] = time.perf_counter() - t
            values += [step() for _ in range(args.steps - 1)]
        except Exception as e:  # reported in the table, not fatal
            row[f"{engine}_error"] = _error_line(e)
            traceback.print_exc(file=sys.stderr)
            if engine in ("eager", "polyblocks"):
                row["error"] = f"{engine}: {_error_line(e)}"
                return row
            continue
        finally:
            logging.getLogger("polyblocks").removeHandler(fallbacks)
        if engine == "polyblocks":
            row["fallbacks"] = fallbacks.count
            row["fallback_ops"] = " ".join(fallbacks.ops)
        losses[engine] = torch.stack(values)
        row[f"{engine}_loss"] = float(values[-1])
        row[f"{engine}_step_mib"] = peak_step_mib(step)
        engines[engine] = step
    for engine in engines:
        if engine != "eager":
            row[f"{engine}_accurate"] = bool(same(losses["eager"], losses[engine], tol=1e-3))
    row["accurate"] = row["polyblocks_accurate"]
    progress(f"{name}: runs")
    for engine, ms in _interleaved_median_ms(engines, (), args.runs, args.warmup).items():
        row[f"{engine}_ms"] = ms
    return row


def report(rows: list[dict], args) -> str:
    from .__main__ import _geomean
    others = list(args.baselines)
    head = (["model", "PolyBlocks ms"] + [f"{b} ms" for b in others]
            + [f"vs {b}" for b in others] + ["PB step MiB"] + [f"{b} step MiB" for b in others]
            + [f"loss after {args.steps}", "PB compile s", "accuracy"])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    speedups: dict = {b: [] for b in others}
    fmt = lambda v, f="{:.2f}": f.format(v) if isinstance(v, (int, float)) else "—"  # noqa: E731
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['model']} | failed: {r['error']} |" + " |" * (len(head) - 2))
            continue
        cells = [r["model"], fmt(r["polyblocks_ms"])]
        cells += [fmt(r.get(f"{b}_ms")) for b in others]
        for b in others:
            s = r[f"{b}_ms"] / r["polyblocks_ms"] if r.get(f"{b}_ms") else None
            if s:
                speedups[b].append(s)
            cells.append(fmt(s, "{:.2f}x") if s else r.get(f"{b}_error", "—")[:40])
        cells += [fmt(r.get("polyblocks_step_mib"), "{:.0f}")]
        cells += [fmt(r.get(f"{b}_step_mib"), "{:.0f}") for b in others]
        cells += [fmt(r.get("polyblocks_loss"), "{:.4f}"),
                  fmt(r.get("polyblocks_compile_s"), "{:.1f}")]
        accuracy = "pass" if r["accurate"] else "FAIL"
        if r.get("fallbacks"):
            accuracy += f" ({r['fallbacks']} in eager: {r['fallback_ops']})"
        cells.append(accuracy)
        lines.append("| " + " | ".join(cells) + " |")
    geo = ["**geomean**", ""] + [""] * len(others)
    geo += [f"**{_geomean(speedups[b]):.2f}x**" for b in others]
    lines.append("| " + " | ".join(geo + [""] * (len(head) - len(geo))) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    from .__main__ import _check_args, _counter, _progress, _start_run, chart
    p = argparse.ArgumentParser(prog="python -m polyblocks.bench --suite train",
                                description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--suite", choices=["train"], default="train")
    p.add_argument("--target", default="cpu-host")
    p.add_argument("--baseline", default="eager,inductor",
                   help="comma-separated: " + ", ".join(BASELINES))
    p.add_argument("--models", default=",".join(MODELS),
                   help="comma-separated subset of: " + ", ".join(MODELS))
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--image-size", type=int, default=64)
    p.add_argument("--seq-len", type=int, default=128)
    p.add_argument("--layers", type=int, default=12, help="transformer layers")
    p.add_argument("--steps", type=int, default=5, help="steps whose losses are compared")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--compile-optimizer", action=argparse.BooleanOptionalAction, default=True,
                   help="compile optimizer.step too (default: on)")
    p.add_argument("--out", default="bench-results")
    args = p.parse_args(argv)
    names = _check_args(p, args, BASELINES, MODELS)
    if args.steps < 1:
        p.error("--steps: at least 1")
    out = _start_run(args.out)
    total = len(names) * (2 + len(args.baselines))
    progress = _counter(total)
    rows = [bench_model(name, args, progress) for name in names]
    _progress(total, total, "done")
    table = report(rows, args)
    header = (f"Training steps (forward, loss, backward, AdamW"
              f"{', compiled' if args.compile_optimizer else ' in eager'}), batch {args.batch}, "
              f"{args.image_size}x{args.image_size} images, {args.seq_len} tokens, "
              f"{args.layers} transformer layers, target {args.target}; median of {args.runs} "
              f"interleaved steps after {args.warmup} warm-ups; losses after {args.steps} steps "
              f"against eager's; {datetime.date.today()}, "
              f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
              f"torch {torch.__version__}, {torch.get_num_threads()} torch threads.")
    write_output(out / "train.md", header + "\n\n" + table + "\n")
    keys = sorted({k for r in rows for k in r}, key=lambda k: (k != "model", k))
    write_csv(out / "train.csv", keys, rows)
    charted = chart([r for r in rows if "polyblocks_ms" in r],
                    argparse.Namespace(baselines=args.baselines, target=args.target,
                                       batch=args.batch), out / "train.png")
    print(header + "\n\n" + table)
    print(f"\nwritten: {out / 'train.md'}, {out / 'train.csv'}"
          + (f", {out / 'train.png'}" if charted else ""))
    return 1 if any("error" in r or not r.get("accurate", False) or r.get("fallbacks")
                    for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
