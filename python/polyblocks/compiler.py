"""Compile input-contract MLIR into artifacts, load and run them on tensors.

    art = polyblocks.compile(mlir_text, target="cpu-host",
                             options={"fusion": True, "matrix_units": True})
    outs = art.executable().run("forward", [x, w])

NVIDIA targets ("nvidia-sm80", "nvidia-sm90", or "nvidia-auto": the chip of
the current CUDA device) run on CUDA tensors, on PyTorch's current stream;
``art.executable(emulate=True)`` runs their kernels on the CPU instead, in
the kernel emulator, on CPU tensors (no GPU or driver needed).

Compilations are cached: key = sha256(module text, target, options,
pbVersion(), identity of the loaded libPolyBlocks.so), first in a per-process
dict, then on disk in ``$POLYBLOCKS_CACHE_DIR`` (default
``~/.cache/polyblocks``; ``POLYBLOCKS_CACHE=0`` turns the disk cache off).
Cache files are written atomically (temporary file + rename, by
``pbArtifactSave``), so
that processes compiling the same module at once each read either nothing
or a whole file. A cache file that fails the loader's checks (damaged,
truncated, another format version) is a miss: it is logged, compiled again
and rewritten. A cache directory that cannot be written (read-only, full) is
not used again by the process, after one warning.

Below the whole-module cache, CPU compilations keep each compiled kernel in
``<cache dir>/kernels`` (the C API's ``kernel-cache`` option), keyed by its
code, the chip and LLVM: a model that shares kernels with one compiled
before (another batch size, a deeper model of the same family) compiles
only its new kernels in S5.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import logging
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Sequence

import torch

from . import _capi
from ._capi import PolyBlocksError, StatusCode

__all__ = ["Artifact", "Executable", "compile", "format_options", "cache_dir",
           "cache_key", "stats", "clear_memory_cache", "resolve_target", "DTYPES"]

log = logging.getLogger("polyblocks")

# Metadata dtype name <-> torch dtype.
DTYPES: dict[str, torch.dtype] = {
    "f32": torch.float32,
    "f16": torch.float16,
    "bf16": torch.bfloat16,
    "f64": torch.float64,
    "i1": torch.bool,
    "i8": torch.int8,
    "i16": torch.int16,
    "i32": torch.int32,
    "i64": torch.int64,
}

# Counters, for tests and for `polyblocks.compiler.stats` users.
stats = {"compiles": 0, "memory_hits": 0, "disk_hits": 0}

_memory_cache: dict[str, "Artifact"] = {}
_cache_lock = threading.Lock()

def _find_tileiras() -> str | None:
    """NVIDIA's tileiras from its pip package (nvidia-cuda-tileiras, which
    scripts/setup installs), for the Tile IR back end (codegen=tile-ir)."""
    import importlib.util

    spec = importlib.util.find_spec("nvidia")
    for base in (spec.submodule_search_locations or []) if spec else []:
        path = os.path.join(base, "cu13", "bin", "tileiras")
        if os.access(path, os.X_OK):
            return path
    return None


# The compiler (this process) finds tileiras through $POLYBLOCKS_TILEIRAS,
# else on PATH; the pip package's copy is on neither.
if "POLYBLOCKS_TILEIRAS" not in os.environ:
    _tileiras = _find_tileiras()
    if _tileiras:
        os.environ["POLYBLOCKS_TILEIRAS"] = _tileiras

# Python-side option names -> C API keys.
_OPTION_KEYS = {
    "fusion": "fusion",
    "matrix_units": "matrix-units",
    "matrix-units": "matrix-units",
    "allow_tf32": "allow-tf32",
    "allow-tf32": "allow-tf32",
    "allow_tf32_convolutions": "allow-tf32-convolutions",
    "allow-tf32-convolutions": "allow-tf32-convolutions",
    "warpgroup_units": "warpgroup-units",
    "warpgroup-units": "warpgroup-units",
    "pack_constants": "pack-constants",
    "pack-constants": "pack-constants",
    "emulation_ir": "emulation-ir",
    "emulation-ir": "emulation-ir",
    "pipeline": "pipeline",
    "reduce_reduce_fusion": "reduce-reduce-fusion",
    "reduce-reduce-fusion": "reduce-reduce-fusion",
    "codegen": "codegen",
    "mma_fusion": "mma-fusion",
    "mma-fusion": "mma-fusion",
}


def format_options(options: str | Mapping[str, Any] | None) -> str:
    """The C API option string ("fusion=1,matrix-units=0"), keys sorted.

    ``options`` is None, such a string, or a mapping whose keys are C API
    keys or their snake_case spelling; booleans become 0/1."""
    if options is None:
        return ""
    if isinstance(options, str):
        items = [item.strip() for item in options.split(",") if item.strip()]
        return ",".join(sorted(items))
    items = []
    for key, value in options.items():
        if value is None:
            continue
        ckey = _OPTION_KEYS.get(key, key)
        if isinstance(value, bool):
            value = int(value)
        items.append(f"{ckey}={value}")
    return ",".join(sorted(items))


def resolve_target(target: str) -> str:
    """``target`` with "nvidia-auto" replaced by the current CUDA device's
    chip: compute capability 9.x -> "nvidia-sm90", 8.x -> "nvidia-sm80";
    "amd-auto" by the current ROCm device's (gfx90a, gfx942)."""
    if target == "amd-auto":
        if not (torch.cuda.is_available() and torch.version.hip):
            raise PolyBlocksError(
                StatusCode.INVALID_ARGUMENT,
                "target 'amd-auto' needs a ROCm device, but torch has none "
                "(a ROCm build of torch with a visible AMD GPU)")
        arch = torch.cuda.get_device_properties(torch.cuda.current_device()).gcnArchName
        # The AMD targets are named after the architecture ROCm reports
        # (targets/amd/*.td: amd-gfx942 for gfx942).
        chip = "amd-" + arch.split(":")[0]
        known = sorted(t for t in _capi.target_names() if t.startswith("amd-"))
        if chip not in known:
            raise _capi.UnsupportedError(
                StatusCode.UNSUPPORTED,
                f"target 'amd-auto': the ROCm device is {arch}; PolyBlocks "
                f"supports {', '.join(known)}")
        return chip
    if target != "nvidia-auto":
        return target
    if not torch.cuda.is_available():
        raise PolyBlocksError(
            StatusCode.INVALID_ARGUMENT,
            "target 'nvidia-auto' needs a CUDA device, but "
            "torch.cuda.is_available() is False")
    major, minor = torch.cuda.get_device_capability()
    if major == 9:
        return "nvidia-sm90"
    if major == 8:
        return "nvidia-sm80"
    raise _capi.UnsupportedError(
        StatusCode.UNSUPPORTED,
        f"target 'nvidia-auto': the CUDA device has compute capability "
        f"{major}.{minor}; PolyBlocks supports 8.x (nvidia-sm80) and 9.x "
        f"(nvidia-sm90)")


def cache_dir() -> Path | None:
    """The on-disk cache directory, or None when the disk cache is off."""
    if os.environ.get("POLYBLOCKS_CACHE", "1").lower() in ("0", "off", "false", "no"):
        return None
    env = os.environ.get("POLYBLOCKS_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "polyblocks"


def _library_identity() -> str:
    # pbVersion() does not change between development rebuilds; the library's
    # size and mtime do, so a rebuilt compiler never reuses stale artifacts.
    try:
        st = _capi.library_path().stat()
        return f"{st.st_size}:{st.st_mtime_ns}"
    except OSError:
        return ""


def cache_key(mlir_text: str, target: str, options: str) -> str:
    h = hashlib.sha256()
    for part in (mlir_text, target, options, _capi.version(), _library_identity()):
        h.update(part.encode("utf-8"))
        h.update(b"\0")
    return h.hexdigest()


def clear_memory_cache() -> None:
    with _cache_lock:
        _memory_cache.clear()


class Artifact:
    """A compiled module: metadata, code, and (lazily) its loaded executable."""

    def __init__(self, handle: _capi.ArtifactHandle, key: str | None = None):
        self._handle = handle
        self.key = key
        self._metadata: dict | None = None
        self._executable: Executable | None = None
        self._emulated: Executable | None = None
        self._lock = threading.Lock()

    @property
    def metadata(self) -> dict:
        """{"format", "target", "compiler", "options", "entries": [{"name",
        "inputs": [{"shape", "dtype"}], "outputs": [...]}], ...}"""
        if self._metadata is None:
            self._metadata = json.loads(self._handle.metadata_json())
        return self._metadata

    @property
    def entries(self) -> list[str]:
        return [e["name"] for e in self.metadata["entries"]]

    def save(self, path: str | os.PathLike) -> None:
        self._handle.save(path)

    @classmethod
    def load(cls, path: str | os.PathLike) -> "Artifact":
        """Loads an artifact file; a damaged, truncated or foreign file
        raises PolyBlocksError with code StatusCode.INVALID_ARTIFACT."""
        return cls(_capi.ArtifactHandle.load(path))

    @classmethod
    def from_bytes(cls, data: bytes) -> "Artifact":
        """The artifact whose file holds ``data`` (checked as :meth:`load`)."""
        return cls(_capi.ArtifactHandle.from_bytes(bytes(data)))

    def executable(self, emulate: bool = False) -> "Executable":
        """The artifact's code loaded into this process (loaded once).

        ``emulate=True`` (NVIDIA and AMD artifacts only) loads it with the C API's
        pbExecutableLoadEmulated instead: the kernels run on the CPU in the
        kernel emulator, which checks out-of-bounds and misaligned accesses,
        shared-memory races and barriers as compute-sanitizer does; the
        executable takes and returns CPU tensors and runs synchronously.
        Slow, for testing small programs. Other formats raise
        UnsupportedError; an artifact compiled with ``emulation-ir=0`` a
        PolyBlocksError saying so."""
        attr = "_emulated" if emulate else "_executable"
        if getattr(self, attr) is None:
            with self._lock:
                if getattr(self, attr) is None:
                    setattr(self, attr, Executable(self, emulate=emulate))
        return getattr(self, attr)

    def run(self, entry: str, inputs: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        return self.executable().run(entry, inputs)

    def __repr__(self) -> str:
        md = self.metadata
        return f"Artifact(target={md.get('target')!r}, entries={self.entries!r})"


class _EntrySpec:
    """An entry's tensors. A shape's extent is an int, or the name of one of
    the entry's ``sizes`` (dynamic shapes: "s0", ...)."""

    __slots__ = ("name", "bname", "inputs", "outputs", "sizes", "in_place")

    def __init__(self, entry: dict):
        self.name = entry["name"]
        self.bname = self.name.encode()
        self.inputs = [(tuple(t["shape"]), _dtype(t["dtype"])) for t in entry["inputs"]]
        self.outputs = [(tuple(t["shape"]), _dtype(t["dtype"])) for t in entry["outputs"]]
        self.sizes = list(entry.get("sizes", []))
        # Outputs that update an input in place: {output: input}.
        self.in_place = {p["output"]: p["input"] for p in entry.get("in_place", [])}

    def bind_sizes(self, inputs: Sequence[torch.Tensor],
                   sizes: Sequence[int] | Mapping[str, int] | None) -> dict[str, int]:
        """The value of each size: from ``sizes`` (values in the order of the
        metadata's "sizes", or a mapping by name) and from the extents of
        the inputs that name it, which must agree."""
        bound: dict[str, int] = {}
        origin: dict[str, str] = {}
        if sizes is not None:
            given = (dict(sizes) if isinstance(sizes, Mapping)
                     else dict(zip(self.sizes, sizes)))
            if (not isinstance(sizes, Mapping) and len(sizes) != len(self.sizes)) or \
                    set(given) - set(self.sizes):
                raise PolyBlocksError(
                    StatusCode.INVALID_ARGUMENT,
                    f"entry {self.name!r} takes the sizes {self.sizes}, got {sizes!r}")
            for name, value in given.items():
                bound[name] = int(value)
                origin[name] = "the sizes given"
        for i, (t, (shape, _)) in enumerate(zip(inputs, self.inputs)):
            if not isinstance(t, torch.Tensor) or t.dim() != len(shape):
                continue  # reported by the caller's checks
            for d, extent in enumerate(shape):
                if not isinstance(extent, str):
                    continue
                value = int(t.shape[d])
                if extent in bound and bound[extent] != value:
                    raise PolyBlocksError(
                        StatusCode.INVALID_ARGUMENT,
                        f"input {i} of {self.name!r} has extent {value} in dimension "
                        f"{d}, which is size {extent}, but {origin[extent]} make it "
                        f"{bound[extent]}")
                bound.setdefault(extent, value)
                origin.setdefault(extent, f"input {i}'s dimension {d}")
        missing = [name for name in self.sizes if name not in bound]
        if missing:
            raise PolyBlocksError(
                StatusCode.INVALID_ARGUMENT,
                f"entry {self.name!r}: no input gives the sizes {missing}; pass them "
                f"(sizes=...)")
        for name in self.sizes:
            if bound[name] < 0:
                raise PolyBlocksError(
                    StatusCode.INVALID_ARGUMENT,
                    f"entry {self.name!r}: size {name} is negative ({bound[name]})")
        return bound


def _concrete(shape: tuple, sizes: dict[str, int]) -> tuple[int, ...]:
    return tuple(sizes[d] if isinstance(d, str) else d for d in shape)


def _dtype(name: str) -> torch.dtype:
    try:
        return DTYPES[name]
    except KeyError:
        raise _capi.UnsupportedError(
            StatusCode.UNSUPPORTED, f"element type {name!r} has no torch dtype") from None


# A non-null address for zero-element buffers (the C API rejects NULL).
_EMPTY = ctypes.create_string_buffer(16)
_EMPTY_PTR = ctypes.addressof(_EMPTY)


class Executable:
    """An artifact's code loaded into the process; runs entries on tensors.

    ``emulate=True``: an NVIDIA artifact's kernels run on the CPU in the
    emulator (see :meth:`Artifact.executable`); ``device`` is then the CPU."""

    def __init__(self, artifact: Artifact, emulate: bool = False):
        self.artifact = artifact
        self.emulated = bool(emulate)
        gpu = artifact.metadata.get("format") in ("nvidia-ptx+plan", "amd-hsaco+plan")
        # torch's "cuda" device: CUDA, or HIP on ROCm builds.
        self.cuda = gpu and not self.emulated
        # GPU kernels, on the GPU or emulated, read their buffers with the
        # chip's widest vector accesses.
        self._aligned_buffers = gpu
        # GPU code is loaded into the context current on this thread
        # (PyTorch's for its current device, initialized here first).
        if self.cuda and torch.cuda.is_available():
            self.device = torch.device("cuda", torch.cuda.current_device())
            torch.cuda.synchronize(self.device)  # makes its context current
        else:
            self.device = torch.device("cuda" if self.cuda else "cpu")
        self._handle = _capi.ExecutableHandle(artifact._handle, emulate=self.emulated)
        self._entries = {e["name"]: _EntrySpec(e) for e in artifact.metadata["entries"]}
        # Bytes the kernels assume buffers aligned to (the chip's widest
        # vector access); None for artifacts saved before the metadata
        # stated it.
        alignment = artifact.metadata.get("buffer_alignment")
        self.alignment = int(alignment) if alignment else None

    def kernel_profile(self) -> list[dict]:
        """The time of each kernel call site of a CPU artifact compiled with
        ``options={"profile": 1}``, summed since the load or the last
        :meth:`reset_kernel_profile`: the sites of the metadata's
        "estimate" (entry, kernel, source location, estimated time), each
        with "measured_ns" and "calls". Raises UnsupportedError for other
        artifacts."""
        estimate = self.artifact.metadata.get("estimate") or {}
        sites = [site for entry in estimate.get("entries", [])
                 for site in entry.get("launches", []) if "site" in site]
        counters = self._handle.read_profile(len(sites))
        return [dict(site, measured_ns=counters[site["site"]][0],
                     calls=counters[site["site"]][1])
                if site["site"] < len(counters) else dict(site)
                for site in sites]

    def reset_kernel_profile(self) -> None:
        """Sets the kernel timers of a profiled CPU artifact to zero."""
        self._handle.reset_profile()

    def entry_spec(self, entry: str) -> _EntrySpec:
        try:
            return self._entries[entry]
        except KeyError:
            raise PolyBlocksError(
                StatusCode.INVALID_ARGUMENT,
                f"no entry named {entry!r}; entries: {sorted(self._entries)}") from None

    def run(self, entry: str, inputs: Sequence[torch.Tensor],
            outputs: Sequence[torch.Tensor] | None = None,
            sizes: Sequence[int] | Mapping[str, int] | None = None) -> list[torch.Tensor]:
        """Runs ``entry`` on ``inputs`` and returns its outputs.

        An entry with dynamic shapes (metadata "sizes") takes its sizes from
        the inputs' extents that name them, and those no input has from
        ``sizes`` (values in the metadata's order, or a mapping by name);
        the shapes below are the metadata's with those values put in.

        Inputs are passed by pointer after ``.contiguous()`` (a copy only
        when the tensor is not already dense row-major); their shapes and
        dtypes must match the metadata exactly. Outputs are allocated with
        ``torch.empty`` (or taken from ``outputs``, which must be contiguous)
        and written in place by the compiled code; an output that updates an
        input in place (metadata "in_place") is that input, written by the
        code (through a contiguous copy, copied back, when the input is not
        dense). NVIDIA executables take
        CUDA tensors of their device and run asynchronously on PyTorch's
        current stream, like PyTorch's own kernels; emulated ones take CPU
        tensors and return when the outputs are written."""
        spec = self.entry_spec(entry)
        if len(inputs) != len(spec.inputs):
            raise PolyBlocksError(
                StatusCode.INVALID_ARGUMENT,
                f"entry {entry!r} takes {len(spec.inputs)} inputs, got {len(inputs)}")
        size_values = spec.bind_sizes(inputs, sizes) if spec.sizes else {}
        keep = []  # keeps contiguous copies alive during the call
        ptrs = []
        for i, (t, (shape, dtype)) in enumerate(zip(inputs, spec.inputs)):
            shape = _concrete(shape, size_values)
            if not isinstance(t, torch.Tensor):
                raise PolyBlocksError(
                    StatusCode.INVALID_ARGUMENT,
                    f"input {i} of {entry!r} is a {type(t).__name__}, not a torch.Tensor")
            if t.dtype != dtype or t.shape != shape:
                raise PolyBlocksError(
                    StatusCode.INVALID_ARGUMENT,
                    f"input {i} of {entry!r} must be {_describe(shape, dtype)}, "
                    f"got {_describe(tuple(t.shape), t.dtype)}")
            if t.device != self.device:
                raise PolyBlocksError(
                    StatusCode.INVALID_ARGUMENT,
                    f"input {i} of {entry!r} is on {t.device}, the executable runs on "
                    f"{self.device}")
            # The common case (a dense tensor, a model's parameter) is passed
            # as it is: no temporaries per input and call.
            if not t.is_contiguous() or t.is_neg() or t.is_conj():
                t = t.detach().resolve_neg().resolve_conj().contiguous()
            if self._aligned_buffers and (t.data_ptr() % self.alignment
                                          if self.alignment
                                          else t.storage_offset() != 0):
                # GPU kernels copy with the chip's widest vector accesses
                # (cp.async): a view at an offset not aligned to them is
                # copied to a fresh buffer (any view, when the artifact does
                # not say; allocations themselves are aligned).
                t = t.clone()
            keep.append(t)
            ptrs.append(t.data_ptr() if t.numel() else _EMPTY_PTR)
        output_specs = [(_concrete(shape, size_values), dtype)
                        for shape, dtype in spec.outputs]
        if outputs is None:
            outputs = [keep[spec.in_place[i]] if i in spec.in_place else
                       torch.empty(shape, dtype=dtype, device=self.device)
                       for i, (shape, dtype) in enumerate(output_specs)]
        else:
            outputs = list(outputs)
            if len(outputs) != len(spec.outputs):
                raise PolyBlocksError(
                    StatusCode.INVALID_ARGUMENT,
                    f"entry {entry!r} has {len(spec.outputs)} outputs, got {len(outputs)}")
            for i, (t, (shape, dtype)) in enumerate(zip(outputs, output_specs)):
                if (t.dtype != dtype or tuple(t.shape) != shape or not t.is_contiguous()
                        or t.device != self.device):
                    raise PolyBlocksError(
                        StatusCode.INVALID_ARGUMENT,
                        f"output {i} of {entry!r} must be a contiguous "
                        f"{_describe(shape, dtype)} on {self.device}")
        for i, k in spec.in_place.items():
            # An output that updates an input in place is that input's
            # buffer (the artifact writes the input, not the output).
            outputs[i] = keep[k]
        for t in outputs:
            ptrs.append(t.data_ptr() if t.numel() else _EMPTY_PTR)
        n = len(ptrs)
        buffers = (ctypes.c_void_p * max(n, 1))(*ptrs)
        stream = (torch.cuda.current_stream(self.device).cuda_stream
                  if self.cuda else None)
        self._handle.run(spec.bname, buffers, n, stream,
                         [size_values[name] for name in spec.sizes])
        for i, k in spec.in_place.items():
            # Updated in a contiguous (or aligned) copy: back into the input.
            if keep[k] is not inputs[k]:
                inputs[k].copy_(keep[k])
                outputs[i] = inputs[k]
        return outputs


def _describe(shape, dtype) -> str:
    return f"{dtype} of shape {list(shape)}"


def compile(mlir_text: str, target: str = "cpu-host",
            options: str | Mapping[str, Any] | None = None, *,
            cache: bool = True) -> Artifact:
    """Compiles an input-contract MLIR module for ``target``.

    ``options``: None, a C API option string, or a mapping such as
    ``{"fusion": False, "matrix_units": True, "pipeline": "reference"}``.
    Raises PolyBlocksError (UnsupportedError for unsupported features) with
    the compiler's diagnostics. ``target`` "nvidia-auto" is resolved first
    (see :func:`resolve_target`)."""
    target = resolve_target(target)
    opts = format_options(options)
    if not cache:
        stats["compiles"] += 1
        return Artifact(_compile_logged(mlir_text, target, opts))
    key = cache_key(mlir_text, target, opts)
    with _cache_lock:
        art = _memory_cache.get(key)
    if art is not None:
        stats["memory_hits"] += 1
        return art
    directory = cache_dir()
    if directory is not None and directory in _unwritable_cache_dirs:
        directory = None
    path = directory / f"{key}.pbart" if directory is not None else None
    if path is not None and path.is_file():
        try:
            art = Artifact(_capi.ArtifactHandle.load(path), key)
            stats["disk_hits"] += 1
            log.debug("polyblocks: disk cache hit %s", path)
        except PolyBlocksError as e:
            # Damaged, truncated or of another format version: a miss, and
            # the entry is rewritten below.
            log.warning("polyblocks: ignoring invalid cache file %s (compiling "
                        "again and rewriting it): %s", path, e)
            art = None
    if art is None:
        compile_opts = opts
        if path is not None and "," not in str(directory):
            # Kernels compiled before, by this model or another one, are
            # read back from the disk cache (the artifact is the same).
            kernels = directory / "kernels"
            compile_opts = ",".join(filter(None, [opts, f"kernel-cache={kernels}"]))
        art = Artifact(_compile_logged(mlir_text, target, compile_opts), key)
        stats["compiles"] += 1
        if path is not None:
            _store(art, path)
    with _cache_lock:
        art = _memory_cache.setdefault(key, art)
    return art


def _compile_logged(mlir_text: str, target: str, opts: str) -> _capi.ArtifactHandle:
    """pbCompile; at DEBUG level of the `polyblocks` logger with timing=1,
    and MLIR's timing report (parse, every pass, S5) logged. The cache key
    does not include timing: it changes what is measured, not the code."""
    if not log.isEnabledFor(logging.DEBUG) or "timing=" in opts:
        return _capi.ArtifactHandle.compile(mlir_text, target, opts or None)
    timed = ",".join(filter(None, [opts, "timing=1"]))
    handle = _capi.ArtifactHandle.compile(mlir_text, target, timed)
    report = json.loads(handle.metadata_json()).get("compile_timing", "")
    log.debug("polyblocks: compiled for %s:\n%s", target, report)
    return handle


# Cache directories that could not be written in this process: not used
# again (a warning was logged once for each).
_unwritable_cache_dirs: set[Path] = set()


def _store(art: Artifact, path: Path) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # pbArtifactSave writes a temporary file and renames it over a
        # regular file (pb/Support/OutputFile.h).
        art.save(str(path))
    except (OSError, PolyBlocksError) as e:
        with _cache_lock:
            first = path.parent not in _unwritable_cache_dirs
            _unwritable_cache_dirs.add(path.parent)
        if first:
            log.warning("polyblocks: cannot write the compile cache at %s (%s); "
                        "this process does not use it again", path.parent, e)
