"""The Tile IR back end (codegen=tile-ir) on a GPU, against PyTorch's own
matmul, softmax and layer_norm and the PTX path.

The GPU machine has no tileiras (its 200 MB do not travel in the bundle):
scripts/device/bundle compiles this file's cases here for nvidia-sm80 and
nvidia-sm90 (scripts/device/tile_ir_artifacts) and the tests load them
from $POLYBLOCKS_TILE_IR_ARTIFACTS; with tileiras at hand they compile
them. Each case checks the result against PyTorch (matmuls in f32) and
times the Tile IR kernel, the PTX path's and PyTorch's (median of 20 after
3 warm-up runs, one process, printed for the device log). Without a GPU
the artifacts' contents are checked, and the small row kernels run in the
tile interpreter against PyTorch on the CPU."""

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


# Row kernels (softmax, layernorm): (name, kind, rows, columns). The first
# two also run in the tile interpreter here.
ROW_CASES = [
    ("softmax_64x1000", "softmax", 64, 1000),
    ("layernorm_64x768", "layernorm", 64, 768),
    ("softmax_4096x1024", "softmax", 4096, 1024),
    ("layernorm_4096x768", "layernorm", 4096, 768),
]
LAYERNORM_EPS = 1e-5


def row_case_text(case):
    _, kind, rows, cols = case
    x = f"tensor<{rows}x{cols}xf32>"
    if kind == "softmax":
        return f"""
func.func @rows(%x: {x}) -> {x} {{
  %e = tensor.empty() : {x}
  %y = linalg.softmax dimension(1) ins(%x : {x}) outs(%e : {x}) -> {x}
  return %y : {x}
}}
"""
    r, c = f"tensor<{rows}xf32>", f"tensor<{cols}xf32>"
    ident = "affine_map<(i, j) -> (i, j)>"
    row = "affine_map<(i, j) -> (i)>"
    col = "affine_map<(i, j) -> (j)>"
    return f"""
func.func @rows(%x: {x}, %g: {c}, %b: {c}) -> {x} {{
  %zero = arith.constant 0.0 : f32
  %n = arith.constant {float(cols)} : f32
  %eps = arith.constant {LAYERNORM_EPS:.6e} : f32
  %e1 = tensor.empty() : {r}
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : {r}) -> {r}
  %sum = linalg.generic {{indexing_maps = [{ident}, {row}],
                          iterator_types = ["parallel", "reduction"]}}
      ins(%x : {x}) outs(%z1 : {r}) {{
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  }} -> {r}
  %e2 = tensor.empty() : {x}
  %xc = linalg.generic {{indexing_maps = [{ident}, {row}, {ident}],
                         iterator_types = ["parallel", "parallel"]}}
      ins(%x, %sum : {x}, {r}) outs(%e2 : {x}) {{
  ^bb0(%in: f32, %s: f32, %out: f32):
    %mean = arith.divf %s, %n : f32
    %d = arith.subf %in, %mean : f32
    linalg.yield %d : f32
  }} -> {x}
  %z2 = linalg.fill ins(%zero : f32) outs(%e1 : {r}) -> {r}
  %sq = linalg.generic {{indexing_maps = [{ident}, {row}],
                         iterator_types = ["parallel", "reduction"]}}
      ins(%xc : {x}) outs(%z2 : {r}) {{
  ^bb0(%in: f32, %acc: f32):
    %p = arith.mulf %in, %in : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  }} -> {r}
  %y = linalg.generic {{indexing_maps = [{ident}, {row}, {col}, {col}, {ident}],
                        iterator_types = ["parallel", "parallel"]}}
      ins(%xc, %sq, %g, %b : {x}, {r}, {c}, {c}) outs(%e2 : {x}) {{
  ^bb0(%in: f32, %v: f32, %gamma: f32, %beta: f32, %out: f32):
    %var = arith.divf %v, %n : f32
    %ve = arith.addf %var, %eps : f32
    %rs = math.rsqrt %ve : f32
    %a = arith.mulf %in, %rs : f32
    %m = arith.mulf %a, %gamma : f32
    %o = arith.addf %m, %beta : f32
    linalg.yield %o : f32
  }} -> {x}
  return %y : {x}
}}
"""


def row_case_inputs(case, device):
    _, kind, rows, cols = case
    torch.manual_seed(0)
    x = torch.randn(rows, cols, device=device) * 3
    if kind == "softmax":
        return [x], torch.softmax(x, dim=1)
    g = torch.randn(cols, device=device)
    b = torch.randn(cols, device=device)
    ref = torch.nn.functional.layer_norm(x, (cols,), g, b, eps=LAYERNORM_EPS)
    return [x, g, b], ref


def case_text(case):
    _, dtype, m, n, k, batch, b_transposed, _ = case
    return matmul_text(m, n, k, dtype, batch, b_transposed)


def case_options(case, codegen="tile-ir"):
    return {**case[7], "codegen": codegen}


def _tileiras_available():
    return bool(os.environ.get("POLYBLOCKS_TILEIRAS"))


def _artifact(case, target, text=None, options=None):
    """The case's Tile IR artifact for `target`: precompiled, or compiled."""
    directory = os.environ.get("POLYBLOCKS_TILE_IR_ARTIFACTS")
    if directory:
        path = os.path.join(directory, f"{target}-{case[0]}.pbart")
        if os.path.exists(path):
            return polyblocks.Artifact.load(path)
    if not _tileiras_available():
        pytest.skip("no precompiled artifact and no tileiras")
    return polyblocks.compile(text or case_text(case), target=target,
                              options=options or case_options(case), cache=False)


def _row_artifact(case, target):
    return _artifact(case, target, row_case_text(case), {"codegen": "tile-ir"})


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


@pytest.mark.parametrize("target", ["nvidia-sm80", "nvidia-sm90"])
@pytest.mark.parametrize("case", ROW_CASES[:2], ids=[c[0] for c in ROW_CASES[:2]])
def test_row_kernel_in_tile_interpreter(case, target, tmp_path):
    # The whole softmax or layernorm is one Tile IR kernel (nothing on the
    # PTX path), assembled by tileiras; the tile interpreter runs it on the
    # CPU against PyTorch.
    art = _row_artifact(case, target)
    payload = _payload(art, tmp_path)
    (module,) = payload["modules"]
    assert "ptx" not in module and module["cubin_base64"]
    (launch,) = payload["entries"][0]["launches"]
    assert launch["module"] == module["name"]
    inputs, ref = row_case_inputs(case, "cpu")
    (y,) = art.executable(emulate=True).run("rows", inputs)
    torch.testing.assert_close(y, ref, rtol=1e-4, atol=1e-5)


@needs_cuda
@pytest.mark.parametrize("case", ROW_CASES, ids=[c[0] for c in ROW_CASES])
def test_row_kernel_on_gpu(case):
    name = case[0]
    major, _ = torch.cuda.get_device_capability()
    target = "nvidia-sm90" if major >= 9 else "nvidia-sm80"
    art = _row_artifact(case, target)
    inputs, ref = row_case_inputs(case, "cuda")
    (y,) = art.run("rows", inputs)
    torch.cuda.synchronize()
    torch.testing.assert_close(y, ref, rtol=1e-4, atol=1e-5)
    # The two NVIDIA paths and PyTorch, side by side.
    ptx = polyblocks.compile(row_case_text(case), target="nvidia-auto",
                             options={"codegen": "ptx"}, cache=False)
    if case[1] == "softmax":
        eager = lambda: torch.softmax(inputs[0], dim=1)  # noqa: E731
    else:
        eager = lambda: torch.nn.functional.layer_norm(  # noqa: E731
            inputs[0], (case[3],), inputs[1], inputs[2], eps=LAYERNORM_EPS)
    tile_ms = _median_ms(lambda: art.run("rows", inputs))
    ptx_ms = _median_ms(lambda: ptx.run("rows", inputs))
    torch_ms = _median_ms(eager)
    print(f"tile-ir {name} on {target}: tile-ir {tile_ms:.3f} ms, ptx {ptx_ms:.3f} ms, "
          f"torch {torch_ms:.3f} ms")
