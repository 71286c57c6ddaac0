"""The ctypes binding of the C API and polyblocks.compile: compile, run,
save/load, errors, dtypes, zero-copy, the compile cache."""

import json
import os
import subprocess
import sys
import textwrap

import pytest
import torch

import polyblocks
from polyblocks import compiler
from polyblocks._capi import PolyBlocksError, StatusCode, UnsupportedError

ADD_MUL = """
#id = affine_map<(i, j) -> (i, j)>
func.func @forward(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %r = arith.addf %x, %y : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %p = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %r = arith.mulf %x, %y : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  return %s, %p : tensor<4x8xf32>, tensor<4x8xf32>
}
"""

MATMUL = """
func.func @mm(%a: tensor<6x5xf32>, %b: tensor<5x3xf32>) -> tensor<6x3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<6x3xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<6x3xf32>) -> tensor<6x3xf32>
  %r = linalg.matmul ins(%a, %b : tensor<6x5xf32>, tensor<5x3xf32>)
                     outs(%acc : tensor<6x3xf32>) -> tensor<6x3xf32>
  return %r : tensor<6x3xf32>
}
"""


def transpose_module(mlir_type):
    return f"""
func.func @forward(%a: tensor<3x5x{mlir_type}>) -> tensor<5x3x{mlir_type}> {{
  %e = tensor.empty() : tensor<5x3x{mlir_type}>
  %r = linalg.transpose ins(%a : tensor<3x5x{mlir_type}>) outs(%e : tensor<5x3x{mlir_type}>)
       permutation = [1, 0]
  return %r : tensor<5x3x{mlir_type}>
}}
"""


def test_version_and_targets():
    v = polyblocks.version()
    assert v and "LLVM" in v
    names = polyblocks.target_names()
    assert "cpu-host" in names


def test_compile_and_run():
    art = polyblocks.compile(ADD_MUL)
    md = art.metadata
    assert md["entries"][0]["name"] == "forward"
    assert md["entries"][0]["inputs"] == [{"shape": [4, 8], "dtype": "f32"}] * 2
    assert len(md["entries"][0]["outputs"]) == 2
    a, b = torch.randn(4, 8), torch.randn(4, 8)
    s, p = art.executable().run("forward", [a, b])
    torch.testing.assert_close(s, a + b)
    torch.testing.assert_close(p, a * b)


def test_named_entry_and_matmul():
    art = polyblocks.compile(MATMUL)
    assert art.entries == ["mm"]
    a, b = torch.randn(6, 5), torch.randn(5, 3)
    (r,) = art.run("mm", [a, b])
    torch.testing.assert_close(r, a @ b)


def test_noncontiguous_inputs_are_read_correctly():
    art = polyblocks.compile(MATMUL)
    a = torch.randn(5, 6).t()           # transposed view
    b = torch.randn(5, 6)[:, ::2]       # strided view
    c = torch.randn(10, 5)[3:9]         # storage offset (contiguous)
    assert not a.is_contiguous() and not b.is_contiguous()
    (r,) = art.run("mm", [a, b])
    torch.testing.assert_close(r, a @ b)
    (r,) = art.run("mm", [c, b])
    torch.testing.assert_close(r, c @ b)


def test_outputs_written_in_place():
    art = polyblocks.compile(ADD_MUL)
    exe = art.executable()
    a, b = torch.randn(4, 8), torch.randn(4, 8)
    outs = [torch.empty(4, 8), torch.empty(4, 8)]
    ptrs = [o.data_ptr() for o in outs]
    res = exe.run("forward", [a, b], outputs=outs)
    assert [r.data_ptr() for r in res] == ptrs
    torch.testing.assert_close(outs[0], a + b)


@pytest.mark.parametrize("dtype,mlir_type", [
    (torch.float32, "f32"), (torch.float16, "f16"), (torch.bfloat16, "bf16"),
    (torch.float64, "f64"), (torch.bool, "i1"), (torch.int8, "i8"),
    (torch.int16, "i16"), (torch.int32, "i32"), (torch.int64, "i64")])
def test_dtypes(dtype, mlir_type):
    art = polyblocks.compile(transpose_module(mlir_type))
    assert art.metadata["entries"][0]["inputs"][0]["dtype"] == mlir_type
    x = (torch.randn(3, 5) * 50).to(dtype)
    (r,) = art.run("forward", [x])
    assert r.dtype == dtype
    assert torch.equal(r, x.t())


def test_save_and_load(tmp_path):
    art = polyblocks.compile(ADD_MUL)
    path = tmp_path / "add_mul.pbart"
    art.save(path)
    loaded = polyblocks.Artifact.load(path)
    assert loaded.metadata["entries"] == art.metadata["entries"]
    a, b = torch.randn(4, 8), torch.randn(4, 8)
    s, p = loaded.run("forward", [a, b])
    torch.testing.assert_close(p, a * b)


def test_two_executables_run_their_own_code():
    # Guards the workaround in _capi for memfd path reuse in pbExecutableLoad.
    def unary(op):
        return f"""
func.func @forward(%a: tensor<16xf32>) -> tensor<16xf32> {{
  %e = tensor.empty() : tensor<16xf32>
  %r = linalg.generic {{indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}} ins(%a : tensor<16xf32>) outs(%e : tensor<16xf32>) {{
  ^bb0(%x: f32, %o: f32):
    %y = math.{op} %x : f32
    linalg.yield %y : f32
  }} -> tensor<16xf32>
  return %r : tensor<16xf32>
}}
"""
    x = torch.linspace(-2, 2, 16)
    exes = [polyblocks.compile(unary(op), cache=False).executable()
            for op in ("exp", "sin", "cos", "tanh")]
    refs = [x.exp(), x.sin(), x.cos(), x.tanh()]
    for exe, ref in zip(exes, refs):
        torch.testing.assert_close(exe.run("forward", [x])[0], ref)


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------

def test_malformed_module():
    with pytest.raises(PolyBlocksError) as info:
        polyblocks.compile("func.func @f( {", cache=False)
    assert info.value.code == StatusCode.COMPILE_ERROR
    assert "parse" in info.value.message


def test_outside_input_contract():
    text = """
func.func @f(%a: tensor<?xf32>) -> tensor<?xf32> {
  return %a : tensor<?xf32>
}
"""
    with pytest.raises(PolyBlocksError) as info:
        polyblocks.compile(text, cache=False)
    assert info.value.code == StatusCode.COMPILE_ERROR
    assert "dynamic shape" in info.value.message


def test_unknown_target():
    with pytest.raises(PolyBlocksError) as info:
        polyblocks.compile(ADD_MUL, target="no-such-chip", cache=False)
    assert info.value.code == StatusCode.INVALID_ARGUMENT
    assert "no-such-chip" in info.value.message


def test_unknown_option():
    with pytest.raises(PolyBlocksError) as info:
        polyblocks.compile(ADD_MUL, options="bogus=1", cache=False)
    assert info.value.code == StatusCode.INVALID_ARGUMENT


def test_unsupported_option_raises_unsupported_error():
    with pytest.raises(UnsupportedError) as info:
        polyblocks.compile(ADD_MUL, options={"mma_fusion": True}, cache=False)
    assert info.value.code == StatusCode.UNSUPPORTED
    assert isinstance(info.value, PolyBlocksError)


def test_options_formatting():
    assert compiler.format_options(None) == ""
    assert compiler.format_options({"fusion": False, "matrix_units": True}) == \
        "fusion=0,matrix-units=1"
    assert compiler.format_options({"fusion": None}) == ""
    assert compiler.format_options("matrix-units=0, fusion=1") == "fusion=1,matrix-units=0"


def test_ablation_options_reach_the_compiler():
    art = polyblocks.compile(MATMUL, options={"fusion": False, "matrix_units": False},
                             cache=False)
    assert art.metadata["options"] == "fusion=0,matrix-units=0"
    a, b = torch.randn(6, 5), torch.randn(5, 3)
    torch.testing.assert_close(art.run("mm", [a, b])[0], a @ b)
    ref = polyblocks.compile(MATMUL, options={"pipeline": "reference"}, cache=False)
    torch.testing.assert_close(ref.run("mm", [a, b])[0], a @ b)


def test_load_missing_file(tmp_path):
    with pytest.raises(PolyBlocksError) as info:
        polyblocks.Artifact.load(tmp_path / "missing.pbart")
    assert info.value.code == StatusCode.IO_ERROR


def test_run_argument_errors():
    exe = polyblocks.compile(ADD_MUL).executable()
    a = torch.randn(4, 8)
    with pytest.raises(PolyBlocksError, match="takes 2 inputs"):
        exe.run("forward", [a])
    with pytest.raises(PolyBlocksError, match="float64"):
        exe.run("forward", [a, a.double()])
    with pytest.raises(PolyBlocksError, match=r"\[4, 9\]"):
        exe.run("forward", [a, torch.randn(4, 9)])
    with pytest.raises(PolyBlocksError, match="no entry named"):
        exe.run("nope", [a, a])
    with pytest.raises(PolyBlocksError, match="not a torch.Tensor"):
        exe.run("forward", [a, 1.0])


def test_library_not_found_is_a_clear_error(tmp_path):
    code = textwrap.dedent("""
        import polyblocks
        try:
            polyblocks.compile("func.func @f() { return }")
        except polyblocks.PolyBlocksError as e:
            print("ERR", e.code, e.message)
    """)
    env = dict(os.environ, POLYBLOCKS_LIBRARY=str(tmp_path / "libPolyBlocks.so"))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "ERR" in out.stdout
    assert "libPolyBlocks.so not found" in out.stdout
    assert "POLYBLOCKS_LIBRARY" in out.stdout


# ---------------------------------------------------------------------------
# Compile cache
# ---------------------------------------------------------------------------

def _unique_module(tag: int) -> str:
    # A module no other test compiles (a distinct constant).
    return f"""
func.func @forward(%a: tensor<8xf32>) -> tensor<8xf32> {{
  %c = arith.constant {tag}.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {{indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}} ins(%a : tensor<8xf32>) outs(%e : tensor<8xf32>) {{
  ^bb0(%x: f32, %o: f32):
    %y = arith.addf %x, %c : f32
    linalg.yield %y : f32
  }} -> tensor<8xf32>
  return %r : tensor<8xf32>
}}
"""


def test_memory_and_disk_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("POLYBLOCKS_CACHE_DIR", str(tmp_path))
    text = _unique_module(1234)
    before = dict(compiler.stats)
    a1 = polyblocks.compile(text)
    assert compiler.stats["compiles"] == before["compiles"] + 1
    a2 = polyblocks.compile(text)
    assert a2 is a1
    assert compiler.stats["memory_hits"] == before["memory_hits"] + 1
    files = [f for f in tmp_path.iterdir() if f.is_file()]
    assert [f.name for f in files] == [f"{a1.key}.pbart"]  # no temporary left behind
    kernels = sorted((tmp_path / "kernels").iterdir())
    assert kernels and all(k.suffix == ".o" for k in kernels)
    compiler.clear_memory_cache()
    a3 = polyblocks.compile(text)
    assert a3 is not a1
    assert compiler.stats["disk_hits"] == before["disk_hits"] + 1
    assert compiler.stats["compiles"] == before["compiles"] + 1
    x = torch.randn(8)
    torch.testing.assert_close(a3.run("forward", [x])[0], x + 1234)
    # Different options or target: a different key.
    assert compiler.cache_key(text, "cpu-host", "") != compiler.cache_key(text, "cpu-host",
                                                                          "fusion=0")
    assert compiler.cache_key(text, "cpu-host", "") != compiler.cache_key(text, "cpu-x86-64-v3",
                                                                          "")


@pytest.mark.parametrize("damage", ["garbage", "truncated", "flipped"])
def test_invalid_cache_file_is_recompiled_and_rewritten(tmp_path, monkeypatch, caplog, damage):
    monkeypatch.setenv("POLYBLOCKS_CACHE_DIR", str(tmp_path))
    text = _unique_module(4321 + len(damage))
    key = compiler.cache_key(text, "cpu-host", "")
    entry = tmp_path / f"{key}.pbart"
    polyblocks.compile(text)
    good = entry.read_bytes()
    compiler.clear_memory_cache()
    if damage == "garbage":
        entry.write_bytes(b"not an artifact")
    elif damage == "truncated":
        entry.write_bytes(good[:len(good) // 2])
    else:
        entry.write_bytes(good[:100] + bytes([good[100] ^ 1]) + good[101:])
    before = compiler.stats["compiles"]
    with caplog.at_level("WARNING", logger="polyblocks"):
        art = polyblocks.compile(text)
    assert compiler.stats["compiles"] == before + 1
    warnings = [r.getMessage() for r in caplog.records if "invalid cache file" in r.getMessage()]
    assert len(warnings) == 1 and "INVALID_ARTIFACT" in warnings[0], warnings
    x = torch.randn(8)
    torch.testing.assert_close(art.run("forward", [x])[0], x + 4321 + len(damage))
    # The entry was rewritten: a new process (here: an empty memory cache)
    # hits it.
    polyblocks.Artifact.load(entry)
    compiler.clear_memory_cache()
    hits = compiler.stats["disk_hits"]
    polyblocks.compile(text)
    assert compiler.stats["disk_hits"] == hits + 1


def test_kernel_cache_reused_when_the_module_is_compiled_again(tmp_path, monkeypatch):
    """Without its whole-module entry, a module is compiled again, but its
    kernels come from <cache dir>/kernels: none is added or rewritten, and
    the artifact is the same."""
    monkeypatch.setenv("POLYBLOCKS_CACHE_DIR", str(tmp_path))
    text = _unique_module(4321)
    a1 = polyblocks.compile(text)
    kernels = {k: k.stat().st_mtime_ns for k in (tmp_path / "kernels").iterdir()}
    assert kernels
    compiler.clear_memory_cache()
    (tmp_path / f"{a1.key}.pbart").unlink()
    before = dict(compiler.stats)
    a2 = polyblocks.compile(text)
    assert compiler.stats["compiles"] == before["compiles"] + 1
    assert {k: k.stat().st_mtime_ns for k in (tmp_path / "kernels").iterdir()} == kernels
    a1.save(tmp_path / "a1.bin")
    a2.save(tmp_path / "a2.bin")
    assert (tmp_path / "a1.bin").read_bytes() == (tmp_path / "a2.bin").read_bytes()
    x = torch.randn(8)
    torch.testing.assert_close(a2.run("forward", [x])[0], x + 4321)


def test_unwritable_cache_dir_warns_once(tmp_path, monkeypatch, caplog):
    # A directory below a plain file cannot be created (even by root).
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("POLYBLOCKS_CACHE_DIR", str(tmp_path / "file" / "cache"))
    with caplog.at_level("WARNING", logger="polyblocks"):
        arts = [polyblocks.compile(_unique_module(600 + i)) for i in range(3)]
    warnings = [r.getMessage() for r in caplog.records if "compile cache" in r.getMessage()]
    assert len(warnings) == 1, warnings
    assert "does not use it again" in warnings[0]
    x = torch.randn(8)
    for i, art in enumerate(arts):
        torch.testing.assert_close(art.run("forward", [x])[0], x + 600 + i)


def test_concurrent_compiles_into_one_cache_dir(tmp_path):
    """Processes compiling the same module at the same time into one cache
    directory all get correct results and leave one valid entry."""
    code = textwrap.dedent("""
        import sys, torch, polyblocks
        art = polyblocks.compile(sys.stdin.read())
        x = torch.arange(8, dtype=torch.float32)
        print(art.run("forward", [x])[0].tolist())
    """)
    text = _unique_module(31)
    env = dict(os.environ, POLYBLOCKS_CACHE_DIR=str(tmp_path))
    procs = [subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                              text=True) for _ in range(3)]
    outs = [p.communicate(text, timeout=300) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
        assert json.loads(out.strip().splitlines()[-1]) == [31.0 + i for i in range(8)]
    entries = [e for e in tmp_path.iterdir() if e.is_file()]
    assert len(entries) == 1 and entries[0].suffix == ".pbart", entries
    polyblocks.Artifact.load(entries[0])
    # The kernel cache beside it: whole objects only, no temporary left.
    kernels = list((tmp_path / "kernels").iterdir())
    assert kernels and all(k.suffix == ".o" for k in kernels), kernels


def test_damaged_artifact_is_a_clear_error(tmp_path):
    art = polyblocks.compile(ADD_MUL, cache=False)
    path = tmp_path / "a.pbart"
    art.save(path)
    data = path.read_bytes()
    assert polyblocks.Artifact.from_bytes(data).entries == ["forward"]
    damaged = {
        "flipped.pbart": data[:200] + bytes([data[200] ^ 0x80]) + data[201:],
        "truncated.pbart": data[:-7],
        "version.pbart": data[:7] + b"1" + data[8:],
        "foreign.pbart": b"\x7fELF" + data[4:],
    }
    for name, bad in damaged.items():
        (tmp_path / name).write_bytes(bad)
        with pytest.raises(PolyBlocksError) as info:
            polyblocks.Artifact.load(tmp_path / name)
        assert info.value.code == StatusCode.INVALID_ARTIFACT
        assert name in info.value.message
        with pytest.raises(PolyBlocksError) as info:
            polyblocks.Artifact.from_bytes(bad)
        assert info.value.code == StatusCode.INVALID_ARTIFACT
        assert "<memory>" in info.value.message


def test_disk_cache_off(tmp_path, monkeypatch):
    monkeypatch.setenv("POLYBLOCKS_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("POLYBLOCKS_CACHE", "0")
    polyblocks.compile(_unique_module(777))
    assert list(tmp_path.iterdir()) == []


def test_disk_cache_hit_from_another_process(tmp_path):
    code = textwrap.dedent("""
        import json, sys, polyblocks
        from polyblocks import compiler
        text = sys.stdin.read()
        polyblocks.compile(text)
        print(json.dumps(compiler.stats))
    """)
    text = _unique_module(99)
    env = dict(os.environ, POLYBLOCKS_CACHE_DIR=str(tmp_path))
    runs = [subprocess.run([sys.executable, "-c", code], input=text, env=env,
                           capture_output=True, text=True, timeout=300) for _ in range(2)]
    for r in runs:
        assert r.returncode == 0, r.stderr
    first, second = (json.loads(r.stdout.strip().splitlines()[-1]) for r in runs)
    assert first["compiles"] == 1 and first["disk_hits"] == 0
    assert second["compiles"] == 0 and second["disk_hits"] == 1


_BIG_TEMPORARY = """
#map = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#col = affine_map<(i, j) -> (j)>
func.func @forward(%x: tensor<4096x4096xf32>) -> (tensor<4096xf32>, tensor<4096xf32>) {
  %e = tensor.empty() : tensor<4096x4096xf32>
  %t = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4096x4096xf32>) outs(%e : tensor<4096x4096xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<4096x4096xf32>
  %z = arith.constant 0.0 : f32
  %er = tensor.empty() : tensor<4096xf32>
  %fr = linalg.fill ins(%z : f32) outs(%er : tensor<4096xf32>) -> tensor<4096xf32>
  %rows = linalg.generic {indexing_maps = [#map, #row], iterator_types = ["parallel", "reduction"]}
      ins(%t : tensor<4096x4096xf32>) outs(%fr : tensor<4096xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4096xf32>
  %cols = linalg.generic {indexing_maps = [#map, #col], iterator_types = ["reduction", "parallel"]}
      ins(%t : tensor<4096x4096xf32>) outs(%fr : tensor<4096xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4096xf32>
  return %rows, %cols : tensor<4096xf32>, tensor<4096xf32>
}
"""


def test_temporaries_are_reused_across_calls():
    """A 64 MiB temporary (read by two reductions, so it is materialized):
    the artifact's buffer pool hands the same block back on the next call,
    so repeated calls take almost no page faults (malloc would mmap fresh,
    zeroed pages every time: 16384 faults per call)."""
    import resource
    exe = polyblocks.compile(_BIG_TEMPORARY, target="cpu-host").executable()
    x = torch.randn(4096, 4096)
    rows, cols = exe.run("forward", [x])
    torch.testing.assert_close(rows, (x * x).sum(1), rtol=1e-4, atol=1e-2)
    torch.testing.assert_close(cols, (x * x).sum(0), rtol=1e-4, atol=1e-2)
    outs = [torch.empty(4096), torch.empty(4096)]
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(5):
        exe.run("forward", [x], outputs=outs)
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
    assert faults < 2000, f"{faults} page faults in 5 calls"
    torch.testing.assert_close(outs[0], rows)


# ---------------------------------------------------------------------------
# The C API's edges
# ---------------------------------------------------------------------------

def _raw_buffers(specs, offset, rng):
    """ctypes buffers for `specs` (f32), each starting `offset` bytes past a
    64-byte boundary, filled with random values; (keep-alive, pointers,
    arrays)."""
    import ctypes
    import numpy as np
    keep, ptrs, arrays = [], [], []
    for spec in specs:
        n = int(np.prod(spec["shape"]))
        raw = ctypes.create_string_buffer(n * 4 + 128)
        base = ctypes.addressof(raw)
        ptr = base + (64 - base % 64) % 64 + offset
        view = np.frombuffer((ctypes.c_char * (n * 4)).from_address(ptr), dtype=np.float32)
        view[:] = rng.standard_normal(n).astype(np.float32)
        keep.append(raw)
        ptrs.append(ptr)
        arrays.append(view)
    return keep, ptrs, arrays


@pytest.mark.parametrize("offset", [1, 4, 36])
def test_cpu_buffers_need_no_alignment(offset):
    """The C API promises CPU executables any buffer address: inputs and
    outputs at 1, 4 and 36 bytes past a 64-byte boundary give the results of
    aligned buffers."""
    import ctypes
    import numpy as np
    art = polyblocks.compile(MATMUL, cache=False)
    exe = art.executable()
    entry = art.metadata["entries"][0]
    specs = entry["inputs"] + entry["outputs"]
    results = []
    for off in (0, offset):
        keep, ptrs, arrays = _raw_buffers(specs, off, np.random.default_rng(5))
        buffers = (ctypes.c_void_p * len(ptrs))(*ptrs)
        exe._handle.run(b"mm", buffers, len(ptrs), None)
        a, b, out = (np.array(x) for x in arrays)
        np.testing.assert_allclose(out.reshape(6, 3), a.reshape(6, 5) @ b.reshape(5, 3),
                                   rtol=1e-5, atol=1e-5)
        results.append(out)
    np.testing.assert_array_equal(results[0], results[1])


def test_c_api_run_errors():
    import ctypes
    import numpy as np
    art = polyblocks.compile(MATMUL, cache=False)
    exe = art.executable()
    entry = art.metadata["entries"][0]
    keep, ptrs, _ = _raw_buffers(entry["inputs"] + entry["outputs"], 0,
                                 np.random.default_rng(0))
    buffers = (ctypes.c_void_p * len(ptrs))(*ptrs)
    cases = [
        ((b"mm", buffers, 2, None), "takes 3 buffers"),
        ((b"nope", buffers, 3, None), "no entry named 'nope'"),
        ((b"mm", (ctypes.c_void_p * 3)(ptrs[0], None, ptrs[2]), 3, None), "buffer 1 of entry 'mm' is null"),
        ((b"mm", None, 3, None), "buffer 0 of entry 'mm' is null"),
        ((b"mm", buffers, 3, 1234), "CPU executables take no stream"),
    ]
    for args, message in cases:
        with pytest.raises(PolyBlocksError, match=message) as info:
            exe._handle.run(*args)
        assert info.value.code == StatusCode.INVALID_ARGUMENT
    lib = polyblocks._capi.library()
    out = ctypes.c_void_p()
    status = lib.pbArtifactLoadFromMemory(None, 10, ctypes.byref(out))
    assert lib.pbStatusGetCode(status) == StatusCode.INVALID_ARGUMENT
    lib.pbStatusDestroy(status)


def test_debug_log_shows_the_timing_report(caplog):
    with caplog.at_level("DEBUG", logger="polyblocks"):
        art = polyblocks.compile(_unique_module(4711), cache=False)
    reports = [r.getMessage() for r in caplog.records if "Execution time report" in r.getMessage()]
    assert len(reports) == 1
    assert "S5: code emission (LLVM)" in reports[0] and "Parse" in reports[0]
    assert "compile_timing" in art.metadata
