"""The AMD runtime against a stand-in HIP runtime (hip_stub/libamdhip64_stub.c,
built here as libamdhip64.so): code objects loaded with hipModuleLoadData,
kernels found by name in them, launches in the plan's order with the plan's
sizes, arguments and the caller's stream, temporaries allocated and freed
(stream-ordered where the runtime has hipMallocAsync), and HIP errors
reported as statuses with HIP's names. Each case runs in a subprocess (HIP
is opened once per process) that imports only the ctypes binding. No AMD
GPU has run these code objects: what the stand-in checks is the runtime's
side of the calls."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import polyblocks

from helpers import CAPI_CHILD, SOFTMAX, artifact_file, c_compiler

ROOT = Path(__file__).resolve().parents[2]
STUB_SOURCE = Path(__file__).resolve().parent / "hip_stub" / "libamdhip64_stub.c"
CAPI = ROOT / "python" / "polyblocks" / "_capi.py"

STREAM = 0x77

pytestmark = pytest.mark.skipif(c_compiler() is None, reason="needs a C compiler")


def _build(directory: Path, *flags) -> Path:
    subprocess.run([c_compiler(), "-shared", "-fPIC", "-O1", *flags, "-o",
                    str(directory / "libamdhip64.so"), str(STUB_SOURCE)], check=True)
    return directory


@pytest.fixture(scope="module")
def stub_dir(tmp_path_factory):
    return _build(tmp_path_factory.mktemp("hip-stub"))


@pytest.fixture(scope="module")
def stub_dir_without_async(tmp_path_factory):
    return _build(tmp_path_factory.mktemp("hip-stub-sync"), "-DSTUB_NO_ASYNC")


@pytest.fixture(scope="module")
def softmax():
    """(metadata, payload) of softmax compiled for amd-gfx942."""
    art = polyblocks.compile(SOFTMAX, target="amd-gfx942", cache=False)
    path = Path(os.environ["POLYBLOCKS_CACHE_DIR"]) / "hip-stub-softmax.pbart"
    art.save(path)
    metadata, payload = artifact_file.split(path.read_bytes())
    return metadata, json.loads(payload)


def _run(stub_dir, tmp_path, metadata, payload, entry="softmax", n=2, **env):
    art = tmp_path / "a.pbart"
    art.write_bytes(artifact_file.join(metadata, payload))
    log = tmp_path / "stub.log"
    if log.exists():
        log.unlink()
    e = dict(os.environ, LD_LIBRARY_PATH=str(stub_dir), STUB_LOG=str(log),
             STUB_PARAMS="2", **{k: str(v) for k, v in env.items()})
    r = subprocess.run([sys.executable, "-c", CAPI_CHILD, str(CAPI), str(art), entry,
                        str(n), str(STREAM)], capture_output=True, text=True,
                       env=e, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout.strip(), log.read_text().splitlines() if log.exists() else []


def _with_temporary(payload):
    """The plan with a 256-byte temporary replacing the first launch's first
    argument."""
    payload = json.loads(json.dumps(payload))
    plan = payload["entries"][0]
    plan["buffers"].append({"kind": "temporary", "bytes": 256})
    plan["launches"][0]["args"][0] = len(plan["buffers"]) - 1
    return payload


def _expected_launches(plan, temporaries):
    addresses, t = [], iter(temporaries)
    for b in plan["buffers"]:
        addresses.append(0x1000 * (b["index"] + 1) if b["kind"] == "argument" else next(t))
    return ["hipModuleLaunchKernel %s grid %s block %s shared %d stream 0x%x args%s" % (
        launch["kernel"], " ".join(map(str, launch["grid"])),
        " ".join(map(str, launch["block"])), launch["dynamic_shared_memory_bytes"],
        STREAM, "".join(" 0x%x" % addresses[a] for a in launch["args"]))
        for launch in plan["launches"]]


def test_plan_runs_in_order(stub_dir, tmp_path, softmax):
    metadata, payload = softmax
    plan = payload["entries"][0]
    assert all(len(launch["args"]) == 2 for launch in plan["launches"])
    out, log = _run(stub_dir, tmp_path, metadata, payload)
    assert out == "OK"
    assert log[0] == "hipInit"
    assert log.count("hipModuleLoadData amdgpu-elf") == len(payload["modules"])
    launches = [line for line in log if line.startswith("hipModuleLaunchKernel")]
    assert launches == _expected_launches(plan, [])
    assert log.count("hipModuleUnload") == len(payload["modules"])


def test_temporaries_are_stream_ordered(stub_dir, tmp_path, softmax):
    metadata, payload = softmax
    payload = _with_temporary(payload)
    out, log = _run(stub_dir, tmp_path, metadata, payload)
    assert out == "OK"
    allocs = [line.split() for line in log if line.startswith("hipMallocAsync")]
    assert [int(a[1]) for a in allocs] == [256]
    assert allocs[0][-1] == "0x%x" % STREAM
    launches = [line for line in log if line.startswith("hipModuleLaunchKernel")]
    assert launches == _expected_launches(payload["entries"][0], [int(allocs[0][2], 16)])
    assert "hipFreeAsync %s stream 0x%x" % (allocs[0][2], STREAM) in log
    assert not any(line.startswith("hipStreamSynchronize") for line in log)


def test_temporaries_are_synchronized_then_freed_without_async(
        stub_dir_without_async, tmp_path, softmax):
    metadata, payload = softmax
    payload = _with_temporary(payload)
    out, log = _run(stub_dir_without_async, tmp_path, metadata, payload)
    assert out == "OK"
    allocs = [line.split() for line in log if line.startswith("hipMalloc ")]
    assert [int(a[1]) for a in allocs] == [256]
    launches = [line for line in log if line.startswith("hipModuleLaunchKernel")]
    i = log.index("hipStreamSynchronize 0x%x" % STREAM)
    assert log.index(launches[-1]) < i < log.index("hipFree " + allocs[0][2])


@pytest.mark.parametrize("env, expected", [
    ({"STUB_LAUNCH_ERROR": 700},
     "hipModuleLaunchKernel (launch 0 of entry 'softmax') failed: "
     "hipErrorIllegalAddress: an illegal memory access was encountered"),
    ({"STUB_INIT_ERROR": 100}, "hipInit failed: hipErrorNoDevice"),
    ({"STUB_DEVICES": 0}, "no AMD GPU"),
    ({"STUB_LOAD_ERROR": 209},
     "hipModuleLoadData (code object for gfx942, module 'softmax_kernel') "
     "failed: hipErrorNoBinaryForGpu"),
])
def test_hip_errors_are_statuses(stub_dir, tmp_path, softmax, env, expected):
    metadata, payload = softmax
    out, _ = _run(stub_dir, tmp_path, metadata, payload, **env)
    assert out.startswith("ERROR 5 "), out
    assert expected in out


def test_a_kernel_missing_from_its_code_object_is_an_error(stub_dir, tmp_path, softmax):
    metadata, payload = softmax
    bad = json.loads(json.dumps(payload))
    bad["entries"][0]["launches"][0]["kernel"] = "no_such_kernel"
    out, _ = _run(stub_dir, tmp_path, metadata, bad)
    assert out.startswith("ERROR 5 ") and "hipModuleGetFunction ('no_such_kernel')" in out


def test_without_a_hip_runtime(tmp_path, softmax):
    found = subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True,
                           text=True).stdout if os.path.exists("/sbin/ldconfig") else ""
    if "libamdhip64" in found:
        pytest.skip("this machine has a HIP runtime")
    metadata, payload = softmax
    out, _ = _run(tmp_path, tmp_path, metadata, payload)
    assert out.startswith("ERROR 5 ") and "libamdhip64.so not found" in out
