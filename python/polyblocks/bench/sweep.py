"""python -m polyblocks.bench --suite sweep: PolyBlocks on architectures drawn
at random from the model libraries' own lists, each model in its own process.

    python -m polyblocks.bench --suite sweep --source timm,torchvision,hf \\
        --sample 5 --seed 0 [--batch 1] [--out DIR]
    python -m polyblocks.bench --suite sweep --source torchvision \\
        --models resnet18,swin_t
    python -m polyblocks.bench --suite sweep --source pt2 [--sample 10]

Sources and their candidate lists (sorted, then sampled with
random.Random(--seed).sample, --sample models per source; or exactly the
--models named, as NAME or SOURCE:NAME):
  - timm: timm.list_models(), less what is too large for a CPU sweep: the
    names of the huge, giant, xlarge and billion-parameter variants, and the
    models whose default input is larger than 512 pixels;
  - torchvision: torchvision.models.list_models(module=torchvision.models),
    the classification models;
  - hf: the model types of transformers' CONFIG_MAPPING that AutoModel
    builds, from the type's default configuration with --layers layers;
  - pt2: the fixed lists of PyTorch's dynamo benchmarks (the PT2 paper's
    timm and Hugging Face suites, vendored in pt2_lists/, their batch sizes
    dropped): timm models as above, Hugging Face classes built from their
    configuration classes. Those PyTorch's harness builds from a hub
    configuration (and the hub-named LLMs) need a download: skipped.
All weights are random (no pretrained weights, HF_HUB_OFFLINE=1); a model
that cannot be built, or whose eager run fails, is skipped with the reason,
not counted against the compiler, and so is one with more than --max-params
million parameters. In a sample, each skipped model is replaced by the next
of its source's other candidates (sorted, shuffled with the same seed), up
to --max-draws times --sample draws per source, so that --sample N measures
N models of each source where it can; the skipped ones stay in the report. BatchNorm layers get non-trivial running statistics, as
in a trained model.

Inputs, batch --batch: images of --image-size pixels where the model accepts
them (convolutional networks), else at the model's own size (fixed patch
grids: ViT, Swin, ...); --image-size 0 keeps every model's own size. Text: token
ids in the vocabulary, --seq-len tokens (decoder ids too for encoder-decoder
models, an image too for text-and-image models); audio: one second of 16 kHz
waveform. Other inputs (video, spectrograms, ...): skipped.

Each model runs in a child process with a --timeout, so that a crash (a
signal) or a hang of the compiler is recorded for that model and the sweep
goes on. The child measures, on the same inputs, with the machinery of
--suite models (polyblocks.bench.__main__): eager, PolyBlocks and each
--baselines engine (Inductor by default); the compile time of the first call
(empty compile caches); the median of --runs interleaved timing rounds after
--warmup calls; PolyBlocks' accuracy against eager by the dynamo benchmark
harness's rule; and the ops and graphs the backend left to eager (its
warnings).

Every model gets a class, the worst of its flags (worst first):
  crash, timeout, error (compiling raised), wrong (inaccurate), fallback (an
  op or graph ran in eager: the ops are listed), slower-than-eager,
  slower-than-inductor (PolyBlocks' median time above the baseline's),
  skipped (with the reason), ok.
The report goes to --out (default: a new temporary directory, printed):
sweep.md (the setup, a table of the models, a summary: the count of each
class, the share compiled whole with no fallback, the geometric-mean
speedups over the accurate models, the slowest models), sweep.csv (every
field), sweep.png (a bar chart, when matplotlib is installed) and logs/ (each
child's output). The exit status is 0 once the report is written: the
classes are the result.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import json
import logging
import math
import os
import platform
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

from .._output import write_csv, write_output

SOURCES = ("timm", "torchvision", "hf", "pt2")
BASELINES = ("eager", "inductor")

# The classes of a model, worst first: its class is the first of its flags.
CLASSES = ("crash", "timeout", "error", "wrong", "fallback", "slower-than-eager",
           "slower-than-inductor", "skipped", "ok")

PT2_DIR = Path(__file__).resolve().parent / "pt2_lists"
PT2_FILES = {"timm": "timm_models_list.txt", "hf": "huggingface_models_list.txt"}

# timm models too large for a CPU sweep (as timm's own tests exclude them).
TIMM_EXCLUDE = ("*huge*", "*giant*", "*gigantic*", "*enormous*", "*xlarge*", "*_[0-9]b_*")
TIMM_MAX_INPUT = 512

# PyTorch's Hugging Face harness builds these from a configuration on the
# hub (AutoConfig.from_pretrained), which needs a download.
PT2_HUB_CONFIGS = {
    "AllenaiLongformerBase": "allenai/longformer-base-4096",
    "CamemBert": "camembert-base",
    "DistillGPT2": "distilgpt2",
    "GoogleFnet": "google/fnet-base",
    "T5Small": "t5-small",
    "YituTechConvBert": "YituTech/conv-bert-base",
}

# Configuration fields that set a transformer's depth, capped at --layers.
LAYER_FIELDS = ("num_hidden_layers", "num_layers", "n_layer", "n_layers",
                "encoder_layers", "decoder_layers", "num_encoder_layers",
                "num_decoder_layers", "num_blocks")

# The child's lines on its standard output that the sweep reads.
STAGE = "SWEEP-STAGE "
RESULT = "SWEEP-RESULT "
# A test-only hook: the child aborts (a crash) for the models it names.
TEST_CRASH_ENV = "POLYBLOCKS_SWEEP_TEST_CRASH"


class Skip(Exception):
    """The model cannot be run here (its reason is the message): it is
    reported as skipped, not as a failure of the compiler."""


# ---------------------------------------------------------------------------
# Candidates and sampling
# ---------------------------------------------------------------------------

def parse_pt2_list(text: str) -> list[str]:
    """The model names of a PT2 list: one model a line, its batch size after
    a comma or a space (dropped); blank lines and # comments skipped."""
    names = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            names.append(re.split(r"[,\s]", line, maxsplit=1)[0])
    return names


def pt2_lists() -> dict[str, list[str]]:
    """suite ("timm", "hf") -> the PT2 list's names."""
    lists = {}
    for suite, file in PT2_FILES.items():
        path = PT2_DIR / file
        if not path.is_file():
            raise FileNotFoundError(f"--source pt2 needs the PT2 model list {path}, "
                                    "which is missing from this installation")
        lists[suite] = parse_pt2_list(path.read_text())
    return lists


def _timm_candidates() -> list[str]:
    import timm
    from timm.models import get_pretrained_cfg
    names = []
    for name in timm.list_models(exclude_filters=list(TIMM_EXCLUDE)):
        cfg = get_pretrained_cfg(name)
        size = tuple(getattr(cfg, "input_size", None) or (3, 224, 224))
        if max(size[1:]) <= TIMM_MAX_INPUT:
            names.append(name)
    return names


def _hf_candidates() -> list[str]:
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES
    from transformers.models.auto.modeling_auto import MODEL_MAPPING_NAMES
    return [t for t in CONFIG_MAPPING_NAMES if t in MODEL_MAPPING_NAMES]


def candidates(source: str) -> list[str]:
    """The sorted candidate names of `source`."""
    if source not in SOURCES:
        raise ValueError(f"unknown source {source!r}; known: {', '.join(SOURCES)}")
    try:
        if source == "timm":
            names = _timm_candidates()
        elif source == "torchvision":
            import torchvision
            names = torchvision.models.list_models(module=torchvision.models)
        elif source == "hf":
            names = _hf_candidates()
        else:
            names = [n for suite in pt2_lists().values() for n in suite]
    except ImportError as e:
        package = {"hf": "transformers"}.get(source, source)
        raise RuntimeError(f"--source {source} needs the {package} package "
                           f"(python/requirements.txt): {e}") from e
    return sorted(set(names))


def select(sources: list[str], sample: int | None = None, seed: int = 0,
           models: list[str] | None = None, lister=candidates) -> list[str]:
    """The models to run, as SOURCE:NAME keys: exactly `models` (NAME or
    SOURCE:NAME; a bare NAME must be in exactly one of `sources`), or
    `sample` of each source's sorted candidates drawn with
    random.Random(seed), or all of a pt2 list without `sample`.
    `lister(source)` gives the candidates (tests pass their own)."""
    for s in sources:
        if s not in SOURCES:
            raise ValueError(f"unknown source {s!r}; known: {', '.join(SOURCES)}")
    if sample is not None and sample < 1:
        raise ValueError(f"--sample must be at least 1, not {sample}")
    lists = {s: lister(s) for s in sources}
    if models:
        keys = []
        for m in models:
            source, sep, name = m.partition(":")
            if sep and source in SOURCES:
                if source not in sources:
                    raise ValueError(f"{m!r}: source {source!r} is not in --source")
                if name not in lists[source]:
                    raise ValueError(f"{name!r} is not a model of {source}")
                keys.append(f"{source}:{name}")
                continue
            owners = [s for s in sources if m in lists[s]]
            if not owners:
                raise ValueError(f"{m!r} is not a model of {', '.join(sources)}")
            if len(owners) > 1:
                raise ValueError(f"{m!r} is a model of {' and '.join(owners)}: "
                                 f"name one, as {owners[0]}:{m}")
            keys.append(f"{owners[0]}:{m}")
        return keys
    keys = []
    for s in sources:
        names = sorted(lists[s])
        if sample is None:
            if s != "pt2":
                raise ValueError(f"--source {s}: give --sample N or --models")
            picked = names
        else:
            picked = random.Random(seed).sample(names, min(sample, len(names)))
        keys += [f"{s}:{n}" for n in picked]
    return keys


def replacements(sources: list[str], picked: list[str], seed: int = 0,
                 lister=candidates) -> dict[str, list[str]]:
    """Per source, the keys that stand in for sampled models that turn out
    skipped (cannot be built offline, too large, inputs the sweep does not
    generate): the source's other candidates, sorted, then shuffled with
    random.Random(seed), in the order they are drawn."""
    taken = set(picked)
    result = {}
    for s in sources:
        rest = [n for n in sorted(lister(s)) if f"{s}:{n}" not in taken]
        random.Random(seed).shuffle(rest)
        result[s] = [f"{s}:{n}" for n in rest]
    return result


def run_all(keys: list[str], opts, out: Path, spares: dict[str, list[str]] | None = None,
            run=None) -> list[dict]:
    """Runs each of `keys` in a child (`run`, run_child by default). With
    `spares` (a sample), each skipped model is replaced by the next spare of
    its source, at most --max-draws times the sample per source in all, so
    that a sample of N measures N models of each source where it can; the
    skipped ones stay in the report. Writes a partial report after each."""
    run = run or (lambda key: run_child(key, opts, logs=out / "logs"))
    keys = list(keys)
    drawn = {}
    for key in keys:
        source = key.partition(":")[0]
        drawn[source] = drawn.get(source, 0) + 1
    rows = []
    i = 0
    while i < len(keys):
        key = keys[i]
        sys.stderr.write(f"[{i + 1}/{len(keys)}] {key} ... ")
        sys.stderr.flush()
        row = finish_row(run(key))
        rows.append(row)
        sys.stderr.write(f"{row['class']} ({row.get('wall_s', 0):.0f} s)"
                         + (f": {row['detail'][:100]}" if row["detail"] else "") + "\n")
        source = key.partition(":")[0]
        if spares and row["class"] == "skipped" and spares.get(source) and \
                drawn[source] < opts.max_draws * opts.sample:
            keys.append(spares[source].pop(0))
            drawn[source] += 1
        write_report(rows, opts, keys, out, plot=False)  # a partial report so far
        i += 1
    return rows


# ---------------------------------------------------------------------------
# Building a model (in the child)
# ---------------------------------------------------------------------------

def _trained_statistics(model) -> None:
    """Non-trivial BatchNorm running statistics, as in a trained model."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.modules.batchnorm._BatchNorm) and \
                    m.running_mean is not None:
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 1.5)


def _first_working(model, candidates: list[tuple]) -> tuple:
    """The first of `candidates` (input tuples) that the model runs on in
    eager; Skip if none does."""
    error = None
    with torch.no_grad():
        for inputs in candidates:
            try:
                model(*inputs)
                return inputs
            except Exception as e:  # the next size, or skipped
                error = e
    raise Skip(f"eager fails: {_one_line(error)}")


def _image_inputs(model, batch: int, sizes: list, channels: int = 3) -> tuple:
    """Images of the first of `sizes` (a side, or (height, width)) that the
    model runs on in eager."""
    shapes = [(s, s) if isinstance(s, int) else tuple(s) for s in sizes]
    tried = [(torch.randn(batch, channels, *hw),) for hw in dict.fromkeys(shapes)]
    return _first_working(model, tried)


def _build_timm(name: str, opts):
    import timm
    model = timm.create_model(name, pretrained=False).eval()
    _trained_statistics(model)
    cfg = getattr(model, "pretrained_cfg", None) or {}
    channels, height, width = tuple(cfg.get("input_size") or (3, 224, 224))
    sizes: list = [(height, width)]
    if not cfg.get("fixed_input_size") and opts.image_size:
        least = max(tuple(cfg.get("min_input_size") or (3, 0, 0))[1:])
        small = max(opts.image_size, least)
        if small < min(height, width):
            sizes.insert(0, small)
    return model, _image_inputs(model, opts.batch, sizes, channels)


def _build_torchvision(name: str, opts):
    from . import models
    if name.startswith("vit_"):  # a fixed patch grid: its own size
        sizes = [224]
    else:
        sizes = ([opts.image_size] if opts.image_size else []) + \
            [299 if name == "inception_v3" else 224]
    make = models._torchvision(name)
    model, _ = make(opts.batch, {"image_size": 224})
    model.eval()
    return model, _image_inputs(model, opts.batch, sizes)


def _capped_depths(config, layers: int) -> dict:
    """The depth fields of `config` above `layers`, by their real names: an
    alias (attribute_map) counts only if it names a depth field too (a
    ConvNeXt's num_hidden_layers is its number of stages)."""
    aliases = getattr(config, "attribute_map", None) or {}
    capped = {}
    for field in LAYER_FIELDS:
        real = aliases.get(field, field)
        if real not in LAYER_FIELDS:
            continue
        value = getattr(config, real, None)
        if isinstance(value, int) and not isinstance(value, bool) and value > layers:
            capped[real] = layers
    return capped


def _shrink(config, layers: int) -> None:
    """Caps the depth of a configuration (and its sub-configurations) in
    place: its layer counts, each stage of `depths`, and `layer_types`."""
    from transformers import PretrainedConfig
    for field, value in _capped_depths(config, layers).items():
        setattr(config, field, value)
    depths = getattr(config, "depths", None)
    if isinstance(depths, (list, tuple)) and all(isinstance(d, int) for d in depths):
        config.depths = type(depths)(min(d, layers) for d in depths)
    types = getattr(config, "layer_types", None)
    depth = getattr(config, "num_hidden_layers", None)
    if isinstance(types, list) and isinstance(depth, int) and len(types) > depth:
        config.layer_types = types[:depth]
    for value in list(vars(config).values()):
        if isinstance(value, PretrainedConfig):
            _shrink(value, layers)


def _hf_config(config_cls, layers: int):
    """`config_cls`'s default configuration with at most `layers` layers:
    rebuilt with the capped depth, so that what the constructor derives from
    it follows, then sub-configurations capped in place."""
    config = config_cls()
    if layers:
        capped = _capped_depths(config, layers)
        if capped:
            try:
                config = config_cls(**capped)
            except Exception:  # some constructors check their fields: capped in place
                config = config_cls()
        _shrink(config, layers)
    if hasattr(config, "use_cache"):
        config.use_cache = False
    return config


class KeywordModel(torch.nn.Module):
    """`model` called with positional tensors as the keyword arguments
    `names` (transformers models take keywords)."""

    def __init__(self, model: torch.nn.Module, names: list[str]):
        super().__init__()
        self.model = model
        self.names = list(names)

    def forward(self, *args):
        return self.model(**dict(zip(self.names, args)))


def _image(config, batch: int):
    size = getattr(config, "image_size", 224)
    h, w = (size, size) if isinstance(size, int) else tuple(size)[-2:]
    return torch.randn(batch, getattr(config, "num_channels", 3), h, w)


def _hf_inputs(model, config, opts, bart_eos: bool = False) -> tuple:
    """The model wrapped to take positional tensors, and its inputs: its
    main input (token ids, an image or a waveform), decoder ids for an
    encoder-decoder model, and an image too for a text-and-image model
    whose text alone does not run."""
    import inspect
    text = config.get_text_config() if hasattr(config, "get_text_config") else config
    vocab = getattr(text, "vocab_size", None)
    seq = opts.seq_len
    limit = getattr(text, "max_position_embeddings", None)
    if isinstance(limit, int) and 0 < limit < seq:
        seq = limit
    main = getattr(model, "main_input_name", "input_ids")
    kwargs = {}
    if main == "input_ids":
        if not isinstance(vocab, int):
            raise Skip("no vocabulary size in its configuration")
        ids = torch.randint(0, vocab, (opts.batch, seq))
        if bart_eos and isinstance(getattr(config, "eos_token_id", None), int):
            ids[:, -1] = config.eos_token_id
        kwargs["input_ids"] = ids
    elif main == "pixel_values":
        kwargs["pixel_values"] = _image(config, opts.batch)
    elif main == "input_values":
        kwargs["input_values"] = torch.randn(opts.batch, 16000)
    else:
        raise Skip(f"takes {main} (the sweep generates token ids, images and "
                   "audio waveforms)")
    params = inspect.signature(model.forward).parameters
    if "decoder_input_ids" in params and getattr(config, "is_encoder_decoder", False):
        if not isinstance(vocab, int):
            raise Skip("no vocabulary size for its decoder input")
        kwargs["decoder_input_ids"] = kwargs.get("input_ids",
                                                 torch.randint(0, vocab, (opts.batch, seq)))
    tries = [kwargs]
    vision = getattr(config, "vision_config", None)
    if main == "input_ids" and "pixel_values" in params and vision is not None:
        tries.append(dict(kwargs, pixel_values=_image(vision, opts.batch)))
    error = None
    for t in tries:
        wrapped = KeywordModel(model, list(t)).eval()
        try:
            return wrapped, _first_working(wrapped, [tuple(t.values())])
        except Skip as e:  # the next set of inputs, or skipped
            error = e
    raise error


def _build_hf_type(model_type: str, opts):
    from transformers import CONFIG_MAPPING, AutoModel
    config = _hf_config(CONFIG_MAPPING[model_type], opts.layers)
    model = AutoModel.from_config(config).eval()
    _trained_statistics(model)
    return _hf_inputs(model, config, opts)


def _build_hf_class(name: str, opts):
    """A model of PyTorch's Hugging Face list: a transformers class built
    from its configuration class's defaults, as PyTorch's harness does."""
    if name in PT2_HUB_CONFIGS:
        raise Skip(f"needs download (its configuration is the hub's "
                   f"{PT2_HUB_CONFIGS[name]})")
    if "/" in name:
        raise Skip(f"needs download (the hub's {name})")
    import transformers
    cls = getattr(transformers, name, None)
    if cls is None or not hasattr(cls, "config_class"):
        raise Skip(f"transformers {transformers.__version__} has no model class {name}")
    config = _hf_config(cls.config_class, opts.layers)
    if name.startswith(("GPT2ForSequenceClassification", "GPTNeoForSequenceClassification",
                        "GPTJForSequenceClassification", "Roberta", "Marian")):
        config.pad_token_id = 0  # as PyTorch's harness sets it
    model = cls(config).eval()
    _trained_statistics(model)
    return _hf_inputs(model, config, opts, bart_eos="Bart" in name)


def build(key: str, opts):
    """The model of SOURCE:NAME `key` (random weights, eval mode) and its
    inputs; Skip if it cannot be run here."""
    source, _, name = key.partition(":")
    torch.manual_seed(0)
    try:
        if source in ("timm", "torchvision", "hf"):
            builder = {"timm": _build_timm, "torchvision": _build_torchvision,
                       "hf": _build_hf_type}[source]
        elif source == "pt2":
            lists = pt2_lists()
            if name in lists["timm"]:
                builder = _build_timm
            elif name in lists["hf"]:
                builder = _build_hf_class
            else:
                raise Skip(f"{name} is in neither PT2 list")
        else:
            raise ValueError(f"unknown source {source!r}")
        return builder(name, opts)
    except Skip:
        raise
    except Exception as e:
        text = _one_line(e)
        if re.search(r"offline|couldn't connect|LocalEntryNotFound|hf_hub|huggingface\.co",
                     f"{type(e).__name__} {e}", re.IGNORECASE):
            raise Skip(f"needs download: {text}") from e
        raise Skip(f"does not build: {text}") from e


# ---------------------------------------------------------------------------
# One model, measured (in the child)
# ---------------------------------------------------------------------------

def _one_line(e: BaseException | None, limit: int = 200) -> str:
    if e is None:
        return "unknown error"
    text = (str(e).strip().splitlines() or [""])[0]
    return f"{type(e).__name__}: {text}"[:limit]


def _stage(name: str) -> None:
    print(STAGE + name, flush=True)


def measure(key: str, opts) -> dict:
    """Builds, compiles and times the model `key`; one row of the report."""
    from torch._dynamo.utils import counters, same
    from . import models
    from .__main__ import (_FallbackRecorder, _accurate, _compile, _compile_baselines,
                           _interleaved_median_ms)

    source, _, name = key.partition(":")
    row: dict = {"key": key, "source": source, "model": name}
    _stage("build")
    try:
        model, inputs = build(key, opts)
    except Skip as e:
        row["skipped"] = str(e)
        return row
    params = sum(p.numel() for p in model.parameters())
    row["params_m"] = round(params / 1e6, 2)
    row["input"] = " ".join("x".join(map(str, x.shape)) for x in inputs)
    if opts.max_params and params > opts.max_params * 1e6:
        row["skipped"] = (f"too large: {params / 1e6:.0f}M parameters "
                          f"(--max-params {opts.max_params:g})")
        return row
    with torch.no_grad():
        _stage("eager")
        ref = models.output_tensors(model(*inputs))
        _stage("polyblocks compile")
        crash = os.environ.get(TEST_CRASH_ENV, "")
        if key in crash.split(",") or name in crash.split(","):
            os.abort()
        recorder = _FallbackRecorder()
        logging.getLogger("polyblocks").addHandler(recorder)
        counters.clear()
        t = time.perf_counter()
        try:
            compiled = _compile(model, "polyblocks", opts.target)
            res = models.output_tensors(compiled(*inputs))
        except Exception as e:  # a class of the report
            row["error"] = _one_line(e)
            return row
        finally:
            logging.getLogger("polyblocks").removeHandler(recorder)
        row["polyblocks_compile_s"] = time.perf_counter() - t
        row["eager_fallbacks"] = recorder.count
        row["fallback_ops"] = recorder.ops
        row["graph_breaks"] = sum(counters["graph_break"].values())
        _stage("accuracy")
        try:
            row["accurate"] = bool(_accurate(model, inputs, ref, res))
        except Exception as e:  # no float64 copy of the model: no fp64 reference
            row["accuracy_note"] = f"no float64 reference ({_one_line(e, 80)})"
            row["accurate"] = len(ref) == len(res) and all(
                bool(same(r, o, tol=1e-3)) for r, o in zip(ref, res))
        engines = {"eager": model, "polyblocks": compiled}
        _compile_baselines(model, inputs, opts.baselines, opts.target, False, row, engines,
                           step=lambda base: _stage(f"{base} compile"),
                           error_line=_one_line)
        _stage("timing")
        try:
            compiled(*inputs)  # traced again after the baselines reset Dynamo
            for engine, ms in _interleaved_median_ms(engines, inputs, opts.runs,
                                                     opts.warmup).items():
                row[f"{engine}_ms"] = ms
        except Exception as e:
            row["error"] = f"while timing: {_one_line(e)}"
    return row


def _child(key: str, opts) -> int:
    row = measure(key, opts)
    print(RESULT + json.dumps(row), flush=True)
    return 0


# ---------------------------------------------------------------------------
# Running the children
# ---------------------------------------------------------------------------

def _child_argv(key: str, opts) -> list[str]:
    return [sys.executable, "-m", "polyblocks.bench.sweep", "--one", key,
            "--batch", str(opts.batch), "--image-size", str(opts.image_size),
            "--seq-len", str(opts.seq_len), "--layers", str(opts.layers),
            "--baselines", ",".join(opts.baselines), "--runs", str(opts.runs),
            "--warmup", str(opts.warmup), "--target", opts.target,
            "--max-params", str(opts.max_params)]


def parse_child(key: str, returncode: int | None, stdout: str, stderr: str,
                timed_out: bool = False, timeout: float | None = None) -> dict:
    """The row of a child's run: its result line, or a crash or a timeout
    during the last stage it announced."""
    source, _, name = key.partition(":")
    row: dict = {"key": key, "source": source, "model": name}
    stage = None
    for line in stdout.splitlines():
        if line.startswith(STAGE):
            stage = line[len(STAGE):].strip()
        elif line.startswith(RESULT):
            row = json.loads(line[len(RESULT):])
    during = f" during {stage}" if stage else ""
    if timed_out:
        row = {"key": key, "source": source, "model": name, "stage": stage,
               "timeout": f"no result after {timeout:g} s{during}"}
    elif "skipped" not in row and not any(k.endswith("_ms") or k == "error" for k in row):
        if returncode is not None and returncode < 0:
            try:
                how = signal.Signals(-returncode).name
            except ValueError:
                how = f"signal {-returncode}"
        else:
            how = f"exit status {returncode}"
        last = (stderr.strip().splitlines() or [""])[-1][:160]
        row["crash"] = f"{how}{during}" + (f": {last}" if last else "")
        row["stage"] = stage
    elif returncode:
        row["exit"] = f"exit status {returncode} after its result"
    return row


def run_child(key: str, opts, logs: Path | None = None) -> dict:
    """Runs `key` in a child process with its own empty compile caches and
    no network; returns its row."""
    import polyblocks
    package_root = str(Path(polyblocks.__file__).resolve().parents[1])
    with tempfile.TemporaryDirectory(prefix="polyblocks-sweep-") as tmp:
        env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
                   TRANSFORMERS_VERBOSITY="error",
                   POLYBLOCKS_CACHE_DIR=str(Path(tmp) / "polyblocks"),
                   TORCHINDUCTOR_CACHE_DIR=str(Path(tmp) / "inductor"),
                   TRITON_CACHE_DIR=str(Path(tmp) / "triton"),
                   TORCHINDUCTOR_FX_GRAPH_CACHE="0", TORCHINDUCTOR_AUTOGRAD_CACHE="0",
                   PYTHONPATH=os.pathsep.join(
                       [package_root] + [p for p in os.environ.get("PYTHONPATH", "")
                                         .split(os.pathsep) if p]))
        env.pop("POLYBLOCKS_CACHE", None)
        start = time.perf_counter()
        proc = subprocess.Popen(_child_argv(key, opts), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=env,
                                start_new_session=True)
        timed_out = False
        try:
            out, err = proc.communicate(timeout=opts.timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # the child and its workers
            except ProcessLookupError:
                pass
            out, err = proc.communicate()
        wall = time.perf_counter() - start
    row = parse_child(key, proc.returncode, out, err, timed_out, opts.timeout)
    row["wall_s"] = round(wall, 1)
    if logs is not None:
        logs.mkdir(parents=True, exist_ok=True)
        safe = re.sub(r"[^A-Za-z0-9._-]+", "_", key)
        write_output(logs / f"{safe}.log", f"$ {' '.join(_child_argv(key, opts))}\n"
                     f"--- stdout\n{out}\n--- stderr\n{err}")
    return row


# ---------------------------------------------------------------------------
# Classes, summary and report
# ---------------------------------------------------------------------------

def classify(row: dict) -> list[str]:
    """The flags of a row, worst first (CLASSES order); ["ok"] if none."""
    if row.get("skipped"):
        return ["skipped"]
    for fatal in ("crash", "timeout", "error"):
        if row.get(fatal):
            return [fatal]
    flags = []
    if row.get("accurate") is False:
        flags.append("wrong")
    if row.get("fallback_ops") or row.get("eager_fallbacks"):
        flags.append("fallback")
    pb = row.get("polyblocks_ms")
    for base in BASELINES:
        other = row.get(f"{base}_ms")
        if pb and other and pb > other:
            flags.append(f"slower-than-{base}")
    flags = flags or ["ok"]
    return sorted(flags, key=CLASSES.index)


def finish_row(row: dict) -> dict:
    """The row with its speedups, flags, class and detail filled in."""
    pb = row.get("polyblocks_ms")
    for base in BASELINES:
        other = row.get(f"{base}_ms")
        if pb and other:
            row[f"speedup_vs_{base}"] = other / pb
    flags = classify(row)
    row["flags"] = ",".join(flags)
    row["class"] = flags[0]
    details = [row.get(k) for k in ("skipped", "crash", "timeout", "error")]
    details += [f"{b}: {row[f'{b}_error']}" for b in BASELINES if row.get(f"{b}_error")]
    details += [row.get("accuracy_note"), row.get("exit")]
    row["detail"] = "; ".join(d for d in details if d)
    return row


def summarize(rows: list[dict], baselines=BASELINES) -> dict:
    """Counts of each class, the share of measured models compiled whole
    (no error, no fallback), the geomean speedups over the accurate models,
    and the slowest models (by speedup over eager)."""
    from .__main__ import _geomean
    counts = {c: sum(r["class"] == c for r in rows) for c in CLASSES}
    measured = [r for r in rows if r["class"] != "skipped"]
    whole = [r for r in measured
             if r.get("polyblocks_ms") and not (set(r["flags"].split(",")) &
                                               {"crash", "timeout", "error", "fallback"})]
    accurate = [r for r in measured if r.get("accurate") and r.get("polyblocks_ms")]
    geomean = {b: _geomean([r.get(f"speedup_vs_{b}") for r in accurate])
               for b in baselines}
    timed = sorted((r for r in measured if r.get("speedup_vs_eager")),
                   key=lambda r: r["speedup_vs_eager"])
    return {"counts": counts, "models": len(rows), "measured": len(measured),
            "whole": len(whole),
            "whole_pct": 100.0 * len(whole) / len(measured) if measured else float("nan"),
            "accurate": len(accurate), "geomean": geomean,
            "slowest": [(r["key"], r["speedup_vs_eager"]) for r in timed[:5]]}


def _cell(value, fmt: str = "{:.2f}") -> str:
    if value is None or value == "" or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)):
        return fmt.format(value)
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value)) or "—"
    return str(value).replace("|", "\\|").replace("\n", " ")


def table(rows: list[dict], baselines=BASELINES) -> str:
    bases = [b for b in baselines if b != "eager"]
    head = ["model", "class", "flags", "input", "params M", "PB compile s", "PB ms",
            "eager ms"] + [f"{b} ms" for b in bases] + ["vs eager"] + \
        [f"vs {b}" for b in bases] + ["accurate", "fallback ops", "detail"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [r["key"], f"**{r['class']}**", r["flags"], _cell(r.get("input")),
                 _cell(r.get("params_m"), "{:.1f}"),
                 _cell(r.get("polyblocks_compile_s"), "{:.1f}"),
                 _cell(r.get("polyblocks_ms")), _cell(r.get("eager_ms"))]
        cells += [_cell(r.get(f"{b}_ms")) for b in bases]
        cells += [_cell(r.get("speedup_vs_eager"), "{:.2f}x")]
        cells += [_cell(r.get(f"speedup_vs_{b}"), "{:.2f}x") for b in bases]
        cells += [_cell(r.get("accurate")), _cell(r.get("fallback_ops")),
                  _cell(r.get("detail")[:160] if r.get("detail") else None)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def summary_text(s: dict, baselines=BASELINES) -> str:
    counts = ", ".join(f"{c} {n}" for c, n in s["counts"].items() if n)
    lines = [f"- models: {s['models']} ({counts})",
             f"- compiled whole (no error, no fallback): {s['whole']} of {s['measured']} "
             f"measured ({_cell(s['whole_pct'], '{:.0f}')}%)"]
    for b in baselines:
        lines.append(f"- geomean speedup over {b}, {s['accurate']} accurate models: "
                     f"{_cell(s['geomean'][b], '{:.2f}x')}")
    if s["slowest"]:
        lines.append("- slowest against eager: " + ", ".join(
            f"{k} {v:.2f}x" for k, v in s["slowest"]))
    return "\n".join(lines)


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def header(opts, keys: list[str]) -> str:
    versions = ", ".join(f"{p} {_version(p)}" for p in ("torch", "torchvision", "timm",
                                                        "transformers"))
    return "\n".join([
        "# PolyBlocks architecture sweep", "",
        f"- date: {datetime.datetime.now().isoformat(timespec='seconds')}",
        f"- machine: {platform.node()}, {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} CPUs, {torch.get_num_threads()} torch threads",
        f"- versions: {versions}, polyblocks {_version('polyblocks')}",
        f"- sources: {','.join(opts.sources)}; "
        + (f"models: {','.join(opts.models)}" if opts.models
           else f"sample {opts.sample if opts.sample else 'all'}, seed {opts.seed}")
        + f"; {len(keys)} models",
        f"- batch {opts.batch}, image size {opts.image_size or 'the model’s own'}, "
        f"sequence length {opts.seq_len}, transformer layers {opts.layers or 'all'}",
        f"- target {opts.target}; baselines {','.join(opts.baselines)}; median of "
        f"{opts.runs} interleaved runs after {opts.warmup} warm-ups; timeout "
        f"{opts.timeout:g} s a model; accuracy: the dynamo benchmark harness's rule",
    ])


FIELDS = ["key", "source", "model", "class", "flags", "detail", "input", "params_m",
          "polyblocks_compile_s", "polyblocks_ms", "eager_ms", "inductor_ms",
          "inductor_compile_s", "speedup_vs_eager", "speedup_vs_inductor", "accurate",
          "accuracy_note", "eager_fallbacks", "fallback_ops", "graph_breaks",
          "skipped", "crash", "timeout", "error", "inductor_error", "stage", "exit",
          "wall_s"]


def write_report(rows: list[dict], opts, keys: list[str], out: Path,
                 plot: bool = True) -> dict:
    """sweep.md, sweep.csv and (with `plot`) sweep.png under `out`; returns
    the paths written."""
    out.mkdir(parents=True, exist_ok=True)
    s = summarize(rows, opts.baselines)
    text = (header(opts, keys) + "\n\n## Models\n\n" + table(rows, opts.baselines)
            + "\n\n## Summary\n\n" + summary_text(s, opts.baselines) + "\n")
    written = {"md": out / "sweep.md", "csv": out / "sweep.csv"}
    write_output(written["md"], text)
    fields = FIELDS + sorted({k for r in rows for k in r} - set(FIELDS))
    flat = [{k: (";".join(v) if isinstance(v, list) else v) for k, v in r.items()}
            for r in rows]
    write_csv(written["csv"], fields, flat)
    if plot:
        from .__main__ import chart
        timed = [{"model": r["key"], **{f"{e}_ms": r.get(f"{e}_ms")
                                        for e in ("polyblocks", *opts.baselines)}}
                 for r in rows if r.get("polyblocks_ms")]
        if timed and chart(timed, opts, out / "sweep.png"):
            written["png"] = out / "sweep.png"
    return written


# ---------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------

def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m polyblocks.bench --suite sweep",
                                description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--suite", default="sweep", choices=["sweep"])
    p.add_argument("--source", default="timm,torchvision,hf",
                   help="comma-separated: " + ", ".join(SOURCES))
    p.add_argument("--sample", type=int, help="models drawn from each source")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-draws", type=float, default=3,
                   help="a sampled model that is skipped is replaced by another of its "
                   "source, up to this many times --sample draws per source (1: none)")
    p.add_argument("--models", default="",
                   help="comma-separated NAME or SOURCE:NAME instead of a sample")
    p.add_argument("--list", action="store_true",
                   help="print the selected models and exit")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--image-size", type=int, default=160,
                   help="image side where a model accepts it (0: each model's own)")
    p.add_argument("--seq-len", type=int, default=128)
    p.add_argument("--layers", type=int, default=2,
                   help="transformer layers of Hugging Face models (0: the config's)")
    p.add_argument("--baselines", "--baseline", default="eager,inductor",
                   help="comma-separated: " + ", ".join(BASELINES))
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--timeout", type=float, default=900,
                   help="seconds a model may take, building and compiling included")
    p.add_argument("--max-params", type=float, default=200,
                   help="models with more parameters (millions) are skipped (0: no limit)")
    p.add_argument("--target", default="cpu-host")
    p.add_argument("--out", help="output directory (default: a new temporary one)")
    p.add_argument("--one", help=argparse.SUPPRESS)
    return p


def parse_args(argv=None):
    p = _parser()
    opts = p.parse_args(argv)
    opts.sources = [s.strip() for s in opts.source.split(",") if s.strip()]
    for s in opts.sources:
        if s not in SOURCES:
            p.error(f"unknown source {s!r}; known: {', '.join(SOURCES)}")
    if not opts.sources:
        p.error("--source names no source")
    if opts.sample is not None and opts.sample < 1:
        p.error(f"--sample must be at least 1, not {opts.sample}")
    opts.models = [m.strip() for m in opts.models.split(",") if m.strip()]
    if opts.models and opts.sample is not None:
        p.error("give --sample or --models, not both")
    opts.baselines = [b.strip() for b in opts.baselines.split(",") if b.strip()]
    for b in opts.baselines:
        if b not in BASELINES:
            p.error(f"unknown baseline {b!r}; known: {', '.join(BASELINES)}")
    if "eager" not in opts.baselines:
        opts.baselines.insert(0, "eager")
    for name in ("batch", "runs"):
        if getattr(opts, name) < 1:
            p.error(f"--{name} must be at least 1")
    for name in ("warmup", "image_size", "seq_len", "layers"):
        if getattr(opts, name) < 0:
            p.error(f"--{name.replace('_', '-')} must not be negative")
    if opts.seq_len == 0:
        p.error("--seq-len must be at least 1")
    if opts.timeout <= 0:
        p.error("--timeout must be positive")
    if not opts.target.startswith("cpu"):
        p.error(f"target {opts.target!r}: only CPU targets run in this benchmark")
    return p, opts


def main(argv=None) -> int:
    p, opts = parse_args(list(sys.argv[1:] if argv is None else argv))
    if opts.one:
        return _child(opts.one, opts)
    try:
        keys = select(opts.sources, opts.sample, opts.seed, opts.models)
    except (ValueError, RuntimeError, FileNotFoundError) as e:
        p.error(str(e))
    if opts.list:
        print("\n".join(keys))
        return 0
    out = Path(opts.out) if opts.out else Path(tempfile.mkdtemp(prefix="polyblocks-sweep-"))
    print(f"polyblocks sweep: {len(keys)} models, output in {out}", file=sys.stderr)
    spares = None
    if opts.sample and not opts.models and opts.max_draws > 1:
        spares = replacements(opts.sources, keys, opts.seed)
    rows = run_all(keys, opts, out, spares)
    keys = [r["key"] for r in rows]
    written = write_report(rows, opts, keys, out)
    print((out / "sweep.md").read_text())
    print("written: " + ", ".join(str(p) for p in written.values()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
