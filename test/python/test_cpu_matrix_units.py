"""bf16 and int8 contractions through torch.compile on the CPU (strict: no
op falls back to eager), checked against the same products summed in f64.
On a host whose cpu-host resolves to cpu-sapphire-rapids they run on AMX
tiles (tdpbf16ps, tdpbssd); elsewhere bf16 runs on the widening FMA
micro-kernel and int8 on loop-tiled code."""

import pytest
import torch
import torch.nn.functional as F

from helpers import compile_strict

BF16_CASES = [
    # (name, function, input shapes)
    ("mm_33x47x3000", lambda a, b: a @ b, [(33, 3000), (3000, 47)]),
    ("mm_8x64x128", lambda a, b: a @ b, [(8, 128), (128, 64)]),   # under a tile
    ("linear_128x768x3072", lambda x, w: F.linear(x, w), [(128, 3072), (768, 3072)]),
    ("bmm_4x48x64x32", lambda a, b: torch.bmm(a, b), [(4, 48, 32), (4, 32, 64)]),
    ("conv3x3_s2", lambda x, w: F.conv2d(x, w, stride=2, padding=1),
     [(2, 16, 15, 15), (24, 16, 3, 3)]),
    # Depthwise and grouped: channels-last generics widening bf16 to f32.
    ("depthwise3x3", lambda x, w: F.conv2d(x, w, padding=1, groups=32),
     [(1, 32, 14, 14), (32, 1, 3, 3)]),
    ("grouped3x3", lambda x, w: F.conv2d(x, w, stride=2, padding=1, groups=4),
     [(2, 32, 15, 15), (48, 8, 3, 3)]),
]


def _relative_error(got, want):
    return ((got.double() - want).abs().max() / want.abs().max()).item()


@pytest.mark.parametrize("name,fn,shapes", BF16_CASES, ids=[c[0] for c in BF16_CASES])
def test_bf16_contraction(name, fn, shapes):
    torch.manual_seed(0)
    inputs = [torch.randn(*s).to(torch.bfloat16) for s in shapes]
    got = compile_strict(fn)(*inputs)
    assert got.dtype == torch.bfloat16
    want = fn(*(t.double() for t in inputs))
    # The f32 sums are rounded to bf16 once (8 bits of mantissa).
    assert _relative_error(got, want) < 1e-2


@pytest.mark.parametrize("m,n,k", [(33, 47, 200), (64, 64, 6000), (32, 1000, 64)])
def test_int_mm_exact(m, n, k):
    torch.manual_seed(0)
    a = torch.randint(-128, 128, (m, k), dtype=torch.int8)
    b = torch.randint(-128, 128, (k, n), dtype=torch.int8)
    got = compile_strict(lambda x, y: torch._int_mm(x, y))(a, b)
    assert got.dtype == torch.int32
    want = a.to(torch.int64) @ b.to(torch.int64)
    assert torch.equal(got.to(torch.int64), want)
