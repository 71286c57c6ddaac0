"""Output paths of every kind (pb/Support/OutputFile.h, polyblocks._output):
a regular file is replaced through a temporary file and a rename, a device
or a FIFO is written in place and stays what it was, a symbolic link stays a
link and its target gets the output, a directory is an error, and a failure
leaves the given path as it was. Every test writes under its own temporary
directory (a device node it needs is made there with mknod), never to a path
of the machine.
"""

import os
import stat
import subprocess
import threading
from pathlib import Path

import numpy as np
import pytest
import torch

import polyblocks
from polyblocks._output import write_csv, write_output

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / "build" / "bin"
PROGRAM = """\
func.func @forward(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.negf %x : f32
    linalg.yield %y : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
"""
MAGIC = b"PBARTIF"


def _tool(name):
    tool = BIN / name
    if not tool.exists():
        pytest.skip(f"{name} not built")
    return str(tool)


@pytest.fixture
def program(tmp_path):
    path = tmp_path / "in.mlir"
    path.write_text(PROGRAM)
    return path


def _compile(program, out, *extra):
    return subprocess.run([_tool("pb-compile"), str(program), "--target=cpu-host", "-o",
                           str(out), *extra], capture_output=True, text=True, timeout=120)


class _FifoReader:
    """Reads everything written to the FIFO at ``path`` on a thread."""

    def __init__(self, path):
        self.path = path
        self.data = None
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        with open(self.path, "rb") as f:
            self.data = f.read()

    def join(self):
        self.thread.join(timeout=60)
        if self.thread.is_alive():
            # Nothing opened the FIFO for writing: release the reader.
            os.close(os.open(self.path, os.O_WRONLY | os.O_NONBLOCK))
            self.thread.join(timeout=10)
        return self.data


def _assert_artifact_bytes(data, tmp_path):
    assert data is not None and data.startswith(MAGIC), data[:16] if data else data
    copy = tmp_path / "received.pbart"
    copy.write_bytes(data)
    (out,) = polyblocks.Artifact.load(copy).run("forward", [torch.ones(4, 8)])
    assert torch.equal(out, -torch.ones(4, 8))


def _no_temporaries(directory):
    return [p.name for p in Path(directory).iterdir() if ".tmp" in p.name] == []


# --- pb-compile ------------------------------------------------------------


def test_compile_to_regular_file_keeps_permissions(program, tmp_path):
    out = tmp_path / "out.pbart"
    out.write_bytes(b"old")
    out.chmod(0o640)
    r = _compile(program, out)
    assert r.returncode == 0, r.stderr
    assert out.read_bytes().startswith(MAGIC)
    assert stat.S_IMODE(out.stat().st_mode) == 0o640
    assert _no_temporaries(tmp_path)


def test_compile_to_fifo(program, tmp_path):
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    reader = _FifoReader(fifo)
    r = _compile(program, fifo)
    data = reader.join()
    assert r.returncode == 0, r.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    _assert_artifact_bytes(data, tmp_path)
    assert _no_temporaries(tmp_path)


def test_compile_to_symlink(program, tmp_path):
    target = tmp_path / "real" / "out.pbart"
    target.parent.mkdir()
    target.write_bytes(b"old")
    link = tmp_path / "link.pbart"
    link.symlink_to(target)
    r = _compile(program, link)
    assert r.returncode == 0, r.stderr
    assert link.is_symlink() and os.readlink(link) == str(target)
    _assert_artifact_bytes(target.read_bytes(), tmp_path)
    assert _no_temporaries(tmp_path) and _no_temporaries(target.parent)


def test_compile_to_dangling_symlink(program, tmp_path):
    target = tmp_path / "made.pbart"
    link = tmp_path / "link.pbart"
    link.symlink_to(target)
    r = _compile(program, link)
    assert r.returncode == 0, r.stderr
    assert link.is_symlink()
    _assert_artifact_bytes(target.read_bytes(), tmp_path)


def test_compile_to_device_node(program, tmp_path):
    """A character device made here (a second null device): written to and
    still a device afterwards. Needs the right to make device nodes."""
    node = tmp_path / "null"
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("mknod needs CAP_MKNOD (run as root)")
    r = _compile(program, node)
    assert r.returncode == 0, r.stderr
    st = os.lstat(node)
    assert stat.S_ISCHR(st.st_mode) and st.st_rdev == os.makedev(1, 3)
    assert _no_temporaries(tmp_path)


def test_compile_to_dev_null(program):
    r = _compile(program, "/dev/null")
    assert r.returncode == 0, r.stderr
    assert stat.S_ISCHR(os.lstat("/dev/null").st_mode)


def test_compile_to_directory_is_an_error(program, tmp_path):
    out = tmp_path / "dir"
    out.mkdir()
    r = _compile(program, out)
    assert r.returncode == 1
    assert "it is a directory" in r.stderr
    assert out.is_dir()


def test_failed_compile_leaves_output(tmp_path):
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @forward(%a: tensor<4xf32>) -> tensor<4xf32> {\n")
    out = tmp_path / "out.pbart"
    out.write_bytes(b"previous artifact")
    link = tmp_path / "link.pbart"
    link.symlink_to(out)
    for path in (out, link):
        r = _compile(bad, path)
        assert r.returncode == 1
        assert out.read_bytes() == b"previous artifact"
    assert link.is_symlink()
    assert _no_temporaries(tmp_path)


# --- pb-opt ----------------------------------------------------------------


def _opt(program, *args):
    return subprocess.run([_tool("pb-opt"), str(program), *args], capture_output=True,
                          text=True, timeout=120)


def test_opt_to_fifo_and_symlink(program, tmp_path):
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    reader = _FifoReader(fifo)
    r = _opt(program, "-o", str(fifo))
    data = reader.join()
    assert r.returncode == 0, r.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert b"func.func @forward" in data

    target = tmp_path / "out.mlir"
    link = tmp_path / "link.mlir"
    link.symlink_to(target)
    r = _opt(program, "-o", str(link))
    assert r.returncode == 0, r.stderr
    assert link.is_symlink() and "func.func @forward" in target.read_text()
    assert _no_temporaries(tmp_path)


def test_opt_failure_leaves_output(tmp_path):
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @f( {\n")
    out = tmp_path / "out.mlir"
    out.write_text("kept\n")
    r = _opt(bad, "-o", str(out))
    assert r.returncode == 1
    assert out.read_text() == "kept\n"
    assert _no_temporaries(tmp_path)


def test_opt_stage_dumps_through_links(program, tmp_path):
    dumps = tmp_path / "dumps"
    dumps.mkdir()
    target = tmp_path / "s1.mlir"
    (dumps / "1-s1.mlir").symlink_to(target)
    r = _opt(program, "--target=cpu-host", "--pb-pipeline=s1", f"--pb-dump-after-stage={dumps}",
             "-o", str(tmp_path / "out.mlir"))
    assert r.returncode == 0, r.stderr
    assert (dumps / "1-s1.mlir").is_symlink()
    assert "func.func @forward" in target.read_text()


# --- pb-run and the C API ---------------------------------------------------


def test_run_saves_outputs_through_fifo_and_symlink(program, tmp_path):
    art = tmp_path / "a.pbart"
    assert _compile(program, art).returncode == 0
    outs = tmp_path / "outs"
    outs.mkdir()
    real = tmp_path / "real.npy"
    (outs / "forward.0.npy").symlink_to(real)
    r = subprocess.run([_tool("pb-run"), str(art), f"--save-outputs={outs}"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert (outs / "forward.0.npy").is_symlink()
    assert np.load(real).shape == (4, 8)

    (outs / "forward.0.npy").unlink()
    os.mkfifo(outs / "forward.0.npy")
    reader = _FifoReader(outs / "forward.0.npy")
    r = subprocess.run([_tool("pb-run"), str(art), f"--save-outputs={outs}"],
                       capture_output=True, text=True, timeout=120)
    data = reader.join()
    assert r.returncode == 0, r.stderr
    assert stat.S_ISFIFO(os.lstat(outs / "forward.0.npy").st_mode)
    assert data.startswith(b"\x93NUMPY")
    assert _no_temporaries(outs)


def test_capi_save_to_fifo(tmp_path):
    art = polyblocks.compile(PROGRAM, cache=False)
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    reader = _FifoReader(fifo)
    art.save(fifo)
    data = reader.join()
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    _assert_artifact_bytes(data, tmp_path)


def test_capi_save_to_directory_raises(tmp_path):
    art = polyblocks.compile(PROGRAM, cache=False)
    with pytest.raises(polyblocks.PolyBlocksError, match="it is a directory"):
        art.save(tmp_path)


# --- the Python writers (benchmark outputs) ----------------------------------


def test_write_output_rules(tmp_path):
    regular = tmp_path / "t.md"
    regular.write_text("old")
    regular.chmod(0o600)
    write_output(regular, "new\n")
    assert regular.read_text() == "new\n" and stat.S_IMODE(regular.stat().st_mode) == 0o600

    link = tmp_path / "link.csv"
    link.symlink_to(tmp_path / "target.csv")
    write_csv(link, ["a", "b"], [{"a": 1, "b": 2}, {"a": 3}])
    assert link.is_symlink()
    assert (tmp_path / "target.csv").read_text().splitlines() == ["a,b", "1,2", "3,"]

    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    reader = _FifoReader(fifo)
    write_output(fifo, b"bytes")
    assert reader.join() == b"bytes" and stat.S_ISFIFO(os.lstat(fifo).st_mode)

    with pytest.raises(IsADirectoryError):
        write_output(tmp_path, "x")
    assert _no_temporaries(tmp_path)
