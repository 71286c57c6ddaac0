"""PyTorch's OpInfo database through torch.compile(backend="polyblocks").

For every OpInfo entry (op name + variant) that supports float32 on the CPU:
its first float32 sample, compiled with fullgraph=True in strict mode (the
whole graph must be compiled by PolyBlocks: nothing falls back to eager),
compared with eager by torch.testing.assert_close. Entries that do not pass
are listed, with the reason, in opinfo_expectations.py: EXPECTED_FAILURES
(reported as xfail; an unexpected pass fails the test, so the table stays
exact) or SKIPS (outputs that cannot be compared).

POLYBLOCKS_OPINFO_REPORT=file.json writes every entry's outcome to that
file (to regenerate the table).
"""


import pytest
import torch
from torch.utils._pytree import tree_flatten, tree_unflatten

from polyblocks import compiler

from helpers import OutcomeReport
from opinfo_expectations import EXPECTED_FAILURES, SKIPS, TOLERANCES

from torch.testing._internal.common_methods_invocations import op_db  # noqa: E402


def _name(op):
    return op.name + ("." + op.variant_test_name if op.variant_test_name else "")


OPS = {}
for _op in op_db:
    if torch.float32 in _op.supported_dtypes("cpu"):
        OPS.setdefault(_name(_op), _op)

REPORT = OutcomeReport("POLYBLOCKS_OPINFO_REPORT")


@pytest.fixture(scope="module", autouse=True)
def _write_report():
    yield
    REPORT.write()


def _first_sample(op):
    torch.manual_seed(0)
    return next(iter(op.sample_inputs("cpu", torch.float32, requires_grad=False)), None)


@pytest.mark.parametrize("name", sorted(OPS))
def test_opinfo(name):
    op = OPS[name]
    if name in SKIPS:
        REPORT.record(name, "skip", SKIPS[name])
        pytest.skip(SKIPS[name])
    sample = _first_sample(op)
    if sample is None:
        REPORT.record(name, "skip", "no float32 sample")
        pytest.skip("no float32 sample")
    flat, spec = tree_flatten((sample.input, sample.args, sample.kwargs))
    tensor_pos = [i for i, v in enumerate(flat) if isinstance(v, torch.Tensor)]

    def fn(*tensors):
        vals = list(flat)
        for i, t in zip(tensor_pos, tensors):
            vals[i] = t
        inp, args, kwargs = tree_unflatten(vals, spec)
        return op(inp, *args, **kwargs)

    tensors = [flat[i] for i in tensor_pos]
    try:
        expected = fn(*[t.clone() for t in tensors])
    except Exception as e:  # the sample itself is invalid in eager
        REPORT.record(name, "skip", f"eager fails: {e}")
        pytest.skip(f"the sample fails in eager: {type(e).__name__}")
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="polyblocks", fullgraph=True, dynamic=False,
                             options={"strict": True})
    error = None
    try:
        with torch.no_grad():
            actual = compiled(*[t.clone() for t in tensors])
        torch.testing.assert_close(actual, expected, equal_nan=True,
                                   **TOLERANCES.get(name, {}))
    except Exception as e:
        error = e
        REPORT.record(name, "fail", f"{type(e).__name__}: {e}")
    finally:
        # Release the compiled code (one shared library per graph).
        torch._dynamo.reset()
        compiler.clear_memory_cache()
    REPORT.conclude(name, error, EXPECTED_FAILURES)
