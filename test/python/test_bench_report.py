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


def test_tf_report_geomeans_per_batch_and_failures():
    from polyblocks.bench.tf_suite import report as tf_report

    def row(model, batch, ours, xla, accurate=True):
        return {"model": model, "batch": batch, "polyblocks_ms": ours, "xla_ms": xla,
                "graph_ms": 2 * xla, "eager_ms": 4 * xla, "polyblocks_compile_s": 1.0,
                "xla_compile_s": 1.0, "accurate": accurate, "max_rel_err": 0.5}

    rows = [row("a", 1, 1.0, 2.0), row("b", 1, 1.0, 8.0), row("a", 8, 2.0, 1.0, False),
            {"model": "b", "batch": 8, "error": "RuntimeError: boom"}]
    table = tf_report(rows).splitlines()
    geo1 = next(line for line in table if "geomean b1" in line)
    assert "**4.00x**" in geo1 and "**8.00x**" in geo1 and "**16.00x**" in geo1
    assert any("FAIL (5.00e-01)" in line for line in table)
    assert any("failed: RuntimeError: boom" in line for line in table)
    geo8 = next(line for line in table if "geomean b8" in line)
    assert "**0.50x**" in geo8
