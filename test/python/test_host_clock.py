"""cpu-host's figures at the running core's clock (core/include/pb/Target/HostClock.h).

A host-resolved target keeps its chip's rates per cycle and scales the
peaks and the core-scoped memory levels' bandwidths to the clock it
measures, or to PB_HOST_CLOCK_MHZ; the socket's levels keep the .td's.
"""

import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PB_OPT = ROOT / "build" / "bin" / "pb-opt"


def _print_target(name, clock=None):
    if not PB_OPT.exists():
        pytest.skip("pb-opt not built")
    env = dict(os.environ)
    env.pop("PB_HOST_CLOCK_MHZ", None)
    if clock is not None:
        env["PB_HOST_CLOCK_MHZ"] = str(clock)
    r = subprocess.run([str(PB_OPT), f"--print-target={name}"], capture_output=True,
                       text=True, env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout


def _figures(text):
    """(clock MHz, {type: peak}, {level: (scope, bandwidth)}) of the last chip printed."""
    chip = text[text.rfind("\ntarget ") + 1:]
    clock = int(re.search(r"clock: (\d+) MHz", chip).group(1))
    peaks = {m.group(1): int(m.group(3))
             for m in re.finditer(r"^ +(\w+) +(vector|matrix) (\d+) GFLOP/s$", chip, re.M)
             if m.group(2) == "vector"}
    levels = {m.group(1): (m.group(2), int(m.group(3)))
              for m in re.finditer(r"^ +(\S+) +kind=\w+ scope=(\w+) capacity=\d+ B "
                                   r"bandwidth=(\d+) GB/s", chip, re.M)}
    return clock, peaks, levels


def _resolved(text):
    m = re.search(r"resolves on this machine to: (\S+)", text)
    if not m or m.group(1) == "nothing":
        pytest.skip("cpu-host resolves to no chip on this CPU")
    return m.group(1)


def test_host_figures_scale_with_the_given_clock():
    chip = _resolved(_print_target("cpu-host"))
    stated_clock, stated_peaks, stated_levels = _figures(_print_target(chip))
    clock = 2 * stated_clock + 100
    text = _print_target("cpu-host", clock)
    assert (f"clock on this machine: {clock} MHz (PB_HOST_CLOCK_MHZ); peaks and the "
            f"bandwidths of core-scoped memory levels are {chip}'s .td figures x "
            f"{clock} / {stated_clock} MHz") in text
    host_clock, host_peaks, host_levels = _figures(text)
    assert host_clock == clock
    assert stated_peaks and host_peaks.keys() == stated_peaks.keys()
    for t, peak in stated_peaks.items():
        assert host_peaks[t] == round(peak * clock / stated_clock), t
    assert host_levels.keys() == stated_levels.keys()
    scaled = 0
    for name, (scope, bandwidth) in stated_levels.items():
        expected = round(bandwidth * clock / stated_clock) if scope == "Core" else bandwidth
        assert host_levels[name] == (scope, expected), name
        scaled += scope == "Core"
    assert scaled >= 2  # registers and the core's own caches


def test_host_clock_is_measured():
    text = _print_target("cpu-host")
    _resolved(text)
    m = re.search(r"clock on this machine: (\d+) MHz \((.*?)\)", text)
    assert m, text
    if m.group(2) != "measured":
        pytest.skip(f"clock not measured here: {m.group(2)}")
    # Rounded to 100 MHz, and a clock some x86-64 core runs at.
    mhz = int(m.group(1))
    assert mhz % 100 == 0 and 500 <= mhz <= 7000, mhz


def test_chips_named_directly_keep_the_td_figures():
    chip = _resolved(_print_target("cpu-host"))
    stated = _print_target(chip, clock=9900)
    assert "clock on this machine" not in stated
    assert f"clock: 9900 MHz" not in stated


@pytest.mark.parametrize("value", ["fast", "0", "-5", "3.5"])
def test_a_bad_clock_is_an_error(value, tmp_path):
    program = tmp_path / "f.mlir"
    program.write_text("func.func @f() { return }\n")
    env = dict(os.environ, PB_HOST_CLOCK_MHZ=value)
    r = subprocess.run([str(PB_OPT), str(program), "--target=cpu-host", "--pb-pipeline=s1"],
                       capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode != 0
    assert f"PB_HOST_CLOCK_MHZ='{value}' is not a clock in MHz" in r.stderr
