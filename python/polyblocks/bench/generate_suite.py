"""python -m polyblocks.bench --suite generate: text generation with a
static KV cache, in a plain PyTorch loop and through Hugging Face
``generate``, greedy: tokens per second for the prompt (prefill) and for
the new tokens (decode), PolyBlocks against eager and Inductor.

Models (random weights from configs, no download, inference under
torch.no_grad(), f32):
  - gpt2_small: GPT-2 small (12 layers, 768 wide, 12 heads, vocabulary
    50257, the output projection tied to the token embedding);
  - llama: a Llama-style decoder (grouped-query attention, rotary
    embeddings, RMSNorm, SiLU-gated MLP) of --llama-layers layers,
    --llama-hidden wide, 16 heads sharing 4 key/value heads, vocabulary
    32000.
Each engine has its own copy of the model. Two loops (--loops):
  - plain: a PyTorch loop over the model's forward and a static KV cache
    (transformers.StaticCache, updated in place by the model): the prompt
    in one call of a forward compiled for every prompt length
    (dynamic=True; PolyBlocks with dynamic_shapes="symbolic"), then one
    call per new token of a forward compiled once (its shapes never
    change: the position is a tensor);
  - hf: ``generate`` with the same cache; it compiles the decoding step's
    forward (``generation_config.compile_config``, on every device) and
    runs the prompt eagerly.
For --batches (default 1,4): a --prompt-tokens random prompt, --new-tokens
new ones, the cache sized for both. Per engine, a first generation
(compiles), then --runs interleaved rounds; the plain loop times its
prompt call and its decode calls, the hf loop one generation of one token
(the prompt's time) and one of all of them. Decode tokens per second =
batch x (new tokens - 1) / decode time, prefill tokens per second = batch
x prompt / prompt time; medians over the rounds. Tokens must equal
eager's (greedy); the backend compiles of the PolyBlocks engine (compiles
and cache hits of polyblocks.compiler.stats), summed over the batches, are
counted. Writes generate.md and generate.csv to --out.
"""

from __future__ import annotations

import argparse
import copy
import datetime
import logging
import os
import platform
import statistics
import time

import torch

from .._output import write_csv, write_output

MODELS = ("gpt2_small", "llama")
ENGINES = ("eager", "polyblocks", "inductor")


def build_model(name: str, layers: int | None = None, hidden: int | None = None,
                vocab: int | None = None):
    """The model (eval mode, random weights from the seed 0); ``layers``,
    ``hidden`` and ``vocab`` override the config's (GPT-2 small: 12, 768,
    50257; llama: 8, 1024, 32000)."""
    import transformers
    torch.manual_seed(0)
    if name == "gpt2_small":
        config = transformers.GPT2Config(n_layer=layers or 12, n_embd=hidden or 768,
                                         vocab_size=vocab or 50257)
        model = transformers.GPT2LMHeadModel(config)
    elif name == "llama":
        hidden = hidden or 1024
        config = transformers.LlamaConfig(
            vocab_size=vocab or 32000, hidden_size=hidden,
            intermediate_size=hidden * 11 // 4,
            num_hidden_layers=layers or 8, num_attention_heads=16,
            num_key_value_heads=4, max_position_embeddings=2048,
            rms_norm_eps=1e-5, tie_word_embeddings=False)
        model = transformers.LlamaForCausalLM(config)
    else:
        raise ValueError(f"unknown model {name!r}; known: {', '.join(MODELS)}")
    return model.eval()


def set_engine(model, engine: str, options: dict | None = None) -> None:
    """Makes ``model.generate`` compile its decoding step with ``engine``
    ("polyblocks", "inductor") or run it eagerly ("eager")."""
    from transformers import CompileConfig
    gc = model.generation_config
    if engine == "eager":
        gc.compile_config = None
        gc.disable_compile = True
        return
    from .. import torch as _pb_torch  # noqa: F401  (registers the backend)
    gc.disable_compile = False
    kwargs = {"backend": engine, "fullgraph": False}
    if engine != "inductor":
        kwargs["mode"] = None
        if options:
            kwargs["options"] = options
    gc.compile_config = CompileConfig(**kwargs)
    # generate() compiles on accelerators only unless told otherwise.
    gc.compile_config._compile_all_devices = True


def generate(model, prompt: torch.Tensor, new_tokens: int, cache_len: int,
             sample: bool = False, seed: int = 0) -> torch.Tensor:
    """Greedy (or sampled, top-k 50 from ``seed``) generation of
    ``new_tokens`` tokens after ``prompt`` with a static KV cache of
    ``cache_len`` positions (one size for every call: a new size would be
    new shapes for the compiled decoding step)."""
    from transformers import StaticCache
    kwargs = {"do_sample": False}
    if sample:
        torch.manual_seed(seed)
        kwargs = {"do_sample": True, "top_k": 50, "temperature": 1.0}
    cache = StaticCache(config=model.config, max_cache_len=cache_len)
    with torch.no_grad():
        return model.generate(prompt, attention_mask=torch.ones_like(prompt),
                              max_new_tokens=new_tokens, min_new_tokens=new_tokens,
                              past_key_values=cache, pad_token_id=0, **kwargs)


def compile_steps(model, engine: str, options: dict | None = None):
    """The prefill and decode callables of the plain loop for ``engine``:
    the prompt's forward compiled for every prompt length (dynamic=True;
    PolyBlocks with dynamic_shapes="symbolic"), the one-token forward
    compiled once for every position (its shapes do not change)."""
    if engine == "eager":
        return model, model
    if engine == "inductor":
        return torch.compile(model, dynamic=True), torch.compile(model)
    from .. import torch as _pb_torch  # noqa: F401  (registers the backend)
    options = dict(options or {})
    return (torch.compile(model, backend="polyblocks", dynamic=True,
                          options={**options, "dynamic_shapes": "symbolic"}),
            torch.compile(model, backend="polyblocks", options=options))


def decode_loop(model, steps, prompt: torch.Tensor, new_tokens: int,
                cache_len: int, times: dict | None = None) -> torch.Tensor:
    """Greedy generation in a plain PyTorch loop over a static KV cache of
    ``cache_len`` positions, updated in place by the model: the prompt in
    one call of ``steps[0]``, then one call of ``steps[1]`` per new token.
    With ``times``, sets "prefill_s" and "decode_s" (seconds)."""
    from transformers import StaticCache
    prefill, decode = steps
    cache = StaticCache(config=model.config, max_cache_len=cache_len)
    length = prompt.shape[1]
    with torch.no_grad():
        start = time.perf_counter()
        out = prefill(input_ids=prompt, cache=cache,
                      cache_position=torch.arange(length), use_cache=True)
        token = out.logits[:, -1].argmax(-1, keepdim=True)
        tokens = [prompt, token]
        middle = time.perf_counter()
        for i in range(new_tokens - 1):
            out = decode(input_ids=token, cache=cache,
                         cache_position=torch.tensor([length + i]), use_cache=True)
            token = out.logits[:, -1].argmax(-1, keepdim=True)
            tokens.append(token)
        end = time.perf_counter()
    if times is not None:
        times["prefill_s"], times["decode_s"] = middle - start, end - middle
    return torch.cat(tokens, 1)


def _time_hf(model, prompt, args, cache_len) -> tuple[float, float]:
    start = time.perf_counter()
    generate(model, prompt, 1, cache_len)
    first = time.perf_counter() - start
    start = time.perf_counter()
    generate(model, prompt, args.new_tokens, cache_len)
    return first, time.perf_counter() - start - first


def _time_plain(model, steps, prompt, args, cache_len) -> tuple[float, float]:
    times = {}
    decode_loop(model, steps, prompt, args.new_tokens, cache_len, times)
    return times["prefill_s"], times["decode_s"]


def run_model(name: str, loop: str, args) -> list[dict]:
    from .. import compiler
    base = build_model(name, *((args.llama_layers, args.llama_hidden)
                               if name == "llama" else ()))
    models = {e: copy.deepcopy(base) for e in args.engines}
    steps = {}
    for e, m in models.items():
        if loop == "hf":
            set_engine(m, e)
        else:
            steps[e] = compile_steps(m, e)
    torch._dynamo.reset()
    cache_len = args.prompt_tokens + args.new_tokens
    compiles = 0
    rows = []
    for batch in [int(b) for b in args.batches.split(",")]:
        torch.manual_seed(1)
        prompt = torch.randint(1, base.config.vocab_size, (batch, args.prompt_tokens))
        row = {"model": name, "loop": loop, "batch": batch}
        tokens = {}
        for e in args.engines:
            before = sum(compiler.stats.values())
            start = time.perf_counter()
            if loop == "hf":
                tokens[e] = generate(models[e], prompt, args.new_tokens, cache_len)
            else:
                tokens[e] = decode_loop(models[e], steps[e], prompt,
                                        args.new_tokens, cache_len)
            row[f"{e}_first_s"] = round(time.perf_counter() - start, 2)
            if e == "polyblocks":
                compiles += sum(compiler.stats.values()) - before
                row["polyblocks_compiles"] = compiles
        for e in args.engines:
            row[f"{e}_same_tokens"] = bool(torch.equal(tokens[e], tokens["eager"]))
        prefill = {e: [] for e in args.engines}
        decode = {e: [] for e in args.engines}
        for _ in range(args.runs):
            for e in args.engines:
                p, d = (_time_hf(models[e], prompt, args, cache_len) if loop == "hf"
                        else _time_plain(models[e], steps[e], prompt, args, cache_len))
                prefill[e].append(p)
                decode[e].append(d)
        for e in args.engines:
            t1, tn = statistics.median(prefill[e]), statistics.median(decode[e])
            row[f"{e}_prefill_tok_s"] = round(batch * args.prompt_tokens / t1, 1)
            row[f"{e}_decode_tok_s"] = round(
                batch * (args.new_tokens - 1) / max(tn, 1e-9), 2)
        rows.append(row)
        logging.getLogger("polyblocks").info("%s: %s", name, row)
    return rows


def report(rows: list[dict], args) -> str:
    engines = args.engines
    others = [e for e in engines if e != "polyblocks"]
    lines = [f"# --suite generate ({datetime.date.today()}, {platform.node()}, "
             f"{os.cpu_count()} CPUs, torch {torch.__version__}): "
             f"{args.prompt_tokens}-token prompt, {args.new_tokens} new tokens, "
             "greedy, static KV cache", "",
             "| model | loop | batch | " +
             " | ".join(f"{e} decode tok/s" for e in engines) + " | " +
             " | ".join(f"polyblocks / {e} decode" for e in others) + " | " +
             " | ".join(f"{e} prefill tok/s" for e in engines) +
             " | polyblocks compiles | tokens = eager |",
             "|---|---|---:|" + "---:|" * (2 * len(engines) + len(others) + 1) + "---|"]
    for r in rows:
        same = all(r[f"{e}_same_tokens"] for e in engines)
        ratios = [r["polyblocks_decode_tok_s"] / r[f"{e}_decode_tok_s"] for e in others] \
            if "polyblocks" in engines else []
        lines.append(
            f"| {r['model']} | {r['loop']} | {r['batch']} | " +
            " | ".join(f"{r[f'{e}_decode_tok_s']:.1f}" for e in engines) + " | " +
            " | ".join(f"{x:.2f}x" for x in ratios) + " | " +
            " | ".join(f"{r[f'{e}_prefill_tok_s']:.0f}" for e in engines) +
            f" | {r.get('polyblocks_compiles', '-')} | {'yes' if same else 'NO'} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m polyblocks.bench --suite generate",
                                description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--suite", default="generate")
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--engines", default=",".join(ENGINES),
                   help="comma-separated, eager first: eager,polyblocks,inductor")
    p.add_argument("--loops", default="plain,hf",
                   help="comma-separated: plain (a PyTorch loop, prefill and "
                   "decode compiled), hf (generate(), decode compiled)")
    p.add_argument("--batches", default="1,4")
    p.add_argument("--prompt-tokens", type=int, default=32)
    p.add_argument("--new-tokens", type=int, default=128)
    p.add_argument("--llama-layers", type=int, default=8)
    p.add_argument("--llama-hidden", type=int, default=1024)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--out", default="bench-results")
    args = p.parse_args(argv)
    args.engines = args.engines.split(",")
    if args.engines[0] != "eager" or not set(args.engines) <= set(ENGINES):
        p.error(f"--engines: eager first, then any of {', '.join(ENGINES[1:])}")
    logging.basicConfig(level=logging.WARNING)
    rows = []
    for name in args.models.split(","):
        if name not in MODELS:
            p.error(f"unknown model {name!r}; known: {', '.join(MODELS)}")
        for loop in args.loops.split(","):
            rows += run_model(name, loop, args)
    text = report(rows, args)
    os.makedirs(args.out, exist_ok=True)
    write_output(os.path.join(args.out, "generate.md"), text)
    fields = list(dict.fromkeys(k for r in rows for k in r))
    write_csv(os.path.join(args.out, "generate.csv"), fields, rows)
    print(text)
    return 0
