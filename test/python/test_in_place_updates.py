"""Results that update an input in place (pb.in_place, docs/DynamicShapes.md):
the executable writes the input's buffer, the runtime returns that input as
the output; the torch backend compiles an inference graph's input updates
(copy_ into a KV cache, which AOTAutograd keeps with
keep_inference_input_mutations) that way."""

import pytest
import torch

from polyblocks import compiler

UPDATE = """
func.func @update(%cache: tensor<8x4xf32>, %row: tensor<1x4xf32>, %pos: tensor<1xi64>)
    -> (tensor<8x4xf32> {pb.in_place = 0 : i64}, tensor<8xf32>) {
  %c0 = arith.constant 0 : index
  %p = tensor.extract %pos[%c0] : tensor<1xi64>
  %at = arith.index_cast %p : i64 to index
  %s = tensor.extract_slice %cache[%at, 0] [1, 4] [1, 1] : tensor<8x4xf32> to tensor<1x4xf32>
  %c = linalg.copy ins(%row : tensor<1x4xf32>) outs(%s : tensor<1x4xf32>) -> tensor<1x4xf32>
  %u = tensor.insert_slice %c into %cache[%at, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<8x4xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %sums = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                          iterator_types = ["parallel", "reduction"]}
      ins(%u : tensor<8x4xf32>) outs(%f : tensor<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s2 = arith.addf %acc, %a : f32
    linalg.yield %s2 : f32
  } -> tensor<8xf32>
  return %u, %sums : tensor<8x4xf32>, tensor<8xf32>
}
"""


def _expected(cache, row, pos):
    new = cache.clone()
    new[pos] = row[0]
    return new, new.sum(1)


def test_executable_updates_the_input():
    art = compiler.compile(UPDATE, target="cpu-host")
    entry = art.metadata["entries"][0]
    assert entry["in_place"] == [{"output": 0, "input": 0}]
    ex = art.executable()
    cache = torch.randn(8, 4)
    for pos in (3, 0, 7):
        row = torch.randn(1, 4)
        want, sums = _expected(cache, row, pos)
        out, got_sums = ex.run("update", [cache, row, torch.tensor([pos])])
        # The output is the input itself, updated.
        assert out is cache
        torch.testing.assert_close(cache, want)
        torch.testing.assert_close(got_sums, sums)


def test_executable_updates_a_strided_input():
    # A transposed view: updated through a contiguous copy, copied back.
    art = compiler.compile(UPDATE, target="cpu-host")
    ex = art.executable()
    base = torch.randn(4, 8)
    cache = base.t()
    assert not cache.is_contiguous()
    row = torch.randn(1, 4)
    want, _ = _expected(cache, row, 5)
    out, _ = ex.run("update", [cache, row, torch.tensor([5])])
    assert out is cache
    torch.testing.assert_close(base.t(), want)


class _Cache(torch.nn.Module):
    """A decoding step's cache: the new key row at ``pos``, then scores of
    a query against every row."""

    def __init__(self):
        super().__init__()
        self.register_buffer("k", torch.zeros(1, 2, 8, 4))

    def forward(self, key, query, pos):
        self.k.index_copy_(2, pos, key)
        return (self.k * query).sum(-1)


def test_torch_backend_compiles_cache_updates_in_place(monkeypatch):
    texts = []
    original = compiler.compile

    def capture(text, *args, **kwargs):
        texts.append(text)
        return original(text, *args, **kwargs)

    monkeypatch.setattr(compiler, "compile", capture)
    torch._dynamo.reset()
    model, ref = _Cache(), _Cache()
    step = torch.compile(model, backend="polyblocks", options={"strict": True})
    torch.manual_seed(0)
    with torch.no_grad():
        for pos in (0, 1, 5, 2):
            key, query = torch.randn(1, 2, 1, 4), torch.randn(1, 2, 1, 4)
            out = step(key, query, torch.tensor([pos]))
            torch.testing.assert_close(out, ref(key, query, torch.tensor([pos])))
            torch.testing.assert_close(model.k, ref.k)
    assert len(texts) == 1 and "pb.in_place" in texts[0]
