"""Flax models through polyblocks.jax.jit(strict=True) on the CPU, compared
with jax.jit (XLA) by the rule of test_models.py (PyTorch's dynamo
benchmark harness, torch._dynamo.utils.same): allclose at 1e-3, else an
RMSE against a float64 reference (XLA with jax_enable_x64) no worse than
about twice XLA's.

Models (polyblocks.bench.jax_models, random weights) at their small sizes,
batch 1 and 8:
  - resnet50: the bottleneck ResNet, one block per stage, 16 filters,
    32x32x3 input, 10 classes;
  - vit_b16: patch 8, 2 layers, width 64, 4 heads, MLP 128, 32x32x3 input;
  - unet: channels (32, 64), one ResNet block per level, GroupNorm 8,
    attention at 16x16 and in the middle block, 32x32x4 input and a
    timestep.
Every op must convert (strict=True): a fallback to XLA would hide a gap.
`python -m polyblocks.bench --suite jax` runs the full sizes.
"""

import pytest

jax = pytest.importorskip("jax")
pytest.importorskip("flax")

import polyblocks.jax as pj  # noqa: E402
from polyblocks.bench import jax_models  # noqa: E402

IMAGE_SIZE = 32


@pytest.mark.parametrize("batch", [1, 8])
@pytest.mark.parametrize("name", list(jax_models.JAX_MODELS))
def test_jax_model_matches_xla(name, batch):
    apply, params, inputs = jax_models.build(name, batch=batch, small=True,
                                             image_size=IMAGE_SIZE)
    ref = jax_models.output_arrays(jax.jit(apply)(params, *inputs))
    res = jax_models.output_arrays(pj.jit(apply, strict=True)(params, *inputs))
    assert len(res) == len(ref) > 0
    for r in ref:
        assert abs(r).max() > 0, "a model output that is all zeros tests nothing"
    fp64 = jax_models.fp64_outputs(apply, params, inputs)
    for i, (r, o) in enumerate(zip(ref, res)):
        assert o.shape == r.shape and o.dtype == r.dtype, i
    assert jax_models.matches(ref, res, fp64), (
        f"{name} batch {batch}: max abs error "
        f"{max(float(abs(o - r).max()) for r, o in zip(ref, res)):.3e}")
