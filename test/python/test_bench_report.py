"""The models benchmark's table says when a model ran (partly) in eager."""

import argparse
import logging

from polyblocks.bench.__main__ import _FallbackRecorder, _accurate_quantized, report


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


def test_train_report_speedups_memory_and_failures():
    from polyblocks.bench import train_suite
    args = argparse.Namespace(baselines=["eager", "inductor"], steps=5)
    rows = [
        {"model": "resnet18", "polyblocks_ms": 100.0, "eager_ms": 200.0, "inductor_ms": 50.0,
         "polyblocks_step_mib": 10.0, "eager_step_mib": 20.0, "inductor_step_mib": None,
         "polyblocks_loss": 1.25, "polyblocks_compile_s": 3.0, "accurate": True,
         "fallbacks": 0},
        {"model": "bert_base", "polyblocks_ms": 100.0, "eager_ms": 50.0, "inductor_ms": 100.0,
         "polyblocks_loss": 8.0, "polyblocks_compile_s": 9.0, "accurate": False,
         "fallbacks": 1, "fallback_ops": "aten.foo.default"},
        {"model": "gpt2_small", "error": "polyblocks: RuntimeError: boom"},
    ]
    lines = train_suite.report(rows, args).splitlines()
    assert lines[2].startswith("| resnet18 | 100.00 | 200.00 | 50.00 | 2.00x | 0.50x | 10 | 20 | — |")
    assert "FAIL (1 in eager: aten.foo.default)" in lines[3]
    assert "failed: polyblocks: RuntimeError: boom" in lines[4]
    # Geomeans over the rows that ran: sqrt(2 * 0.5) = 1, sqrt(0.5 * 1).
    assert "**1.00x**" in lines[5] and "**0.71x**" in lines[5]


def test_train_peak_step_memory():
    import torch
    from polyblocks.bench import train_suite

    def step():
        x = torch.ones(64 * 1024 * 1024 // 4)  # 64 MiB, touched
        return float(x.sum())
    mib = train_suite.peak_step_mib(step)
    if mib is None:
        import pytest
        pytest.skip("no /proc/self/clear_refs peak reset here")
    assert 60 <= mib < 400


def test_kernels_report_gflops_speedups_and_failures():
    from polyblocks.bench import kernel_suite
    args = argparse.Namespace(baselines=["eager", "inductor"], dtypes=["f32", "bf16"])
    rows = [
        {"case": "gemm512", "dtype": "bf16", "polyblocks_ms": 1.0, "polyblocks_gflops": 268.4,
         "eager_ms": 2.0, "eager_gflops": 134.2, "inductor_failed": "RuntimeError: boom",
         "polyblocks_error": 2e-3, "accurate": True},
        {"case": "gemm1024", "dtype": "bf16", "polyblocks_ms": 4.0, "polyblocks_gflops": 537.0,
         "eager_ms": 2.0, "eager_gflops": 1074.0, "polyblocks_error": 0.5,
         "accurate": False},
    ]
    lines = kernel_suite.report(rows, args).splitlines()
    assert lines[2].startswith("| gemm512 | bf16 | 268 | 134 | RuntimeError: boom | 2.00x | — |")
    assert lines[3].rstrip().endswith("| 5.0e-01 | FAIL |")
    # Geomeans per dtype over the cases both engines ran: sqrt(2 * 0.5).
    f32, bf16 = lines[4], lines[5]
    assert "| f32 |" in f32 and "x**" not in f32
    assert "| bf16 |" in bf16 and "**1.00x**" in bf16


def test_kernels_cases_and_flops():
    import torch
    from polyblocks.bench import kernel_suite
    fn, inputs, flops = kernel_suite.build("linear_128x768x3072", torch.bfloat16)
    assert [tuple(t.shape) for t in inputs] == [(128, 3072), (768, 3072)]
    assert flops == 2.0 * 128 * 768 * 3072
    assert tuple(fn(*inputs).shape) == (128, 768)
    fn, inputs, flops = kernel_suite.build("conv3x3_64", torch.float32)
    assert tuple(fn(*inputs).shape) == (8, 64, 56, 56)
    assert flops == 2.0 * 8 * 56 * 56 * 64 * 64 * 9


def test_kernels_int8_cases_are_the_gemms():
    import torch
    from polyblocks.bench import kernel_suite
    assert kernel_suite.applies("gemm512", "i8")
    assert not kernel_suite.applies("linear_128x768x768", "i8")
    fn, inputs, _ = kernel_suite.build("gemm512", torch.int8)
    assert all(t.dtype == torch.int8 for t in inputs)
    assert fn(*inputs).dtype == torch.int32


def test_int8_accuracy_is_judged_against_the_quantized_eager_error():
    import torch
    f32 = [torch.linspace(-1, 1, 64)]
    noise = torch.linspace(0, 1, 64).sin()
    eager = [f32[0] + 0.01 * noise]
    assert _accurate_quantized(f32, eager, [f32[0] + 0.0105 * noise])
    assert _accurate_quantized(f32, eager, [f32[0] - 0.005 * noise])
    assert not _accurate_quantized(f32, eager, [f32[0] + 0.02 * noise])
    assert not _accurate_quantized(f32, eager, [])
