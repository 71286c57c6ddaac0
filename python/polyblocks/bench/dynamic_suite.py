"""python -m polyblocks.bench --suite dynamic: models at several sequence
lengths or batch sizes, compiled once for all of them (symbolic shapes)
against a compile specialized to each shape, eager and Inductor.

Models (random weights, no download, inference under torch.no_grad()):
bert_base and gpt2_small (--layers layers, batch 1) at --lengths tokens;
resnet50 at --image-size images and --batches batch sizes. The shape
runs from the first value to the last, in order, in one process, for
each engine:
  - "symbolic": torch.compile with the backend option
    dynamic_shapes="symbolic": one compile for all sizes where the graph
    has a symbolic form (docs/DynamicShapes.md); its backend compiles are
    counted (polyblocks.compiler.stats), and so is every other engine's;
  - "specialize": the default, one compile per shape;
  - eager; Inductor (--baselines).
Every torch.compile gets --dynamic: "auto" (default: dynamo's automatic
dynamic shapes, the first shape static, then the dimensions that changed
symbolic: a resnet's batch, not its image size) or "true". Artifacts are
shared through the compile cache: a graph that both PolyBlocks engines
compile alike is counted once, for the engine that compiled it first.
Every output is checked against eager's by the models suite's rule
(torch._dynamo.utils.same, tol 1e-3, against an fp64 run). Times: median
of --runs interleaved runs after --warmup, per shape, each engine timed
after calls of its own for a quarter of a second (the models suite's
rounds: the engine before it no longer spins its threads). The summary is the
geomean over shapes of symbolic / specialize (the issue's "at most 1.1x")
and of each engine's time over eager. Writes dynamic.md and dynamic.csv
to --out.
"""

from __future__ import annotations

import argparse
import copy
import datetime
import logging
import math
import os
import platform
import time

import torch

from .._output import write_csv, write_output

MODELS = ("bert_base", "gpt2_small", "resnet50")
ENGINES = ("symbolic", "specialize")


def _build(name: str, args):
    """The model and a function from a size (tokens or batch) to inputs."""
    torch.manual_seed(0)
    if name == "resnet50":
        import torchvision
        model = torchvision.models.resnet50(weights=None)
        return model, [int(b) for b in args.batches.split(",")], \
            lambda b: (torch.randn(b, 3, args.image_size, args.image_size),)
    import transformers
    if name == "bert_base":
        config = transformers.BertConfig(num_hidden_layers=args.layers)
        model = transformers.BertModel(config)
    else:
        config = transformers.GPT2Config(n_layer=args.layers, use_cache=False)
        model = transformers.GPT2Model(config)
    vocab = config.vocab_size
    return model, [int(n) for n in args.lengths.split(",")], \
        lambda n: (torch.randint(0, vocab, (1, n)),)


def _outputs(out) -> list[torch.Tensor]:
    if isinstance(out, torch.Tensor):
        return [out]
    if hasattr(out, "to_tuple"):
        out = out.to_tuple()
    return [t for t in out if isinstance(t, torch.Tensor)]


def _engine(name: str, model, dynamic):
    from .. import torch as _pb_torch  # noqa: F401  (registers the backend)
    if name == "eager":
        return model
    if name == "inductor":
        return torch.compile(model, dynamic=dynamic)
    return torch.compile(model, backend="polyblocks", dynamic=dynamic,
                         options={"dynamic_shapes": name})


def _accurate(ref, fp64, res) -> bool:
    from torch._dynamo.utils import same
    return len(ref) == len(res) and all(
        bool(same(r, o, fp64_ref=f, tol=1e-3)) for r, o, f in zip(ref, res, fp64))


def run_model(name: str, args) -> list[dict]:
    from .. import compiler
    model, sizes, make = _build(name, args)
    model.eval()
    model64 = copy.deepcopy(model).double()
    engines = ["eager", *ENGINES, *[b for b in args.baselines.split(",") if b]]
    rows = []
    torch._dynamo.reset()
    dynamic = {"auto": None, "true": True}[args.dynamic]
    fns = {e: _engine(e, model, dynamic) for e in engines}
    compiles = {e: 0 for e in engines}
    with torch.no_grad():
        for size in sizes:
            inputs = make(size)
            row = {"model": name, "size": size}
            ref = _outputs(model(*inputs))
            fp64 = _outputs(model64(*[x.double() if x.is_floating_point() else x
                                      for x in inputs]))
            for e in engines:
                before = compiler.stats["compiles"]
                start = time.perf_counter()
                res = _outputs(fns[e](*inputs))
                row[f"{e}_first_s"] = round(time.perf_counter() - start, 3)
                compiles[e] += compiler.stats["compiles"] - before
                row[f"{e}_accurate"] = _accurate(ref, fp64, res)
            # Interleaved rounds, each engine timed after its own calls have
            # let the thread pool of the engine before it go to sleep.
            from .__main__ import _interleaved_median_ms
            times = _interleaved_median_ms({e: fns[e] for e in engines}, inputs,
                                           args.runs, args.warmup)
            for e in engines:
                row[f"{e}_ms"] = round(times[e], 3)
            row.update({f"{e}_compiles": compiles[e] for e in ENGINES})
            rows.append(row)
            logging.getLogger("polyblocks").info("%s %s: %s", name, size, row)
    return rows


def _geomean(values) -> float:
    values = [v for v in values if v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def report(rows: list[dict], args) -> str:
    engines = ["eager", *ENGINES, *[b for b in args.baselines.split(",") if b]]
    lines = [f"# --suite dynamic ({datetime.date.today()}, {platform.node()}, "
             f"{os.cpu_count()} CPUs, torch {torch.__version__})", "",
             "| model | size | " + " | ".join(f"{e} ms" for e in engines) +
             " | symbolic / specialize | symbolic compiles | specialize compiles |"
             " accurate |",
             "|---|---:|" + "---:|" * (len(engines) + 3) + "---|"]
    for r in rows:
        accurate = all(r[f"{e}_accurate"] for e in engines)
        lines.append(f"| {r['model']} | {r['size']} | " +
                     " | ".join(f"{r[f'{e}_ms']:.2f}" for e in engines) +
                     f" | {r['symbolic_ms'] / r['specialize_ms']:.2f}x"
                     f" | {r['symbolic_compiles']} | {r['specialize_compiles']}"
                     f" | {'yes' if accurate else 'NO'} |")
    lines += ["", "Geomean over shapes, per model:", ""]
    for model in dict.fromkeys(r["model"] for r in rows):
        mine = [r for r in rows if r["model"] == model]
        parts = [f"symbolic / specialize {_geomean(r['symbolic_ms'] / r['specialize_ms'] for r in mine):.2f}x"]
        for e in engines[1:]:
            parts.append(f"eager / {e} {_geomean(r['eager_ms'] / r[f'{e}_ms'] for r in mine):.2f}x")
        lines.append(f"- {model}: " + ", ".join(parts) +
                     f"; compiles: symbolic {mine[-1]['symbolic_compiles']}, "
                     f"specialize {mine[-1]['specialize_compiles']}")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m polyblocks.bench --suite dynamic",
                                description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--suite", default="dynamic")
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--lengths", default="1,7,32,64,129,200,256,512")
    p.add_argument("--batches", default="1,2,3,4,7,8,16")
    p.add_argument("--image-size", type=int, default=224)
    p.add_argument("--layers", type=int, default=12)
    p.add_argument("--baselines", default="inductor",
                   help="comma-separated: inductor (or empty)")
    p.add_argument("--dynamic", choices=["auto", "true"], default="auto",
                   help="torch.compile's dynamic: auto (None: the first shape "
                   "static, then the dimensions that changed symbolic) or true "
                   "(every dimension symbolic from the first call)")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--out", default="bench-results")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    rows = []
    for name in args.models.split(","):
        if name not in MODELS:
            p.error(f"unknown model {name!r}; known: {', '.join(MODELS)}")
        rows += run_model(name, args)
    text = report(rows, args)
    os.makedirs(args.out, exist_ok=True)
    write_output(os.path.join(args.out, "dynamic.md"), text)
    fields = list(dict.fromkeys(k for r in rows for k in r))
    write_csv(os.path.join(args.out, "dynamic.csv"), fields, rows)
    print(text)
    return 0
