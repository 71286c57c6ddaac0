"""The explorer page in a real browser (headless Chromium driven by
Playwright): compile a program for two targets, click an op and see its
decisions, see the per-kernel table, and see a clear error for an invalid
program and for a compiler crash. scripts/setup installs Chromium (Debian's
package) and Playwright."""
from __future__ import annotations

import os
import shutil

import pytest
from playwright.sync_api import sync_playwright

from explore_helpers import CRASH_MARKER, INVALID, MATMUL, Server


def _chromium() -> str:
    path = os.environ.get("POLYBLOCKS_CHROMIUM") or shutil.which("chromium") \
        or shutil.which("chromium-browser")
    if not path:
        pytest.fail("no Chromium: scripts/setup installs Debian's chromium package "
                    "(or set POLYBLOCKS_CHROMIUM to a Chromium binary)")
    return path


@pytest.fixture(scope="module")
def page():
    server = Server()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=_chromium(),
                                    args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page()
        page.set_default_timeout(600_000)
        page.goto(server.url + "/")
        page.wait_for_selector("#target option[value='nvidia-sm90']", state="attached")
        yield page
        browser.close()
    server.close()


def _show_stage(page, tab: str, title: str):
    page.click(f"#stage-tabs button:text-is('{tab}')")
    page.wait_for_function(f"document.querySelector('#right-title').textContent.startsWith({title!r})")


def _compile(page, source: str, target: str):
    page.select_option("#kind", "source")
    page.fill("#source", source)
    page.select_option("#target", target)
    page.click("#compile")
    page.wait_for_function("document.querySelector('#status').textContent.startsWith('compiled') "
                           "|| document.querySelector('#status').textContent === 'failed'")


def test_cpu_host_page(page):
    _compile(page, MATMUL, "cpu-host")
    assert page.text_content("#status").startswith("compiled for cpu-host")
    assert page.is_hidden("#error")
    tabs = page.locator("#stage-tabs button").all_text_contents()
    assert tabs == ["input", "S1", "S2", "S3", "S4", "S5: x86 assembly"]
    # The per-kernel table: estimated and measured time of each call (one
    # or two kernels, by the host's vector width: test_explore.py checks
    # the count against S4's calls), one chart bar each.
    rows = page.locator("#kernels tbody tr")
    count = rows.count()
    assert count >= 1
    for i in range(count):
        assert float(rows.nth(i).locator(".estimated-us").text_content().replace(",", "")) > 0
        assert float(rows.nth(i).locator(".measured-us").text_content().replace(",", "")) > 0
    assert page.locator("#chart .bar-row").count() == count
    # Click the matmul's line in the input: its decisions and kernels.
    _show_stage(page, "input", "input")
    page.click(".line[data-line='8'] >> nth=-1")
    details = page.text_content("#op-details")
    assert "linalg.matmul" in details
    assert "register tile" in details
    assert "kernel call" in details and "measured" in details
    # The final code.
    _show_stage(page, "S5: x86 assembly", "x86 assembly")
    assert "<matmul_bias_relu>:" in page.text_content("#right")
    # A diff against S4 is offered (too large texts are said so).
    page.check("#show-diff")
    assert page.text_content("#right-title").startswith("x86 assembly")
    page.uncheck("#show-diff")
    assert "target cpu-host" in page.text_content("#target-facts")


def test_switching_target_recompiles(page):
    _compile(page, MATMUL, "cpu-host")
    page.select_option("#target", "nvidia-sm90")  # recompiles on change
    page.wait_for_function("document.querySelector('#status').textContent === "
                           "'compiled for nvidia-sm90'")
    _show_stage(page, "S5: PTX", "PTX")
    assert ".target sm_90a" in page.text_content("#right")
    rows = page.locator("#kernels tbody tr")
    assert rows.count() >= 1
    assert float(rows.first.locator(".estimated-us").text_content()) > 0
    assert rows.first.locator(".measured-us").text_content() == "–"
    assert "target nvidia-sm90" in page.text_content("#target-facts")


def test_invalid_program_shows_its_diagnostic(page):
    _compile(page, INVALID, "cpu-host")
    assert page.is_visible("#error")
    assert "line 2:" in page.text_content("#error")
    assert "undeclared SSA value" in page.text_content("#error")


def test_compiler_crash_shows_an_error_and_the_page_goes_on(page):
    _compile(page, MATMUL + CRASH_MARKER, "cpu-host")
    assert "crashed" in page.text_content("#error")
    _compile(page, MATMUL, "cpu-x86-64-v3")
    assert page.text_content("#status") == "compiled for cpu-x86-64-v3"
    assert page.is_hidden("#error")
