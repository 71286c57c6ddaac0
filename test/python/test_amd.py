"""The AMD back end on whole models and through the runtime.

resnet18 and bert_base as the torch frontend emits them compile for
amd-gfx942 into AMDGPU code objects (one per kernel, code object version 5,
no scratch) with a launch plan whose launches name them; the f16 model's
contractions run on MFMA. Without ROCm, loading an AMD artifact for a
device fails with a clear error (test_hip_stub.py tests the HIP executor
against a stand-in runtime); the torch backend picks "amd-auto" for a ROCm
build's GPU tensors and runs AMD targets on CPU tensors only with
emulate=True (test_emulator.py runs AMD kernels in the emulator)."""

import base64
import json
import logging
import os
import shutil
import struct
import subprocess

import pytest
import torch
import torch.nn as nn

import polyblocks
from polyblocks.bench import models

from helpers import ADD, artifact_file, compile_strict

_READELF = next((p for p in ("/usr/lib/llvm-22/bin/llvm-readelf",
                             shutil.which("llvm-readelf") or "")
                 if p and os.access(p, os.X_OK)), None)


def _emitted_mlir(model, inputs):
    """The MLIR the torch frontend emits for ``model`` (one graph)."""
    texts = []

    class Capture(logging.Handler):
        def emit(self, record):
            if "MLIR for" in str(record.msg):
                texts.append(record.args[1])

    logger = logging.getLogger("polyblocks")
    handler, level = Capture(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        torch._dynamo.reset()
        with torch.no_grad():
            compile_strict(model, target="cpu-host")(*inputs)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    assert len(texts) == 1, f"{len(texts)} graphs"
    return texts[0]


def _payload(art, tmp_path):
    path = tmp_path / "a.pbart"
    art.save(path)
    meta, payload = artifact_file.split(path.read_bytes())
    return meta, json.loads(payload)


def _check_code_objects(payload, arch, tmp_path):
    """Every module is an AMDGPU HSA code object for `arch`; every launch
    names one; with llvm-readelf, no kernel uses scratch or more than 512
    VGPRs. Returns the number of modules."""
    names = set()
    for module in payload["modules"]:
        elf = base64.b64decode(module["hsaco_base64"])
        # ELF64, OS/ABI AMDGPU_HSA (64), ABI version 3 (code object v5),
        # e_machine EM_AMDGPU (224).
        assert elf[:4] == b"\x7fELF" and elf[4] == 2
        assert elf[7] == 64 and elf[8] == 3, (elf[7], elf[8])
        assert struct.unpack_from("<H", elf, 18)[0] == 224
        names.add(module["name"])
        if _READELF:
            path = tmp_path / (module["name"] + ".hsaco")
            path.write_bytes(elf)
            notes = subprocess.run([_READELF, "--notes", str(path)],
                                   capture_output=True, text=True, check=True).stdout
            assert ".private_segment_fixed_size: 0" in notes, module["name"]
            vgprs = [int(line.split(":")[1]) for line in notes.splitlines()
                     if line.strip().startswith(".vgpr_count:")]
            assert vgprs and max(vgprs) <= 512, (module["name"], vgprs)
    assert payload["arch"] == arch
    for entry in payload["entries"]:
        assert entry["launches"]
        for launch in entry["launches"]:
            assert launch["module"] in names
            assert launch["block"][0] <= 1024 and launch["grid"][0] >= 1
    return len(names)


@pytest.mark.parametrize("name", ["resnet18", "bert_base"])
def test_model_compiles_to_code_objects(name, tmp_path):
    model, inputs = models.build(name, batch=1)
    text = _emitted_mlir(model.eval(), inputs)
    art = polyblocks.compile(text, target="amd-gfx942", cache=False)
    meta, payload = _payload(art, tmp_path)
    assert meta["format"] == "amd-hsaco+plan"
    assert meta["target"] == "amd-gfx942"
    assert _check_code_objects(payload, "gfx942", tmp_path) > 20


def test_half_linear_layers_run_on_mfma(tmp_path):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(256, 512), nn.GELU(), nn.Linear(512, 128)).half().eval()
    text = _emitted_mlir(model, (torch.randn(4, 64, 256, dtype=torch.float16),))
    art = polyblocks.compile(text, target="amd-gfx942", cache=False)
    _, payload = _payload(art, tmp_path)
    _check_code_objects(payload, "gfx942", tmp_path)
    ir = "\n".join(m["emulation_mlir"] for m in payload["modules"])
    assert ir.count("amdgpu.mfma") >= 2


def test_loading_without_rocm_is_a_clear_error():
    found = subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True,
                           text=True).stdout if os.path.exists("/sbin/ldconfig") else ""
    if "libamdhip64" in found:
        pytest.skip("this machine has a HIP runtime")
    art = polyblocks.compile(ADD, target="amd-gfx90a", cache=False)
    assert art.metadata["format"] == "amd-hsaco+plan"
    assert art.metadata["buffer_alignment"] == 16
    with pytest.raises(polyblocks.PolyBlocksError) as info:
        art.executable()
    assert "libamdhip64.so not found" in info.value.message


def test_torch_backend_targets(monkeypatch):
    from polyblocks.torch import Unsupported
    from polyblocks.torch.backend import resolve_target
    gpu = torch.device("cuda", 0)
    with pytest.raises(Unsupported, match="needs CUDA"):
        resolve_target("amd-gfx942", torch.device("cpu"))
    assert resolve_target("amd-gfx942", torch.device("cpu"), emulate=True) == "amd-gfx942"
    with pytest.raises(Unsupported, match="explicit NVIDIA or AMD target"):
        resolve_target("amd-auto", torch.device("cpu"), emulate=True)
    # A ROCm build of torch: its "cuda" tensors are on an AMD GPU.
    monkeypatch.setattr(torch.version, "hip", "6.2.0", raising=False)
    assert resolve_target("auto", gpu) == "amd-auto"
    assert resolve_target("amd-gfx90a", gpu) == "amd-gfx90a"
    with pytest.raises(Unsupported, match="not an AMD target"):
        resolve_target("nvidia-sm90", gpu)
    monkeypatch.setattr(torch.version, "hip", None, raising=False)
    assert resolve_target("auto", gpu) == "nvidia-auto"
    with pytest.raises(Unsupported, match="not an NVIDIA target"):
        resolve_target("amd-gfx942", gpu)


def test_amd_auto_needs_a_rocm_device():
    if torch.cuda.is_available() and torch.version.hip:
        pytest.skip("this machine has a ROCm device")
    with pytest.raises(polyblocks.PolyBlocksError, match="needs a ROCm device"):
        polyblocks.compile(ADD, target="amd-auto", cache=False)
