"""NVIDIA artifacts run on the CPU in the kernel emulator
(pbExecutableLoadEmulated, ``Artifact.executable(emulate=True)``).

Small programs compiled for nvidia-sm80 and nvidia-sm90 run emulated on
random CPU tensors and are compared with PyTorch on the CPU: an f32
elementwise add (exact: one rounding either way), a softmax (S4's
polynomial exp, f32) and f16 matmuls on the tensor cores (mma.sync; wgmma
on sm90 where N is 128), f32-accumulated and rounded to f16 once. Edited
artifacts check what the runtime gives the emulator: each argument's size
(a kernel reading past it is an error) and temporaries that are not
zeroed.

The GPU tests of test_cuda_runtime.py (an f32 matmul on the CUDA cores, the
softmax of zeros) and of test_torch_cuda.py (torch.compile of an MLP, an
f16 linear layer and a small CNN, in f32 and with tf32 convolutions) run
here emulated, with the backend's ``emulate`` option and an explicit
target, on CPU tensors, with those tests' tolerances; the tensor-core
cases of test_cuda_tensor_cores.py are in test_emulator_matmul.py."""

import ctypes
import json

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import polyblocks
from polyblocks._capi import PolyBlocksError, StatusCode
from polyblocks.bench.gpu import matmul_text

from helpers import ADD, artifact_file, compile_strict

# AMD chips run here too: their kernels (loops on wavefronts of 64, MFMA)
# have no other place to run (no HIP executor, no AMD GPU).
TARGETS = ["nvidia-sm80", "nvidia-sm90", "amd-gfx90a", "amd-gfx942"]

SOFTMAX = """
func.func @softmax(%x: tensor<32x256xf32>) -> tensor<32x256xf32> {
  %e = tensor.empty() : tensor<32x256xf32>
  %y = linalg.softmax dimension(1) ins(%x : tensor<32x256xf32>)
                      outs(%e : tensor<32x256xf32>) -> tensor<32x256xf32>
  return %y : tensor<32x256xf32>
}
"""


def _emulated(text, target, **options):
    art = polyblocks.compile(text, target=target, options=options or None)
    return art.executable(emulate=True)


@pytest.mark.parametrize("target", TARGETS)
def test_add(target):
    torch.manual_seed(0)
    a, b = torch.randn(64, 128), torch.randn(64, 128)
    (c,) = _emulated(ADD, target).run("add", [a, b])
    assert c.device.type == "cpu"
    torch.testing.assert_close(c, a + b, rtol=0, atol=0)


@pytest.mark.parametrize("target", TARGETS)
def test_softmax(target):
    torch.manual_seed(0)
    x = torch.randn(32, 256) * 4
    (y,) = _emulated(SOFTMAX, target).run("softmax", [x])
    expected = torch.softmax(x.double(), dim=1).float()
    torch.testing.assert_close(y, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("m,n,k", [(64, 64, 64), (64, 128, 64)])
def test_f16_matmul(target, m, n, k):
    torch.manual_seed(0)
    a = torch.rand(m, k, dtype=torch.float16) * 2 - 1
    b = torch.rand(k, n, dtype=torch.float16) * 2 - 1
    (c,) = _emulated(matmul_text(m, n, k, torch.float16), target).run("mm", [a, b])
    assert c.dtype == torch.float16
    # f32 products and sums (the tensor cores' accumulation), one rounding
    # to f16: within an f16 ulp or two of the f64 result's rounding.
    expected = (a.double() @ b.double()).half()
    torch.testing.assert_close(c, expected, rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("target", TARGETS)
def test_f32_matmul(target):
    # f32 stays off the tensor cores by default: a CUDA-core kernel with
    # tiles in shared memory.
    torch.manual_seed(0)
    a, b = torch.randn(128, 96), torch.randn(96, 80)
    (c,) = _emulated(matmul_text(128, 80, 96, torch.float32), target).run("mm", [a, b])
    torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("target", TARGETS)
def test_softmax_of_zeros_is_uniform(target):
    (y,) = _emulated(SOFTMAX, target).run("softmax", [torch.zeros(32, 256)])
    torch.testing.assert_close(y, torch.full((32, 256), 1 / 256))


class MLP(nn.Module):
    def __init__(self, width=64):
        super().__init__()
        self.fc1 = nn.Linear(32, width)
        self.fc2 = nn.Linear(width, 10)

    def forward(self, x):
        return F.log_softmax(self.fc2(F.gelu(self.fc1(x))), dim=-1)


def _cnn():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                          nn.MaxPool2d(2), nn.Conv2d(8, 16, 3, stride=2, padding=1),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 5))
    with torch.no_grad():  # non-trivial batch-norm statistics
        model[1].running_mean.uniform_(-0.5, 0.5)
        model[1].running_var.uniform_(0.5, 2.0)
    return model.eval(), torch.randn(2, 3, 32, 32)


def _cudnn_tf32(allow: bool):
    cudnn = torch.backends.cudnn
    return cudnn.flags(enabled=cudnn.enabled, benchmark=cudnn.benchmark,
                       deterministic=cudnn.deterministic, allow_tf32=allow)


@pytest.mark.parametrize("target", TARGETS)
def test_torch_mlp(target):
    torch.manual_seed(0)
    model = MLP().eval()
    x = torch.randn(8, 32)
    with torch.no_grad():
        out = compile_strict(model, target=target, emulate=True)(x)
        torch.testing.assert_close(out, model(x), rtol=1e-4, atol=1e-5)
    assert out.device.type == "cpu"


@pytest.mark.parametrize("target", TARGETS)
def test_torch_half_linear(target):
    # On the tensor cores (f16 operands, f32 sums).
    torch.manual_seed(0)
    model = nn.Linear(256, 128).half().eval()
    x = torch.randn(2, 64, 256, dtype=torch.float16)
    with torch.no_grad():
        out = compile_strict(model, target=target, emulate=True)(x)
        ref = model.float()(x.float())
    assert out.dtype == torch.float16
    err = (out.float() - ref).abs().max().item() / ref.abs().max().item()
    assert err < 2e-3, f"relative error {err:.2e}"


@pytest.mark.parametrize("target", TARGETS)
def test_torch_cnn(target):
    model, x = _cnn()
    with _cudnn_tf32(False), torch.no_grad():  # f32 throughout, on both sides
        torch.testing.assert_close(compile_strict(model, target=target, emulate=True)(x),
                                   model(x), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("target", TARGETS)
def test_torch_cnn_tf32(target):
    # As PyTorch allows by default: convolutions on the tf32 tensor cores.
    model, x = _cnn()
    with _cudnn_tf32(True), torch.no_grad():
        out = compile_strict(model, target=target, emulate=True)(x)
        ref = model.double()(x.double())
    err = (out.double() - ref).abs().max().item() / ref.abs().max().item()
    assert err < 5e-3, f"relative error {err:.2e}"


def test_outputs_in_place_and_repeated_runs():
    torch.manual_seed(0)
    exe = _emulated(ADD, "nvidia-sm80")
    a, b = torch.randn(64, 128), torch.randn(64, 128)
    out = torch.full((64, 128), float("nan"))
    exe.run("add", [a, b], outputs=[out])
    torch.testing.assert_close(out, a + b, rtol=0, atol=0)
    (again,) = exe.run("add", [b, b])
    torch.testing.assert_close(again, b + b, rtol=0, atol=0)


def test_unaligned_input_views_are_copied():
    # The kernels read 16-byte vectors (buffer_alignment); a view 4 bytes
    # into its storage is copied to an aligned buffer first, else the
    # emulator would report a misaligned access.
    torch.manual_seed(0)
    exe = _emulated(ADD, "nvidia-sm80")
    storage = torch.randn(64 * 128 + 1)
    a = storage[1:].view(64, 128)
    assert a.data_ptr() % 16 != 0
    b = torch.randn(64, 128)
    (c,) = exe.run("add", [a, b])
    torch.testing.assert_close(c, a + b, rtol=0, atol=0)


def test_emulated_executable_argument_errors():
    exe = _emulated(ADD, "nvidia-sm80")
    a = torch.randn(64, 128)
    buffers = (ctypes.c_void_p * 3)(a.data_ptr(), a.data_ptr(), a.data_ptr())
    with pytest.raises(PolyBlocksError, match="take no stream") as info:
        exe._handle.run(b"add", buffers, 3, 0x77)
    assert info.value.code == StatusCode.INVALID_ARGUMENT
    with pytest.raises(PolyBlocksError, match="takes 3 buffers"):
        exe._handle.run(b"add", buffers, 2)
    with pytest.raises(PolyBlocksError, match="no entry named 'nope'"):
        exe._handle.run(b"nope", buffers, 3)
    if torch.cuda.is_available():
        with pytest.raises(PolyBlocksError, match="is on cuda"):
            exe.run("add", [a.cuda(), a.cuda()])


def _edited(text, target, tmp_path, edit):
    """The artifact of ``text`` with ``edit(metadata, payload)`` applied."""
    path = tmp_path / "a.pbart"
    polyblocks.compile(text, target=target).save(path)
    metadata, payload = artifact_file.split(path.read_bytes())
    payload = json.loads(payload)
    edit(metadata, payload)
    path.write_bytes(artifact_file.join(metadata, payload))
    return polyblocks.Artifact.load(path)


def test_arguments_are_passed_with_their_sizes(tmp_path):
    # The metadata says input 0 has half the rows the kernel reads: the
    # emulator sees a 16 KiB buffer and reports the first access past it.
    def halve(metadata, payload):
        metadata["entries"][0]["inputs"][0]["shape"] = [32, 128]
    art = _edited(ADD, "nvidia-sm80", tmp_path, halve)
    exe = art.executable(emulate=True)
    a, b, c = torch.randn(64, 128), torch.randn(64, 128), torch.empty(64, 128)
    buffers = (ctypes.c_void_p * 3)(a.data_ptr(), b.data_ptr(), c.data_ptr())
    with pytest.raises(PolyBlocksError) as info:
        exe._handle.run(b"add", buffers, 3)
    assert info.value.code == StatusCode.RUNTIME_ERROR
    assert "emulated launch 0 of entry 'add' (kernel 'add_kernel')" in info.value.message


def test_temporaries_are_not_zeroed(tmp_path):
    # Input 0 replaced by a temporary nothing writes: every sum reads its
    # fill, NaN, where zeros would have passed for b itself.
    def read_temporary(metadata, payload):
        plan = payload["entries"][0]
        plan["buffers"].append({"kind": "temporary", "bytes": 64 * 128 * 4})
        plan["launches"][0]["args"][0] = len(plan["buffers"]) - 1
    art = _edited(ADD, "nvidia-sm80", tmp_path, read_temporary)
    (c,) = art.executable(emulate=True).run("add", [torch.randn(64, 128),
                                                    torch.randn(64, 128)])
    assert torch.isnan(c).all()
