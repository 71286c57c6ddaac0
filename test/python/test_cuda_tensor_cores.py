"""Contractions on the NVIDIA tensor cores (pb-nvidia-lower-matrix-units).

Here: the option that lets f32 use tf32 units reaches the compiler, each
element type's artifact holds its mma.sync (sm80) or wgmma (sm90, the
chip's largest units; mma.sync with warpgroup_units=False or where wgmma
cannot read B). On a GPU (scripts/device/check): f16, bf16 and tf32
matmuls, a batched matmul with an odd K and a linear layer (x @ W^T over
batch x sequence rows) against PyTorch's own matmul, at odd sizes and at
4096^3, on either unit family."""

import json

import pytest
import torch

import polyblocks
from polyblocks.bench.gpu import matmul_text

from helpers import artifact_file

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(),
                                reason="needs a CUDA device (torch.cuda.is_available())")

def _ptx(art, tmp_path) -> str:
    path = tmp_path / "a.pbart"
    art.save(path)
    _, payload = artifact_file.split(path.read_bytes())
    payload = json.loads(payload)
    return "\n".join(module["ptx"] for module in payload["modules"])


@pytest.mark.parametrize("dtype,options,instruction", [
    (torch.float16, {}, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"),
    (torch.bfloat16, {}, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"),
    (torch.float32, {"allow_tf32": True}, "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"),
])
def test_artifact_uses_the_tensor_cores(tmp_path, dtype, options, instruction):
    art = polyblocks.compile(matmul_text(64, 48, 32, dtype), target="nvidia-sm80",
                             options=options, cache=False)
    ptx = _ptx(art, tmp_path)
    assert instruction in ptx
    assert "cp.async" in ptx


@pytest.mark.parametrize("dtype,b_transposed,options,instruction", [
    (torch.float16, False, {}, "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16"),
    (torch.bfloat16, True, {}, "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"),
    (torch.float32, True, {"allow_tf32": True},
     "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32"),
    # wgmma reads 32-bit operands K-major only: B indexed (k, n) -> mma.sync.
    (torch.float32, False, {"allow_tf32": True},
     "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"),
    (torch.float16, False, {"warpgroup_units": False},
     "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"),
])
def test_sm90_artifact_uses_the_warpgroup_units(tmp_path, dtype, b_transposed, options,
                                                instruction):
    art = polyblocks.compile(matmul_text(256, 256, 128, dtype, 0, b_transposed),
                             target="nvidia-sm90", options=options, cache=False)
    ptx = _ptx(art, tmp_path)
    assert instruction in ptx
    assert ("wgmma" in ptx) == instruction.startswith("wgmma")
    assert "cp.async" in ptx


def test_f32_stays_off_tf32_units_by_default(tmp_path):
    art = polyblocks.compile(matmul_text(64, 48, 32, torch.float32), target="nvidia-sm80",
                             cache=False)
    assert "mma.sync" not in _ptx(art, tmp_path)


# On an sm90 GPU, the warpgroup units (default) and the warp-level ones.
UNIT_FAMILIES = [pytest.param({}, id="largest"),
                 pytest.param({"warpgroup_units": False}, id="warp-level")]


def _check(dtype, m, n, k, batch=0, b_transposed=False, options=None):
    torch.manual_seed(0)
    art = polyblocks.compile(matmul_text(m, n, k, dtype, batch, b_transposed),
                             target="nvidia-auto", options=options or {}, cache=False)
    lead = (batch,) if batch else ()
    a = torch.randn(*lead, m, k, device="cuda").to(dtype)
    b = torch.randn(*lead, *((n, k) if b_transposed else (k, n)), device="cuda").to(dtype)
    (c,) = art.run("mm", [a, b])
    bm = b.float().transpose(-1, -2) if b_transposed else b.float()
    ref = torch.matmul(a.float(), bm)
    torch.cuda.synchronize()
    # Relative to the largest magnitude: f32 accumulation, then rounding to
    # dtype (f16/bf16) or tf32 products (10-bit mantissas).
    err = (c.float() - ref).abs().max().item() / ref.abs().max().item()
    tol = {torch.float16: 2e-3, torch.bfloat16: 1e-2, torch.float32: 5e-3}[dtype]
    assert err < tol, f"relative error {err:.2e} >= {tol:.0e}"


@needs_cuda
@pytest.mark.parametrize("units", UNIT_FAMILIES)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("m,n,k", [(256, 192, 128), (77, 130, 200), (4096, 4096, 4096)])
def test_matmul(dtype, m, n, k, units):
    _check(dtype, m, n, k, options=units)


@needs_cuda
@pytest.mark.parametrize("units", UNIT_FAMILIES)
@pytest.mark.parametrize("m,n,k,b_transposed", [(96, 200, 64, False), (130, 260, 72, True),
                                                (4096, 4096, 4096, False)])
def test_matmul_tf32(m, n, k, b_transposed, units):
    _check(torch.float32, m, n, k, b_transposed=b_transposed,
           options={"allow_tf32": True, **units})


@needs_cuda
def test_batched_matmul_odd_k():
    _check(torch.float16, 64, 40, 33, batch=3)


@needs_cuda
@pytest.mark.parametrize("units", UNIT_FAMILIES)
@pytest.mark.parametrize("m,n,k", [(100, 96, 72), (300, 384, 200)])
def test_linear_b_transposed(m, n, k, units):
    _check(torch.float16, m, n, k, b_transposed=True, options=units)


def test_gpu_bench_lists_its_cases():
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-m", "polyblocks.bench", "--suite", "gpu",
                          "--list", "--models", "resnet50"],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    assert out[0] == "matmul f16 4096^3"
    assert "conv 3x3 64->64 56x56" in out and "layernorm 8192x768" in out
    assert out[-2:] == ["resnet50 batch 1", "resnet50 batch 8"]


@pytest.mark.skipif(torch.cuda.is_available(), reason="a CUDA device is present")
def test_gpu_bench_without_cuda_is_a_clear_error(tmp_path):
    import subprocess
    import sys
    run = subprocess.run([sys.executable, "-m", "polyblocks.bench", "--suite", "gpu",
                          "--out", str(tmp_path)], capture_output=True, text=True)
    assert run.returncode == 2
    assert "needs a CUDA device" in run.stderr


CONV_NHWC = """
func.func @conv(%x: tensor<{n}x{h}x{w}x{c}x{t}>, %f: tensor<3x3x{c}x{k}x{t}>)
    -> tensor<{n}x{oh}x{ow}x{k}x{t}> {{
  %zero = arith.constant 0.0 : {t}
  %e = tensor.empty() : tensor<{n}x{oh}x{ow}x{k}x{t}>
  %z = linalg.fill ins(%zero : {t}) outs(%e : tensor<{n}x{oh}x{ow}x{k}x{t}>)
       -> tensor<{n}x{oh}x{ow}x{k}x{t}>
  %y = linalg.conv_2d_nhwc_hwcf {{dilations = dense<1> : tensor<2xi64>,
                                  strides = dense<{s}> : tensor<2xi64>}}
       ins(%x, %f : tensor<{n}x{h}x{w}x{c}x{t}>, tensor<3x3x{c}x{k}x{t}>)
       outs(%z : tensor<{n}x{oh}x{ow}x{k}x{t}>) -> tensor<{n}x{oh}x{ow}x{k}x{t}>
  return %y : tensor<{n}x{oh}x{ow}x{k}x{t}>
}}
"""


def test_convolution_uses_the_tensor_cores(tmp_path):
    text = CONV_NHWC.format(n=1, h=10, w=10, c=16, k=32, oh=8, ow=8, s=1, t="f16")
    art = polyblocks.compile(text, target="nvidia-sm80", cache=False)
    assert "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in _ptx(art, tmp_path)


def test_tf32_for_convolutions_only(tmp_path):
    options = {"allow_tf32_convolutions": True}
    conv = CONV_NHWC.format(n=1, h=10, w=10, c=16, k=32, oh=8, ow=8, s=1, t="f32")
    art = polyblocks.compile(conv, target="nvidia-sm80", options=options, cache=False)
    assert "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32" in _ptx(art, tmp_path)
    art = polyblocks.compile(matmul_text(64, 48, 32, torch.float32), target="nvidia-sm80",
                             options=options, cache=False)
    assert "mma.sync" not in _ptx(art, tmp_path)


def test_sm90_convolution_uses_the_warpgroup_units(tmp_path):
    text = CONV_NHWC.format(n=2, h=16, w=16, c=64, k=128, oh=14, ow=14, s=1, t="f16")
    art = polyblocks.compile(text, target="nvidia-sm90", cache=False)
    assert "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16" in _ptx(art, tmp_path)


@needs_cuda
@pytest.mark.parametrize("units", UNIT_FAMILIES)
@pytest.mark.parametrize("n,hw,c,k,stride", [(2, 16, 64, 128, 1), (1, 29, 24, 40, 2)])
def test_convolution(n, hw, c, k, stride, units):
    torch.manual_seed(0)
    out = (hw - 3) // stride + 1
    text = CONV_NHWC.format(n=n, h=hw, w=hw, c=c, k=k, oh=out, ow=out, s=stride, t="f16")
    art = polyblocks.compile(text, target="nvidia-auto", options=units, cache=False)
    x = torch.randn(n, hw, hw, c, device="cuda", dtype=torch.float16)
    f = torch.randn(3, 3, c, k, device="cuda", dtype=torch.float16)
    (y,) = art.run("conv", [x, f])
    ref = torch.nn.functional.conv2d(x.permute(0, 3, 1, 2).double(),
                                     f.permute(3, 2, 0, 1).double(), stride=stride)
    ref = ref.permute(0, 2, 3, 1)
    err = (y.double() - ref).abs().max().item() / ref.abs().max().item()
    assert err < 2e-3, f"relative error {err:.2e}"
