"""The Tile IR back end (codegen=tile-ir) on a GPU, against PyTorch's own
matmul and the PTX path.

The GPU machine has no tileiras (its 200 MB do not travel in the bundle):
scripts/device/bundle compiles this file's cases here for nvidia-sm80 and
nvidia-sm90 (scripts/device/tile_ir_artifacts) and the tests load them
from $POLYBLOCKS_TILE_IR_ARTIFACTS; with tileiras at hand they compile
them. Each case checks the result against torch.matmul in f32 and times
the Tile IR kernel, the PTX path's and PyTorch's (median of 20 after 3
warm-up runs, one process, printed for the device log). Without a GPU
only the artifacts' contents are checked."""

import base64
import json
import os
import statistics

import pytest
import torch

import polyblocks
from polyblocks.bench.gpu import matmul_text

from helpers import artifact_file

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(),
                                reason="needs a CUDA device (torch.cuda.is_available())")

# (name, dtype, m, n, k, batch, b_transposed, options)
CASES = [
    ("f16_256x192x128", torch.float16, 256, 192, 128, 0, False, {}),
    ("f16_77x130x200", torch.float16, 77, 130, 200, 0, False, {}),
    ("bf16_300x384x200_bt", torch.bfloat16, 300, 384, 200, 0, True, {}),
    ("f16_batch3_64x40x33", torch.float16, 64, 40, 33, 3, False, {}),
    ("tf32_130x260x72_bt", torch.float32, 130, 260, 72, 0, True, {"allow_tf32": True}),
    ("f16_4096", torch.float16, 4096, 4096, 4096, 0, False, {}),
    ("bf16_4096", torch.bfloat16, 4096, 4096, 4096, 0, False, {}),
]


def case_text(case):
    _, dtype, m, n, k, batch, b_transposed, _ = case
    return matmul_text(m, n, k, dtype, batch, b_transposed)


def case_options(case, codegen="tile-ir"):
    return {**case[7], "codegen": codegen}


def _tileiras_available():
    return bool(os.environ.get("POLYBLOCKS_TILEIRAS"))


def _artifact(case, target):
    """The case's Tile IR artifact for `target`: precompiled, or compiled."""
    directory = os.environ.get("POLYBLOCKS_TILE_IR_ARTIFACTS")
    if directory:
        path = os.path.join(directory, f"{target}-{case[0]}.pbart")
        if os.path.exists(path):
            return polyblocks.Artifact.load(path)
    if not _tileiras_available():
        pytest.skip("no precompiled artifact and no tileiras")
    return polyblocks.compile(case_text(case), target=target, options=case_options(case),
                              cache=False)


def _payload(art, tmp_path):
    path = tmp_path / "a.pbart"
    art.save(path)
    return json.loads(artifact_file.split(path.read_bytes())[1])


@pytest.mark.parametrize("target", ["nvidia-sm80", "nvidia-sm90"])
def test_artifact_holds_tile_ir_and_cubins(target, tmp_path):
    if not _tileiras_available():
        pytest.skip("needs tileiras (scripts/setup installs it)")
    case = CASES[0]
    payload = _payload(_artifact(case, target), tmp_path)
    (module,) = payload["modules"]
    assert "ptx" not in module
    assert base64.b64decode(module["tileir_bytecode_base64"]).startswith(b"\x7fTileIR\x00")
    assert base64.b64decode(module["cubin_base64"]).startswith(b"\x7fELF")
    (launch,) = payload["entries"][0]["launches"]
    assert launch["module"] == module["name"] and launch["block"][0] > 0


def _median_ms(fn, runs=20, warmup=3):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


@needs_cuda
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_tile_ir_matmul_on_gpu(case):
    name, dtype, m, n, k, batch, b_transposed, options = case
    major, minor = torch.cuda.get_device_capability()
    target = "nvidia-sm90" if major >= 9 else "nvidia-sm80"
    art = _artifact(case, target)
    torch.manual_seed(0)
    lead = (batch,) if batch else ()
    a = torch.randn(*lead, m, k, device="cuda").to(dtype)
    b = torch.randn(*lead, *((n, k) if b_transposed else (k, n)), device="cuda").to(dtype)
    (c,) = art.run("mm", [a, b])
    bm = b.float().transpose(-1, -2) if b_transposed else b.float()
    ref = torch.matmul(a.float(), bm)
    torch.cuda.synchronize()
    err = (c.float() - ref).abs().max().item() / ref.abs().max().item()
    tol = {torch.float16: 2e-3, torch.bfloat16: 1e-2, torch.float32: 5e-3}[dtype]
    assert err < tol, f"{name}: relative error {err:.2e} >= {tol:.0e}"
    # The two NVIDIA paths and PyTorch, side by side.
    ptx = polyblocks.compile(case_text(case), target="nvidia-auto",
                             options=case_options(case, "ptx"), cache=False)
    b_op = b.transpose(-1, -2) if b_transposed else b
    tile_ms = _median_ms(lambda: art.run("mm", [a, b]))
    ptx_ms = _median_ms(lambda: ptx.run("mm", [a, b]))
    torch_ms = _median_ms(lambda: torch.matmul(a, b_op))
    print(f"tile-ir {name} on {target}: tile-ir {tile_ms:.3f} ms, ptx {ptx_ms:.3f} ms, "
          f"torch {torch_ms:.3f} ms")
