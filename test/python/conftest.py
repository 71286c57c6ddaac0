"""pytest setup for the PolyBlocks Python tests (`make check` runs
`python3 -m pytest -q test/python`).

- The package is imported from the source tree (python/) unless installed.
- torch's OpInfo database needs `expecttest` (python/requirements.txt).
- Every test session gets a private, empty compile cache directory
  (POLYBLOCKS_CACHE_DIR), also seen by subprocesses.
"""

import os
import shutil
import stat
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PYTHON_DIR = ROOT / "python"

if str(PYTHON_DIR) not in sys.path:
    sys.path.insert(0, str(PYTHON_DIR))

_CACHE_DIR = tempfile.mkdtemp(prefix="polyblocks-test-cache-")
os.environ["POLYBLOCKS_CACHE_DIR"] = _CACHE_DIR
os.environ.pop("POLYBLOCKS_CACHE", None)
# Subprocesses import the package from the source tree too.
os.environ["PYTHONPATH"] = os.pathsep.join(
    [str(PYTHON_DIR)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])


def pytest_sessionfinish(session, exitstatus):
    shutil.rmtree(_CACHE_DIR, ignore_errors=True)


@pytest.fixture(scope="session", autouse=True)
def dev_null_stays_a_device():
    """No test (nor the tools it runs) may replace /dev/null: once the suite
    has run, it must still be the null character device."""
    before = os.lstat("/dev/null")
    yield
    after = os.lstat("/dev/null")
    assert stat.S_ISCHR(after.st_mode), "/dev/null is no longer a character device"
    assert after.st_rdev == before.st_rdev, "/dev/null is another device now"
