"""The torch.compile backend: models, fallback to eager, strict mode,
options, recompilation, the compile cache across processes, registration."""

import json
import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import polyblocks
from polyblocks import compiler
from polyblocks.torch.backend import Options, polyblocks_backend

from helpers import compile_strict, exception_chain, reset_fallback_log

ROOT = Path(__file__).resolve().parents[2]


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 32)
        self.fc3 = nn.Linear(32, 10)

    def forward(self, x):
        x = F.gelu(self.fc1(x))
        x = torch.tanh(self.fc2(x)) + x
        return F.log_softmax(self.fc3(x), dim=-1)


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.bn2 = nn.BatchNorm2d(16)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(16, 5)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.max_pool2d(x, 2)
        x = F.relu(self.bn2(self.conv2(x)))
        return self.fc(torch.flatten(self.pool(x), 1))


def _randomize_bn(model):
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 1.5)
    return model


def test_backend_is_registered():
    assert "polyblocks" in torch._dynamo.list_backends()
    from torch._dynamo.backends.registry import lookup_backend
    assert lookup_backend("polyblocks") is polyblocks_backend


def test_mlp_inference():
    torch.manual_seed(0)
    model = MLP().eval()
    x = torch.randn(4, 16)
    before = compiler.stats["compiles"] + compiler.stats["memory_hits"]
    with torch.no_grad():
        out = compile_strict(model)(x)
        ref = model(x)
    torch.testing.assert_close(out, ref)
    assert compiler.stats["compiles"] + compiler.stats["memory_hits"] > before


def test_cnn_inference():
    torch.manual_seed(0)
    model = _randomize_bn(CNN()).eval()
    x = torch.randn(2, 3, 16, 16)
    with torch.no_grad():
        out = compile_strict(model)(x)
        ref = model(x)
    torch.testing.assert_close(out, ref, rtol=1e-4, atol=1e-5)


def test_channels_last_inputs_passed_in_memory_order(caplog):
    # A channels-last model and input (the usual CPU inference recipe):
    # the func takes each channels-last tensor in its memory order (NHWC
    # for the input, FHWC for the filters) and transposes it back, so the
    # call passes the tensors without a copy (each call copied every
    # filter and the input to NCHW before: resnet18 44 ms a call instead of
    # 30 ms). The result is eager's.
    torch.manual_seed(0)
    model = _randomize_bn(CNN()).eval().to(memory_format=torch.channels_last)
    x = torch.randn(2, 3, 16, 16).to(memory_format=torch.channels_last)
    with torch.no_grad(), caplog.at_level(logging.DEBUG, logger="polyblocks"):
        out = compile_strict(model)(x)
        ref = model(x)
    torch.testing.assert_close(out, ref, rtol=1e-4, atol=1e-5)
    texts = [r.args[1] for r in caplog.records if "MLIR for" in str(r.msg)]
    assert len(texts) == 1
    signature = texts[0].splitlines()[0]
    assert "tensor<2x16x16x3xf32>" in signature, signature  # x, NHWC
    assert "tensor<16x3x3x8xf32>" in signature, signature  # conv2's filter, FHWC
    assert "tensor<2x3x16x16xf32>" not in signature, signature


def test_memory_order_of_inputs():
    from polyblocks.torch.emitter import _memory_order
    x = torch.randn(2, 3, 4, 5)
    assert _memory_order(x) is None
    assert _memory_order(x.to(memory_format=torch.channels_last)) == [0, 2, 3, 1]
    assert _memory_order(torch.randn(4, 6).t()) == [1, 0]
    # Not dense (every other column): no order; such an input is copied.
    assert _memory_order(torch.randn(4, 6)[:, ::2]) is None


def test_strided_input_is_copied_and_correct():
    # An input that is a strided view (not dense in any order) still runs,
    # copied to a contiguous tensor for the call.
    model = MLP().eval()
    x = torch.randn(3, 32)[:, ::2]
    with torch.no_grad():
        torch.testing.assert_close(compile_strict(model)(x), model(x),
                                   rtol=1e-4, atol=1e-5)


def test_torchvision_resnet_block():
    tv = pytest.importorskip("torchvision")
    torch.manual_seed(0)
    block = _randomize_bn(tv.models.resnet.BasicBlock(8, 8)).eval()
    x = torch.randn(1, 8, 12, 12)
    with torch.no_grad():
        torch.testing.assert_close(compile_strict(block)(x), block(x), rtol=1e-4, atol=1e-5)


def test_training_forward_and_backward():
    torch.manual_seed(0)
    model = MLP()
    ref_model = MLP()
    ref_model.load_state_dict(model.state_dict())
    x = torch.randn(4, 16)
    loss = compile_strict(model)(x).square().mean()
    loss.backward()
    ref = ref_model(x).square().mean()
    ref.backward()
    torch.testing.assert_close(loss, ref)
    for p, q in zip(model.parameters(), ref_model.parameters()):
        torch.testing.assert_close(p.grad, q.grad, rtol=1e-4, atol=1e-6)


def test_ablation_options():
    torch.manual_seed(0)
    model = MLP().eval()
    x = torch.randn(3, 16)
    seen = []
    real = compiler.compile

    def recording(text, target="cpu-host", options=None, **kw):
        seen.append(compiler.format_options(options))
        return real(text, target, options, **kw)

    compiler.compile = recording
    try:
        with torch.no_grad():
            out = compile_strict(model, fusion=False, matrix_units=False)(x)
    finally:
        compiler.compile = real
    torch.testing.assert_close(out, model(x))
    assert seen and all(s == "fusion=0,matrix-units=0" for s in seen)


def test_unknown_option_is_an_error():
    with pytest.raises(ValueError, match="unknown backend options"):
        Options.parse({"fusoin": False})


def _compiled_texts(fn):
    """Runs fn() and returns the MLIR texts it compiled."""
    seen = []
    real = compiler.compile

    def spy(text, *a, **k):
        seen.append(text)
        return real(text, *a, **k)

    compiler.compile = spy
    try:
        return fn(), seen
    finally:
        compiler.compile = real


def test_freeze_folds_parameters_into_constants():
    torch.manual_seed(0)
    model = CNN().eval()
    _randomize_bn(model)
    x = torch.randn(2, 3, 16, 16)
    with torch.no_grad():
        ref = model(x)
        out, texts = _compiled_texts(lambda: compile_strict(model, freeze=True)(x))
        plain, plain_texts = _compiled_texts(lambda: compile_strict(model)(x))
    torch.testing.assert_close(out, ref, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(plain, ref, rtol=1e-4, atol=1e-5)
    # Frozen: the function takes only the image; the weights are constants
    # and BatchNorm was folded into the convolutions at compile time.
    assert len(texts) == 1 and len(plain_texts) == 1
    head = texts[0].split("\n", 1)[0]
    assert head.count("%arg") == 1 and "tensor<2x3x16x16xf32>" in head, head
    assert "math.sqrt" in plain_texts[0] and "math.sqrt" not in texts[0]
    assert plain_texts[0].split("\n", 1)[0].count("%arg") > 1


def test_freeze_refuses_training():
    model = MLP()
    with pytest.raises(Exception) as info:
        compile_strict(model, freeze=True)(torch.randn(2, 16))
    assert any(isinstance(e, NotImplementedError) and "inference" in str(e)
               for e in exception_chain(info.value))


def _with_unsupported(x):
    y = torch.sin(x) * 2
    s, _ = torch.sort(y, dim=-1)   # no emitter: runs in eager
    return torch.relu(s) + 1


def test_fallback_runs_eager_and_logs_once(caplog):
    reset_fallback_log()
    torch._dynamo.reset()
    fn = torch.compile(_with_unsupported, backend="polyblocks", dynamic=False)
    x = torch.randn(3, 5)
    with caplog.at_level(logging.WARNING, logger="polyblocks"):
        with torch.no_grad():
            torch.testing.assert_close(fn(x), _with_unsupported(x))
            y = torch.randn(4, 5)  # a second graph (recompilation) with the same op
            torch.testing.assert_close(fn(y), _with_unsupported(y))
    msgs = [r.getMessage() for r in caplog.records if r.name == "polyblocks"]
    sort_msgs = [m for m in msgs if "aten.sort" in m]
    assert len(sort_msgs) == 1, msgs
    assert "eager" in sort_msgs[0]


def test_fallback_compiles_supported_parts():
    reset_fallback_log()
    torch._dynamo.reset()
    before = compiler.stats["compiles"] + compiler.stats["memory_hits"] + \
        compiler.stats["disk_hits"]
    fn = torch.compile(_with_unsupported, backend="polyblocks", dynamic=False)
    x = torch.randn(2, 7)
    with torch.no_grad():
        torch.testing.assert_close(fn(x), _with_unsupported(x))
    after = compiler.stats["compiles"] + compiler.stats["memory_hits"] + \
        compiler.stats["disk_hits"]
    assert after - before == 2  # the parts before and after the sort


def test_strict_mode_raises_naming_the_op():
    with pytest.raises(Exception) as info:
        with torch.no_grad():
            compile_strict(_with_unsupported)(torch.randn(3, 5))
    chain = exception_chain(info.value)
    nie = [e for e in chain if isinstance(e, NotImplementedError)]
    assert nie, chain
    assert "aten.sort" in str(nie[0])


def test_two_batch_sizes_compile_twice(tmp_path, monkeypatch):
    monkeypatch.setenv("POLYBLOCKS_CACHE_DIR", str(tmp_path))
    compiler.clear_memory_cache()
    torch.manual_seed(0)
    model = MLP().eval()
    fn = compile_strict(model)
    before = compiler.stats["compiles"]
    with torch.no_grad():
        for bs in (2, 5, 2, 5, 2):
            x = torch.randn(bs, 16)
            torch.testing.assert_close(fn(x), model(x))
    assert compiler.stats["compiles"] - before == 2


def test_automatic_dynamic_shapes_are_specialized(tmp_path, monkeypatch):
    # Default torch.compile marks the batch dim dynamic after a recompile;
    # the backend then compiles once per concrete shape.
    monkeypatch.setenv("POLYBLOCKS_CACHE_DIR", str(tmp_path))
    compiler.clear_memory_cache()
    torch._dynamo.reset()
    torch.manual_seed(0)
    model = MLP().eval()
    fn = torch.compile(model, backend="polyblocks", options={"strict": True})
    before = compiler.stats["compiles"]
    with torch.no_grad():
        for bs in (2, 3, 3, 6, 2):
            x = torch.randn(bs, 16)
            torch.testing.assert_close(fn(x), model(x))
    assert compiler.stats["compiles"] - before == 3


class _NormBlock(torch.nn.Module):
    """A layer norm and a dropout: under dynamic=True dynamo passes their
    float attributes (eps, p) as 0-d tensors read with .item()."""

    def __init__(self, eps):
        super().__init__()
        self.lin = torch.nn.Linear(16, 16)
        self.norm = torch.nn.LayerNorm(16, eps=eps)
        self.drop = torch.nn.Dropout(0.1)

    def forward(self, x):
        return self.drop(self.norm(self.lin(x)))


def test_dynamic_true_specializes_shapes_and_scalar_inputs(tmp_path, monkeypatch):
    monkeypatch.setenv("POLYBLOCKS_CACHE_DIR", str(tmp_path))
    compiler.clear_memory_cache()
    torch._dynamo.reset()
    torch.manual_seed(0)
    model = _NormBlock(eps=0.5).eval()  # a large eps: a wrong eps shows
    fn = torch.compile(model, backend="polyblocks", options={"strict": True}, dynamic=True)
    before = compiler.stats["compiles"]
    with torch.no_grad():
        for length in (7, 16, 7):
            x = torch.randn(2, length, 16)
            torch.testing.assert_close(fn(x), model(x))
        assert compiler.stats["compiles"] - before == 2
        model.norm.eps = 1e-5  # a new value of a scalar input: a new compile
        x = torch.randn(2, 7, 16)
        torch.testing.assert_close(fn(x), model(x))


def test_disk_cache_hit_from_second_process(tmp_path):
    code = textwrap.dedent("""
        import json, torch, polyblocks
        from polyblocks import compiler
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(6, 4), torch.nn.ReLU()).eval()
        fn = torch.compile(model, backend="polyblocks", options={"strict": True})
        with torch.no_grad():
            x = torch.randn(3, 6)
            torch.testing.assert_close(fn(x), model(x))
        print(json.dumps(compiler.stats))
    """)
    env = dict(os.environ, POLYBLOCKS_CACHE_DIR=str(tmp_path))
    stats = []
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, timeout=300)
        assert out.returncode == 0, out.stderr[-2000:]
        stats.append(json.loads(out.stdout.strip().splitlines()[-1]))
    assert stats[0]["compiles"] >= 1 and stats[0]["disk_hits"] == 0
    assert stats[1]["compiles"] == 0 and stats[1]["disk_hits"] == stats[0]["compiles"]
    assert list(tmp_path.glob("*.tmp*")) == []


def test_entry_point_loads_backend(tmp_path):
    """The torch_dynamo_backends entry point from pyproject.toml: dynamo
    finds the backend without `import polyblocks` (metadata generated with
    setuptools' egg_info into a temporary directory)."""
    out = subprocess.run([sys.executable, "setup.py", "-q", "egg_info", "-e", str(tmp_path)],
                         cwd=ROOT / "python", capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        pytest.skip(f"cannot generate package metadata: {out.stderr[-500:]}")
    code = textwrap.dedent("""
        import sys, torch
        from torch._dynamo.backends.registry import lookup_backend
        assert "polyblocks" not in sys.modules
        fn = lookup_backend("polyblocks")
        print(fn.__module__, fn.__name__)
        model = torch.nn.Linear(3, 2)
        c = torch.compile(model, backend="polyblocks", options={"strict": True})
        with torch.no_grad():
            x = torch.randn(2, 3)
            torch.testing.assert_close(c(x), model(x))
    """)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), str(ROOT / "python")])
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=300, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "polyblocks.torch.backend polyblocks_backend" in out.stdout
