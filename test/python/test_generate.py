"""Generation with a static KV cache (python/polyblocks/bench/generate_suite.py,
examples/generate.py): small GPT-2 and Llama-style decoders (grouped-query
attention, rotary embeddings, RMSNorm, SiLU-gated MLP) from configs, greedy
tokens against eager's, and the backend compiles: one symbolic prefill for
every prompt length and one decode step for every position."""

import pytest
import torch

pytest.importorskip("transformers")

from polyblocks import compiler  # noqa: E402
from polyblocks.bench.generate_suite import (build_model, compile_steps,  # noqa: E402
                                             decode_loop, generate, set_engine)

# Small configs: 2 layers, 16 heads (4 key/value heads for the Llama) of
# 16 lanes, a vocabulary of 1000.
SMALL = {"gpt2_small": dict(layers=2, hidden=192, vocab=1000),
         "llama": dict(layers=2, hidden=256, vocab=1000)}


@pytest.mark.parametrize("name", sorted(SMALL))
def test_plain_loop_two_compiles(name):
    model = build_model(name, **SMALL[name])
    steps = compile_steps(model, "polyblocks", {"strict": True})
    torch._dynamo.reset()
    before = sum(compiler.stats.values())
    torch.manual_seed(1)
    # Prompts of three lengths, 9 new tokens each, one cache size.
    for length in (12, 7, 20):
        prompt = torch.randint(1, 1000, (2, length))
        ref = decode_loop(model, (model, model), prompt, 9, 32)
        out = decode_loop(model, steps, prompt, 9, 32)
        assert out.shape == (2, length + 9)
        assert torch.equal(out, ref), (name, length)
    # Both steps compiled once: the prompt's forward for every length, the
    # one-token forward for every position.
    assert sum(compiler.stats.values()) - before == 2


def test_hf_generate_decode_compiled():
    model = build_model("llama", **SMALL["llama"])
    torch.manual_seed(1)
    prompt = torch.randint(1, 1000, (1, 10))
    set_engine(model, "eager")
    ref = generate(model, prompt, 6, 16)
    torch._dynamo.reset()
    set_engine(model, "polyblocks", {"strict": True})
    before = sum(compiler.stats.values())
    out = generate(model, prompt, 6, 16)
    assert torch.equal(out, ref)
    out = generate(model, prompt, 6, 16)
    assert torch.equal(out, ref)
    assert sum(compiler.stats.values()) - before == 1


def test_unknown_model():
    with pytest.raises(ValueError, match="unknown model"):
        build_model("gpt5")
