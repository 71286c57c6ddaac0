"""pytest setup for the PolyBlocks Python tests (`make check` runs
`python3 -m pytest -q test/python`).

- The package is imported from the source tree (python/) unless installed.
- torch's OpInfo database needs `expecttest` (python/requirements.txt).
- Every test session gets a private, empty compile cache directory
  (POLYBLOCKS_CACHE_DIR), also seen by subprocesses.
"""

import os
import shutil
import sys
import tempfile
from pathlib import Path

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
