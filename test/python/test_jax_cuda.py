"""polyblocks.jax.jit on GPU arrays: the "auto" target follows the arrays'
device, and an explicit target must match it.

Here (no GPU needed): the target chosen for CPU and GPU arrays, and the
error (strict) or XLA fallback when an explicit target does not match.
On a GPU with a CUDA jaxlib (scripts/device/check): an MLP in f32, an f16
matmul (tensor cores) and a small NHWC CNN against XLA on the same device,
with the results left on that device."""

import logging

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = jax.numpy
torch = pytest.importorskip("torch")

import polyblocks.jax as pj  # noqa: E402
from polyblocks.jax.api import _on_gpu  # noqa: E402


def _gpu_devices():
    try:
        return jax.devices("gpu")
    except RuntimeError:
        return []


needs_gpu = pytest.mark.skipif(not _gpu_devices() or not torch.cuda.is_available(),
                               reason="needs a CUDA device in both jax and torch")


class _FakeDevice:
    def __init__(self, platform):
        self.platform = platform


class _FakeArray:
    def __init__(self, platform):
        self._d = _FakeDevice(platform)

    def devices(self):
        return {self._d}


def test_auto_target_follows_the_arrays():
    assert not _on_gpu([jnp.ones(3), 2.0])
    assert _on_gpu([2.0, _FakeArray("gpu"), jnp.ones(3)])  # the first array decides
    jf = pj.jit(lambda x: x + 1.0)
    assert jf._resolve_target([_FakeArray("gpu")]) == "nvidia-auto"
    assert jf._resolve_target([jnp.ones(3)]) == "cpu-host"


def test_nvidia_target_with_cpu_arrays():
    x = jnp.arange(4.0)
    with pytest.raises(NotImplementedError, match="needs GPU arrays"):
        pj.jit(lambda v: v * 2.0, target="nvidia-sm90", strict=True)(x)


def test_nvidia_target_with_cpu_arrays_falls_back(caplog):
    x = jnp.arange(4.0)
    with caplog.at_level(logging.WARNING, logger="polyblocks"):
        out = pj.jit(lambda v: v * 2.0, target="nvidia-sm80")(x)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(x) * 2.0)
    assert any("needs GPU arrays" in r.getMessage() for r in caplog.records)


def _on(dev, a):
    return jax.device_put(a, dev)


def _xla(f, *args):
    """XLA's result in full f32 precision (its GPU default is TF32)."""
    with jax.default_matmul_precision("highest"):
        return np.asarray(jax.jit(f)(*args))


@needs_gpu
def test_mlp_f32_on_gpu():
    dev = _gpu_devices()[0]
    k = jax.random.PRNGKey(0)
    x = _on(dev, jax.random.normal(k, (64, 256)))
    w1 = _on(dev, jax.random.normal(k, (256, 512)) * 0.05)
    w2 = _on(dev, jax.random.normal(k, (512, 10)) * 0.05)

    def f(x, w1, w2):
        return jax.nn.softmax(jax.nn.relu(x @ w1) @ w2, axis=-1)

    out = pj.jit(f, strict=True, options={"allow_tf32": False})(x, w1, w2)
    assert list(out.devices())[0].platform == "gpu"
    np.testing.assert_allclose(np.asarray(out), _xla(f, x, w1, w2),
                               rtol=1e-4, atol=1e-5)


@needs_gpu
def test_f16_matmul_on_gpu():
    dev = _gpu_devices()[0]
    k = jax.random.PRNGKey(1)
    a = _on(dev, jax.random.normal(k, (256, 512), jnp.float16))
    b = _on(dev, jax.random.normal(k, (512, 256), jnp.float16))
    out = pj.jit(lambda a, b: a @ b, strict=True)(a, b)
    ref = jnp.asarray(a, jnp.float32) @ jnp.asarray(b, jnp.float32)
    assert out.dtype == jnp.float16
    np.testing.assert_allclose(np.asarray(out, np.float32), np.asarray(ref), rtol=2e-2, atol=0.25)


@needs_gpu
def test_nhwc_cnn_on_gpu():
    dev = _gpu_devices()[0]
    k = jax.random.PRNGKey(2)
    x = _on(dev, jax.random.normal(k, (2, 32, 32, 3)))
    w = _on(dev, jax.random.normal(k, (3, 3, 3, 16)) * 0.2)

    def f(x, w):
        y = jax.lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                         dimension_numbers=("NHWC", "HWIO", "NHWC"))
        y = jax.nn.relu(y)
        y = jax.lax.reduce_window(y, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        return jnp.mean(y, axis=(1, 2))

    out = pj.jit(f, strict=True, options={"allow_tf32": False})(x, w)
    np.testing.assert_allclose(np.asarray(out), _xla(f, x, w),
                               rtol=1e-4, atol=1e-4)
