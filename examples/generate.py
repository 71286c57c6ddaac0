"""Text generation compiled by PolyBlocks: a GPT-2 small or a Llama-style
decoder (grouped-query attention, rotary embeddings, RMSNorm, SiLU-gated
MLP), random weights from its config (no download), a static KV cache.

    python examples/generate.py --model llama --loop plain --new-tokens 128
    python examples/generate.py --model gpt2_small --loop hf --sample

--loop plain: a PyTorch loop; the prompt runs through a forward compiled
once for every prompt length (torch.compile(..., dynamic=True) with the
backend option dynamic_shapes="symbolic"), each new token through a
forward compiled once for every position. --loop hf: Hugging Face
``generate``, which compiles the decoding step (prompt in eager).
Greedy by default (--sample: top-k 50 sampling, hf loop). --check runs
eager too and compares the tokens. Prints the tokens per second of the
prompt and of the new tokens, and the backend's compiles.
"""

import argparse
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))

from polyblocks import compiler  # noqa: E402
from polyblocks.bench.generate_suite import (MODELS, build_model,  # noqa: E402
                                             compile_steps, decode_loop,
                                             generate, set_engine)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", choices=MODELS, default="llama")
    p.add_argument("--engine", choices=["polyblocks", "inductor", "eager"],
                   default="polyblocks")
    p.add_argument("--loop", choices=["plain", "hf"], default="plain")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--prompt-tokens", type=int, default=32)
    p.add_argument("--new-tokens", type=int, default=128)
    p.add_argument("--sample", action="store_true",
                   help="top-k 50 sampling instead of greedy (hf loop)")
    p.add_argument("--check", action="store_true",
                   help="also run eager and compare the tokens")
    args = p.parse_args()
    if args.sample and args.loop != "hf":
        p.error("--sample needs --loop hf")
    model = build_model(args.model)
    torch.manual_seed(1)
    prompt = torch.randint(1, model.config.vocab_size, (args.batch, args.prompt_tokens))
    cache_len = args.prompt_tokens + args.new_tokens

    def run(engine):
        if args.loop == "hf":
            set_engine(model, engine)
            start = time.perf_counter()
            tokens = generate(model, prompt, args.new_tokens, cache_len, sample=args.sample)
            return tokens, None, time.perf_counter() - start
        times = {}
        tokens = decode_loop(model, compile_steps(model, engine), prompt,
                             args.new_tokens, cache_len, times)
        return tokens, times, times["prefill_s"] + times["decode_s"]

    before = sum(compiler.stats.values())
    tokens, _, first = run(args.engine)  # compiles
    compiles = sum(compiler.stats.values()) - before
    tokens, times, total = run(args.engine)
    print(f"{args.model}, {args.engine}, {args.loop} loop, batch {args.batch}: "
          f"{args.new_tokens} new tokens after {args.prompt_tokens}")
    print("first row:", tokens[0, args.prompt_tokens:].tolist())
    print(f"first generation {first:.2f} s (with compiles), then {total:.2f} s")
    if times:
        print(f"prefill {args.batch * args.prompt_tokens / times['prefill_s']:.0f} tok/s, "
              f"decode {args.batch * (args.new_tokens - 1) / times['decode_s']:.1f} tok/s")
    print(f"backend compiles: {compiles}")
    if args.check:
        ref, _, _ = run("eager")
        same = torch.equal(ref, tokens)
        print("tokens equal eager's:", same,
              "(sampled: logits within rounding of eager's may pick other tokens)"
              if args.sample else "")
        if not same and not args.sample:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
