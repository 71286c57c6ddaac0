"""polyblocks.jax.jit as a jax.jit user sees it: decorator forms, pytrees
in and out, static arguments, one compilation per abstract signature,
``lower().as_text()``, the XLA fallback with its warning, and strict mode."""

import logging

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = jax.numpy

import polyblocks.jax as pj  # noqa: E402
from polyblocks import compiler  # noqa: E402


def _rand(shape, seed=0, dtype=jnp.float32):
    return jax.random.normal(jax.random.PRNGKey(seed), shape, dtype=dtype)


def _close(a, b, **kw):
    a_leaves, a_tree = jax.tree_util.tree_flatten(a)
    b_leaves, b_tree = jax.tree_util.tree_flatten(b)
    assert a_tree == b_tree
    for x, y in zip(a_leaves, b_leaves):
        assert isinstance(x, jax.Array), type(x)
        assert x.shape == y.shape and x.dtype == y.dtype, (x.shape, x.dtype, y.shape, y.dtype)
        np.testing.assert_allclose(np.asarray(x, dtype=np.float64),
                                   np.asarray(y, dtype=np.float64), **kw)


def mlp(params, x):
    for w, b in params["layers"]:
        x = jax.nn.gelu(x @ w + b)
    return {"logits": x @ params["head"], "mean": jnp.mean(x, axis=-1)}


def _mlp_params(d=16, h=32, n=2):
    layers, k = [], 1
    for i in range(n):
        layers.append((_rand((d if i == 0 else h, h), k) * 0.2, _rand((h,), k + 1)))
        k += 2
    return {"layers": layers, "head": _rand((h, 5), 99)}


def test_pytrees_in_and_out():
    params, x = _mlp_params(), _rand((4, 16), 7)
    f = pj.jit(mlp, strict=True)
    out = f(params, x)
    assert set(out) == {"logits", "mean"}
    assert list(out["logits"].devices())[0].platform == "cpu"
    _close(out, jax.jit(mlp)(params, x), rtol=1e-5, atol=1e-5)


def test_decorator_forms():
    @pj.jit
    def f(x):
        return jnp.tanh(x) * 2.0

    @pj.jit(strict=True)
    def g(x):
        return jnp.exp(x) - 1.0

    x = _rand((3, 5))
    _close(f(x), jnp.tanh(x) * 2.0, rtol=1e-6, atol=1e-6)
    _close(g(x), jnp.exp(x) - 1.0, rtol=1e-6, atol=1e-6)
    assert f.__name__ == "f" and isinstance(f, pj.Jitted)


def test_one_compilation_per_signature():
    def f(x, y):
        return x * y + 1.0

    jf = pj.jit(f, strict=True)
    a, b = _rand((4, 4), 1), _rand((4, 4), 2)
    jf(a, b)
    jf(b, a)
    assert jf.cache_size == 1
    jf(_rand((2, 8), 3), _rand((2, 8), 4))  # new shapes
    assert jf.cache_size == 2
    jf(a.astype(jnp.bfloat16), b.astype(jnp.bfloat16))  # new dtype
    assert jf.cache_size == 3
    out = jf(a, 3.0)  # a weak-typed python scalar
    assert jf.cache_size == 4 and out.dtype == jnp.float32
    _close(out, a * 3.0 + 1.0, rtol=1e-6, atol=1e-6)
    jf(a, 5.0)  # same abstract signature: no new compilation
    assert jf.cache_size == 4


def test_compiled_module_is_cached_across_functions():
    def f(x):
        return jnp.sin(x) * x

    x = _rand((6, 7), 5)
    pj.jit(f, strict=True)(x)
    before = dict(compiler.stats)
    out = pj.jit(f, strict=True)(x)  # a new wrapper: the module cache answers
    assert compiler.stats["compiles"] == before["compiles"]
    _close(out, jnp.sin(x) * x, rtol=1e-6, atol=1e-6)


def test_static_arguments():
    def f(x, axis, act="relu"):
        y = jax.nn.relu(x) if act == "relu" else jnp.tanh(x)
        return jnp.sum(y, axis=axis)

    x = _rand((3, 4, 5), 11)
    jf = pj.jit(f, static_argnums=(1,), static_argnames=("act",), strict=True)
    _close(jf(x, 1), f(x, 1), rtol=1e-5, atol=1e-5)
    _close(jf(x, 2, act="tanh"), f(x, 2, act="tanh"), rtol=1e-5, atol=1e-5)
    _close(jf(x, axis=0), f(x, 0), rtol=1e-5, atol=1e-5)  # by name: argnum 1 too
    assert jf.cache_size == 3
    with pytest.raises(ValueError, match="hashable"):
        jf(x, [1])


def test_keyword_arguments_are_dynamic():
    def f(x, *, scale, bias):
        return x * scale + bias

    x, s, b = _rand((4, 3), 1), _rand((4, 3), 2), _rand((3,), 3)
    jf = pj.jit(f, strict=True)
    _close(jf(x, bias=b, scale=s), f(x, scale=s, bias=b), rtol=1e-6, atol=1e-6)


def test_outputs_that_are_inputs_constants_or_repeated():
    def f(x, y):
        z = x + y
        return x, z, z, jnp.zeros((2,), jnp.int32), jnp.full((3,), 2.5)

    x, y = _rand((2, 3), 1), _rand((2, 3), 2)
    _close(pj.jit(f, strict=True)(x, y), f(x, y), rtol=1e-6, atol=1e-6)


def test_lower_as_text():
    def f(x, w):
        return jax.nn.relu(x @ w)

    x, w = _rand((4, 8)), _rand((8, 3))
    lowered = pj.jit(f).lower(x, w)
    text = lowered.as_text()
    assert "func.func @forward" in text and "linalg.matmul" in text
    assert "stablehlo" not in text
    assert "stablehlo.dot_general" in lowered.stablehlo_text()
    art = lowered.compile()
    assert art.entries == ["forward"]


def _has_while(x):
    return jax.lax.fori_loop(0, 3, lambda i, v: v * 2.0 + 1.0, x)


def test_fallback_runs_through_xla_with_one_warning(caplog):
    x = _rand((4,), 3)
    jf = pj.jit(_has_while)
    with caplog.at_level(logging.WARNING, logger="polyblocks"):
        out = jf(x)
        out2 = jf(x + 1.0)
    _close(out, jax.jit(_has_while)(x), rtol=1e-6, atol=1e-6)
    _close(out2, jax.jit(_has_while)(x + 1.0), rtol=1e-6, atol=1e-6)
    msgs = [r.getMessage() for r in caplog.records if r.name == "polyblocks"]
    assert len(msgs) == 1, msgs
    assert "stablehlo.while" in msgs[0] and "_has_while" in msgs[0]


def test_strict_names_the_op_and_its_location():
    x = _rand((4,), 3)
    with pytest.raises(NotImplementedError, match=r"stablehlo\.while") as e:
        pj.jit(_has_while, strict=True)(x)
    assert "test_jax_api.py" in str(e.value)
    with pytest.raises(NotImplementedError, match=r"stablehlo\.while"):
        pj.jit(_has_while).lower(x).as_text()


def test_target_auto_is_cpu_host_for_cpu_arrays():
    jf = pj.jit(lambda x: x + 1.0)
    assert jf.lower(_rand((2,))).target == "cpu-host"
    assert pj.jit(lambda x: x, target="nvidia-sm90").lower(_rand((2,))).target == "nvidia-sm90"


def test_half_precision_matches_xla():
    def f(x, w):
        return jax.nn.softmax(x @ w, axis=-1)

    for dt in (jnp.bfloat16, jnp.float16):
        x, w = _rand((8, 16), 1, dt), _rand((16, 32), 2, dt)
        out = pj.jit(f, strict=True)(x, w)
        ref = jax.jit(f)(x, w)
        assert out.dtype == dt
        _close(out, ref, rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("mask", [[True, False, True], [False] * 5 + [True] * 6,
                                  [True] * 7 + [False], [False, True] * 9])
def test_boolean_constants(mask):
    m = np.array(mask)

    def f(x):
        return jnp.where(jnp.asarray(m), x, -x)

    x = jnp.arange(float(len(mask)))
    _close(pj.jit(f, strict=True)(x), f(x), rtol=0, atol=0)


def test_arrays_without_elements():
    def f(x, e):
        return (jnp.concatenate([x, e], axis=0), e * 2.0, jnp.pad(e, ((1, 1), (0, 0))),
                jax.lax.dynamic_update_slice(x, e, (1, 0)), x.sum() + e.sum())

    x, e = _rand((4, 3)), jnp.zeros((0, 3))
    _close(pj.jit(f, strict=True)(x, e), f(x, e), rtol=1e-6, atol=1e-6)
