"""Deliberately broken kernels are caught by the kernel emulator.

Each test compiles a program for an NVIDIA target, checks that its
artifact runs clean in the emulator and matches PyTorch on the CPU, then
edits one kernel module's "emulation_mlir" in the payload (the artifact
file split and joined again by test/lib/artifact_file.py, which recompute
the digest) and runs the edited artifact:

- the f16 matmul's tensor-core kernel without the barrier that follows
  the K loop's first cp.async wait: a shared-memory race, named with the
  kernel, block and thread;
- without that wait: a cp.async destination read before its wait;
- on sm90's wgmma kernel, the B matrix descriptor with another swizzle
  mode: wrong values (B K-major) or a read of a tile still in flight (B
  MN-major);
- an elementwise kernel whose index or thread-loop bound passes its
  buffer: an access out of bounds.

- on sm90's wgmma kernel, no fence.proxy.async before wgmma reads what
  cp.async wrote, or no wgmma.wait_group (a stage overwritten while a
  wgmma reads it, or accumulators read before the wait);
- a softmax whose barrier only thread 0 reaches: a barrier not reached by
  every thread of the block."""

import json
import re

import pytest
import torch

import polyblocks
from polyblocks._capi import PolyBlocksError, StatusCode
from polyblocks.bench.gpu import matmul_text

from helpers import ADD, artifact_file

# The kernel, block and thread every failed check names.
THREAD = r"block \(\d+, \d+, \d+\), thread \(\d+, \d+, \d+\)"

MATMUL_BUILDS = [
    pytest.param("nvidia-sm80", None, id="sm80-mma.sync"),
    pytest.param("nvidia-sm90", None, id="sm90-wgmma"),
    pytest.param("nvidia-sm90", {"warpgroup_units": False}, id="sm90-mma.sync"),
]


class Payload:
    """An artifact's metadata and payload, with one kernel module (the one
    whose emulation IR contains ``marker``) to edit."""

    def __init__(self, text, target, tmp_path, marker, options=None):
        path = tmp_path / "original.pbart"
        polyblocks.compile(text, target=target, options=options, cache=False).save(path)
        self.metadata, payload = artifact_file.split(path.read_bytes())
        self.payload = json.loads(payload)
        modules = [m for m in self.payload["modules"] if marker in m["emulation_mlir"]]
        assert len(modules) == 1, f"{len(modules)} modules contain {marker!r}"
        self.module = modules[0]
        self.text = self.module["emulation_mlir"]
        kernels = re.findall(r"gpu\.func @(\w+)\(", self.text)
        assert len(kernels) == 1
        # How the emulator names the kernel in its errors.
        self.kernel = f"kernel '{kernels[0]}' of module '{self.module['name']}'"

    def artifact(self, text=None):
        """The artifact with the module's text replaced by ``text``."""
        self.module["emulation_mlir"] = self.text if text is None else text
        return polyblocks.Artifact.from_bytes(artifact_file.join(self.metadata, self.payload))


def _sub_once(pattern, repl, text, flags=re.M):
    """``text`` with the one match of ``pattern`` replaced."""
    new, count = re.subn(pattern, repl, text, flags=flags)
    assert count == 1, f"{count} matches of {pattern!r}"
    return new


def _run_error(art, entry, inputs):
    with pytest.raises(PolyBlocksError) as info:
        art.executable(emulate=True).run(entry, inputs)
    assert info.value.code == StatusCode.RUNTIME_ERROR
    return info.value.message


def _matmul_inputs(m, n, k, b_transposed=False):
    torch.manual_seed(0)
    a = torch.rand(m, k, dtype=torch.float16) * 2 - 1
    b = torch.rand(*((n, k) if b_transposed else (k, n)), dtype=torch.float16) * 2 - 1
    expected = a.double() @ (b.double().t() if b_transposed else b.double())
    return [a, b], expected.half()


def _check_matmul(art, inputs, expected):
    (c,) = art.executable(emulate=True).run("mm", inputs)
    # f32 sums rounded once to f16.
    torch.testing.assert_close(c, expected, rtol=2e-3, atol=2e-3)


# The K loop's head: the cp.async wait for the tile it reads, on sm90 the
# proxy fence for wgmma, and the barrier after which every thread reads
# the tile the others copied.
K_LOOP_HEAD = (r"^(?P<indent> *)(?:%[\w:]+ = )?scf\.for [^\n]*\{\n"
               r"(?P<wait>(?P=indent)  nvgpu\.device_async_wait [^\n]*\n)"
               r"(?P<fence>(?P=indent)  nvvm\.fence\.proxy [^\n]*\n)?"
               r"(?P<barrier>(?P=indent)  gpu\.barrier\n)")


def _edit_k_loop_head(text, drop):
    """``text`` without the named line (wait or barrier) of the K loop's
    head."""
    heads = list(re.finditer(K_LOOP_HEAD, text, re.M))
    assert len(heads) == 1, f"{len(heads)} K loops with a cp.async wait"
    head = heads[0]
    return text[:head.start(drop)] + text[head.end(drop):]


@pytest.mark.parametrize("target,options", MATMUL_BUILDS)
def test_missing_barrier_after_cp_async_wait_is_a_race(tmp_path, target, options):
    inputs, expected = _matmul_inputs(128, 128, 64)
    kernel = Payload(matmul_text(128, 128, 64, torch.float16), target, tmp_path,
                     "nvgpu.device_async_wait", options)
    _check_matmul(kernel.artifact(), inputs, expected)
    message = _run_error(kernel.artifact(_edit_k_loop_head(kernel.text, "barrier")),
                         "mm", inputs)
    assert "shared-memory race" in message
    assert re.search(re.escape(kernel.kernel) + ", " + THREAD + ": shared-memory race: ",
                     message), message
    assert "with no barrier between them" in message


@pytest.mark.parametrize("target,options", MATMUL_BUILDS)
def test_missing_cp_async_wait_is_a_read_of_a_copy_in_flight(tmp_path, target, options):
    inputs, expected = _matmul_inputs(128, 128, 64)
    kernel = Payload(matmul_text(128, 128, 64, torch.float16), target, tmp_path,
                     "nvgpu.device_async_wait", options)
    _check_matmul(kernel.artifact(), inputs, expected)
    message = _run_error(kernel.artifact(_edit_k_loop_head(kernel.text, "wait")),
                         "mm", inputs)
    assert re.search(re.escape(kernel.kernel) + ", " + THREAD +
                     r": [\w. ]+ reads shared address 0x[0-9a-f]+, the destination of a "
                     r"cp\.async of thread \d+ not waited for \(cp\.async\.wait_group\) "
                     r"before", message), message


def _with_b_swizzle(text, mode):
    """``text`` with the swizzle mode (bits 62-63) of the first wgmma's B
    descriptor set to ``mode``: the constant OR-ed into it (asserted
    128-byte, 1) is replaced, for B only, by one with the other mode (A's
    descriptor may OR the same constant)."""
    wgmma = re.findall(r"nvvm\.wgmma\.mma_async (%\w+), (%\w+),", text)
    assert wgmma, "no wgmma"
    b_desc = wgmma[0][1]
    ori = r"^(?P<indent> *)(?P<def>%s = arith\.ori %%\w+, )(?P<name>%%\w+)( : i64)$" % (
        re.escape(b_desc))
    matches = list(re.finditer(ori, text, re.M))
    assert len(matches) == 1, f"{b_desc} is not one arith.ori with a constant"
    name = matches[0].group("name")
    (value,) = [int(v) for v in re.findall(
        r"^ *%s = arith\.constant (-?\d+) : i64$" % re.escape(name), text, re.M)]
    value &= (1 << 64) - 1
    assert value >> 62 == 1, f"B descriptor swizzle mode {value >> 62}, not 128-byte"
    value = (value & ~(3 << 62)) | (mode << 62)
    if value >= 1 << 63:
        value -= 1 << 64
    return _sub_once(ori, r"\g<indent>%%b_swizzle = arith.constant %d : i64\n"
                     r"\g<indent>\g<def>%%b_swizzle\4" % value, text)


# Swizzle modes of a wgmma matrix descriptor other than 128-byte (1): none
# (0), 64-byte (2) and 32-byte (3).
OTHER_SWIZZLES = [pytest.param(0, id="none"), pytest.param(2, id="64B"),
                  pytest.param(3, id="32B")]


@pytest.mark.parametrize("mode", OTHER_SWIZZLES)
def test_wrong_b_swizzle_gives_wrong_values(tmp_path, mode):
    # x @ W^T: B K-major, its 128-byte rows of K swizzled as the copies
    # wrote them. Read with another swizzle, the products pair the wrong
    # elements.
    inputs, expected = _matmul_inputs(128, 128, 64, b_transposed=True)
    kernel = Payload(matmul_text(128, 128, 64, torch.float16, 0, True), "nvidia-sm90",
                     tmp_path, "nvvm.wgmma.mma_async")
    assert "n = 128" in kernel.text
    _check_matmul(kernel.artifact(), inputs, expected)
    (c,) = kernel.artifact(_with_b_swizzle(kernel.text, mode)).executable(
        emulate=True).run("mm", inputs)
    assert not torch.allclose(c.double(), expected.double(), rtol=2e-3, atol=2e-3)
    assert (c.double() - expected.double()).abs().max() > 0.5


@pytest.mark.parametrize("mode", OTHER_SWIZZLES)
def test_wrong_b_swizzle_reads_past_the_tile(tmp_path, mode):
    # x @ W: B MN-major, two 64-column swizzle atoms 8 KiB apart (the
    # descriptor's leading byte offset). With narrower or no swizzle the
    # same offset steps past the tile, into the next pipeline stage, whose
    # cp.async is still in flight.
    inputs, expected = _matmul_inputs(128, 128, 64)
    kernel = Payload(matmul_text(128, 128, 64, torch.float16), "nvidia-sm90", tmp_path,
                     "nvvm.wgmma.mma_async")
    _check_matmul(kernel.artifact(), inputs, expected)
    message = _run_error(kernel.artifact(_with_b_swizzle(kernel.text, mode)), "mm", inputs)
    assert re.search(re.escape(kernel.kernel) + ", " + THREAD +
                     r": wgmma\.mma_async operand reads shared address 0x[0-9a-f]+, the "
                     r"destination of a cp\.async", message), message


@pytest.mark.parametrize("target", ["nvidia-sm80", "nvidia-sm90"])
@pytest.mark.parametrize("edit", ["index", "bound"])
def test_access_past_the_buffer_is_out_of_bounds(tmp_path, target, edit):
    torch.manual_seed(0)
    a, b = torch.randn(64, 128), torch.randn(64, 128)
    kernel = Payload(ADD, target, tmp_path, "vector.load")
    (c,) = kernel.artifact().executable(emulate=True).run("add", [a, b])
    torch.testing.assert_close(c, a + b, rtol=0, atol=0)
    if edit == "index":
        # The row index of A's load plus A's row count.
        text = _sub_once(
            r"^( *)(%\w+ = vector\.load %arg0\[)(%\w+)(, %\w+\] [^\n]*: memref<64x128xf32>)",
            r"\1%oob_rows = arith.constant 64 : index\n"
            r"\1%oob_row = arith.addi \3, %oob_rows : index\n"
            r"\1\2%oob_row\4", kernel.text)
        where = r"index \[64, \d+\] \(4 elements\)"
    else:
        # One more iteration of the threads' loop over a tile's vectors.
        text = _sub_once(
            r"^( *)(scf\.for %\w+ = %thread_id_x to )(%\w+)( step %\w+ \{)$",
            r"\1%oob_one = arith.constant 1 : index\n"
            r"\1%oob_bound = arith.addi \3, %oob_one : index\n"
            r"\1\2%oob_bound\4", kernel.text)
        where = r"index \[\d+, 128\] \(4 elements\)"
    message = _run_error(kernel.artifact(text), "add", [a, b])
    assert re.search(re.escape(kernel.kernel) + ", " + THREAD +
                     r": vector\.(load|store) out of bounds: " + where +
                     r" of a 64x128 memref in kernel argument \d", message), message


# wgmma reads shared memory through the async proxy: cp.async's writes must
# be fenced (fence.proxy.async) by their writer before.
def test_missing_proxy_fence_before_wgmma(tmp_path):
    inputs, expected = _matmul_inputs(128, 128, 256)
    kernel = Payload(matmul_text(128, 128, 256, torch.float16), "nvidia-sm90", tmp_path,
                     "nvvm.wgmma.mma_async")
    _check_matmul(kernel.artifact(), inputs, expected)
    message = _run_error(kernel.artifact(_edit_k_loop_head(kernel.text, "fence")),
                         "mm", inputs)
    assert re.search(re.escape(kernel.kernel) + ", " + THREAD +
                     r": wgmma\.mma_async reads shared address 0x[0-9a-f]+, written by "
                     r"thread \d+ with no fence\.proxy\.async by that thread after the "
                     r"write", message), message


# wgmma is asynchronous: without wgmma.wait_group, the next K tile's
# cp.async overwrites a stage that the previous wgmma may still read.
def test_missing_wgmma_wait(tmp_path):
    inputs, expected = _matmul_inputs(128, 128, 256)
    kernel = Payload(matmul_text(128, 128, 256, torch.float16), "nvidia-sm90", tmp_path,
                     "nvvm.wgmma.mma_async")
    _check_matmul(kernel.artifact(), inputs, expected)
    text = _sub_once(r"^ *nvvm\.wgmma\.wait\.group\.sync\.aligned 0\n", "", kernel.text)
    message = _run_error(kernel.artifact(text), "mm", inputs)
    assert re.search(re.escape(kernel.kernel) + ", " + THREAD +
                     r": cp\.async destination writes shared address 0x[0-9a-f]+, which a "
                     r"wgmma\.mma_async still reads \(no wgmma\.wait_group for it before\)",
                     message), message


# With one K tile there is no next copy: without wgmma.wait_group the
# epilogue reads accumulators that the wgmma has not produced yet.
def test_accumulators_read_before_wgmma_wait(tmp_path):
    inputs, expected = _matmul_inputs(128, 128, 64)
    kernel = Payload(matmul_text(128, 128, 64, torch.float16), "nvidia-sm90", tmp_path,
                     "nvvm.wgmma.mma_async")
    _check_matmul(kernel.artifact(), inputs, expected)
    text = _sub_once(r"^ *nvvm\.wgmma\.wait\.group\.sync\.aligned 0\n", "", kernel.text)
    message = _run_error(kernel.artifact(text), "mm", inputs)
    assert re.search(re.escape(kernel.kernel) + ", " + THREAD +
                     r": [a-z_.]+ reads the accumulators of a wgmma\.mma_async before a "
                     r"wgmma\.wait_group completes it", message), message


SOFTMAX = """
func.func @softmax(%x: tensor<32x256xf32>) -> tensor<32x256xf32> {
  %e = tensor.empty() : tensor<32x256xf32>
  %y = linalg.softmax dimension(1) ins(%x : tensor<32x256xf32>)
                      outs(%e : tensor<32x256xf32>) -> tensor<32x256xf32>
  return %y : tensor<32x256xf32>
}
"""


@pytest.mark.parametrize("target", ["nvidia-sm80", "nvidia-sm90"])
def test_barrier_reached_by_one_thread(target, tmp_path):
    torch.manual_seed(0)
    x = torch.randn(32, 256)
    kernel = Payload(SOFTMAX, target, tmp_path, "gpu.barrier")
    (y,) = kernel.artifact().executable(emulate=True).run("softmax", [x])
    torch.testing.assert_close(y, torch.softmax(x, dim=1), rtol=1e-5, atol=1e-6)
    # The first barrier, run by thread 0 only.
    barrier = re.search(r"^( *)gpu\.barrier\n", kernel.text, re.M)
    assert barrier
    indent = barrier.group(1)
    guarded = (f"{indent}%only_tid = gpu.thread_id x\n"
               f"{indent}%only_zero = arith.constant 0 : index\n"
               f"{indent}%only_first = arith.cmpi eq, %only_tid, %only_zero : index\n"
               f"{indent}scf.if %only_first {{\n{indent}  gpu.barrier\n{indent}}}\n")
    text = kernel.text[:barrier.start()] + guarded + kernel.text[barrier.end():]
    message = _run_error(kernel.artifact(text), "softmax", [x])
    assert re.search(re.escape(kernel.kernel) + ", " + THREAD +
                     r": (exited while thread 0 waits at gpu\.barrier: a barrier or "
                     r"block-wide collective not reached by every thread"
                     r"|waits at [a-z_.]+ while thread 0 waits at gpu\.barrier)",
                     message), message
