"""Contractions on the NVIDIA tensor cores (pb-nvidia-lower-matrix-units).

Here: the option that lets f32 use tf32 units reaches the compiler, and each
element type's artifact holds its mma.sync. On a GPU (scripts/device/check):
f16, bf16 and tf32 matmuls, a batched matmul with an odd K and a linear layer
(x @ W^T over batch x sequence rows) against PyTorch's own matmul, at odd
sizes and at 4096^3."""

import json
import struct

import pytest
import torch

import polyblocks

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(),
                                reason="needs a CUDA device (torch.cuda.is_available())")

_MLIR_TYPES = {torch.float16: "f16", torch.bfloat16: "bf16", torch.float32: "f32"}


def matmul_text(m: int, n: int, k: int, dtype: torch.dtype, batch: int = 0,
                b_transposed: bool = False) -> str:
    t = _MLIR_TYPES[dtype]
    lead = f"{batch}x" if batch else ""
    a_shape = f"{lead}{m}x{k}x{t}"
    b_shape = f"{lead}{n}x{k}x{t}" if b_transposed else f"{lead}{k}x{n}x{t}"
    c_shape = f"{lead}{m}x{n}x{t}"
    loops = "b, m, n, k" if batch else "m, n, k"
    bl = "b, " if batch else ""
    b_map = f"({bl}n, k)" if b_transposed else f"({bl}k, n)"
    iters = ('"parallel", ' if batch else "") + '"parallel", "parallel", "reduction"'
    return f"""
func.func @mm(%a: tensor<{a_shape}>, %b: tensor<{b_shape}>) -> tensor<{c_shape}> {{
  %zero = arith.constant 0.0 : {t}
  %e = tensor.empty() : tensor<{c_shape}>
  %z = linalg.fill ins(%zero : {t}) outs(%e : tensor<{c_shape}>) -> tensor<{c_shape}>
  %c = linalg.generic {{indexing_maps = [affine_map<({loops}) -> ({bl}m, k)>,
                                         affine_map<({loops}) -> {b_map}>,
                                         affine_map<({loops}) -> ({bl}m, n)>],
                       iterator_types = [{iters}]}}
      ins(%a, %b : tensor<{a_shape}>, tensor<{b_shape}>) outs(%z : tensor<{c_shape}>) {{
  ^bb0(%x: {t}, %y: {t}, %acc: {t}):
    %p = arith.mulf %x, %y : {t}
    %s = arith.addf %acc, %p : {t}
    linalg.yield %s : {t}
  }} -> tensor<{c_shape}>
  return %c : tensor<{c_shape}>
}}
"""


def _ptx(art, tmp_path) -> str:
    path = tmp_path / "a.pbart"
    art.save(path)
    data = path.read_bytes()
    start = data.index(b"{") - 8
    (meta_size,) = struct.unpack_from("<Q", data, start)
    offset = start + 8 + meta_size
    (size,) = struct.unpack_from("<Q", data, offset)
    payload = json.loads(data[offset + 8:offset + 8 + size])
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


def test_f32_stays_off_tf32_units_by_default(tmp_path):
    art = polyblocks.compile(matmul_text(64, 48, 32, torch.float32), target="nvidia-sm80",
                             cache=False)
    assert "mma.sync" not in _ptx(art, tmp_path)


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
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("m,n,k", [(256, 192, 128), (77, 130, 200), (4096, 4096, 4096)])
def test_matmul(dtype, m, n, k):
    _check(dtype, m, n, k)


@needs_cuda
@pytest.mark.parametrize("m,n,k", [(96, 200, 64), (4096, 4096, 4096)])
def test_matmul_tf32(m, n, k):
    _check(torch.float32, m, n, k, options={"allow_tf32": True})


@needs_cuda
def test_batched_matmul_odd_k():
    _check(torch.float16, 64, 40, 33, batch=3)


@needs_cuda
def test_linear_b_transposed():
    _check(torch.float16, 100, 96, 72, b_transposed=True)
