"""PT2E-quantized graphs (polyblocks.torch.quantized): linear layers and
convolutions whose input and weight are dequantized become int8 x int8 ->
int32 products, the other quantize/dequantize pairs their f32 values; compiled in strict mode
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
        lower_quantized(gm, example_inputs)
        targets.extend(str(n.target) for n in gm.graph.nodes if n.op == "call_function")
        return gm.forward

    torch._dynamo.reset()
    torch.compile(fn, backend=backend, fullgraph=True)(*inputs)
    return targets


def _check(fn, inputs, integer_op, lowered=True):
    """`fn`'s graph after lower_quantized has `integer_op` (or not, with
    `lowered` false) and no quantize/dequantize op left, and compiled in
    strict mode it matches `fn` in eager (exact integer sums, one f32
    scaling: the reference sums f32 products)."""
    targets = _lowered_targets(fn, inputs)
    assert (integer_op in targets) == lowered, targets
    assert not any("quantized_decomposed" in t for t in targets), targets
    want = fn(*inputs)
    got = compile_strict(fn)(*inputs)
    assert got.dtype == want.dtype
    assert torch.allclose(got, want, rtol=1e-5, atol=1e-5 * want.abs().max().item())


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
    _check(_quantized_linear(qtype, x_zero), (x, wq, sw, zw, b), "aten._int_mm.default")


def test_integer_linear_of_a_bf16_input():
    """The reference quantizes a bf16 input in f32: so does the rewrite."""
    g = torch.Generator().manual_seed(4)
    x = (torch.randn(6, 32, generator=g) * 3).to(torch.bfloat16)
    wq, sw, zw = _weights(16, 32, g)
    b = torch.randn(16, generator=g)
    _check(_quantized_linear(torch.uint8, 100), (x, wq, sw, zw, b), "aten._int_mm.default")


def _quantized_conv(zx, stride, padding, groups=1):
    def fn(x, wq, sw, zw, b):
        xd = qd.dequantize_per_tensor(qd.quantize_per_tensor(x, 0.1, zx, 0, 255, torch.uint8),
                                      0.1, zx, 0, 255, torch.uint8)
        wd = qd.dequantize_per_channel(wq, sw, zw, 0, -128, 127, torch.int8)
        y = F.conv2d(xd, wd, b, stride=stride, padding=padding, groups=groups)
        return y + xd.mean()   # a dequantized value used elsewhere too
    return fn


def _conv_weights(f, c, k, g, zero_range=(0, 1)):
    wq = torch.randint(-128, 128, (f, c, k, k), generator=g, dtype=torch.int8)
    sw = torch.rand(f, generator=g) * 0.02 + 0.001
    zw = torch.randint(*zero_range, (f,), generator=g)
    return wq, sw, zw, torch.randn(f, generator=g)


@pytest.mark.parametrize("zx,stride,padding,k,c", [
    (131, 1, 1, 3, 8),     # padded with the zero point's code, not with 0
    (0, 2, 0, 1, 8),       # a strided 1x1
    (250, 2, 2, 5, 8),
    (128, 2, 3, 7, 3),     # an RGB stem: K = 3 x 7 x 7, no multiple of 4
], ids=["3x3-pad", "1x1-stride2", "5x5-pad2-stride2", "rgb-stem"])
def test_integer_convolution(zx, stride, padding, k, c):
    g = torch.Generator().manual_seed(1)
    inputs = (torch.randn(2, c, 11, 11, generator=g) * 2, *_conv_weights(16, c, k, g))
    _check(_quantized_conv(zx, stride, padding), inputs, "polyblocks.conv2d_int8.default")


@pytest.mark.parametrize("case", ["grouped", "asymmetric-weights"])
def test_dequantized_convolution_stays_f32(case):
    """Grouped convolutions and weights with zero points take the
    dequantized values in f32."""
    g = torch.Generator().manual_seed(2)
    c, k, groups, zero_range = {"grouped": (8, 3, 2, (0, 1)),
                                "asymmetric-weights": (8, 3, 1, (-2, 3))}[case]
    inputs = (torch.randn(1, c, 12, 12, generator=g), *_conv_weights(8, c // groups, k, g,
                                                                    zero_range))
    _check(_quantized_conv(128, 1, 1, groups), inputs, "polyblocks.conv2d_int8.default",
           lowered=False)


def test_conv2d_int8_op():
    """polyblocks::conv2d_int8 in eager (exact f64 sums) and compiled."""
    from polyblocks.torch.int8_ops import conv2d_int8
    g = torch.Generator().manual_seed(3)
    x = torch.randint(-128, 128, (2, 8, 9, 9), generator=g, dtype=torch.int8)
    w = torch.randint(-128, 128, (16, 8, 3, 3), generator=g, dtype=torch.int8)
    want = torch.nn.functional.conv2d(x.long().double(), w.long().double(), stride=2,
                                      dilation=2).long()
    got = conv2d_int8(x, w, [2, 2], [2, 2])
    assert got.dtype == torch.int32 and torch.equal(got.long(), want)
    compiled = compile_strict(lambda x, w: torch.ops.polyblocks.conv2d_int8(x, w, [2, 2],
                                                                            [2, 2]))
    assert torch.equal(compiled(x, w).long(), want)
    with pytest.raises(TypeError):
        conv2d_int8(x.float(), w, [1, 1], [1, 1])


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


class _ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, padding=1)        # K = 27
        self.conv = nn.Conv2d(16, 16, 3, padding=1)
        self.down = nn.Conv2d(16, 32, 1, stride=2)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        x = torch.relu(self.stem(x))
        x = torch.relu(self.conv(x) + x)                  # a residual add
        x = self.down(x).mean((2, 3))
        return self.fc(x)


@pytest.mark.parametrize("name", ["mlp", "convnet"])
def test_pt2e_x86_quantizer_model(name):
    """A model quantized as users do (export, the x86 quantizer, one
    calibration batch): the same outputs as the quantized model in eager."""
    pt2e = pytest.importorskip("torchao.quantization.pt2e.quantize_pt2e")
    xiq = pytest.importorskip("torchao.quantization.pt2e.quantizer.x86_inductor_quantizer")
    torch.manual_seed(0)
    if name == "mlp":
        model = nn.Sequential(nn.Linear(64, 48), nn.ReLU(), nn.Linear(48, 32), nn.GELU(),
                              nn.Linear(32, 16)).eval()
        x = torch.randn(4, 8, 64)
    else:
        model, x = _ConvNet().eval(), torch.randn(2, 3, 16, 16)
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
