"""torch.compile(backend="polyblocks") on CUDA tensors: graphs on a CUDA
device compile for its NVIDIA chip ("auto" target) and run there.

Here (no GPU needed): the target chosen for a device, and a clear error or
eager fallback when an explicit target does not match the graph's device.
On a GPU (scripts/device/check): an MLP in f32, a linear layer in f16 (tensor
cores) and a small CNN against eager on the same device."""

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from polyblocks.torch.backend import resolve_target
from polyblocks.torch.mlir import Unsupported

from helpers import compile_strict, reset_fallback_log

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(),
                                reason="needs a CUDA device (torch.cuda.is_available())")


def test_auto_target_follows_the_device():
    assert resolve_target("auto", torch.device("cpu")) == "cpu-host"
    assert resolve_target("auto", torch.device("cuda", 0)) == "nvidia-auto"
    assert resolve_target("nvidia-sm90", torch.device("cuda", 0)) == "nvidia-sm90"
    assert resolve_target("cpu-x86-64-v4", torch.device("cpu")) == "cpu-x86-64-v4"


def test_target_must_match_the_device():
    with pytest.raises(Unsupported, match="not an NVIDIA target"):
        resolve_target("cpu-host", torch.device("cuda", 0))
    with pytest.raises(Unsupported, match="needs CUDA"):
        resolve_target("nvidia-sm80", torch.device("cpu"))
    with pytest.raises(Unsupported, match="no PolyBlocks target"):
        resolve_target("auto", torch.device("meta"))


def _cudnn_tf32(allow: bool):
    """torch.backends.cudnn.allow_tf32 = allow within the block, other cuDNN
    flags unchanged (direct assignment is refused once a test suite has
    called torch.backends.disable_global_flags())."""
    cudnn = torch.backends.cudnn
    return cudnn.flags(enabled=cudnn.enabled, benchmark=cudnn.benchmark,
                       deterministic=cudnn.deterministic, allow_tf32=allow)


@pytest.mark.parametrize("matmul,cudnn", [(False, True), (True, False), (False, False)])
def test_tf32_follows_pytorch_flags(matmul, cudnn):
    from polyblocks.torch.backend import Options
    saved = torch.backends.cuda.matmul.allow_tf32
    try:
        torch.backends.cuda.matmul.allow_tf32 = matmul
        with _cudnn_tf32(cudnn):
            options = Options().compiler_options("nvidia-sm90")
        assert options["allow_tf32"] is matmul
        assert options["allow_tf32_convolutions"] is cudnn
        # An explicit choice applies to both; CPU targets have no tf32.
        assert "allow_tf32_convolutions" not in Options(allow_tf32=True).compiler_options(
            "nvidia-sm90")
        assert "allow_tf32_convolutions" not in Options().compiler_options("cpu-host")
    finally:
        torch.backends.cuda.matmul.allow_tf32 = saved


class MLP(nn.Module):
    def __init__(self, width=64):
        super().__init__()
        self.fc1 = nn.Linear(32, width)
        self.fc2 = nn.Linear(width, 10)

    def forward(self, x):
        return F.log_softmax(self.fc2(F.gelu(self.fc1(x))), dim=-1)


def test_gpu_target_on_cpu_tensors():
    torch.manual_seed(0)
    model = MLP().eval()
    x = torch.randn(4, 32)
    with torch.no_grad():
        with pytest.raises(Exception, match="needs CUDA"):
            compile_strict(model, target="nvidia-sm80")(x)
        reset_fallback_log()
        torch._dynamo.reset()
        lenient = torch.compile(model, backend="polyblocks",
                                options={"target": "nvidia-sm80"})
        torch.testing.assert_close(lenient(x), model(x))


@needs_cuda
def test_mlp_on_cuda():
    torch.manual_seed(0)
    model = MLP().eval().cuda()
    x = torch.randn(8, 32, device="cuda")
    with torch.no_grad():
        out = compile_strict(model)(x)
        torch.testing.assert_close(out, model(x), rtol=1e-4, atol=1e-5)
    assert out.device == x.device


@needs_cuda
def test_half_linear_on_cuda():
    torch.manual_seed(0)
    model = nn.Linear(256, 128).half().eval().cuda()
    x = torch.randn(2, 64, 256, device="cuda", dtype=torch.float16)
    with torch.no_grad():
        out = compile_strict(model)(x)
        ref = model(x)
    err = (out.float() - ref.float()).abs().max().item() / ref.float().abs().max().item()
    assert err < 2e-3


def _cnn():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                          nn.MaxPool2d(2), nn.Conv2d(8, 16, 3, stride=2, padding=1),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 5))
    with torch.no_grad():  # non-trivial batch-norm statistics
        model[1].running_mean.uniform_(-0.5, 0.5)
        model[1].running_var.uniform_(0.5, 2.0)
    return model.eval().cuda(), torch.randn(2, 3, 32, 32, device="cuda")


@needs_cuda
def test_cnn_on_cuda():
    model, x = _cnn()
    with _cudnn_tf32(False), torch.no_grad():  # f32 throughout, on both sides
        torch.testing.assert_close(compile_strict(model)(x), model(x),
                                   rtol=1e-4, atol=1e-5)


@needs_cuda
def test_cnn_tf32_on_cuda():
    # PyTorch's default lets convolutions use tf32: the first convolution
    # runs on the tf32 tensor cores with its batch norm and ReLU fused into
    # the kernel's stores (NHWC result into the NCHW output).
    model, x = _cnn()
    with _cudnn_tf32(True), torch.no_grad():
        out = compile_strict(model)(x)
        ref = model.double()(x.double())
    err = (out.double() - ref).abs().max().item() / ref.abs().max().item()
    assert err < 5e-3, f"relative error {err:.2e}"
