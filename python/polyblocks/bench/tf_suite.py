"""python -m polyblocks.bench --suite tf: Keras models (TensorFlow backend)
through polyblocks.keras.compile against TensorFlow on the CPU.

For each model (Keras applications with random weights and logits out:
ResNet50, MobileNetV2 and EfficientNetB0 at 224x224; a BERT-base-like
encoder of Keras layers, 128 tokens, at a quarter of BERT-base's depth)
and each --batch, it measures in one process, on the same input:
  - the compile time: the first call, traced, lowered, converted and
    compiled with an empty PolyBlocks compile cache (strict=True, so that a
    fallback fails the row), and the first call of
    tf.function(jit_compile=True) (XLA);
  - the median time of --runs calls after --warmup calls of each engine:
    PolyBlocks, XLA (tf.function(jit_compile=True)), TensorFlow's graph
    executor (tf.function) and Keras eager (model(x, training=False)), in
    the models suite's interleaved rounds, each call waiting for its result
    (.numpy());
  - PolyBlocks' accuracy against XLA: every output element within 1e-3
    of XLA's relative to the output's largest magnitude.
It prints a Markdown table with the speedups and their geometric means
per batch size, and writes tf.md, tf.csv and tf.png (bar chart) to --out.
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

BASELINES = ("xla", "graph", "eager")
MODELS = ("resnet50", "mobilenet_v2", "efficientnet_b0", "bert_encoder")


def _encoder(batch: int, layers: int = 3, d: int = 768, heads: int = 12, seq: int = 128):
    import keras
    L = keras.layers
    ids = keras.Input((seq,), batch_size=batch, dtype="int32")
    pos = L.Embedding(seq, d)(keras.ops.arange(seq)[None])
    x = L.LayerNormalization(epsilon=1e-12)(L.Embedding(30522, d)(ids) + pos)
    for _ in range(layers):
        a = L.MultiHeadAttention(heads, d // heads)(x, x)
        x = L.LayerNormalization(epsilon=1e-12)(x + a)
        f = L.Dense(d)(L.Dense(4 * d, activation="gelu")(x))
        x = L.LayerNormalization(epsilon=1e-12)(x + f)
    return keras.Model(ids, x)


def build(name: str, batch: int, seed: int = 0):
    """(model, input) for ``name`` at ``batch``: random weights, random
    input."""
    import keras
    import numpy as np

    keras.utils.set_random_seed(seed)
    rng = np.random.default_rng(seed)
    if name == "bert_encoder":
        return _encoder(batch), rng.integers(0, 30522, (batch, 128)).astype(np.int32)
    apps = {"resnet50": keras.applications.ResNet50,
            "mobilenet_v2": keras.applications.MobileNetV2,
            "efficientnet_b0": keras.applications.EfficientNetB0}
    model = apps[name](weights=None, classifier_activation=None)
    return model, rng.uniform(0, 255, (batch, 224, 224, 3)).astype(np.float32)


def matches(ref, res, tol: float = 1e-3) -> bool:
    import numpy as np
    return ref.shape == res.shape and bool(
        np.max(np.abs(ref - res)) <= tol * max(float(np.max(np.abs(ref))), 1e-30))


def bench_model(name: str, batch: int, args, step) -> dict:
    import tensorflow as tf

    import polyblocks.keras as pk
    from .__main__ import _interleaved_median_ms

    row: dict = {"model": name, "batch": batch}
    step(f"{name} b{batch}: build")
    model, x = build(name, batch)
    x = tf.constant(x)

    def infer(t):
        return model(t, training=False)

    xla = tf.function(infer, jit_compile=True)
    graph = tf.function(infer)
    step(f"{name} b{batch}: xla compile")
    t = time.perf_counter()
    ref = xla(x).numpy()
    row["xla_compile_s"] = time.perf_counter() - t
    graph(x)
    step(f"{name} b{batch}: polyblocks compile")
    ours = pk.compile(model, target=args.target, strict=True)
    t = time.perf_counter()
    try:
        res = ours(x).numpy()
    except Exception as e:  # reported in the table, not fatal
        row["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"
        traceback.print_exc(file=sys.stderr)
        return row
    row["polyblocks_compile_s"] = time.perf_counter() - t
    row["accurate"] = matches(ref, res)
    row["max_rel_err"] = float(abs(ref - res).max() / max(float(abs(ref).max()), 1e-30))
    step(f"{name} b{batch}: runs")
    engines = {"polyblocks": lambda v: ours(v).numpy(), "xla": lambda v: xla(v).numpy(),
               "graph": lambda v: graph(v).numpy(),
               "eager": lambda v: model(v, training=False).numpy()}
    for engine, ms in _interleaved_median_ms(engines, [x], args.runs, args.warmup).items():
        row[f"{engine}_ms"] = ms
    return row


def report(rows: list[dict]) -> str:
    """The Markdown table, with the geometric means of the speedups per
    batch size."""
    from .__main__ import _geomean

    head = (["model", "batch", "PolyBlocks ms"] + [f"{b} ms" for b in BASELINES]
            + [f"vs {b}" for b in BASELINES] + ["PB compile s", "xla compile s", "accuracy"])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    fmt = lambda v, f="{:.2f}": f.format(v) if isinstance(v, (int, float)) else "—"  # noqa: E731
    for batch in sorted({r["batch"] for r in rows}):
        speedups: dict = {b: [] for b in BASELINES}
        for r in (r for r in rows if r["batch"] == batch):
            if "error" in r:
                lines.append(f"| {r['model']} | {r['batch']} | failed: {r['error']} |"
                             + " |" * (len(head) - 3))
                continue
            cells = [r["model"], str(r["batch"]), fmt(r["polyblocks_ms"])]
            cells += [fmt(r[f"{b}_ms"]) for b in BASELINES]
            for b in BASELINES:
                speedups[b].append(r[f"{b}_ms"] / r["polyblocks_ms"])
                cells.append(fmt(speedups[b][-1], "{:.2f}x"))
            cells += [fmt(r["polyblocks_compile_s"], "{:.1f}"), fmt(r["xla_compile_s"], "{:.1f}"),
                      "pass" if r["accurate"] else f"FAIL ({r['max_rel_err']:.2e})"]
            lines.append("| " + " | ".join(cells) + " |")
        geo = [f"**geomean b{batch}**", "", ""] + [""] * len(BASELINES)
        geo += [f"**{_geomean(speedups[b]):.2f}x**" for b in BASELINES]
        lines.append("| " + " | ".join(geo + [""] * (len(head) - len(geo))) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    from .__main__ import _progress

    p = argparse.ArgumentParser(prog="python -m polyblocks.bench --suite tf",
                                description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--suite", choices=["tf"], default="tf")
    p.add_argument("--target", default="cpu-host")
    p.add_argument("--models", default=",".join(MODELS),
                   help="comma-separated subset of: " + ", ".join(MODELS))
    p.add_argument("--batch", default="1",
                   help="a batch size, or several comma-separated (1,8)")
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--out", default="bench-results")
    args = p.parse_args(argv)
    try:
        batches = [int(b) for b in args.batch.split(",") if b.strip()]
    except ValueError:
        p.error(f"--batch {args.batch!r}: integers, comma-separated")
    names = [m.strip() for m in args.models.split(",") if m.strip()]
    for n in names:
        if n not in MODELS:
            p.error(f"unknown model {n!r}; known: {', '.join(MODELS)}")
    if not args.target.startswith("cpu"):
        p.error(f"target {args.target!r}: only CPU targets run in this benchmark")

    # Compile times are measured cold: a private, empty compile cache.
    os.environ["POLYBLOCKS_CACHE_DIR"] = tempfile.mkdtemp(prefix="polyblocks-bench-")
    import keras
    import tensorflow as tf

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    steps = len(names) * len(batches) * 4
    state = {"i": 0}

    def step(text):
        _progress(min(state["i"], steps), steps, text)
        state["i"] += 1

    rows = [bench_model(name, batch, args, step) for batch in batches for name in names]
    _progress(steps, steps, "done")
    table = report(rows)
    header = (f"Keras models (TensorFlow backend), batch {args.batch}, target {args.target}, "
              f"against tf.function(jit_compile=True) (XLA CPU), tf.function (graph) and "
              f"Keras eager; "
              f"median of {args.runs} interleaved runs after {args.warmup} warm-ups; "
              f"{datetime.date.today()}, {platform.processor() or platform.machine()}, "
              f"{os.cpu_count()} CPUs, tensorflow {tf.__version__}, keras {keras.__version__}.")
    write_output(out / "tf.md", header + "\n\n" + table + "\n")
    from .__main__ import chart
    charted = chart([{**r, "model": f"{r['model']} b{r['batch']}"} for r in rows],
                    argparse.Namespace(baselines=BASELINES, target=args.target,
                                       batch=args.batch), out / "tf.png")
    keys = sorted({k for r in rows for k in r}, key=lambda k: (k not in ("model", "batch"), k))
    write_csv(out / "tf.csv", keys, rows)
    print(header + "\n\n" + table)
    print(f"\nwritten: {out / 'tf.md'}, {out / 'tf.csv'}"
          + (f", {out / 'tf.png'}" if charted else ""))
    return 1 if any("error" in r or not r.get("accurate", False) for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
