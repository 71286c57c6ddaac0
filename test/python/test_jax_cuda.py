"""polyblocks.jax.jit for NVIDIA GPUs: the "auto" target follows the
arrays' device, and an explicit target must match it.

Here (no GPU needed): the target chosen for CPU and GPU arrays, the error
(strict) or XLA fallback when an explicit target does not match, and, as
the stand-in for a GPU, JAX programs compiled for nvidia-sm80 and
nvidia-sm90 whose kernels run in the kernel emulator on CPU arrays
(``emulate=True``), against XLA on the CPU: an MLP in f32, an f16 matmul
(tensor cores: mma.sync on sm80, wgmma on sm90) and a small NHWC CNN.
On a GPU with a CUDA jaxlib (scripts/device/check): the same programs on
GPU arrays against XLA on the same device, with the results left there."""

import logging

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = jax.numpy
torch = pytest.importorskip("torch")

import polyblocks.jax as pj  # noqa: E402
from polyblocks.jax.api import _on_gpu  # noqa: E402

from helpers import matrix_unit_families  # noqa: E402


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


def _mlp(x, w1, w2):
    return jax.nn.softmax(jax.nn.relu(x @ w1) @ w2, axis=-1)


def _cnn(x, w):
    y = jax.lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
    y = jax.nn.relu(y)
    y = jax.lax.reduce_window(y, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    return jnp.mean(y, axis=(1, 2))


def _cpu_xla(f, *args):
    with jax.default_matmul_precision("highest"):
        return np.asarray(jax.jit(f)(*args), dtype=np.float32)


def test_emulate_needs_an_explicit_nvidia_target():
    with pytest.raises(NotImplementedError, match="emulate needs an explicit NVIDIA target"):
        pj.jit(lambda v: v + 1.0, target="cpu-host", emulate=True, strict=True)(jnp.ones(4))


@pytest.mark.parametrize("target", ["nvidia-sm80", "nvidia-sm90"])
def test_emulated_mlp(target):
    k = jax.random.split(jax.random.PRNGKey(0), 3)
    x = jax.random.normal(k[0], (16, 64))
    w1 = jax.random.normal(k[1], (64, 128)) * 0.1
    w2 = jax.random.normal(k[2], (128, 10)) * 0.1
    out = pj.jit(_mlp, target=target, emulate=True, strict=True,
                 options={"allow_tf32": False})(x, w1, w2)
    assert list(out.devices())[0].platform == "cpu"
    np.testing.assert_allclose(np.asarray(out), _cpu_xla(_mlp, x, w1, w2), rtol=1e-4, atol=1e-5)




@pytest.mark.parametrize("target", ["nvidia-sm80", "nvidia-sm90"])
def test_emulated_flax_mlp_tile_ir(target, tmp_path):
    # A bf16 Flax MLP with codegen=tile-ir: its two dense layers (bias and
    # ReLU fused into the first) are Tile IR kernels, run by the tile
    # interpreter, against XLA on the CPU.
    nn = pytest.importorskip("flax.linen")

    class MLP(nn.Module):
        @nn.compact
        def __call__(self, x):
            x = nn.relu(nn.Dense(128, dtype=jnp.bfloat16, param_dtype=jnp.bfloat16)(x))
            return nn.Dense(64, dtype=jnp.bfloat16, param_dtype=jnp.bfloat16)(x)

    model = MLP()
    x = jax.random.normal(jax.random.PRNGKey(3), (32, 96), jnp.bfloat16)
    params = model.init(jax.random.PRNGKey(4), x)
    jf = pj.jit(model.apply, target=target, emulate=True, strict=True,
                options={"codegen": "tile-ir"})
    out = jf(params, x)
    assert out.dtype == jnp.bfloat16
    np.testing.assert_allclose(np.asarray(out, np.float32),
                               np.asarray(_cpu_xla(model.apply, params, x), np.float32),
                               rtol=3e-2, atol=3e-2)
    assert "tile-ir" in matrix_unit_families(jf.lower(params, x).compile(), tmp_path)


@pytest.mark.parametrize("target,unit", [("nvidia-sm80", "mma.sync"), ("nvidia-sm90", "wgmma")])
def test_emulated_f16_matmul_on_tensor_cores(target, unit, tmp_path):
    k = jax.random.split(jax.random.PRNGKey(1), 2)
    a = jax.random.normal(k[0], (128, 64), jnp.float16)
    b = jax.random.normal(k[1], (64, 128), jnp.float16)
    jf = pj.jit(lambda a, b: a @ b, target=target, emulate=True, strict=True)
    out = jf(a, b)
    assert out.dtype == jnp.float16
    ref = np.asarray(a, np.float32) @ np.asarray(b, np.float32)
    np.testing.assert_allclose(np.asarray(out, np.float32), ref, rtol=2e-2, atol=0.1)
    assert matrix_unit_families(jf.lower(a, b).compile(), tmp_path) == {unit}


def test_emulated_nhwc_cnn():
    k = jax.random.split(jax.random.PRNGKey(2), 2)
    x = jax.random.normal(k[0], (1, 8, 8, 3))
    w = jax.random.normal(k[1], (3, 3, 3, 8)) * 0.2
    out = pj.jit(_cnn, target="nvidia-sm80", emulate=True, strict=True,
                 options={"allow_tf32": False})(x, w)
    np.testing.assert_allclose(np.asarray(out), _cpu_xla(_cnn, x, w), rtol=1e-4, atol=1e-4)


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
    out = pj.jit(_cnn, strict=True, options={"allow_tf32": False})(x, w)
    np.testing.assert_allclose(np.asarray(out), _xla(_cnn, x, w),
                               rtol=1e-4, atol=1e-4)
