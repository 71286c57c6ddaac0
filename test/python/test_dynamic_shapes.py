"""Dynamic shapes on CPU targets: entries with sizes (the C API's
pbExecutableRunWithSizes through polyblocks.compile), one compile for all
sizes, run at sizes that are no multiple of any tile (1, 7, 129), and the
torch backend's dynamic_shapes="symbolic" (docs/DynamicShapes.md)."""

import ctypes

import pytest
import torch

from polyblocks import compiler
from polyblocks._capi import PolyBlocksError, StatusCode, UnsupportedError

SIZES = (1, 7, 129)

# x @ w + bias, then relu: M known only at run time (a GEMM on the
# micro-kernel with a fused epilogue, C's fill folded, the result written
# in place).
LINEAR = """
#map = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @linear(%x: tensor<?x64xf32> {pb.dim_args = array<i64: 3, -1>},
                  %w: tensor<64x48xf32>, %bias: tensor<48xf32>, %n: index)
    -> (tensor<?x48xf32> {pb.dim_args = array<i64: 3, -1>}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%n) : tensor<?x48xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x48xf32>) -> tensor<?x48xf32>
  %m = linalg.matmul ins(%x, %w : tensor<?x64xf32>, tensor<64x48xf32>)
                     outs(%f : tensor<?x48xf32>) -> tensor<?x48xf32>
  %e2 = tensor.empty(%n) : tensor<?x48xf32>
  %r = linalg.generic {indexing_maps = [#map, #row, #map],
                       iterator_types = ["parallel", "parallel"]}
      ins(%m, %bias : tensor<?x48xf32>, tensor<48xf32>) outs(%e2 : tensor<?x48xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    %t = arith.maximumf %s, %zero : f32
    linalg.yield %t : f32
  } -> tensor<?x48xf32>
  return %r : tensor<?x48xf32>
}
"""

# Attention's two products: q @ k^T (N: the keys, at run time; k^T given
# transposed) and p @ v (K: the keys), per head.
SCORES = """
func.func @scores(%q: tensor<4x?x32xf32> {pb.dim_args = array<i64: -1, 3, -1>},
                  %kt: tensor<4x32x?xf32> {pb.dim_args = array<i64: -1, -1, 4>},
                  %v: tensor<4x?x32xf32> {pb.dim_args = array<i64: -1, 4, -1>},
                  %m: index, %n: index)
    -> (tensor<4x?x?xf32> {pb.dim_args = array<i64: -1, 3, 4>},
        tensor<4x?x32xf32> {pb.dim_args = array<i64: -1, 3, -1>}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%m, %n) : tensor<4x?x?xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x?x?xf32>) -> tensor<4x?x?xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<4x?x32xf32>, tensor<4x32x?xf32>)
                           outs(%f : tensor<4x?x?xf32>) -> tensor<4x?x?xf32>
  %e2 = tensor.empty(%m) : tensor<4x?x32xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x?x32xf32>) -> tensor<4x?x32xf32>
  %o = linalg.batch_matmul ins(%s, %v : tensor<4x?x?xf32>, tensor<4x?x32xf32>)
                           outs(%f2 : tensor<4x?x32xf32>) -> tensor<4x?x32xf32>
  return %s, %o : tensor<4x?x?xf32>, tensor<4x?x32xf32>
}
"""

# A size that no input's extent gives: passed explicitly.
FILLED = """
func.func @filled(%x: tensor<4xf32>, %n: index)
    -> (tensor<?x4xf32> {pb.dim_args = array<i64: 1, -1>}) {
  %e = tensor.empty(%n) : tensor<?x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>,
                                        affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<?x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}
"""


def test_metadata_names_the_sizes():
    art = compiler.compile(LINEAR, "cpu-host", cache=False)
    (entry,) = art.metadata["entries"]
    assert entry["sizes"] == ["s0"]
    assert entry["inputs"][0]["shape"] == ["s0", 64]
    assert entry["inputs"][1]["shape"] == [64, 48]
    assert entry["outputs"][0]["shape"] == ["s0", 48]


@pytest.mark.parametrize("options", [None, {"pipeline": "reference"}])
def test_linear_one_artifact_for_every_row_count(options):
    art = compiler.compile(LINEAR, "cpu-host", options, cache=False)
    exe = art.executable()
    torch.manual_seed(0)
    w, bias = torch.randn(64, 48), torch.randn(48)
    for rows in SIZES + (0, 40):
        x = torch.randn(rows, 64)
        (out,) = exe.run("linear", [x, w, bias])
        assert out.shape == (rows, 48)
        torch.testing.assert_close(out, torch.relu(x @ w + bias), rtol=1e-5, atol=1e-4)


def test_attention_products_with_run_time_keys():
    art = compiler.compile(SCORES, "cpu-host", cache=False)
    exe = art.executable()
    torch.manual_seed(0)
    for queries, keys in [(1, 1), (7, 129), (129, 7), (33, 40)]:
        q = torch.randn(4, queries, 32)
        k = torch.randn(4, keys, 32)
        v = torch.randn(4, keys, 32)
        scores, out = exe.run("scores", [q, k.transpose(1, 2).contiguous(), v])
        expect = q @ k.transpose(1, 2)
        torch.testing.assert_close(scores, expect, rtol=1e-5, atol=1e-4)
        torch.testing.assert_close(out, expect @ v, rtol=1e-4, atol=1e-3)


def test_sizes_given_explicitly_and_checked():
    exe = compiler.compile(FILLED, "cpu-host", cache=False).executable()
    x = torch.arange(4, dtype=torch.float32)
    (out,) = exe.run("filled", [x], sizes=[3])
    torch.testing.assert_close(out, x.expand(3, 4))
    (out,) = exe.run("filled", [x], sizes={"s0": 5})
    assert out.shape == (5, 4)
    with pytest.raises(PolyBlocksError, match=r"no input gives the sizes \['s0'\]"):
        exe.run("filled", [x])
    with pytest.raises(PolyBlocksError, match="negative"):
        exe.run("filled", [x], sizes=[-1])
    with pytest.raises(PolyBlocksError, match="takes the sizes"):
        exe.run("filled", [x], sizes=[1, 2])


def test_inconsistent_extents_are_an_error():
    exe = compiler.compile(LINEAR, "cpu-host", cache=False).executable()
    w, bias = torch.randn(64, 48), torch.randn(48)
    with pytest.raises(PolyBlocksError, match="which is size s0, but the sizes given make it 4"):
        exe.run("linear", [torch.randn(3, 64), w, bias], sizes=[4])
    with pytest.raises(PolyBlocksError, match="must be"):
        exe.run("linear", [torch.randn(3, 64), w, bias], outputs=[torch.empty(4, 48)])


def test_c_api_checks_the_sizes():
    """pbExecutableRunWithSizes itself: the count, negative values, and an
    entry with sizes run without them."""
    exe = compiler.compile(FILLED, "cpu-host", cache=False).executable()
    x = torch.zeros(4)
    out = torch.empty(2, 4)
    buffers = (ctypes.c_void_p * 2)(x.data_ptr(), out.data_ptr())
    with pytest.raises(PolyBlocksError, match="takes 1 sizes, not 0") as error:
        exe._handle.run(b"filled", buffers, 2, None)
    assert error.value.code == StatusCode.INVALID_ARGUMENT
    with pytest.raises(PolyBlocksError, match="is negative"):
        exe._handle.run(b"filled", buffers, 2, None, [-2])
    with pytest.raises(PolyBlocksError, match="takes 1 sizes, not 2"):
        exe._handle.run(b"filled", buffers, 2, None, [2, 2])
    exe._handle.run(b"filled", buffers, 2, None, [2])
    torch.testing.assert_close(out, torch.zeros(2, 4))


def test_gpu_targets_refuse_sizes():
    with pytest.raises(UnsupportedError, match="only CPU targets compile them"):
        compiler.compile(LINEAR, "nvidia-sm80", cache=False)


def test_contract_rejects_unnamed_dynamic_dimensions():
    text = LINEAR.replace(" {pb.dim_args = array<i64: 3, -1>}", "", 1)
    with pytest.raises(PolyBlocksError, match="has a dynamic shape but no pb.dim_args"):
        compiler.compile(text, "cpu-host", cache=False)


# ---------------------------------------------------------------------------
# torch.compile(..., dynamic=True) with dynamic_shapes="symbolic"
# ---------------------------------------------------------------------------

def _compile(model, mode="symbolic"):
    torch._dynamo.reset()
    compiler.clear_memory_cache()
    return torch.compile(model, backend="polyblocks", dynamic=True,
                         options={"strict": True, "dynamic_shapes": mode})


def _mlp():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(64, 48), torch.nn.GELU(),
                               torch.nn.LayerNorm(48), torch.nn.Linear(48, 8)).eval()


def test_symbolic_mlp_compiles_once(monkeypatch, tmp_path):
    monkeypatch.setenv("POLYBLOCKS_CACHE_DIR", str(tmp_path))
    model = _mlp()
    fn = _compile(model)
    before = compiler.stats["compiles"]
    with torch.no_grad():
        for rows in (2, 7, 129, 33):
            x = torch.randn(rows, 64)
            torch.testing.assert_close(fn(x), model(x), rtol=1e-4, atol=1e-4)
        assert compiler.stats["compiles"] - before == 1
        # Dynamo specializes a size of 1 (its guards keep symbolic sizes at
        # 2 or more): one more graph, static.
        x = torch.randn(1, 64)
        torch.testing.assert_close(fn(x), model(x), rtol=1e-4, atol=1e-4)
    assert compiler.stats["compiles"] - before == 2


def test_specialize_compiles_per_shape(monkeypatch, tmp_path):
    monkeypatch.setenv("POLYBLOCKS_CACHE_DIR", str(tmp_path))
    model = _mlp()
    fn = _compile(model, "specialize")
    before = compiler.stats["compiles"]
    with torch.no_grad():
        for rows in (2, 7, 9):
            x = torch.randn(rows, 64)
            torch.testing.assert_close(fn(x), model(x), rtol=1e-4, atol=1e-4)
    assert compiler.stats["compiles"] - before == 3


class _Encoder(torch.nn.Module):
    """A 2-layer transformer encoder over token ids, with BERT's ops:
    embeddings plus positions sliced to the length, attention with a
    padding mask, layer norms, GELU."""

    def __init__(self, vocab=100, width=64, heads=4, layers=2, positions=256):
        super().__init__()
        self.tokens = torch.nn.Embedding(vocab, width)
        self.positions = torch.nn.Parameter(torch.randn(positions, width) * 0.02)
        layer = torch.nn.TransformerEncoderLayer(width, heads, 4 * width, dropout=0.0,
                                                 activation="gelu", batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)

    def forward(self, ids):
        x = self.tokens(ids) + self.positions[: ids.shape[1]]
        return self.encoder(x)


def test_symbolic_encoder_compiles_once_for_every_length(monkeypatch, tmp_path):
    monkeypatch.setenv("POLYBLOCKS_CACHE_DIR", str(tmp_path))
    torch.manual_seed(0)
    model = _Encoder().eval()
    fn = _compile(model)
    before = compiler.stats["compiles"]
    with torch.no_grad():
        for length in (16, 7, 129, 48):
            ids = torch.randint(0, 100, (2, length))
            torch.testing.assert_close(fn(ids), model(ids), rtol=1e-4, atol=1e-4)
        assert compiler.stats["compiles"] - before == 1
        ids = torch.randint(0, 100, (2, 1))  # specialized by dynamo, as above
        torch.testing.assert_close(fn(ids), model(ids), rtol=1e-4, atol=1e-4)
    assert compiler.stats["compiles"] - before == 2


def test_emitter_reading_a_size_as_a_number_falls_back_per_shape(monkeypatch, tmp_path):
    """An emitter that turned a symbolic size into a number would make code
    for this call's size only: torch records that as a guard, and the graph
    is compiled per shape instead (accurate at every size)."""
    from polyblocks.torch.ops import EMITTERS
    aten = torch.ops.aten
    original = EMITTERS[aten.relu.default]

    def specializing(cx, x):
        int(cx.out.shape[0])  # reads the size: a guard on its value
        return original(cx, x)

    monkeypatch.setitem(EMITTERS, aten.relu.default, specializing)
    monkeypatch.setenv("POLYBLOCKS_CACHE_DIR", str(tmp_path))
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU()).eval()
    fn = _compile(model)
    before = compiler.stats["compiles"]
    with torch.no_grad():
        for rows in (3, 5):
            x = torch.randn(rows, 8)
            torch.testing.assert_close(fn(x), model(x))
    assert compiler.stats["compiles"] - before == 2


class _ConcatSum(torch.nn.Module):
    """A concatenation along a symbolic dimension (its extent 2 * s0, its
    second piece at offset s0), then a sum over it: computed extents of
    run-time size, an output of static shape."""

    def forward(self, x, y):
        return torch.cat([x, torch.tanh(y)], dim=1).sum(dim=1)


def test_symbolic_concatenation_along_a_run_time_dimension(monkeypatch, tmp_path):
    monkeypatch.setenv("POLYBLOCKS_CACHE_DIR", str(tmp_path))
    model = _ConcatSum()
    fn = _compile(model)
    before = compiler.stats["compiles"]
    with torch.no_grad():
        for rows in (3, 7, 129):
            x, y = torch.randn(2, rows, 4), torch.randn(2, rows, 4)
            torch.testing.assert_close(fn(x, y), model(x, y), rtol=1e-5, atol=1e-5)
    assert compiler.stats["compiles"] - before == 1
