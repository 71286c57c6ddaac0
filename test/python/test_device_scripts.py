"""scripts/device/check validates its arguments and the bundle's listing
(--dry-run), without a GPU. Building a real bundle (scripts/device/bundle)
compresses a few hundred MB and takes minutes: see docs/NVIDIA.md."""

import io
import subprocess
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHECK = ROOT / "scripts" / "device" / "check"

MEMBERS = ["polyblocks-device/env.sh", "polyblocks-device/lib/libPolyBlocks.so",
           "polyblocks-device/python/polyblocks/__init__.py",
           "polyblocks-device/python/polyblocks/bench/gpu.py",
           "polyblocks-device/test/python/test_cuda_runtime.py",
           "polyblocks-device/test/python/test_cuda_tensor_cores.py",
           "polyblocks-device/test/python/test_torch_cuda.py",
           "polyblocks-device/test/python/test_jax_cuda.py",
           "polyblocks-device/test/python/test_cuda_tile_ir.py"]


def _fake_bundle(path: Path, members) -> Path:
    with tarfile.open(path, "w:xz") as tar:
        for name in members:
            info = tarfile.TarInfo(name)
            info.size = 1
            tar.addfile(info, io.BytesIO(b"x"))
    return path


def _check(*args):
    return subprocess.run(["bash", str(CHECK), *args], capture_output=True,
                          text=True, timeout=60)


def test_dry_run_accepts_a_complete_bundle(tmp_path):
    bundle = _fake_bundle(tmp_path / "b.tar.xz", MEMBERS)
    r = _check("--bundle", str(bundle), "--out", str(tmp_path / "out"),
               "--python", "python3", "--dry-run")
    assert r.returncode == 0, r.stderr
    assert "is complete" in r.stdout
    assert "pytest" in r.stdout and "test_torch_cuda.py" in r.stdout
    assert "polyblocks.bench --suite gpu --budget 110" in r.stdout
    assert not (tmp_path / "out").exists()


def test_dry_run_rejects_an_incomplete_bundle(tmp_path):
    bundle = _fake_bundle(tmp_path / "b.tar.xz", MEMBERS[:1])
    r = _check("--bundle", str(bundle), "--python", "python3", "--dry-run")
    assert r.returncode == 2
    assert "lacks polyblocks-device/lib/libPolyBlocks.so" in r.stderr


@pytest.mark.parametrize("args, message", [
    (["--bundle", "/nonexistent.tar.xz"], "not found"),
    (["--timeout", "900"], "--timeout must be 1..420"),
    (["--timeout", "abc"], "--timeout must be 1..420"),
    (["--frobnicate"], "unknown argument"),
    (["--bundle"], "--bundle needs a value"),
    (["--timeout", "300", "--bench-budget", "100"], "must stay within 360 seconds"),
    (["--bench-budget", "x"], "--bench-budget must be a number"),
])
def test_bad_arguments(tmp_path, args, message):
    bundle = _fake_bundle(tmp_path / "b.tar.xz", MEMBERS)
    r = _check("--bundle", str(bundle), "--python", "python3", "--dry-run", *args)
    assert r.returncode == 2
    assert message in r.stderr


def test_not_a_tarball(tmp_path):
    bogus = tmp_path / "b.tar.xz"
    bogus.write_text("not a tarball")
    r = _check("--bundle", str(bogus), "--python", "python3", "--dry-run")
    assert r.returncode == 2
    assert "not a readable .tar.xz" in r.stderr
