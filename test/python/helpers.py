"""Shared helpers of the PolyBlocks Python tests."""

import json
import os
import shutil
import sys
import textwrap

import pytest
import torch

from polyblocks.torch.backend import _logged_fallbacks

# test/lib: artifact_file (the artifact file format in Python).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import artifact_file  # noqa: E402


# Small programs the GPU tests compile for several targets.
ADD = """
func.func @add(%a: tensor<64x128xf32>, %b: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %e = tensor.empty() : tensor<64x128xf32>
  %r = linalg.add ins(%a, %b : tensor<64x128xf32>, tensor<64x128xf32>)
                  outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %r : tensor<64x128xf32>
}
"""

SOFTMAX = """
func.func @softmax(%x: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %e = tensor.empty() : tensor<64x128xf32>
  %y = linalg.softmax dimension(1) ins(%x : tensor<64x128xf32>)
                      outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %y : tensor<64x128xf32>
}
"""


# A child process that loads an artifact through the C API's ctypes binding
# alone (argv: _capi.py, artifact, entry, buffer count, stream) and runs the
# entry on fake device addresses 0x1000 * (i + 1), printing "OK" or "ERROR
# code message": the stand-in driver tests (test_cuda_stub.py,
# test_hip_stub.py) open their library once per process.
CAPI_CHILD = textwrap.dedent("""
    import ctypes, importlib.util, sys
    spec = importlib.util.spec_from_file_location("pb_capi", sys.argv[1])
    capi = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(capi)
    art = capi.ArtifactHandle.load(sys.argv[2])
    entry, n = sys.argv[3].encode(), int(sys.argv[4])
    try:
        exe = capi.ExecutableHandle(art)
        bufs = (ctypes.c_void_p * max(n, 1))(*[0x1000 * (i + 1) for i in range(n)])
        exe.run(entry, bufs, n, int(sys.argv[5]))
        del exe
        print("OK")
    except capi.PolyBlocksError as e:
        print("ERROR", e.code, e.message)
""")


def c_compiler():
    """A C compiler to build the stand-in libraries with, or None."""
    return shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")


def compile_strict(fn, **options):
    """torch.compile with the polyblocks backend in strict mode (nothing may
    fall back to eager), a full graph, static shapes."""
    torch._dynamo.reset()
    opts = {"strict": True}
    opts.update(options)
    return torch.compile(fn, backend="polyblocks", fullgraph=True, dynamic=False,
                         options=opts)


def reset_fallback_log():
    _logged_fallbacks.clear()


def exception_chain(exc):
    """The exception and its causes/contexts."""
    seen = []
    while exc is not None and exc not in seen:
        seen.append(exc)
        exc = exc.__cause__ or exc.__context__ or getattr(exc, "inner_exception", None)
    return seen


def matrix_unit_families(art, tmp_path):
    """The matrix-unit families (wgmma, mma.sync) the kernels of an NVIDIA
    artifact use, read from the emulation IR in its payload."""
    path = tmp_path / "a.pbart"
    art.save(path)
    _, payload = artifact_file.split(path.read_bytes())
    modules = json.loads(payload)["modules"]
    text = "\n".join(m.get("emulation_mlir", "") for m in modules)
    families = {unit for unit, op in [("wgmma", "wgmma.mma_async"), ("mma.sync", "mma.sync")]
                if op in text}
    # Tile IR kernels (codegen=tile-ir): tileiras picks the instructions.
    if any("tileir_bytecode_base64" in m for m in modules):
        families.add("tile-ir")
    return families


class OutcomeReport:
    """Outcomes of a table-driven suite (PyTorch's OpInfo entries, JAX's
    primitive harnesses), written as JSON to the file named by the
    environment variable `env_var`, when it is set, by `write`."""

    def __init__(self, env_var):
        self.env_var = env_var
        self.outcomes = {}

    def record(self, name, status, detail=""):
        self.outcomes[name] = {"status": status, "detail": detail[:500]}

    def write(self):
        path = os.environ.get(self.env_var)
        if path:
            with open(path, "w") as f:
                json.dump(self.outcomes, f, indent=1, sort_keys=True)

    def conclude(self, name, error, expected_failures):
        """Ends case `name`, which raised `error` (None if it passed; its
        failure is recorded already). Expected failures are reported with
        pytest.xfail (cheap: no traceback to format); an unexpected pass is
        a failure, so that the table of expected failures stays exact."""
        if name in expected_failures:
            if error is None:
                self.record(name, "pass")
                pytest.fail(f"{name} passes now: remove it from EXPECTED_FAILURES "
                            f"(it was expected to fail: {expected_failures[name]})")
            pytest.xfail(expected_failures[name])
        if error is not None:
            raise error
        self.record(name, "pass")
