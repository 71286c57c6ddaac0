"""The NVIDIA runtime against a stand-in CUDA driver (cuda_stub/libcuda_stub.c,
built here as libcuda.so.1): modules loaded from cubin or PTX, launches in
the plan's order with the plan's sizes, arguments and the caller's stream,
temporaries allocated and freed, and driver errors reported as statuses.
Each case runs in a subprocess (the driver is opened once per process) that
imports only the ctypes binding."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import polyblocks

from helpers import CAPI_CHILD, SOFTMAX, artifact_file, c_compiler

ROOT = Path(__file__).resolve().parents[2]
STUB_SOURCE = Path(__file__).resolve().parent / "cuda_stub" / "libcuda_stub.c"
CAPI = ROOT / "python" / "polyblocks" / "_capi.py"

STREAM = 0x77

pytestmark = pytest.mark.skipif(c_compiler() is None, reason="needs a C compiler")


@pytest.fixture(scope="module")
def stub_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("cuda-stub")
    subprocess.run([c_compiler(), "-shared", "-fPIC", "-O1", "-o", str(d / "libcuda.so.1"),
                    str(STUB_SOURCE)], check=True)
    return d


@pytest.fixture(scope="module")
def softmax():
    """(metadata, payload) of softmax compiled for nvidia-sm90."""
    art = polyblocks.compile(SOFTMAX, target="nvidia-sm90", cache=False)
    path = Path(os.environ["POLYBLOCKS_CACHE_DIR"]) / "stub-softmax.pbart"
    art.save(path)
    metadata, payload = artifact_file.split(path.read_bytes())
    return metadata, json.loads(payload)


def _write(path: Path, metadata: dict, payload) -> Path:
    path.write_bytes(artifact_file.join(metadata, payload))
    return path


def _run(stub_dir, tmp_path, metadata, payload, entry="softmax", n=2, **env):
    art = _write(tmp_path / "a.pbart", metadata, payload)
    log = tmp_path / "stub.log"
    if log.exists():
        log.unlink()
    e = dict(os.environ, LD_LIBRARY_PATH=str(stub_dir), STUB_LOG=str(log),
             **{k: str(v) for k, v in env.items()})
    r = subprocess.run([sys.executable, "-c", CAPI_CHILD, str(CAPI), str(art), entry,
                        str(n), str(STREAM)], capture_output=True, text=True,
                       env=e, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout.strip(), log.read_text().splitlines() if log.exists() else []


def _ptx_only(payload):
    payload = json.loads(json.dumps(payload))
    for module in payload["modules"]:
        module.pop("cubin_base64", None)
    return payload


def _with_temporary(payload):
    """The plan with a 256-byte temporary replacing the first launch's first
    argument (the same argument count, so the stub's logging stays right)."""
    payload = json.loads(json.dumps(payload))
    plan = payload["entries"][0]
    plan["buffers"].append({"kind": "temporary", "bytes": 256})
    plan["launches"][0]["args"][0] = len(plan["buffers"]) - 1
    return payload


def _expected_launches(plan, temporaries):
    lines = []
    addresses = []
    t = iter(temporaries)
    for b in plan["buffers"]:
        addresses.append(0x1000 * (b["index"] + 1) if b["kind"] == "argument" else next(t))
    for launch in plan["launches"]:
        lines.append("cuLaunchKernel %s grid %s block %s shared %d stream 0x%x context ok args%s" % (
            launch["kernel"], " ".join(map(str, launch["grid"])),
            " ".join(map(str, launch["block"])), launch["dynamic_shared_memory_bytes"],
            STREAM, "".join(" 0x%x" % addresses[a] for a in launch["args"])))
    return lines


def test_plan_runs_in_order_from_ptx(stub_dir, tmp_path, softmax):
    metadata, payload = softmax
    payload = _ptx_only(payload)
    out, log = _run(stub_dir, tmp_path, metadata, payload)
    assert out == "OK"
    assert log[:2] == ["cuInit", "cuDevicePrimaryCtxRetain"]
    assert log.count("cuModuleLoadData ptx") == len(payload["modules"])
    launches = [line for line in log if line.startswith("cuLaunchKernel")]
    plan = payload["entries"][0]
    temporaries = [int(line.split()[2], 16) for line in log if line.startswith("cuMemAlloc ")]
    assert launches == _expected_launches(plan, temporaries)
    assert log[-1] == "cuDevicePrimaryCtxRelease"
    assert log.count("cuModuleUnload") == len(payload["modules"])


def test_cubin_is_preferred(stub_dir, tmp_path, softmax):
    metadata, payload = softmax
    if not all("cubin_base64" in m for m in payload["modules"]):
        pytest.skip("compiled without ptxas")
    out, log = _run(stub_dir, tmp_path, metadata, payload)
    assert out == "OK"
    assert log.count("cuModuleLoadData cubin") == len(payload["modules"])


def test_temporaries_are_synchronized_then_freed(stub_dir, tmp_path, softmax):
    metadata, payload = softmax
    payload = _with_temporary(_ptx_only(payload))
    out, log = _run(stub_dir, tmp_path, metadata, payload)
    assert out == "OK"
    plan = payload["entries"][0]
    sizes = [b["bytes"] for b in plan["buffers"] if b["kind"] == "temporary"]
    allocs = [line.split() for line in log if line.startswith("cuMemAlloc ")]
    assert [int(a[1]) for a in allocs] == sizes
    addresses = [a[2] for a in allocs]
    launches = [line for line in log if line.startswith("cuLaunchKernel")]
    assert launches == _expected_launches(plan, [int(a, 16) for a in addresses])
    i = log.index("cuStreamSynchronize 0x%x" % STREAM)
    assert log.index(launches[-1]) < i
    assert all(i < log.index("cuMemFree " + a) for a in addresses)


def test_temporaries_are_stream_ordered_with_memory_pools(stub_dir, tmp_path, softmax):
    metadata, payload = softmax
    payload = _with_temporary(_ptx_only(payload))
    out, log = _run(stub_dir, tmp_path, metadata, payload, STUB_POOLS=1)
    assert out == "OK"
    allocs = [line for line in log if line.startswith("cuMemAllocAsync")]
    assert len(allocs) == sum(b["kind"] == "temporary"
                              for b in payload["entries"][0]["buffers"])
    for alloc in allocs:
        assert alloc.endswith("stream 0x%x" % STREAM)
        assert "cuMemFreeAsync %s stream 0x%x" % (alloc.split()[2], STREAM) in log
    assert not any(line.startswith("cuStreamSynchronize") for line in log)


@pytest.mark.parametrize("env, expected", [
    ({"STUB_LAUNCH_ERROR": 700},
     "cuLaunchKernel (launch 0 of entry 'softmax') failed: "
     "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered"),
    ({"STUB_INIT_ERROR": 100}, "cuInit failed: CUDA_ERROR_NO_DEVICE"),
    ({"STUB_DEVICES": 0}, "no CUDA device"),
    ({"STUB_LOAD_ERROR": 209}, "CUDA_ERROR_NO_BINARY_FOR_GPU"),
])
def test_driver_errors_are_statuses(stub_dir, tmp_path, softmax, env, expected):
    metadata, payload = softmax
    out, _ = _run(stub_dir, tmp_path, metadata, _ptx_only(payload), **env)
    assert out.startswith("ERROR 5 "), out
    assert expected in out


def test_load_error_names_the_architectures(stub_dir, tmp_path, softmax):
    metadata, payload = softmax
    out, _ = _run(stub_dir, tmp_path, metadata, payload, STUB_LOAD_ERROR=209)
    assert "for sm_90a" in out and "device sm_90" in out


def test_malformed_payloads(stub_dir, tmp_path, softmax):
    metadata, payload = softmax
    out, _ = _run(stub_dir, tmp_path, metadata, b"not json")
    assert out.startswith("ERROR 5 ") and "payload is not JSON" in out
    bad = _ptx_only(payload)
    bad["entries"][0]["launches"][0]["args"][0] = 999
    out, _ = _run(stub_dir, tmp_path, metadata, bad)
    assert "malformed plan of entry 'softmax': bad kernel argument" in out
    bad = _ptx_only(payload)
    bad["entries"][0]["name"] = "other"
    out, _ = _run(stub_dir, tmp_path, metadata, bad)
    assert "which its metadata does not list" in out


def test_wrong_buffer_count_and_entry(stub_dir, tmp_path, softmax):
    metadata, payload = softmax
    out, _ = _run(stub_dir, tmp_path, metadata, _ptx_only(payload), n=1)
    assert out.startswith("ERROR 1 ") and "takes 2 buffers" in out
    out, _ = _run(stub_dir, tmp_path, metadata, _ptx_only(payload), entry="nope")
    assert out.startswith("ERROR 1 ") and "no entry named 'nope'" in out


def test_large_dynamic_shared_memory_is_opted_into(stub_dir, tmp_path):
    """A tensor-core kernel with 3 stages of 128x128 tiles (56832 bytes of
    dynamic shared memory, above the default 48 KiB) gets
    cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES) before its launch."""
    from polyblocks.bench.gpu import matmul_text
    art = polyblocks.compile(matmul_text(1536, 1536, 128, torch.float16),
                             target="nvidia-sm80", cache=False)
    path = tmp_path / "mm.pbart"
    art.save(path)
    metadata, payload = artifact_file.split(path.read_bytes())
    payload = json.loads(payload)
    launches = payload["entries"][0]["launches"]
    assert [l["dynamic_shared_memory_bytes"] for l in launches] == [0, 56832]
    out, log = _run(stub_dir, tmp_path, metadata, payload, entry="mm", n=3)
    assert out == "OK"
    # CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8, once, for the
    # kernel that needs it.
    assert [line for line in log if line.startswith("cuFuncSetAttribute")] == [
        "cuFuncSetAttribute 8 56832"]
    assert any(line.startswith("cuLaunchKernel") and " shared 56832 " in line
               for line in log)
