"""polyblocks.jax: gather, scatter, dynamic_slice and dynamic_update_slice
(python/polyblocks/stablehlo/ops/indexing.py), each compared with the same
function under jax.jit (XLA) on CPU arrays."""

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
lax = jax.lax

import polyblocks.jax as pj  # noqa: E402

SEED = 1234


def _rng(k=0):
    return np.random.default_rng(SEED + k)


def _check(f, *arg_sets, ops=(), exact=False, rtol=1e-6, atol=1e-6):
    """Runs ``f`` through polyblocks.jax.jit (strict) and jax.jit on each
    tuple of arguments in ``arg_sets`` (same shapes: one compilation) and
    compares; ``ops``: StableHLO ops the converted program must contain."""
    pf = pj.jit(f, strict=True)
    if ops:
        converted = pf.lower(*arg_sets[0]).converted
        assert converted is not None
        for op in ops:
            assert op in converted.ops, (op, converted.ops)
    for args in arg_sets:
        got = pf(*args)
        want = jax.jit(f)(*args)
        got_l = jax.tree_util.tree_leaves(got)
        want_l = jax.tree_util.tree_leaves(want)
        assert len(got_l) == len(want_l)
        for g, w in zip(got_l, want_l):
            assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, g.dtype, w.shape, w.dtype)
            g64 = np.asarray(g.astype(jnp.float32) if g.dtype == jnp.bfloat16 else g)
            w64 = np.asarray(w.astype(jnp.float32) if w.dtype == jnp.bfloat16 else w)
            if exact:
                np.testing.assert_array_equal(g64, w64)
            else:
                np.testing.assert_allclose(g64, w64, rtol=rtol, atol=atol)
    assert pf.cache_size == 1


def _f32(rng, shape):
    return jnp.asarray(rng.standard_normal(shape), jnp.float32)


def _i32(rng, lo, hi, shape):
    return jnp.asarray(rng.integers(lo, hi, shape), jnp.int32)


# ---------------------------------------------------------------------------
# gather
# ---------------------------------------------------------------------------

def test_take_embedding_f32_fill():
    """jnp.take(table, ids, axis=0): negative ids wrap, out-of-range ids
    give NaN (JAX's fill mode around the gather)."""
    rng = _rng(1)
    table = _f32(rng, (10, 4))
    ids = [_i32(rng, -10, 10, (3, 5)), _i32(rng, -14, 14, (3, 5))]
    _check(lambda t, i: jnp.take(t, i, axis=0), *[(table, i) for i in ids],
           ops=["stablehlo.gather"], exact=True)


def test_getitem_embedding_int32_clamps():
    """table[ids] on an int32 table: out-of-range ids clamp (the gather's
    own clamping), negative ones wrap."""
    rng = _rng(2)
    table = _i32(rng, -1000, 1000, (9, 6))
    ids = [jnp.asarray([[0, 8, -1, 20], [-9, 3, 100, -30]], jnp.int32),
           _i32(rng, -12, 12, (2, 4))]
    _check(lambda t, i: t[i], *[(table, i) for i in ids], ops=["stablehlo.gather"],
           exact=True)


def test_getitem_embedding_bf16():
    rng = _rng(3)
    table = _f32(rng, (12, 8)).astype(jnp.bfloat16)
    ids = _i32(rng, -12, 12, (7,))
    _check(lambda t, i: t[i] * 2, (table, ids), ops=["stablehlo.gather"], exact=True)


def test_take_along_axis_batching_dims():
    """take_along_axis: a gather with operand/start-indices batching dims."""
    rng = _rng(4)
    x = _f32(rng, (6, 7))
    ix = [_i32(rng, -7, 7, (6, 3)), _i32(rng, -10, 10, (6, 3))]
    _check(lambda x, i: jnp.take_along_axis(x, i, axis=1), *[(x, i) for i in ix],
           ops=["stablehlo.gather"], exact=True)


def test_column_index():
    """x[:, idx]: the offset dim comes before the batch dim in the result."""
    rng = _rng(5)
    x = _f32(rng, (5, 8))
    idx = [jnp.asarray([7, -1, 0, 3], jnp.int32), _i32(rng, -8, 8, (4,))]
    _check(lambda x, i: x[:, i] * 1.5, *[(x, i) for i in idx],
           ops=["stablehlo.gather"], exact=True)


def test_lax_gather_windows_clamp():
    """A gather of 2x3 windows (index_vector_dim = rank of the indices,
    a 2-component start index): starts past the edge clamp so that the
    whole window is in bounds (StableHLO/XLA semantics)."""
    rng = _rng(6)
    x = _f32(rng, (3, 7, 9))
    dn = lax.GatherDimensionNumbers(offset_dims=(1, 2, 3), collapsed_slice_dims=(),
                                    start_index_map=(1, 2))

    def f(x, s):
        return lax.gather(x, s, dn, slice_sizes=(3, 2, 3), mode="promise_in_bounds")

    starts = [jnp.asarray([[0, 0], [6, 8], [-4, 3], [2, 100]], jnp.int32),
              _i32(rng, -5, 12, (4, 2))]
    _check(f, *[(x, s) for s in starts], ops=["stablehlo.gather"], exact=True)


def test_lax_gather_implicit_index_vector_dim():
    """index_vector_dim == rank(start_indices): one scalar start per batch
    position, a collapsed dim and a window along the other."""
    rng = _rng(7)
    x = _i32(rng, -50, 50, (8, 5))
    dn = lax.GatherDimensionNumbers(offset_dims=(2,), collapsed_slice_dims=(0,),
                                    start_index_map=(0,))

    def f(x, s):
        return lax.gather(x, s[..., None], dn, slice_sizes=(1, 3), mode="promise_in_bounds")

    starts = [jnp.asarray([[0, 7], [9, -2]], jnp.int32), _i32(rng, -3, 11, (2, 2))]
    _check(f, *[(x, s) for s in starts], ops=["stablehlo.gather"], exact=True)


# ---------------------------------------------------------------------------
# scatter
# ---------------------------------------------------------------------------

def test_scatter_set_unique_and_dropped():
    """x.at[idx].set(v): negative indices wrap, out-of-range updates are
    dropped (JAX's default scatter mode, XLA skips the window)."""
    rng = _rng(10)
    x = _f32(rng, (6, 7))
    v = _f32(rng, (3, 7))
    idx = [jnp.asarray([4, -1, 1], jnp.int32), jnp.asarray([0, 9, -2], jnp.int32),
           jnp.asarray([-7, 2, 6], jnp.int32)]
    _check(lambda x, i, v: x.at[i].set(v), *[(x, i, v) for i in idx],
           ops=["stablehlo.scatter"], exact=True)


def test_scatter_set_duplicates_keeps_one_update():
    """x.at[[2, 2]].set(v): which update wins is implementation-defined;
    the row must be one of them, and every other row unchanged."""
    rng = _rng(9)
    x = _f32(rng, (5, 4))
    v = _f32(rng, (2, 4))
    idx = jnp.asarray([2, -3], jnp.int32)
    got = np.asarray(pj.jit(lambda x, i, v: x.at[i].set(v), strict=True)(x, idx, v))
    xn, vn = np.asarray(x), np.asarray(v)
    assert any(np.array_equal(got[2], vn[k]) for k in range(2)), got[2]
    np.testing.assert_array_equal(np.delete(got, 2, axis=0), np.delete(xn, 2, axis=0))


def test_scatter_add_duplicates_f32():
    rng = _rng(11)
    x = _f32(rng, (6, 7))
    v = _f32(rng, (5, 7))
    idx = [jnp.asarray([2, 2, -4, 2, 5], jnp.int32), _i32(rng, -6, 6, (5,)),
           jnp.asarray([1, 1, 1, 1, 8], jnp.int32)]
    _check(lambda x, i, v: x.at[i].add(v), *[(x, i, v) for i in idx],
           ops=["stablehlo.scatter"], rtol=1e-5, atol=1e-5)


def test_scatter_add_duplicates_int32():
    rng = _rng(12)
    x = _i32(rng, -100, 100, (5, 3))
    v = _i32(rng, -100, 100, (2, 4, 3))
    idx = [_i32(rng, -5, 5, (2, 4)), jnp.asarray([[0, 0, 0, 4], [-5, 0, 7, 3]], jnp.int32)]
    _check(lambda x, i, v: x.at[i].add(v), *[(x, i, v) for i in idx],
           ops=["stablehlo.scatter"], exact=True)


def test_scatter_add_bf16():
    rng = _rng(13)
    x = _f32(rng, (4, 6)).astype(jnp.bfloat16)
    v = _f32(rng, (3, 6)).astype(jnp.bfloat16)
    idx = jnp.asarray([3, 3, 0], jnp.int32)
    _check(lambda x, i, v: x.at[i].add(v), (x, idx, v), ops=["stablehlo.scatter"],
           rtol=2e-2, atol=2e-2)


def test_scatter_mul_max_min():
    rng = _rng(14)
    x = _f32(rng, (5, 4))
    v = _f32(rng, (4, 4))
    idx = [jnp.asarray([1, 1, -1, 0], jnp.int32), _i32(rng, -5, 7, (4,))]

    def f(x, i, v):
        return x.at[i].mul(v), x.at[i].max(v), x.at[i].min(v)

    _check(f, *[(x, i, v) for i in idx], ops=["stablehlo.scatter"], rtol=1e-6)


def test_embedding_gradient():
    """The gradient of an embedding lookup: a scatter-add into zeros."""
    rng = _rng(15)
    table = _f32(rng, (10, 4))
    ids = [_i32(rng, 0, 10, (3, 5)), jnp.asarray([[1] * 5, [1, 2, 1, 2, -1], [0] * 5],
                                                 jnp.int32)]
    grad = jax.grad(lambda t, i: (t[i] ** 2 * jnp.arange(4.0)).sum())
    _check(grad, *[(table, i) for i in ids], ops=["stablehlo.scatter"], rtol=1e-5)


def test_one_hot_set():
    """zeros.at[arange(n), labels].set(1): a two-component scatter index
    and a constant update."""
    rng = _rng(16)
    labels = [_i32(rng, 0, 7, (5,)), jnp.asarray([0, 6, -1, 9, 3], jnp.int32)]
    _check(lambda lab: jnp.zeros((5, 7)).at[jnp.arange(5), lab].set(1.0),
           *[(lab,) for lab in labels], ops=["stablehlo.scatter"], exact=True)


def test_take_along_axis_gradient():
    """The gradient of take_along_axis: a scatter-add with batching dims,
    duplicate indices included."""
    rng = _rng(17)
    x = _f32(rng, (6, 7))
    ix = [_i32(rng, -7, 7, (6, 4)), jnp.zeros((6, 4), jnp.int32)]
    grad = jax.grad(lambda x, i: (jnp.take_along_axis(x, i, axis=1) ** 2).sum())
    _check(grad, *[(x, i) for i in ix], ops=["stablehlo.scatter"], rtol=1e-5, atol=1e-5)


def test_scatter_traced_scalar_index():
    """x.at[i].set(row) with a traced scalar i."""
    rng = _rng(18)
    x = _f32(rng, (6, 7))
    row = _f32(rng, (7,))
    _check(lambda x, i, r: x.at[i].set(r), *[(x, jnp.int32(i), row) for i in (0, 5, -2, 8)],
           ops=["stablehlo.scatter"], exact=True)


def test_lax_scatter_add_windows():
    """lax.scatter_add of 3x2 windows: windows that do not fit in the
    operand are skipped whole (XLA), overlapping windows all add; the
    updates are read at computed window positions."""
    rng = _rng(19)
    x = _f32(rng, (8, 6))
    u = _f32(rng, (5, 3, 2))
    dn = lax.ScatterDimensionNumbers(update_window_dims=(1, 2), inserted_window_dims=(),
                                     scatter_dims_to_operand_dims=(0, 1))
    starts = [jnp.asarray([[0, 0], [1, 1], [5, 4], [6, 0], [-1, 2]], jnp.int32),
              _i32(rng, -1, 7, (5, 2))]
    _check(lambda x, s, u: lax.scatter_add(x, s, u, dn), *[(x, s, u) for s in starts],
           ops=["stablehlo.scatter"], rtol=1e-5, atol=1e-5)


def test_scatter_row_slice_set():
    """x.at[idx, 1:4].set(v): a window narrower than its operand dim."""
    rng = _rng(20)
    x = _i32(rng, -9, 9, (5, 6))
    v = _i32(rng, 10, 99, (2, 3))
    idx = [jnp.asarray([0, 4], jnp.int32), jnp.asarray([-1, 2], jnp.int32)]
    _check(lambda x, i, v: x.at[i, 1:4].set(v), *[(x, i, v) for i in idx],
           ops=["stablehlo.scatter"], exact=True)


def test_unsupported_scatter_raises():
    """An update computation other than set/one combining op is refused
    (strict: NotImplementedError naming stablehlo.scatter)."""
    x = jnp.ones((4, 3), jnp.float32)
    idx = jnp.asarray([0, 2], jnp.int32)
    with pytest.raises(NotImplementedError, match="stablehlo.scatter"):
        pj.jit(lambda x, i: x.at[i].apply(jnp.sin), strict=True)(x, idx)


# ---------------------------------------------------------------------------
# dynamic_slice / dynamic_update_slice
# ---------------------------------------------------------------------------

def test_traced_scalar_getitem():
    """x[i] with a traced i: a dynamic_slice (out-of-range i clamps)."""
    rng = _rng(30)
    x = _f32(rng, (6, 7))
    _check(lambda x, i: x[i], *[(x, jnp.int32(i)) for i in (0, 3, -1, -6, 9, -20)],
           ops=["stablehlo.dynamic_slice"], exact=True)


def test_dynamic_slice_clamps():
    rng = _rng(31)
    x = _i32(rng, -1000, 1000, (6, 7, 3))

    def f(x, i, j):
        return lax.dynamic_slice(x, (i, j, 1), (4, 3, 2))

    pairs = [(0, 0), (2, 4), (5, 6), (-3, 1), (100, -100)]
    _check(f, *[(x, jnp.int32(i), jnp.int32(j)) for i, j in pairs],
           ops=["stablehlo.dynamic_slice"], exact=True)


def test_dynamic_update_slice_clamps():
    rng = _rng(32)
    x = _f32(rng, (6, 7))
    u = _f32(rng, (2, 3))

    def f(x, u, i, j):
        return lax.dynamic_update_slice(x, u, (i, j))

    pairs = [(0, 0), (4, 4), (5, 6), (-1, 2), (3, -9)]
    _check(f, *[(x, u, jnp.int32(i), jnp.int32(j)) for i, j in pairs],
           ops=["stablehlo.dynamic_update_slice"], exact=True)


def test_dynamic_update_slice_bf16_traced_row():
    """x.at[i].set(row) lowered by jax.lax.dynamic_update_index_in_dim."""
    rng = _rng(33)
    x = _f32(rng, (5, 4)).astype(jnp.bfloat16)
    row = _f32(rng, (1, 4)).astype(jnp.bfloat16)

    def f(x, r, i):
        return lax.dynamic_update_index_in_dim(x, r, i, 0) * 2

    _check(f, *[(x, row, jnp.int32(i)) for i in (0, 4, 7)],
           ops=["stablehlo.dynamic_update_slice"], exact=True)
