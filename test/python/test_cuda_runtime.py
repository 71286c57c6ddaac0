"""The NVIDIA runtime: nvidia-ptx+plan artifacts loaded through the CUDA
driver and run on CUDA tensors.

Without a driver (no libcuda.so.1) loading must fail with a clear error; the
tests that run kernels are skipped unless torch.cuda.is_available() (they run
on a GPU machine, see scripts/device/check). Loading for the emulator
(pbExecutableLoadEmulated) needs no driver: its errors are checked here."""

import ctypes
import json

import pytest
import torch

import polyblocks
from polyblocks import compiler
from polyblocks._capi import PolyBlocksError, StatusCode, UnsupportedError

from helpers import SOFTMAX, artifact_file

MATMUL = """
func.func @mm(%a: tensor<128x96xf32>, %b: tensor<96x80xf32>) -> tensor<128x80xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x80xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<128x80xf32>) -> tensor<128x80xf32>
  %c = linalg.matmul ins(%a, %b : tensor<128x96xf32>, tensor<96x80xf32>)
                     outs(%z : tensor<128x80xf32>) -> tensor<128x80xf32>
  return %c : tensor<128x80xf32>
}
"""


def _has_driver() -> bool:
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(),
                                reason="needs a CUDA device (torch.cuda.is_available())")


def test_nvidia_sm90_artifact_format():
    art = polyblocks.compile(SOFTMAX, target="nvidia-sm90", cache=False)
    assert art.metadata["format"] == "nvidia-ptx+plan"
    assert art.metadata["target"] == "nvidia-sm90"
    assert art.entries == ["softmax"]
    # The kernels' widest vector access (SM90.td: 128 bits): the executor
    # copies CUDA views at offsets not aligned to it.
    assert art.metadata["buffer_alignment"] == 16


def test_nvidia_artifact_carries_the_roofline_estimate():
    # pb-compile --estimate's data: each launch's model from the .td, the
    # entry's sum and roofline; the GPU benchmark reports it beside the
    # measured time (bench/gpu.py estimate_ms).
    from polyblocks.bench.gpu import estimate_ms
    art = polyblocks.compile(SOFTMAX, target="nvidia-sm90", cache=False)
    estimate = art.metadata["estimate"]
    assert estimate["chip"] == "nvidia-sm90"
    (entry,) = estimate["entries"]
    assert entry["name"] == "softmax" and entry["launches"]
    launch = entry["launches"][0]
    assert launch["bytes"] > 0 and launch["blocks"] >= 1
    assert launch["estimate_us"] >= launch["overhead_us"] > 0
    assert entry["estimate_us"] == pytest.approx(
        sum(l["estimate_us"] for l in entry["launches"]))
    assert estimate_ms(art.metadata) == pytest.approx(entry["estimate_us"] / 1e3)
    # CPU artifacts carry the estimate of each kernel call (pb-kernel-sites),
    # in the same shape: entries with launches.
    cpu = polyblocks.compile(SOFTMAX, target="cpu-host", cache=False).metadata
    assert cpu["estimate"]["cores"] >= 1
    (cpu_entry,) = cpu["estimate"]["entries"]
    assert [l["site"] for l in cpu_entry["launches"]] == list(range(len(cpu_entry["launches"])))
    assert estimate_ms(cpu) == pytest.approx(cpu_entry["estimate_us"] / 1e3)
    assert estimate_ms({"format": "elf-shared-object"}) is None


def test_gpu_report_has_the_estimate_column():
    from polyblocks.bench.gpu import report
    table = report([{"case": "mm", "baseline": "cublas", "polyblocks_ms": 2.5,
                     "estimate_ms": 2.0, "cublas_ms": 2.0}]).splitlines()
    header = [c.strip() for c in table[0].split("|")]
    row = [c.strip() for c in table[2].split("|")]
    assert row[header.index("estimate ms")] == "2.000"
    assert row[header.index("PolyBlocks ms")] == "2.500"


def test_nvidia_artifact_save_load_keeps_format(tmp_path):
    art = polyblocks.compile(MATMUL, target="nvidia-sm80", cache=False)
    path = tmp_path / "mm.pbart"
    art.save(path)
    loaded = polyblocks.Artifact.load(path)
    assert loaded.metadata["format"] == "nvidia-ptx+plan"


@pytest.mark.skipif(_has_driver(), reason="libcuda.so.1 is present")
def test_load_without_driver_is_a_clear_error():
    art = polyblocks.compile(MATMUL, target="nvidia-sm90", cache=False)
    with pytest.raises(PolyBlocksError) as info:
        art.executable()
    assert info.value.code == StatusCode.RUNTIME_ERROR
    assert "libcuda.so.1 not found: no NVIDIA driver" in info.value.message


@pytest.mark.skipif(torch.cuda.is_available(), reason="a CUDA device is present")
def test_nvidia_auto_without_cuda_is_a_clear_error():
    with pytest.raises(PolyBlocksError) as info:
        polyblocks.compile(MATMUL, target="nvidia-auto", cache=False)
    assert "nvidia-auto" in info.value.message
    assert "torch.cuda.is_available() is False" in info.value.message


# ---------------------------------------------------------------------------
# Loading for the emulator (pbExecutableLoadEmulated); test_emulator.py runs
# kernels in it.
# ---------------------------------------------------------------------------

def _payload(art, tmp_path):
    path = tmp_path / "a.pbart"
    art.save(path)
    _, payload = artifact_file.split(path.read_bytes())
    return json.loads(payload)


def test_payload_keeps_each_module_ir_for_the_emulator(tmp_path):
    art = polyblocks.compile(MATMUL, target="nvidia-sm80", cache=False)
    modules = _payload(art, tmp_path)["modules"]
    assert modules
    for module in modules:
        text = module["emulation_mlir"]
        # The module itself, before NVVM lowering: gpu ops, no inline PTX.
        assert text.startswith("gpu.module @" + module["name"])
        assert "gpu.func @" in text and "kernel" in text
        assert "llvm.inline_asm" not in text and "pb.emulation_ir" not in text
    off = polyblocks.compile(MATMUL, target="nvidia-sm80",
                             options={"emulation-ir": 0}, cache=False)
    assert off.metadata["options"] == "emulation-ir=0"
    assert all("emulation_mlir" not in m for m in _payload(off, tmp_path)["modules"])


def test_emulated_load_of_a_cpu_artifact_is_unsupported():
    art = polyblocks.compile(SOFTMAX, target="cpu-host", cache=False)
    with pytest.raises(UnsupportedError) as info:
        art.executable(emulate=True)
    assert info.value.code == StatusCode.UNSUPPORTED
    assert "only NVIDIA and AMD artifacts" in info.value.message
    assert "'elf-shared-object'" in info.value.message


def test_emulated_load_without_emulation_ir_is_a_clear_error():
    art = polyblocks.compile(SOFTMAX, target="nvidia-sm90",
                             options={"emulation-ir": 0}, cache=False)
    with pytest.raises(PolyBlocksError) as info:
        art.executable(emulate=True)
    assert info.value.code == StatusCode.RUNTIME_ERROR
    assert "compiled with emulation-ir=0" in info.value.message


def test_emulation_ir_option_takes_a_boolean():
    with pytest.raises(PolyBlocksError) as info:
        polyblocks.compile(SOFTMAX, target="nvidia-sm80",
                           options="emulation-ir=maybe", cache=False)
    assert info.value.code == StatusCode.INVALID_ARGUMENT
    assert "option 'emulation-ir' takes 0 or 1" in info.value.message


def test_other_targets_are_not_resolved():
    assert compiler.resolve_target("cpu-host") == "cpu-host"
    assert compiler.resolve_target("nvidia-sm80") == "nvidia-sm80"


# ---------------------------------------------------------------------------
# On a GPU
# ---------------------------------------------------------------------------

@needs_cuda
def test_nvidia_auto_resolves_to_the_device():
    major, _ = torch.cuda.get_device_capability()
    expected = {8: "nvidia-sm80", 9: "nvidia-sm90"}.get(major)
    if expected is None:
        pytest.skip(f"compute capability {major}.x is not supported")
    assert compiler.resolve_target("nvidia-auto") == expected


@needs_cuda
def test_matmul_on_cuda():
    torch.manual_seed(0)
    a = torch.randn(128, 96, device="cuda")
    b = torch.randn(96, 80, device="cuda")
    art = polyblocks.compile(MATMUL, target="nvidia-auto")
    (c,) = art.run("mm", [a, b])
    assert c.device.type == "cuda"
    torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-4)


@needs_cuda
def test_softmax_on_cuda():
    torch.manual_seed(0)
    x = torch.randn(64, 128, device="cuda") * 4
    art = polyblocks.compile(SOFTMAX, target="nvidia-auto")
    (y,) = art.run("softmax", [x])
    torch.testing.assert_close(y, torch.softmax(x, dim=1), rtol=1e-5, atol=1e-6)


@needs_cuda
def test_runs_on_the_current_stream():
    torch.manual_seed(0)
    a = torch.randn(128, 96, device="cuda")
    b = torch.randn(96, 80, device="cuda")
    exe = polyblocks.compile(MATMUL, target="nvidia-auto").executable()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        outs = [exe.run("mm", [a, b])[0] for _ in range(3)]
    stream.synchronize()
    for c in outs:
        torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-4)


@needs_cuda
def test_cuda_executable_rejects_cpu_tensors():
    exe = polyblocks.compile(SOFTMAX, target="nvidia-auto").executable()
    with pytest.raises(PolyBlocksError, match="is on cpu"):
        exe.run("softmax", [torch.randn(64, 128)])


@needs_cuda
def test_cuda_executable_rejects_wrong_buffer_count():
    art = polyblocks.compile(SOFTMAX, target="nvidia-auto")
    exe = art.executable()
    x = torch.randn(64, 128, device="cuda")
    buffers = (ctypes.c_void_p * 1)(x.data_ptr())
    with pytest.raises(PolyBlocksError, match="takes 2 buffers"):
        exe._handle.run(b"softmax", buffers, 1,
                        torch.cuda.current_stream().cuda_stream)


@needs_cuda
def test_softmax_of_zeros_is_uniform():
    art = polyblocks.compile(SOFTMAX, target="nvidia-auto")
    (y,) = art.run("softmax", [torch.zeros(64, 128, device="cuda")])
    torch.cuda.synchronize()
    torch.testing.assert_close(y, torch.full((64, 128), 1 / 128, device="cuda"))
