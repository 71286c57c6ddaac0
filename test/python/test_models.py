"""Whole models through torch.compile(backend="polyblocks") on the CPU,
compared with eager by the rule of PyTorch's dynamo benchmark harness
(torch._dynamo.utils.same): allclose at 1e-3, else an RMSE against a
float64 reference no worse than about twice eager's.

Models are built with random weights (polyblocks.bench.models). Every op
must compile (strict=True): a fallback to eager would hide a gap. Sizes are
reduced where CI time needs it (ViT at 64x64, BERT and GPT-2 at sequence 64);
`python -m polyblocks.bench --suite models` runs the full sizes.
"""

import copy

import pytest
import torch
import torch._dynamo
from torch._dynamo.utils import same

from polyblocks.bench import models

from helpers import compile_strict

CASES = {
    "resnet18": {},
    "resnet50": {},
    "mobilenet_v2": {},
    "mobilenet_v3_large": {},
    "efficientnet_b0": {},
    "densenet121": {},
    "vit_b_16": {"image_size": 64},
    "bert_base": {"seq_len": 64},
    "gpt2_small": {"seq_len": 64},
    "sdpa_block": {},
}


def _fp64(model, inputs):
    model64 = copy.deepcopy(model).double()
    inputs64 = tuple(x.double() if x.is_floating_point() else x for x in inputs)
    with torch.no_grad():
        return models.output_tensors(model64(*inputs64))


@pytest.mark.parametrize("name", list(CASES))
def test_model_matches_eager(name):
    assert set(CASES) == set(models.MODELS), "every suite model is tested"
    model, inputs = models.build(name, batch=1, **CASES[name])
    with torch.no_grad():
        ref = models.output_tensors(model(*inputs))
        compiled = compile_strict(model)
        res = models.output_tensors(compiled(*inputs))
    assert len(res) == len(ref) > 0
    for r in ref:
        assert r.abs().max() > 0, "a model output that is all zeros tests nothing"
    fp64 = _fp64(model, inputs)
    for i, (r, o, f) in enumerate(zip(ref, res, fp64)):
        assert o.shape == r.shape and o.dtype == r.dtype, i
        assert same(r, o, fp64_ref=f, tol=1e-3), (
            f"{name} output {i}: max abs error {(o - r).abs().max().item():.3e}")
