"""PT2E-quantized graphs (polyblocks.torch.quantized): linear layers whose
input and weight are dequantized become int8 x int8 -> int32 products, the
other quantize/dequantize pairs their f32 values; compiled in strict mode
(nothing in eager), checked against the quantized model run in eager."""

import pytest
import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F

import torch.ao.quantization.fx._decomposed  # noqa: F401  (quantized_decomposed ops)
from polyblocks.torch.quantized import lower_quantized

from helpers import compile_strict

qd = torch.ops.quantized_decomposed


def _quantized_linear(qtype, x_zero):
    qmin, qmax = (0, 255) if qtype == torch.uint8 else (-128, 127)

    def fn(x, wq, sw, zw, b):
        xq = qd.quantize_per_tensor(x, 0.05, x_zero, qmin, qmax, qtype)
        xd = qd.dequantize_per_tensor(xq, 0.05, x_zero, qmin, qmax, qtype)
        wd = qd.dequantize_per_channel(wq, sw, zw, 0, -128, 127, torch.int8)
        return F.linear(xd, wd, b)
    return fn


def _weights(n, k, g, zero_range=(0, 1)):
    wq = torch.randint(-128, 128, (n, k), generator=g, dtype=torch.int8)
    sw = torch.rand(n, generator=g) * 0.01 + 0.001
    zw = torch.randint(*zero_range, (n,), generator=g)
    return wq, sw, zw


def _lowered_targets(fn, inputs):
    """The call targets of dynamo's graph of `fn` after lower_quantized."""
    targets = []

    def backend(gm, example_inputs):
        lower_quantized(gm)
        targets.extend(str(n.target) for n in gm.graph.nodes if n.op == "call_function")
        return gm.forward

    torch._dynamo.reset()
    torch.compile(fn, backend=backend, fullgraph=True)(*inputs)
    return targets


@pytest.mark.parametrize("qtype,x_zero,zero_range,x_shape", [
    (torch.uint8, 131, (0, 1), (16, 96)),      # the x86 quantizer's kind
    (torch.uint8, 3, (-3, 4), (5, 40)),        # weight zero points too
    (torch.int8, -7, (0, 1), (2, 9, 64)),      # i8 activations, a 3-d input
], ids=["u8-symmetric-w", "u8-asymmetric-w", "i8-3d"])
def test_integer_linear(qtype, x_zero, zero_range, x_shape):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(*x_shape, generator=g) * 3
    n, k = 24, x_shape[-1]
    wq, sw, zw = _weights(n, k, g, zero_range)
    b = torch.randn(n, generator=g)
    fn = _quantized_linear(qtype, x_zero)
    inputs = (x, wq, sw, zw, b)
    targets = _lowered_targets(fn, inputs)
    assert "aten._int_mm.default" in targets
    assert not any("quantized_decomposed" in t for t in targets), targets
    want = fn(*inputs)
    got = compile_strict(fn)(*inputs)
    # Exact integer sums, one f32 scaling (the reference sums f32 products).
    assert torch.allclose(got, want, rtol=1e-5, atol=1e-5 * want.abs().max().item())


def test_dequantized_convolution_runs_in_f32():
    """A quantized convolution's operands (and a residual add of dequantized
    values) take their f32 values; no integer convolution yet."""
    g = torch.Generator().manual_seed(1)
    wq = torch.randint(-128, 128, (8, 4, 3, 3), generator=g, dtype=torch.int8)
    sw = torch.rand(8, generator=g) * 0.02 + 0.001
    zw = torch.zeros(8, dtype=torch.int64)

    def fn(x, wq, sw, zw):
        xd = qd.dequantize_per_tensor(qd.quantize_per_tensor(x, 0.1, 128, 0, 255, torch.uint8),
                                      0.1, 128, 0, 255, torch.uint8)
        wd = qd.dequantize_per_channel(wq, sw, zw, 0, -128, 127, torch.int8)
        y = F.conv2d(xd, wd, padding=1)
        return y + xd.sum(1, keepdim=True)

    x = torch.randn(2, 4, 10, 10, generator=g)
    targets = _lowered_targets(fn, (x, wq, sw, zw))
    assert not any("quantized_decomposed" in t for t in targets), targets
    want = fn(x, wq, sw, zw)
    got = compile_strict(fn)(x, wq, sw, zw)
    assert torch.allclose(got, want, rtol=1e-5, atol=1e-5 * want.abs().max().item())


def test_codes_leaving_the_graph_stay():
    """A quantize op whose codes are an output is not rewritten (it runs in
    eager, the backend warns); its dequantized use still is."""
    def fn(x):
        xq = qd.quantize_per_tensor(x, 0.1, 0, -128, 127, torch.int8)
        return xq, qd.dequantize_per_tensor(xq, 0.1, 0, -128, 127, torch.int8) * 2

    targets = _lowered_targets(fn, (torch.randn(4, 4),))
    assert sum("quantize_per_tensor" in t for t in targets) == 1
    assert not any("dequantize_per_tensor" in t for t in targets)


def test_graph_without_quantized_ops_is_unchanged():
    gm = fx.symbolic_trace(nn.Sequential(nn.Linear(4, 4), nn.ReLU()))
    before = str(gm.graph)
    assert not lower_quantized(gm)
    assert str(gm.graph) == before


def test_pt2e_x86_quantizer_model():
    """A model quantized as users do (export, the x86 quantizer, one
    calibration batch): the same outputs as the quantized model in eager."""
    pt2e = pytest.importorskip("torchao.quantization.pt2e.quantize_pt2e")
    xiq = pytest.importorskip("torchao.quantization.pt2e.quantizer.x86_inductor_quantizer")
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 48), nn.ReLU(), nn.Linear(48, 32), nn.GELU(),
                          nn.Linear(32, 16)).eval()
    x = torch.randn(4, 8, 64)
    exported = torch.export.export(model, (x,), strict=True).module()
    quantizer = xiq.X86InductorQuantizer()
    quantizer.set_global(xiq.get_default_x86_inductor_quantization_config())
    prepared = pt2e.prepare_pt2e(exported, quantizer)
    prepared(x)
    quantized = pt2e.convert_pt2e(prepared)
    with torch.no_grad():
        want = quantized(x)
        got = compile_strict(quantized)(x)
    assert torch.allclose(got, want, rtol=1e-5, atol=1e-5 * want.abs().max().item())
