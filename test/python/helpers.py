"""Shared helpers of the PolyBlocks Python tests."""

import os
import sys

import torch

from polyblocks.torch.backend import _logged_fallbacks

# test/lib: artifact_file (the artifact file format in Python).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import artifact_file  # noqa: E402


def compile_strict(fn, **options):
    """torch.compile with the polyblocks backend in strict mode (nothing may
    fall back to eager), a full graph, static shapes."""
    torch._dynamo.reset()
    opts = {"strict": True}
    opts.update(options)
    return torch.compile(fn, backend="polyblocks", fullgraph=True, dynamic=False,
                         options=opts)


def reset_fallback_log():
    _logged_fallbacks.clear()


def exception_chain(exc):
    """The exception and its causes/contexts."""
    seen = []
    while exc is not None and exc not in seen:
        seen.append(exc)
        exc = exc.__cause__ or exc.__context__ or getattr(exc, "inner_exception", None)
    return seen
