"""The tensor-core cases of the GPU tests, run in the kernel emulator.

test_cuda_tensor_cores.py runs f16, bf16 and tf32 matmuls at odd sizes
and at 4096^3, a batched matmul with an odd K, x @ W^T and convolutions on
a GPU against PyTorch. Here the same programs, compiled for nvidia-sm80
and nvidia-sm90 (its warpgroup units, and mma.sync with
``warpgroup_units=False``), run emulated on CPU tensors against PyTorch on
the CPU, with the GPU tests' tolerances; 4096^3 becomes 256 x 256 x 512 (16 K
tiles of 32 through the 3-stage pipeline, 16 blocks on sm80; a few
seconds emulated). Each case also checks which unit
family its kernel uses: sm90 takes wgmma for 16-bit types where N >= 128,
and for tf32 only where B is K-major (x @ W^T); otherwise mma.sync."""


import pytest
import torch

import polyblocks
from polyblocks.bench.gpu import matmul_text

from helpers import matrix_unit_families
from test_cuda_tensor_cores import CONV_NHWC

BUILDS = [pytest.param("nvidia-sm80", {}, id="sm80"),
          pytest.param("nvidia-sm90", {}, id="sm90-largest"),
          pytest.param("nvidia-sm90", {"warpgroup_units": False}, id="sm90-warp-level")]

# Relative to the largest magnitude, as on the GPU: f32 accumulation, then
# rounding to f16/bf16, or tf32 products (10-bit mantissas).
TOLERANCES = {torch.float16: 2e-3, torch.bfloat16: 1e-2, torch.float32: 5e-3}




def _expected_unit(target, options, wgmma):
    """wgmma where sm90 may use its warpgroup units and ``wgmma`` says the
    case takes them; mma.sync otherwise."""
    largest = target == "nvidia-sm90" and options.get("warpgroup_units", True)
    return "wgmma" if largest and wgmma else "mma.sync"


def _relative_error(result, reference):
    return ((result.double() - reference).abs().max() / reference.abs().max()).item()


def _check(tmp_path, target, options, dtype, m, n, k, batch=0, b_transposed=False,
           wgmma=False):
    torch.manual_seed(0)
    art = polyblocks.compile(matmul_text(m, n, k, dtype, batch, b_transposed), target=target,
                             options=options, cache=False)
    assert matrix_unit_families(art, tmp_path) == {_expected_unit(target, options, wgmma)}
    lead = (batch,) if batch else ()
    a = torch.randn(*lead, m, k).to(dtype)
    b = torch.randn(*lead, *((n, k) if b_transposed else (k, n))).to(dtype)
    (c,) = art.executable(emulate=True).run("mm", [a, b])
    assert c.dtype == dtype and c.device.type == "cpu"
    bm = b.double().transpose(-1, -2) if b_transposed else b.double()
    err = _relative_error(c, torch.matmul(a.double(), bm))
    tol = TOLERANCES[dtype]
    assert err < tol, f"relative error {err:.2e} >= {tol:.0e}"


@pytest.mark.parametrize("target,options", BUILDS)
@pytest.mark.parametrize("dtype", [pytest.param(torch.float16, id="f16"),
                                   pytest.param(torch.bfloat16, id="bf16")])
@pytest.mark.parametrize("m,n,k", [(256, 192, 128), (77, 130, 200), (256, 256, 512)])
def test_matmul(tmp_path, target, options, dtype, m, n, k):
    _check(tmp_path, target, options, dtype, m, n, k, wgmma=True)


@pytest.mark.parametrize("target,options", BUILDS)
@pytest.mark.parametrize("m,n,k,b_transposed", [(96, 200, 64, False), (130, 260, 72, True),
                                                (256, 256, 512, False)])
def test_matmul_tf32(tmp_path, target, options, m, n, k, b_transposed):
    # wgmma reads 32-bit operands K-major only: x @ W (B indexed (k, n))
    # falls back to mma.sync on sm90 too.
    _check(tmp_path, target, {"allow_tf32": True, **options}, torch.float32, m, n, k,
           b_transposed=b_transposed, wgmma=b_transposed)


@pytest.mark.parametrize("target,options", BUILDS)
def test_batched_matmul_odd_k(tmp_path, target, options):
    _check(tmp_path, target, options, torch.float16, 64, 40, 33, batch=3)


@pytest.mark.parametrize("target,options", BUILDS)
@pytest.mark.parametrize("m,n,k,wgmma", [(100, 96, 72, False), (300, 384, 200, True)])
def test_linear_b_transposed(tmp_path, target, options, m, n, k, wgmma):
    _check(tmp_path, target, options, torch.float16, m, n, k, b_transposed=True,
           wgmma=wgmma)


@pytest.mark.parametrize("target,options", BUILDS)
@pytest.mark.parametrize("n,hw,c,k,stride,wgmma", [(2, 16, 64, 128, 1, True),
                                                   (1, 29, 24, 40, 2, False)])
def test_convolution(tmp_path, target, options, n, hw, c, k, stride, wgmma):
    torch.manual_seed(0)
    out = (hw - 3) // stride + 1
    text = CONV_NHWC.format(n=n, h=hw, w=hw, c=c, k=k, oh=out, ow=out, s=stride, t="f16")
    art = polyblocks.compile(text, target=target, options=options, cache=False)
    assert matrix_unit_families(art, tmp_path) == {_expected_unit(target, options, wgmma)}
    x = torch.randn(n, hw, hw, c, dtype=torch.float16)
    f = torch.randn(3, 3, c, k, dtype=torch.float16)
    (y,) = art.executable(emulate=True).run("conv", [x, f])
    ref = torch.nn.functional.conv2d(x.permute(0, 3, 1, 2).double(),
                                     f.permute(3, 2, 0, 1).double(), stride=stride)
    err = _relative_error(y, ref.permute(0, 2, 3, 1))
    assert err < 2e-3, f"relative error {err:.2e}"
