"""The models benchmark's table says when a model ran (partly) in eager."""

import argparse
import logging

from polyblocks.bench.__main__ import _FallbackRecorder, report


def _row(fallbacks):
    return {"model": "m", "polyblocks_ms": 2.0, "eager_ms": 4.0,
            "polyblocks_compile_s": 1.0, "accurate": True,
            "eager_fallbacks": fallbacks}


def test_report_marks_eager_fallbacks():
    args = argparse.Namespace(baselines=["eager"])
    table = report([_row(0), _row(2)], args).splitlines()
    assert table[2].rstrip().endswith("| pass |")
    assert table[3].rstrip().endswith("| pass (2 in eager) |")


def test_recorder_counts_backend_fallback_warnings():
    log = logging.getLogger("polyblocks")
    recorder = _FallbackRecorder()
    log.addHandler(recorder)
    try:
        log.warning("polyblocks: a graph of %d nodes runs in eager: %s", 7, "x")
        log.warning("polyblocks: something else")
        log.info("polyblocks: runs in eager (info, not counted)")
    finally:
        log.removeHandler(recorder)
    assert recorder.count == 1
