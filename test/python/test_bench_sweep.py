"""The architecture sweep (python -m polyblocks.bench --suite sweep): its
sampling, classes, summary, report files, PT2 lists, and end-to-end runs in
child processes (a crash of one model does not stop the sweep)."""

import argparse
import csv
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from polyblocks.bench import sweep

ROOT = Path(__file__).resolve().parents[2]
LIBRARY = ROOT / "build" / "lib" / "libPolyBlocks.so"

LISTS = {"timm": [f"t{i:03d}" for i in range(200)],
         "torchvision": ["resnet18", "squeezenet1_0", "vgg11"],
         "hf": ["bert", "gpt2", "t5"],
         "pt2": ["AlbertForMaskedLM", "resnet18_pt2"]}


def lister(source):
    return list(reversed(LISTS[source]))  # select() sorts it


# --- sampling ----------------------------------------------------------------

def test_sampling_is_deterministic_per_seed_and_differs_across_seeds():
    a = sweep.select(["timm", "hf"], sample=5, seed=7, lister=lister)
    b = sweep.select(["timm", "hf"], sample=5, seed=7, lister=lister)
    c = sweep.select(["timm", "hf"], sample=5, seed=8, lister=lister)
    assert a == b
    assert a != c
    assert len(a) == 5 + 3  # hf has only 3 candidates: all of them
    assert all(k.startswith("timm:t") for k in a[:5])
    assert sorted(a[5:]) == ["hf:bert", "hf:gpt2", "hf:t5"]
    assert len(set(a)) == len(a)


def test_sampling_draws_from_the_sorted_list():
    import random
    names = sorted(LISTS["timm"])
    expected = ["timm:" + n for n in random.Random(3).sample(names, 4)]
    assert sweep.select(["timm"], sample=4, seed=3, lister=lister) == expected


def test_models_picks_exactly_those():
    keys = sweep.select(["torchvision", "hf"], models=["vgg11", "hf:t5", "resnet18"],
                        lister=lister)
    assert keys == ["torchvision:vgg11", "hf:t5", "torchvision:resnet18"]


def test_bad_selections_are_clear_errors():
    with pytest.raises(ValueError, match="unknown source 'nope'"):
        sweep.select(["nope"], sample=1, lister=lister)
    with pytest.raises(ValueError, match="at least 1"):
        sweep.select(["timm"], sample=0, lister=lister)
    with pytest.raises(ValueError, match="'alexnet' is not a model of torchvision"):
        sweep.select(["torchvision"], models=["alexnet"], lister=lister)
    with pytest.raises(ValueError, match="not a model of hf"):
        sweep.select(["hf"], models=["hf:llama"], lister=lister)
    with pytest.raises(ValueError, match="give --sample N or --models"):
        sweep.select(["timm"], lister=lister)
    # The whole fixed list without --sample.
    assert sweep.select(["pt2"], lister=lister) == ["pt2:AlbertForMaskedLM",
                                                    "pt2:resnet18_pt2"]


def test_command_line_rejects_bad_arguments(capsys):
    for argv, message in [(["--source", "nope", "--sample", "1"], "unknown source"),
                          (["--source", "timm", "--sample", "0"], "at least 1"),
                          (["--baselines", "eager,tvm", "--sample", "1"], "unknown baseline"),
                          (["--target", "nvidia-sm90", "--sample", "1"], "only CPU targets")]:
        with pytest.raises(SystemExit) as e:
            sweep.parse_args(["--suite", "sweep"] + argv)
        assert e.value.code == 2
        assert message in capsys.readouterr().err


def test_real_torchvision_list_sample_is_deterministic():
    pytest.importorskip("torchvision")
    a = sweep.select(["torchvision"], sample=3, seed=1)
    assert a == sweep.select(["torchvision"], sample=3, seed=1)
    assert all(k.split(":")[1] in sweep.candidates("torchvision") for k in a)
    with pytest.raises(ValueError, match="not a model of torchvision"):
        sweep.select(["torchvision"], models=["no_such_net"])


# --- classes and summary -----------------------------------------------------

def _measured(model, pb=10.0, eager=20.0, inductor=15.0, accurate=True, ops=()):
    return {"key": f"torchvision:{model}", "source": "torchvision", "model": model,
            "polyblocks_ms": pb, "eager_ms": eager, "inductor_ms": inductor,
            "polyblocks_compile_s": 1.0, "accurate": accurate, "fallback_ops": list(ops),
            "eager_fallbacks": len(ops)}


def test_classify_synthetic_rows():
    assert sweep.classify(_measured("a")) == ["ok"]
    assert sweep.classify({"key": "x:a", "crash": "SIGSEGV during polyblocks compile"}) \
        == ["crash"]
    assert sweep.classify({"key": "x:a", "timeout": "no result after 5 s"}) == ["timeout"]
    assert sweep.classify({"key": "x:a", "error": "BackendCompilerFailed: x"}) == ["error"]
    assert sweep.classify({"key": "x:a", "skipped": "needs download"}) == ["skipped"]
    assert sweep.classify(_measured("a", accurate=False)) == ["wrong"]
    assert sweep.classify(_measured("a", ops=["aten.foo.default"])) == ["fallback"]
    assert sweep.classify(_measured("a", pb=30.0)) == ["slower-than-eager",
                                                        "slower-than-inductor"]
    assert sweep.classify(_measured("a", pb=17.0)) == ["slower-than-inductor"]
    # Several flags, worst first.
    assert sweep.classify(_measured("a", pb=30.0, accurate=False, ops=["aten.x"])) == \
        ["wrong", "fallback", "slower-than-eager", "slower-than-inductor"]


def test_finish_row_sets_class_flags_and_speedups():
    row = sweep.finish_row(_measured("a", pb=17.0, ops=["aten.sort.default"]))
    assert row["class"] == "fallback"
    assert row["flags"] == "fallback,slower-than-inductor"
    assert math.isclose(row["speedup_vs_eager"], 20.0 / 17.0)
    assert math.isclose(row["speedup_vs_inductor"], 15.0 / 17.0)


def test_parse_child_crash_timeout_and_result():
    out = "noise\nSWEEP-STAGE build\nSWEEP-STAGE polyblocks compile\n"
    crash = sweep.parse_child("timm:m", -11, out, "Fatal Python error\n")
    assert crash["crash"].startswith("SIGSEGV during polyblocks compile")
    assert sweep.classify(crash) == ["crash"]
    status = sweep.parse_child("timm:m", 1, out, "Traceback...\nKeyError: 'x'\n")
    assert status["crash"] == "exit status 1 during polyblocks compile: KeyError: 'x'"
    timeout = sweep.parse_child("timm:m", -9, out, "", timed_out=True, timeout=60)
    assert timeout["timeout"] == "no result after 60 s during polyblocks compile"
    ok = sweep.parse_child("timm:m", 0, out + 'SWEEP-RESULT {"key": "timm:m", '
                           '"polyblocks_ms": 1.0, "eager_ms": 2.0, "accurate": true}\n', "")
    assert sweep.classify(ok) == ["ok"]
    skipped = sweep.parse_child("timm:m", 0, 'SWEEP-RESULT {"key": "timm:m", '
                                '"skipped": "needs download"}\n', "")
    assert sweep.classify(skipped) == ["skipped"]


def _rows():
    return [sweep.finish_row(r) for r in [
        _measured("fast", pb=10.0, eager=40.0, inductor=20.0),        # 4x, 2x
        _measured("even", pb=10.0, eager=10.0, inductor=10.0),        # 1x, 1x
        _measured("slow", pb=20.0, eager=10.0, inductor=10.0),        # 0.5x
        _measured("bad", pb=10.0, eager=40.0, inductor=40.0, accurate=False),
        _measured("partial", pb=10.0, eager=20.0, inductor=20.0,  # 2x, 2x
                  ops=["aten.sort.default"]),
        {"key": "hf:crashy", "source": "hf", "model": "crashy",
         "crash": "SIGSEGV during polyblocks compile"},
        {"key": "hf:big", "source": "hf", "model": "big", "skipped": "too large"},
    ]]


def test_summary_counts_and_geomean():
    s = sweep.summarize(_rows())
    assert s["counts"]["ok"] == 2
    assert s["counts"]["slower-than-eager"] == 1
    assert s["counts"]["wrong"] == 1
    assert s["counts"]["fallback"] == 1
    assert s["counts"]["crash"] == 1
    assert s["counts"]["skipped"] == 1
    assert s["models"] == 7 and s["measured"] == 6
    # Whole: fast, even, slow, bad (compiled, no fallback); not partial, crashy.
    assert s["whole"] == 4
    assert math.isclose(s["whole_pct"], 100.0 * 4 / 6)
    # Accurate: fast 4x, even 1x, slow 0.5x, partial 2x (not bad).
    assert s["accurate"] == 4
    assert math.isclose(s["geomean"]["eager"], (4 * 1 * 0.5 * 2) ** 0.25)
    assert math.isclose(s["geomean"]["inductor"], (2 * 1 * 0.5 * 2) ** 0.25)
    assert s["slowest"][0] == ("torchvision:slow", 0.5)


def test_fallback_recorder_keeps_what_fell_back():
    import logging
    log = logging.getLogger("polyblocks")
    from polyblocks.bench.__main__ import _FallbackRecorder
    recorder = _FallbackRecorder()
    log.addHandler(recorder)
    try:
        log.warning("polyblocks: %s runs in eager (not compiled): %s",
                    "aten.sort.default", "no emitter")
        log.warning("polyblocks: a graph of %d nodes runs in eager: %s", 7, "x")
        log.warning("polyblocks: %s runs in eager (not compiled): %s",
                    "aten.sort.default", "again")
        log.warning("polyblocks: something else")
    finally:
        log.removeHandler(recorder)
    assert recorder.count == 3
    assert recorder.ops == ["aten.sort.default", "a graph of 7 nodes"]


# --- report files ------------------------------------------------------------

def test_report_writers_produce_md_and_csv(tmp_path):
    _, opts = sweep.parse_args(["--suite", "sweep", "--source", "torchvision,hf",
                                "--sample", "2", "--seed", "5"])
    rows = _rows()
    written = sweep.write_report(rows, opts, [r["key"] for r in rows], tmp_path,
                                 plot=False)
    md = written["md"].read_text()
    assert "seed 5" in md and "sources: torchvision,hf" in md
    assert "| torchvision:slow | **slower-than-eager** |" in md
    assert "| hf:crashy | **crash** |" in md
    assert "aten.sort.default" in md
    assert "compiled whole (no error, no fallback): 4 of 6 measured (67%)" in md
    with open(written["csv"], newline="") as f:
        table = list(csv.DictReader(f))
    assert [r["key"] for r in table] == [r["key"] for r in rows]
    by_key = {r["key"]: r for r in table}
    assert by_key["torchvision:partial"]["class"] == "fallback"
    assert by_key["torchvision:partial"]["fallback_ops"] == "aten.sort.default"
    assert by_key["hf:big"]["class"] == "skipped"
    assert by_key["hf:big"]["detail"] == "too large"
    assert by_key["torchvision:bad"]["flags"] == "wrong"
    assert "speedup_vs_inductor" in table[0]


def test_skipped_models_of_a_sample_are_replaced_from_the_same_source(tmp_path):
    _, opts = sweep.parse_args(["--suite", "sweep", "--source", "timm,hf",
                                "--sample", "2", "--seed", "3"])
    keys = sweep.select(["timm", "hf"], 2, 3, lister=lister)
    spares = sweep.replacements(["timm", "hf"], keys, 3, lister=lister)
    # The spares are the other candidates, deterministic per seed.
    assert not set(spares["timm"]) & set(keys)
    assert sorted(spares["hf"] + [k for k in keys if k.startswith("hf:")]) == \
        ["hf:bert", "hf:gpt2", "hf:t5"]
    assert spares == sweep.replacements(["timm", "hf"], keys, 3, lister=lister)
    # Every hf model is skipped and the first timm one too: the timm one is
    # replaced once; hf runs out of spares after its one other candidate.
    first_timm = keys[0]
    ran = []

    def run(key):
        ran.append(key)
        if key.startswith("hf:") or key == first_timm:
            return {"key": key, "skipped": "too large", "wall_s": 0.0}
        return {"key": key, "polyblocks_ms": 1.0, "eager_ms": 2.0, "inductor_ms": 2.0,
                "accurate": True, "wall_s": 0.0}

    rows = sweep.run_all(keys, opts, tmp_path, spares, run=run)
    assert [r["key"] for r in rows] == ran
    timm_rows = [r for r in rows if r["key"].startswith("timm:")]
    assert [r["class"] for r in timm_rows] == ["skipped", "ok", "ok"]
    assert timm_rows[2]["key"] == spares_before_run(keys)["timm"][0]
    assert len([r for r in rows if r["key"].startswith("hf:")]) == 3
    # --max-draws caps the draws per source at that many times the sample.
    _, capped = sweep.parse_args(["--suite", "sweep", "--source", "timm,hf", "--sample",
                                  "2", "--seed", "3", "--max-draws", "1"])
    ran.clear()
    rows = sweep.run_all(keys, capped, tmp_path, sweep.replacements(
        ["timm", "hf"], keys, 3, lister=lister), run=run)
    assert [r["key"] for r in rows] == keys


def spares_before_run(keys):
    return sweep.replacements(["timm", "hf"], keys, 3, lister=lister)


# --- the PT2 lists -----------------------------------------------------------

def test_pt2_list_parser_drops_batch_sizes_and_comments():
    text = "# origin\n\nresnet50 128\nBertForMaskedLM,32\nmistralai/Mistral-7B, 8\n"
    assert sweep.parse_pt2_list(text) == ["resnet50", "BertForMaskedLM",
                                          "mistralai/Mistral-7B"]


@pytest.mark.skipif(not all((sweep.PT2_DIR / f).is_file() for f in sweep.PT2_FILES.values()),
                    reason="the PT2 lists are not vendored")
def test_vendored_pt2_lists_parse():
    lists = sweep.pt2_lists()
    assert set(lists) == {"timm", "hf"}
    for names in lists.values():
        assert names
        for n in names:
            assert n and "," not in n and " " not in n and not n.isdigit()
    assert "inception_v3" in lists["timm"]
    assert "BertForMaskedLM" in lists["hf"]


# --- end to end, in child processes -------------------------------------------

def _run_sweep(tmp_path, models, env=None, timeout=300):
    pytest.importorskip("torchvision")
    cmd = [sys.executable, "-m", "polyblocks.bench", "--suite", "sweep",
           "--source", "torchvision", "--models", models, "--baselines", "eager",
           "--runs", "2", "--warmup", "1", "--batch", "1", "--out", str(tmp_path)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ, **(env or {})))
    assert proc.returncode == 0, proc.stderr[-3000:]
    with open(tmp_path / "sweep.csv", newline="") as f:
        return {r["key"]: r for r in csv.DictReader(f)}, proc


def test_a_crashing_child_is_classified_and_the_sweep_goes_on(tmp_path):
    # The hook aborts both children before anything is compiled (no library
    # needed): the second model still runs after the first one crashed.
    rows, _ = _run_sweep(tmp_path, "squeezenet1_1,squeezenet1_0",
                         env={sweep.TEST_CRASH_ENV: "squeezenet1_1,squeezenet1_0"})
    assert list(rows) == ["torchvision:squeezenet1_1", "torchvision:squeezenet1_0"]
    for row in rows.values():
        assert row["class"] == "crash"
        assert row["crash"].startswith("SIGABRT during polyblocks compile")
    assert (tmp_path / "sweep.md").is_file()
    assert (tmp_path / "logs" / "torchvision_squeezenet1_0.log").is_file()


@pytest.mark.skipif(not LIBRARY.exists(), reason="build/lib/libPolyBlocks.so not built")
def test_end_to_end_small_model(tmp_path):
    rows, proc = _run_sweep(tmp_path, "squeezenet1_0", timeout=180)
    row = rows["torchvision:squeezenet1_0"]
    assert row["class"] in sweep.CLASSES
    assert row["class"] not in ("crash", "timeout", "skipped"), row["detail"]
    assert float(row["eager_ms"]) > 0
    assert row["accurate"] in ("True", "False")
    assert "| torchvision:squeezenet1_0 |" in (tmp_path / "sweep.md").read_text()
