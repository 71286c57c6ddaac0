"""Data-parallel training: examples/train_ddp.py under torchrun with two
processes (gloo, CPU), a model compiled by PolyBlocks inside
DistributedDataParallel, checked against eager DDP from the same weights
(SGD with momentum: see the example's --optimizer)."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("model", ["small_cnn", "tiny_bert"])
def test_ddp_matches_eager_ddp(model):
    # tiny_bert's 2.8 MB of parameters fill more than DDP's first 1 MB
    # bucket: dynamo's DDP optimizer splits its graph into pieces, each
    # compiled, their backwards compiled lazily (which needs the pieces'
    # AOTAutograd compiles counted).
    env = dict(os.environ, OMP_NUM_THREADS="1")
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone",
           "--nproc-per-node=2", str(ROOT / "examples" / "train_ddp.py"), "--check",
           "--model", model, "--steps", "3", "--optimizer", "sgd"]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:]
    m = re.search(r"max parameter difference against eager DDP: (\S+)", out)
    assert m, out[-4000:]
    assert float(m.group(1)) <= 1e-4
    losses = re.search(model + r": 2 processes, 3 steps, losses (.*)", out).group(1)
    eager = re.search(r"eager DDP losses (.*)", out).group(1)
    assert losses == eager
