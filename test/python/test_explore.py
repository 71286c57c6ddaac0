"""The explorer's HTTP API (docs/Explorer.md): stages, decisions, kernel
times, errors on the page, crashes contained, limits and the bind address."""
from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from explore_helpers import CRASH_MARKER, INVALID, MATMUL, Server


@pytest.fixture(scope="module")
def server():
    s = Server()
    yield s
    s.close()


def test_targets_and_models(server):
    status, body = server.get("/api/targets")
    assert status == 200
    assert {"cpu-host", "nvidia-sm90", "amd-gfx942"} <= set(body["targets"])
    assert body["host"].startswith("cpu-")
    status, body = server.get("/api/models")
    assert "resnet18" in body["models"]
    status, body = server.get("/api/target?name=nvidia-sm90")
    assert status == 200 and "target nvidia-sm90" in body["text"]
    assert server.get("/api/target?name=nope")[0] == 404


def test_cpu_host_stages_decisions_and_kernel_times(server):
    status, result = server.compile(source=MATMUL, target="cpu-host", measure=True)
    assert status == 200 and result["ok"], result.get("error")
    names = [s["name"] for s in result["stages"]]
    assert names == ["input", "S1", "S2", "S3", "S4", "S5"]
    assert result["stages"][-1]["label"] == "x86 assembly"
    # Each stage's text on demand; S5 is the artifact's disassembly.
    status, s5 = server.get(f"/api/stage?id={result['id']}&name=S5")
    assert status == 200 and "<matmul_bias_relu>:" in s5["text"]
    status, s3 = server.get(f"/api/stage?id={result['id']}&name=S3")
    assert "affine" in s3["text"] or "scf" in s3["text"]
    # Decisions carry the input's line: the matmul is on line 8.
    matmul = [d for d in result["decisions"] if d["line"] == 8]
    assert any("register tile" in d["message"] for d in matmul), matmul
    # Every kernel call: estimated from the .td and measured by its timers.
    # (How many kernels the matmul makes depends on the host's vector
    # width: one per kernel call in S4.)
    kernels = result["kernels"]
    status, s4 = server.get(f"/api/stage?id={result['id']}&name=S4")
    calls = re.findall(r"call @(kernel_[0-9a-f]+)", s4["text"])
    assert len(kernels) == len(calls) >= 1, calls
    for k in kernels:
        assert k["estimate_us"] > 0
        assert k["measured_us"] > 0 and k["calls"] >= 1
        assert k["line"] == 8  # the matmul and its fused epilogue
    assert sum(k["flops"] for k in kernels) > 0
    # The same request again is answered from the cache.
    again = server.compile(source=MATMUL, target="cpu-host", measure=True)[1]
    assert again["id"] == result["id"]


def test_nvidia_sm90_ptx_and_estimates(server):
    status, result = server.compile(source=MATMUL, target="nvidia-sm90")
    assert result["ok"], result.get("error")
    assert result["stages"][-1]["label"] == "PTX"
    ptx = server.get(f"/api/stage?id={result['id']}&name=S5")[1]["text"]
    assert ".target sm_90" in ptx
    assert result["kernels"] and all(k["estimate_us"] > 0 for k in result["kernels"])
    assert all(k["measured_us"] is None for k in result["kernels"])
    # Each launch names an input line: the first op of its fused nest (the
    # accumulator's fill on line 7, the matmul on line 8).
    assert all(k["line"] in (7, 8) for k in result["kernels"]), result["kernels"]
    assert any("not measured" in n for n in result["notes"])


def test_invalid_program_gets_its_diagnostic(server):
    status, result = server.compile(source=INVALID, target="cpu-host")
    assert status == 200 and not result["ok"]
    assert re.search(r"line 2:\d+: use of undeclared SSA value", result["error"]), result["error"]
    assert any(d["line"] == 2 and d["severity"] == "error" for d in result["diagnostics"])


def test_compiler_crash_is_an_error_and_the_server_lives(server):
    status, result = server.compile(source=MATMUL + CRASH_MARKER, target="cpu-host")
    assert status == 200 and not result["ok"]
    assert "crashed" in result["error"] and "signal 11" in result["error"]
    status, body = server.get("/api/targets")
    assert status == 200
    status, result = server.compile(source=MATMUL, target="cpu-x86-64-v3", measure=False)
    assert result["ok"], result.get("error")


def test_limits_and_refusals(server):
    big = json.dumps({"source": "x" * (2 << 20), "target": "cpu-host"}).encode()
    status, body = server.post("/api/compile", big)
    assert status == 413 and "limit" in body["error"]
    status, body = server.compile(source=MATMUL, target="no-such-chip")
    assert status == 400 and "unknown target" in body["error"]
    status, body = server.compile(model="../../etc/passwd")
    assert status == 400 and "unknown model" in body["error"]
    status, body = server.compile(source=MATMUL, python="/etc/passwd")
    assert status == 400
    status, body = server.post("/api/compile", b"{not json")
    assert status == 400
    status, body = server.get("/static/../server.py")
    assert status == 404
    assert server.get("/api/stage?id=nope&name=S1")[0] == 404


def _first_line_of_cli(*args) -> tuple[str, str]:
    """The explorer's first line of output for `args`, and its stderr."""
    proc = subprocess.Popen([sys.executable, "-m", "polyblocks.explore", "--port", "0", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
    finally:
        proc.kill()
        _, err = proc.communicate()
    return line, err


def test_cli_binds_loopback_by_default():
    line, _ = _first_line_of_cli()
    assert re.match(r"PolyBlocks explorer: http://127\.0\.0\.1:\d+/", line), line


def test_cli_warns_on_another_address():
    line, err = _first_line_of_cli("--host", "0.0.0.0")
    assert "http://0.0.0.0:" in line
    assert "warning" in err


def test_python_file_inputs(tmp_path):
    # The command line's Python files: a torch module with its inputs, or a
    # JAX function with its arguments (the API itself takes no paths).
    from polyblocks.explore import worker
    torch_file = tmp_path / "torch_model.py"
    torch_file.write_text("import torch\n"
                          "model = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.ReLU())\n"
                          "inputs = (torch.randn(2, 8),)\n")
    result = worker.run({"python": str(torch_file), "target": "cpu-host", "measure": False})
    assert result["ok"], result.get("error")
    assert "func.func" in result["source"] and "tensor<2x8xf32>" in result["source"]
    assert result["kernels"] and all(k["measured_us"] is None for k in result["kernels"])
    jax_file = tmp_path / "jax_function.py"
    jax_file.write_text("import jax.numpy as jnp\n"
                        "function = lambda x: jnp.tanh(x) * 2.0\n"
                        "args = (jnp.ones((4, 16), jnp.float32),)\n")
    result = worker.run({"python": str(jax_file), "target": "cpu-host", "measure": False})
    assert result["ok"], result.get("error")
    assert "math.tanh" in result["source"] or "tanh" in result["source"]
    bad = tmp_path / "nothing.py"
    bad.write_text("x = 1\n")
    with pytest.raises(RuntimeError, match="defines neither"):
        worker.run({"python": str(bad), "target": "cpu-host"})
