"""One explorer compile, run in a child process of the server.

    python -m polyblocks.explore.worker < request.json > result.json

The request is {"source": MLIR text | "model": name, "target": T,
"measure": bool, "runs": N}. The worker turns a model into MLIR (the torch
frontend, as torch.compile hands it to PolyBlocks), runs the stages with
pb-opt (each stage's IR and the --pb-explain decisions), compiles the
artifact through the C API (its estimate per kernel; on the host CPU with
kernel timers, then runs it to measure each kernel) and prints one JSON
object. A compiler crash kills only this process; the server reports it.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Each stage's text, and the final code, is cut at this many characters.
MAX_STAGE_CHARS = 4_000_000
INPUT_NAME = "input.mlir"

_DIAGNOSTIC = re.compile(
    r"^(?P<file>[^:\n]*):(?P<line>\d+):(?P<col>\d+): (?P<severity>error|warning|note|remark): "
    r"(?P<message>.*)$")


def find_tool(name: str) -> str:
    """pb-opt beside the library the package loads (build/bin next to
    build/lib), else on PATH."""
    from .. import _capi
    env = os.environ.get("POLYBLOCKS_" + name.upper().replace("-", "_"))
    if env:
        return env
    lib = _capi.library_path()
    for candidate in (lib.parent.parent / "bin" / name, lib.parent / name):
        if candidate.exists():
            return str(candidate)
    found = shutil.which(name)
    if not found:
        raise RuntimeError(f"{name} not found (build PolyBlocks or put it on PATH)")
    return found


def find_objdump() -> str | None:
    for candidate in ("/usr/lib/llvm-22/bin/llvm-objdump", "llvm-objdump-22",
                      "llvm-objdump", "objdump"):
        path = candidate if os.path.isabs(candidate) else shutil.which(candidate)
        if path and os.path.exists(path):
            return path
    return None


def parse_diagnostics(text: str) -> list[dict]:
    """MLIR's diagnostics ("file:line:col: severity: message"), each with
    the lines that follow it (the source line and the caret) dropped."""
    out = []
    for line in text.splitlines():
        m = _DIAGNOSTIC.match(line)
        if not m:  # the echoed source line and its caret
            continue
        message = m.group("message")
        explain = message.startswith("pb-explain: ")
        out.append({"line": int(m.group("line")), "col": int(m.group("col")),
                    "severity": m.group("severity"),
                    "message": message[len("pb-explain: "):] if explain else message,
                    "decision": explain})
    return out


def _topic(message: str) -> str:
    """The decision's subject: the words before its first colon."""
    head, sep, _ = message.partition(":")
    return head.strip() if sep and len(head) < 40 else "other"


def _torch_source(model, inputs, what: str) -> tuple[str, list[str]]:
    """The MLIR that torch.compile(model, backend="polyblocks") hands the
    compiler for `inputs` (the largest graph when dynamo splits the model),
    and notes."""
    import torch
    from ..torch import backend
    texts: list[str] = []
    original = backend._compiler.compile

    def capture(text, *args, **kwargs):
        texts.append(text)
        return original(text, *args, **kwargs)

    backend._compiler.compile = capture
    try:
        torch._dynamo.reset()
        compiled = torch.compile(model, backend="polyblocks", options={"strict": True})
        with torch.no_grad():
            compiled(*inputs)
    finally:
        backend._compiler.compile = original
        torch._dynamo.reset()
    if not texts:
        raise RuntimeError(f"{what} produced no graph for PolyBlocks")
    texts.sort(key=len, reverse=True)
    notes = []
    if len(texts) > 1:
        notes.append(f"the model gave {len(texts)} graphs; the largest is shown")
    return texts[0], notes


def model_source(name: str) -> tuple[str, list[str]]:
    """The MLIR of the model `name` of the benchmark suite (or
    torchvision:ARCH), batch 1, random weights."""
    from ..bench import models
    model, inputs = models.build(name)
    return _torch_source(model, inputs, f"model {name!r}")


def python_source(path: str) -> tuple[str, list[str]]:
    """The MLIR of a Python file that defines `model` and `inputs` (a
    torch.nn.Module and a tuple of tensors) or `function` and `args` (a JAX
    function and its arguments)."""
    import runpy
    scope = runpy.run_path(path)
    if "model" in scope and "inputs" in scope:
        return _torch_source(scope["model"], scope["inputs"], path)
    if "function" in scope and "args" in scope:
        from .. import jax as pbjax
        return pbjax.jit(scope["function"]).lower(*scope["args"]).as_text(), []
    raise RuntimeError(f"{path} defines neither `model` and `inputs` (PyTorch) nor "
                       "`function` and `args` (JAX)")


def read_artifact_payload(data: bytes) -> tuple[dict, bytes]:
    """The metadata and payload of an artifact file (runtime/lib/Artifact.cpp:
    magic and version, u64 size + metadata, u64 size + payload, digest)."""
    if data[:7] != b"PBARTIF":
        raise ValueError("not an artifact")
    (meta_size,) = struct.unpack_from("<Q", data, 8)
    meta = json.loads(data[16:16 + meta_size])
    offset = 16 + meta_size
    (payload_size,) = struct.unpack_from("<Q", data, offset)
    return meta, data[offset + 8:offset + 8 + payload_size]


def final_code(metadata: dict, payload: bytes, workdir: Path) -> dict:
    """The artifact's code as text: x86 or AMDGPU assembly (llvm-objdump) or
    NVIDIA PTX."""
    fmt = metadata.get("format", "")
    if fmt == "nvidia-ptx+plan":
        modules = json.loads(payload).get("modules", [])
        text = "\n".join(f"// module {m.get('name', '?')}\n{m.get('ptx', '(no PTX: cubin only)')}"
                         for m in modules)
        return {"name": "PTX", "text": text}
    objdump = find_objdump()
    if fmt == "elf-shared-object":
        path = workdir / "artifact.so"
        path.write_bytes(payload)
        name = "x86 assembly"
    elif fmt == "amd-hsaco+plan":
        modules = json.loads(payload).get("modules", [])
        if not modules or "hsaco_base64" not in modules[0]:
            return {"name": "AMDGPU", "text": "(no code object in the payload)"}
        import base64
        path = workdir / "artifact.hsaco"
        path.write_bytes(base64.b64decode(modules[0]["hsaco_base64"]))
        name = "AMDGPU assembly"
    else:
        return {"name": "code", "text": f"(payload format {fmt!r} is not shown)"}
    if not objdump:
        return {"name": name, "text": "(llvm-objdump not found: cannot disassemble)"}
    proc = subprocess.run([objdump, "-d", "--no-show-raw-insn", "--demangle", str(path)],
                          capture_output=True, text=True, timeout=120)
    return {"name": name, "text": proc.stdout or proc.stderr}


def _inputs_for(entry: dict):
    """Random inputs (floats) or zeros (integers, booleans) of an entry's
    metadata."""
    import torch
    from ..compiler import _dtype
    gen = torch.Generator().manual_seed(0)
    out = []
    for spec in entry["inputs"]:
        dtype = _dtype(spec["dtype"])
        if dtype.is_floating_point:
            out.append(torch.randn(spec["shape"], generator=gen).to(dtype))
        else:
            out.append(torch.zeros(spec["shape"], dtype=dtype))
    return out


def measure(artifact, runs: int, seconds: float = 2.0) -> dict:
    """Runs every entry (random inputs, one warm-up call) up to `runs`
    times or `seconds`, and returns the kernel timers and the entries'
    mean wall times."""
    executable = artifact.executable()
    inputs = {entry["name"]: _inputs_for(entry) for entry in artifact.metadata["entries"]}
    for name, args in inputs.items():
        executable.run(name, args)  # warm-up: threads, pool
    executable.reset_kernel_profile()
    entry_us = {}
    for name, args in inputs.items():
        start = time.perf_counter()
        n = 0
        while n < runs and (n == 0 or time.perf_counter() - start < seconds):
            executable.run(name, args)
            n += 1
        entry_us[name] = {"mean_us": (time.perf_counter() - start) / n * 1e6, "runs": n}
    return {"entries": entry_us, "sites": executable.kernel_profile()}


def _line_of(loc: str) -> int | None:
    # pb-opt names the file input.mlir, the C API's compile "input".
    m = re.match(r"^input(\.mlir)?:(\d+):\d+$", loc or "")
    return int(m.group(2)) if m else None


def kernel_table(metadata: dict, measured: dict | None) -> list[dict]:
    """One row per kernel call (CPU) or launch (GPU): estimated and, where
    measured, measured time."""
    rows = []
    estimate = metadata.get("estimate") or {}
    by_site = {}
    if measured:
        by_site = {s["site"]: s for s in measured["sites"] if "site" in s}
    for entry in estimate.get("entries", []):
        for index, launch in enumerate(entry.get("launches", [])):
            flops = sum(sum((launch.get(k) or {}).values())
                        for k in ("vector_flops", "matrix_flops"))
            row = {"entry": entry.get("name"), "index": index,
                   "site": launch.get("site", index), "kernel": launch.get("kernel", "?"),
                   "loc": launch.get("loc", ""), "line": _line_of(launch.get("loc", "")),
                   "bytes": launch.get("bytes", 0), "flops": flops,
                   "estimate_us": launch.get("estimate_us"),
                   "bound": launch.get("bound", ""),
                   "parallel": launch.get("parallel"),
                   "blocks": launch.get("blocks"),
                   "threads_per_block": launch.get("threads_per_block"),
                   "measured_us": None, "calls": None}
            site = by_site.get(row["site"])
            if site and site.get("calls"):
                row["measured_us"] = site["measured_ns"] / site["calls"] / 1e3
                row["calls"] = site["calls"]
            rows.append(row)
    return rows


def run(request: dict) -> dict:
    from .. import _capi
    from .. import compiler as _compiler
    target = request.get("target") or "cpu-host"
    result: dict = {"target": target, "notes": [], "stages": [], "decisions": [],
                    "kernels": [], "ok": False}
    if "model" in request:
        source, notes = model_source(request["model"])
        result["notes"] += notes
    elif "python" in request:
        source, notes = python_source(request["python"])
        result["notes"] += notes
    else:
        source = request["source"]
    result["source"] = source
    with tempfile.TemporaryDirectory(prefix="polyblocks-explore-") as tmp:
        work = Path(tmp)
        (work / INPUT_NAME).write_text(source)
        dumps = work / "stages"
        dumps.mkdir()
        started = time.perf_counter()
        proc = subprocess.run(
            [find_tool("pb-opt"), f"--target={target}", "--pb-pipeline=s1,s2,s3,s4",
             f"--pb-dump-after-stage={dumps}", "--pb-explain", INPUT_NAME, "-o", os.devnull],
            cwd=work, capture_output=True, text=True)
        result["stage_seconds"] = time.perf_counter() - started
        diagnostics = parse_diagnostics(proc.stderr)
        result["decisions"] = [dict(d, topic=_topic(d["message"]))
                               for d in diagnostics if d["decision"]]
        result["diagnostics"] = [d for d in diagnostics if not d["decision"]]
        result["stages"].append({"name": "input", "text": source[:MAX_STAGE_CHARS],
                                 "truncated": len(source) > MAX_STAGE_CHARS})
        for path in sorted(dumps.glob("*.mlir"), key=lambda p: int(p.name.split("-")[0])):
            text = path.read_text()
            result["stages"].append({"name": path.stem.split("-", 1)[1].upper(),
                                     "text": text[:MAX_STAGE_CHARS],
                                     "truncated": len(text) > MAX_STAGE_CHARS})
        if proc.returncode < 0:
            result["error"] = (f"the compiler crashed (signal {-proc.returncode}) in "
                               f"pb-opt; its last output:\n" + proc.stderr[-4000:])
            return result
        if proc.returncode != 0:
            errors = [d for d in result["diagnostics"] if d["severity"] == "error"]
            result["error"] = ("\n".join(f"line {d['line']}:{d['col']}: {d['message']}"
                                         for d in errors)
                               or proc.stderr[-4000:] or "pb-opt failed")
            return result

        # Only code compiled for this machine's CPU is run and timed.
        cpu_host = target == "cpu-host"
        options = "profile=1" if cpu_host else "emulation-ir=0"
        started = time.perf_counter()
        try:
            handle = _capi.ArtifactHandle.compile(source, target, options)
        except _capi.PolyBlocksError as e:
            result["error"] = f"pbCompile: {e}"
            return result
        result["compile_seconds"] = time.perf_counter() - started
        artifact = _compiler.Artifact(handle)
        metadata = artifact.metadata
        path = work / "artifact.pbart"
        artifact.save(path)
        _, payload = read_artifact_payload(path.read_bytes())
        code = final_code(metadata, payload, work)
        result["stages"].append({"name": "S5", "label": code["name"],
                                 "text": code["text"][:MAX_STAGE_CHARS],
                                 "truncated": len(code["text"]) > MAX_STAGE_CHARS})
        metadata.pop("compile_timing", None)
        result["metadata"] = {k: v for k, v in metadata.items() if k != "estimate"}
        result["estimate_model"] = (metadata.get("estimate") or {}).get("model")
        measured = None
        if cpu_host and request.get("measure", True):
            measured = measure(artifact, int(request.get("runs", 20)))
            result["entry_times"] = measured["entries"]
        elif not cpu_host:
            result["notes"].append("kernels are not measured: the target is not this "
                                   "machine's CPU (estimates only)")
        result["kernels"] = kernel_table(metadata, measured)
        result["ok"] = True
    return result


def main() -> int:
    request = json.load(sys.stdin)
    try:
        result = run(request)
    except Exception as e:  # reported to the page, the server lives on
        result = {"ok": False, "error": f"{type(e).__name__}: {e}", "stages": [],
                  "decisions": [], "kernels": [], "notes": []}
    sys.stdout.write(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
