"""JAX's primitive test harnesses through polyblocks.jax.jit.

The harnesses are jax._src.internal_test_util.test_harnesses.all_harnesses:
one use case of one JAX primitive each (a function, its arguments and their
dtype). A harness is eligible when
- its dtype, every array argument's dtype (as JAX canonicalizes it: with
  x64 off, numpy int64 index arrays are int32) and every output's dtype is
  one of float32, float16, bfloat16, int32, int16, int8, bool (no float64:
  x64 is off; no complex, no unsigned types);
- JAX has no limitation recorded for it on the CPU, it is not the
  enable_xla=False twin of another harness (that flag only matters to
  jax2tf: both lower to the same program under jax.jit), and it traces.

Selection (deterministic): per group_name, at most GROUP_SIZE.get(group,
DEFAULT_GROUP_SIZE) eligible harnesses, taken round-robin over the dtypes in
DTYPE_ORDER; within one dtype in the order of the sha1 of the harness's
fullname. The harnesses in EXTRA_CASES (features the hash order may miss:
interior and negative padding, windowed reductions with strides, padding
and dilations, ...) are added to their group.

Each case: its arguments from numpy.random.RandomState(0), the reference
jax.jit(h.dyn_fun)(*args) and polyblocks.jax.jit(h.dyn_fun, strict=True)
(*args) (the whole program compiled by PolyBlocks: nothing falls back to
XLA), compared leaf by leaf: same shape and dtype, integer and bool outputs
exactly, float outputs with numpy's assert_allclose (NaNs at the same
positions, infinities equal) at the tolerance of the output's dtype in
FLOAT_TOLERANCES (the harnesses of this JAX version carry none; TOLERANCES
in the expectations overrides it per case).

Cases that do not pass are listed, with the reason, in
jax_harness_expectations.py: EXPECTED_FAILURES (reported as xfail; an
unexpected pass fails the test, so the table stays exact) or SKIPS (outputs
that cannot be compared). Case names are the harness's fullname, shortened
past 80 characters to a prefix and a hash of the rest.

POLYBLOCKS_JAX_HARNESS_REPORT=file.json writes every case's outcome to
that file (to regenerate the table).
"""

import hashlib

import numpy as np
import pytest

jax = pytest.importorskip("jax")

from jax._src.internal_test_util import test_harnesses as _th  # noqa: E402

import polyblocks.jax as pj  # noqa: E402
from polyblocks import compiler  # noqa: E402

from helpers import OutcomeReport  # noqa: E402
from jax_harness_expectations import EXPECTED_FAILURES, SKIPS, TOLERANCES  # noqa: E402

DTYPE_ORDER = ("float32", "int32", "float16", "bfloat16", "int8", "int16", "bool")
ALLOWED_DTYPES = frozenset(DTYPE_ORDER)

DEFAULT_GROUP_SIZE = 4
GROUP_SIZE = {
    "dot_general": 16, "conv_general_dilated": 16, "pad": 8, "gather": 10,
    "scatter": 6, "scatter_add": 8, "dynamic_slice": 8, "dynamic_update_slice": 8,
    "reduce_window_max": 8, "reduce_window_add": 8, "reduce_window_min": 6,
    "reduce_window_mul": 6, "reduce": 8, "reduce_max": 6, "reduce_min": 6, "reduce_sum": 6,
    "reduce_prod": 6, "convert_element_type": 20, "integer_pow": 8, "broadcast_in_dim": 6,
    "reshape": 6, "transpose": 6, "slice": 8, "concatenate": 6, "select_n": 6,
    "clamp": 6, "rem": 6, "div": 6, "sign": 6, "argmax": 6, "argmin": 6, "cumsum": 6,
    "cummax": 5, "iota": 6, "rev": 6, "squeeze": 6, "max": 6, "min": 6, "round": 5,
    "shift_left": 6, "shift_right_arithmetic": 6, "shift_right_logical": 6, "neg": 6,
    "abs": 6, "add": 6, "mul": 6, "sub": 6, "and": 6, "or": 6, "xor": 6, "pow": 6,
    "bitcast_convert_type": 6, "reduce_precision": 6,
    # Linear algebra, random numbers, special functions: no emitters, a few cases.
    "cholesky": 2, "eigh": 2, "lu": 2, "qr": 2, "svd": 2, "triangular_solve": 2,
    "custom_linear_solve": 2, "random_categorical": 2, "random_gamma": 2,
    "random_randint": 2, "random_uniform": 2, "approx_top_k": 2,
    "regularized_incomplete_beta": 2, "igamma": 2, "igammac": 2,
}

EXTRA_CASES = (
    "pad_inshape_float32_2_3_pads_1_2_1_0_1_0_enable_xla_True",
    "pad_inshape_float32_2_3_pads_0_0_0_-2_-3_1_enable_xla_True",
    "pad_inshape_float32_2_3_pads_0_0_0_-2_-2_4_enable_xla_True",
    "pad_inshape_bfloat16_2_3_pads_1_2_1_0_1_0_enable_xla_True",
    "reduce_window_max_same_padding_shape_float32_112_112_initvalue_-inf_windowdimensions_3_3"
    "_windowstrides_2_2_padding_SAME_basedilation_1_1_windowdilation_1_1_enablexla_True",
    "bitcast_convert_type_dtypes_to_new_dtypes_shape_bool_2_3_newdtype_bool",
)

FLOAT_TOLERANCES = {
    "float32": dict(rtol=1e-5, atol=1e-5),
    "float16": dict(rtol=1e-2, atol=1e-2),
    "bfloat16": dict(rtol=1e-2, atol=1e-2),
}


def case_name(h) -> str:
    name = h.fullname
    if len(name) <= 80:
        return name
    return name[:71] + "_" + hashlib.sha1(name.encode()).hexdigest()[:8]


def _dtype_name(dt) -> str:
    return np.dtype(dt).name


def _hash(h) -> str:
    return hashlib.sha1(h.fullname.encode()).hexdigest()


def _make_args(h):
    return h.dyn_args_maker(np.random.RandomState(0))


def _eligible(h) -> bool:
    if h.dtype is None or _dtype_name(h.dtype) not in ALLOWED_DTYPES:
        return False
    if h.params.get("enable_xla") is False or not h.filter("cpu"):
        return False
    try:
        args = _make_args(h)
        for a in args:
            if hasattr(a, "dtype") and _dtype_name(
                    jax.dtypes.canonicalize_dtype(a.dtype)) not in ALLOWED_DTYPES:
                return False
        out = jax.eval_shape(h.dyn_fun, *args)
    except Exception:  # does not trace (or needs x64)
        return False
    leaves = jax.tree_util.tree_leaves(out)
    return bool(leaves) and all(_dtype_name(x.dtype) in ALLOWED_DTYPES for x in leaves)


def _select():
    groups = {}
    for h in _th.all_harnesses:
        groups.setdefault(h.group_name, []).append(h)
    extra = set(EXTRA_CASES)
    selected = {}
    for group in sorted(groups):
        per_dtype = {}
        for h in sorted(groups[group], key=_hash):
            if h.dtype is not None and _dtype_name(h.dtype) in ALLOWED_DTYPES:
                per_dtype.setdefault(_dtype_name(h.dtype), []).append(h)
        queues = [per_dtype[d] for d in DTYPE_ORDER if d in per_dtype]
        want = GROUP_SIZE.get(group, DEFAULT_GROUP_SIZE)
        taken = 0
        while taken < want and any(queues):
            for q in queues:
                while q and not _eligible(q[0]):
                    q.pop(0)
                if q and taken < want:
                    h = q.pop(0)
                    selected[case_name(h)] = h
                    taken += 1
        for h in groups[group]:
            if h.fullname in extra and _eligible(h):
                selected[case_name(h)] = h
    return selected


CASES = _select()

REPORT = OutcomeReport("POLYBLOCKS_JAX_HARNESS_REPORT")


@pytest.fixture(scope="module", autouse=True)
def _write_report():
    yield
    REPORT.write()


def _compare(actual, expected, tol):
    a_leaves, a_tree = jax.tree_util.tree_flatten(actual)
    e_leaves, e_tree = jax.tree_util.tree_flatten(expected)
    assert a_tree == e_tree, f"result structure {a_tree} != {e_tree}"
    for i, (a, e) in enumerate(zip(a_leaves, e_leaves)):
        a_dt, e_dt = _dtype_name(a.dtype), _dtype_name(e.dtype)
        assert a_dt == e_dt, f"result {i}: dtype {a_dt} != {e_dt}"
        assert tuple(a.shape) == tuple(e.shape), f"result {i}: shape {a.shape} != {e.shape}"
        if e_dt in FLOAT_TOLERANCES:
            np.testing.assert_allclose(
                np.asarray(a, dtype=np.float32), np.asarray(e, dtype=np.float32),
                equal_nan=True, err_msg=f"result {i}",
                **(tol or FLOAT_TOLERANCES[e_dt]))
        else:
            np.testing.assert_array_equal(np.asarray(a), np.asarray(e), err_msg=f"result {i}")


@pytest.mark.parametrize("name", sorted(CASES))
def test_jax_harness(name):
    h = CASES[name]
    if name in SKIPS:
        REPORT.record(name, "skip", SKIPS[name])
        pytest.skip(SKIPS[name])
    args = _make_args(h)
    try:
        expected = jax.jit(h.dyn_fun)(*args)
    except Exception as e:  # the harness itself does not run under jax.jit
        REPORT.record(name, "skip", f"jax.jit fails: {e}")
        pytest.skip(f"the harness fails under jax.jit: {type(e).__name__}")
    error = None
    try:
        actual = pj.jit(h.dyn_fun, strict=True)(*_make_args(h))
        _compare(actual, expected, TOLERANCES.get(name))
    except Exception as e:
        error = e
        REPORT.record(name, "fail", f"{type(e).__name__}: {e}")
    finally:
        compiler.clear_memory_cache()
    REPORT.conclude(name, error, EXPECTED_FAILURES)
