"""Backward ops of training graphs compiled by PolyBlocks (strict: no op
falls back to eager), checked against eager's gradients."""

import pytest
import torch

from helpers import compile_strict

CONV_CASES = [
    # (dims, cin, cout, kernel, stride, padding, dilation, groups, bias, size)
    (2, 4, 6, 3, 1, 1, 1, 1, True, 9),
    (2, 4, 8, 3, 2, 1, 1, 2, False, 10),     # strided, grouped
    (2, 6, 6, 5, 2, 2, 1, 6, True, 11),      # depthwise, the input not covered
    (2, 3, 5, 3, 1, 0, 2, 1, True, 12),      # dilated
    (2, 8, 16, 1, 2, 0, 1, 1, False, 7),     # 1x1, strided (a downsample)
    (2, 8, 16, 1, 2, 0, 1, 1, False, 1),     # the same on 1x2: one output,
    (2, 4, 8, 1, 2, 0, 1, 2, False, 1),      # the input's last column never read
    (1, 4, 6, 3, 2, 1, 1, 1, True, 15),
    (3, 2, 4, 3, 1, 1, 1, 1, True, 5),
]


def _input_grad(fn, x, weights):
    """The gradient of sum(fn(x) * weights) with respect to x."""
    xr = x.clone().requires_grad_(True)
    (fn(xr) * weights).sum().backward()
    return xr.grad


def _gradients(model, x):
    x = x.clone().requires_grad_(True)
    y = model(x)
    (y * y).sum().backward()
    return [x.grad] + [p.grad.clone() for p in model.parameters()]


@pytest.mark.parametrize("case", CONV_CASES, ids=lambda c: "conv%dd-c%d-f%d-k%d-s%d-p%d-d%d-g%d" % c[:8])
def test_convolution_backward(case):
    dims, cin, cout, k, stride, padding, dilation, groups, bias, size = case
    torch.manual_seed(0)
    conv = getattr(torch.nn, f"Conv{dims}d")(cin, cout, k, stride=stride, padding=padding,
                                              dilation=dilation, groups=groups, bias=bias)
    shape = (2, cin) + tuple(size + i for i in range(dims))
    x = torch.randn(shape)
    ref = _gradients(conv, x)
    conv.zero_grad()
    got = _gradients(compile_strict(conv), x)
    assert len(got) == len(ref)
    for g, r in zip(got, ref):
        torch.testing.assert_close(g, r, rtol=1e-4, atol=1e-4)


def test_convolution_backward_of_weights_only():
    # A frozen input (no grad): AOTAutograd asks for the filter's and the
    # bias's gradients only (output_mask [False, True, True]).
    torch.manual_seed(0)
    conv = torch.nn.Conv2d(3, 4, 3, padding=1)
    x = torch.randn(2, 3, 8, 8)
    conv(x).square().sum().backward()
    ref = [p.grad.clone() for p in conv.parameters()]
    conv.zero_grad()
    compile_strict(conv)(x).square().sum().backward()
    for p, r in zip(conv.parameters(), ref):
        torch.testing.assert_close(p.grad, r, rtol=1e-4, atol=1e-4)


def test_transposed_convolution_backward_is_refused():
    # Not supported yet: strict mode names the op.
    torch.manual_seed(0)
    deconv = torch.nn.ConvTranspose2d(3, 4, 3, stride=2)
    x = torch.randn(1, 3, 5, 5, requires_grad=True)
    with pytest.raises(Exception) as info:
        compile_strict(deconv)(x).sum().backward()
    assert "convolution_backward" in str(info.value) or "transposed" in str(info.value)


POOL_CASES = [
    # (dims, kernel, stride, padding, dilation, ceil_mode, size)
    (2, 3, 2, 1, 1, False, 12),   # ResNet's stem pool
    (2, 2, 2, 0, 1, False, 8),
    (2, 3, 1, 1, 1, False, 7),    # overlapping windows: gradients add up
    (2, 3, 2, 0, 2, True, 11),    # dilated, ceil mode
    (3, 2, 2, 0, 1, False, 6),
]


@pytest.mark.parametrize("case", POOL_CASES,
                         ids=lambda c: "pool%dd-k%d-s%d-p%d-d%d-ceil%d" % c[:6])
def test_max_pool_backward(case):
    dims, k, stride, padding, dilation, ceil_mode, size = case
    torch.manual_seed(0)
    pool = getattr(torch.nn, f"MaxPool{dims}d")(k, stride=stride, padding=padding,
                                                dilation=dilation, ceil_mode=ceil_mode)
    # Distinct values (no ties between a window's elements).
    shape = (2, 3) + tuple(size + i for i in range(dims))
    x = torch.randperm(torch.Size(shape).numel()).reshape(shape).float()
    weights = torch.randn_like(pool(x))

    torch.testing.assert_close(_input_grad(compile_strict(pool), x, weights),
                               _input_grad(pool, x, weights))


OPTIMIZERS = {
    "sgd-momentum": lambda p, **k: torch.optim.SGD(p, lr=0.1, momentum=0.9, weight_decay=1e-2,
                                                   **k),
    "sgd-nesterov": lambda p, **k: torch.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True, **k),
    "adam": lambda p, **k: torch.optim.Adam(p, lr=1e-2, weight_decay=1e-2, **k),
    "adamw": lambda p, **k: torch.optim.AdamW(p, lr=1e-2, **k),
    "adamw-amsgrad": lambda p, **k: torch.optim.AdamW(p, lr=1e-2, amsgrad=True, **k),
}


def _compile_step(fn):
    # Not a full graph: torch.optim's step has a deliberate graph break
    # (torch._dynamo.graph_break() in _use_grad). Strict: no op in eager.
    torch._dynamo.reset()
    return torch.compile(fn, backend="polyblocks", options={"strict": True})


def _mlp():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(12, 16), torch.nn.GELU(), torch.nn.Linear(16, 5))


@pytest.mark.parametrize("foreach", [True, False], ids=["foreach", "for-loop"])
@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_optimizer_step(name, foreach):
    # torch.compile(optimizer.step): the foreach ops (_foreach_addcmul,
    # _foreach_sqrt, ...) are decomposed per tensor and compiled, nothing
    # runs in eager (strict); parameters and state after three steps match
    # eager's.
    import copy
    model = _mlp()
    twin = copy.deepcopy(model)
    x, y = torch.randn(8, 12), torch.randint(0, 5, (8,))
    ref_opt = OPTIMIZERS[name](model.parameters(), foreach=foreach)
    opt = OPTIMIZERS[name](twin.parameters(), foreach=foreach)
    step = _compile_step(opt.step)
    for _ in range(3):
        for m, o, s in ((model, ref_opt, ref_opt.step), (twin, opt, step)):
            o.zero_grad()
            torch.nn.functional.cross_entropy(m(x), y).backward()
            s()
    for p, q in zip(model.parameters(), twin.parameters()):
        torch.testing.assert_close(q, p, rtol=1e-5, atol=1e-5)
        for key, value in ref_opt.state[p].items():
            torch.testing.assert_close(opt.state[q][key], value, rtol=1e-5, atol=1e-5)


def test_clip_grad_norm_and_step_compiled_together():
    # clip_grad_norm_(foreach=True) uses _foreach_norm and _foreach_mul.
    import copy
    model = _mlp()
    twin = copy.deepcopy(model)
    x, y = torch.randn(8, 12), torch.randint(0, 5, (8,))
    ref_opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    opt = torch.optim.AdamW(twin.parameters(), lr=1e-2)

    def update(params, optimizer):
        total = torch.nn.utils.clip_grad_norm_(params, 0.1, foreach=True)
        optimizer.step()
        return total

    compiled = _compile_step(update)
    for m, o, fn in ((model, ref_opt, update), (twin, opt, compiled)):
        for _ in range(2):
            o.zero_grad()
            torch.nn.functional.cross_entropy(m(x), y).backward()
            total = fn(list(m.parameters()), o)
        assert total.item() > 0.1  # the clip is active
    for p, q in zip(model.parameters(), twin.parameters()):
        torch.testing.assert_close(q, p, rtol=1e-5, atol=1e-5)


ATTENTION_CASES = [
    # (query heads, key/value heads, causal, mask, transposed layout)
    (4, 4, False, None, False),
    (4, 4, True, None, False),
    (4, 4, False, None, True),       # (B, S, H, D) views, as transformers pass them
    (4, 4, False, "float", False),   # an additive mask (padding)
    (4, 4, False, "bool", False),
    (4, 2, True, None, False),       # grouped-query attention
]


@pytest.mark.parametrize("case", ATTENTION_CASES,
                         ids=lambda c: "hq%d-hkv%d-causal%d-mask_%s-t%d" % c)
def test_scaled_dot_product_attention_backward(case):
    # The CPU attention op's backward (and the log-sum-exp it reads) in
    # compiled code, gradients of q, k and v against eager's.
    hq, hkv, causal, mask, transposed = case
    torch.manual_seed(0)
    b, s, d = 2, 12, 8

    def tensor(h):
        shape = (b, s, h, d) if transposed else (b, h, s, d)
        return torch.randn(shape, requires_grad=True)
    q, k, v = tensor(hq), tensor(hkv), tensor(hkv)
    attn_mask = None
    if mask == "float":
        attn_mask = torch.zeros(b, 1, s, s)
        attn_mask[1, :, :, -3:] = float("-inf")
    elif mask == "bool":
        attn_mask = torch.rand(b, 1, s, s) > 0.3
        attn_mask[..., 0] = True  # no row masked whole
    weights = torch.randn(b, hq, s, d)

    def attention(q, k, v):
        if transposed:
            q, k, v = (t.transpose(1, 2) for t in (q, k, v))
        return torch.nn.functional.scaled_dot_product_attention(
            q, k, v, attn_mask=attn_mask, is_causal=causal, enable_gqa=hq != hkv)

    def grads(fn):
        for t in (q, k, v):
            t.grad = None
        (fn(q, k, v) * weights).sum().backward()
        return [t.grad.clone() for t in (q, k, v)]
    ref = grads(attention)
    got = grads(compile_strict(attention))
    for g, r in zip(got, ref):
        torch.testing.assert_close(g, r, rtol=1e-4, atol=1e-4)


AVG_POOL_CASES = [
    ("AvgPool2d", dict(kernel_size=3, stride=2, padding=1), (2, 3, 9, 9)),
    ("AvgPool2d", dict(kernel_size=2), (3, 9, 10)),                     # unbatched
    ("AvgPool2d", dict(kernel_size=3, stride=2, padding=1, count_include_pad=False,
                       ceil_mode=True), (2, 3, 9, 10)),
    ("AvgPool2d", dict(kernel_size=3, stride=1, padding=1, divisor_override=2), (1, 2, 7, 7)),
    ("AvgPool3d", dict(kernel_size=2, stride=2, padding=1), (1, 2, 5, 6, 7)),
    ("AdaptiveAvgPool2d", dict(output_size=1), (2, 4, 7, 7)),            # a CNN's head
    ("AdaptiveAvgPool2d", dict(output_size=3), (2, 3, 9, 9)),            # equal bins
    ("AdaptiveAvgPool2d", dict(output_size=(4, 3)), (2, 3, 9, 10)),      # unequal bins
    ("AdaptiveAvgPool3d", dict(output_size=2), (1, 2, 4, 6, 8)),
]


@pytest.mark.parametrize("case", AVG_POOL_CASES,
                         ids=lambda c: c[0] + "-" + "-".join(f"{k}{v}" for k, v in c[1].items()))
def test_avg_pool_backward(case):
    name, kwargs, shape = case
    torch.manual_seed(0)
    pool = getattr(torch.nn, name)(**kwargs)
    x = torch.randn(shape)
    weights = torch.randn_like(pool(x))

    torch.testing.assert_close(_input_grad(compile_strict(pool), x, weights),
                               _input_grad(pool, x, weights))
