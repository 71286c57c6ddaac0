"""ctypes binding of the PolyBlocks C API (runtime/include/polyblocks-c/PolyBlocks.h).

The library is found, at first use, through ``$POLYBLOCKS_LIBRARY``, else at
``build/lib/libPolyBlocks.so`` of the source checkout this package lives in.
Every failing call raises :class:`PolyBlocksError` (or its subclass
:class:`UnsupportedError` for ``PB_STATUS_UNSUPPORTED``); handles are owned by
small Python objects that release them when collected.
"""

from __future__ import annotations

import ctypes
import os
import threading
from pathlib import Path
from typing import Sequence

__all__ = [
    "PolyBlocksError",
    "UnsupportedError",
    "StatusCode",
    "library",
    "library_path",
    "version",
    "target_names",
]


class StatusCode:
    OK = 0
    INVALID_ARGUMENT = 1
    COMPILE_ERROR = 2
    UNSUPPORTED = 3
    IO_ERROR = 4
    RUNTIME_ERROR = 5
    INVALID_ARTIFACT = 6
    # Not a C API code: the library itself could not be found or loaded.
    LIBRARY_NOT_FOUND = -1

    NAMES = {
        0: "OK",
        1: "INVALID_ARGUMENT",
        2: "COMPILE_ERROR",
        3: "UNSUPPORTED",
        4: "IO_ERROR",
        5: "RUNTIME_ERROR",
        6: "INVALID_ARTIFACT",
        -1: "LIBRARY_NOT_FOUND",
    }


class PolyBlocksError(RuntimeError):
    """An error reported by PolyBlocks; ``code`` is a :class:`StatusCode` value."""

    def __init__(self, code: int, message: str):
        self.code = int(code)
        self.message = message
        super().__init__(f"[{StatusCode.NAMES.get(self.code, self.code)}] {message}")


class UnsupportedError(PolyBlocksError):
    """A feature, op, type or target that PolyBlocks does not support yet."""


def _error(code: int, message: str) -> PolyBlocksError:
    cls = UnsupportedError if code == StatusCode.UNSUPPORTED else PolyBlocksError
    return cls(code, message)


_lock = threading.Lock()
_lib = None
_lib_path: Path | None = None


def _candidates() -> list[Path]:
    env = os.environ.get("POLYBLOCKS_LIBRARY")
    if env:
        return [Path(env)]
    here = Path(__file__).resolve().parent  # python/polyblocks
    return [here.parent.parent / "build" / "lib" / "libPolyBlocks.so"]


def _declare(lib: ctypes.CDLL) -> None:
    c_status = ctypes.c_void_p  # pb_status *
    vp = ctypes.c_void_p
    lib.pbStatusGetCode.argtypes = [c_status]
    lib.pbStatusGetCode.restype = ctypes.c_int
    lib.pbStatusGetMessage.argtypes = [c_status]
    lib.pbStatusGetMessage.restype = ctypes.c_char_p
    lib.pbStatusDestroy.argtypes = [c_status]
    lib.pbStatusDestroy.restype = None
    lib.pbVersion.argtypes = []
    lib.pbVersion.restype = ctypes.c_char_p
    lib.pbTargetNames.argtypes = []
    lib.pbTargetNames.restype = ctypes.c_char_p
    lib.pbCompile.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
                              ctypes.c_char_p, ctypes.POINTER(vp)]
    lib.pbCompile.restype = c_status
    lib.pbArtifactGetMetadata.argtypes = [vp]
    lib.pbArtifactGetMetadata.restype = ctypes.c_char_p
    lib.pbArtifactSave.argtypes = [vp, ctypes.c_char_p]
    lib.pbArtifactSave.restype = c_status
    lib.pbArtifactLoad.argtypes = [ctypes.c_char_p, ctypes.POINTER(vp)]
    lib.pbArtifactLoad.restype = c_status
    lib.pbArtifactLoadFromMemory.argtypes = [ctypes.c_char_p, ctypes.c_size_t,
                                             ctypes.POINTER(vp)]
    lib.pbArtifactLoadFromMemory.restype = c_status
    lib.pbArtifactDestroy.argtypes = [vp]
    lib.pbArtifactDestroy.restype = None
    lib.pbExecutableLoad.argtypes = [vp, ctypes.POINTER(vp)]
    lib.pbExecutableLoad.restype = c_status
    lib.pbExecutableLoadEmulated.argtypes = [vp, ctypes.POINTER(vp)]
    lib.pbExecutableLoadEmulated.restype = c_status
    lib.pbExecutableRun.argtypes = [vp, ctypes.c_char_p, ctypes.POINTER(vp),
                                    ctypes.c_size_t, vp]
    lib.pbExecutableRun.restype = c_status
    lib.pbExecutableRunWithSizes.argtypes = [
        vp, ctypes.c_char_p, ctypes.POINTER(vp), ctypes.c_size_t,
        ctypes.POINTER(ctypes.c_int64), ctypes.c_size_t, vp]
    lib.pbExecutableRunWithSizes.restype = c_status
    lib.pbExecutableDestroy.argtypes = [vp]
    lib.pbExecutableDestroy.restype = None
    u64p = ctypes.POINTER(ctypes.c_uint64)
    lib.pbExecutableReadProfile.argtypes = [vp, u64p, u64p, ctypes.c_size_t]
    lib.pbExecutableReadProfile.restype = c_status
    lib.pbExecutableResetProfile.argtypes = [vp]
    lib.pbExecutableResetProfile.restype = c_status


# RTLD_DEEPBIND: the library and its LLVM and MLIR resolve their symbols in
# themselves before the process's global scope. TensorFlow loads its
# framework with RTLD_GLOBAL, and its own (different) LLVM and MLIR would
# otherwise be bound in their place and crash the compiler.
_DLOPEN_MODE = ctypes.RTLD_LOCAL | getattr(os, "RTLD_DEEPBIND", 0)


def library() -> ctypes.CDLL:
    """The loaded libPolyBlocks.so; raises PolyBlocksError if it cannot be found."""
    global _lib, _lib_path
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is not None:
            return _lib
        candidates = _candidates()
        for path in candidates:
            if path.is_file():
                try:
                    lib = ctypes.CDLL(str(path), mode=_DLOPEN_MODE)
                except OSError as e:
                    raise PolyBlocksError(
                        StatusCode.LIBRARY_NOT_FOUND,
                        f"cannot load {path}: {e}") from None
                _declare(lib)
                _lib_path = path
                _lib = lib
                return lib
        raise PolyBlocksError(
            StatusCode.LIBRARY_NOT_FOUND,
            "libPolyBlocks.so not found; build with `make build` or set "
            "POLYBLOCKS_LIBRARY (looked at: "
            + ", ".join(str(p) for p in candidates) + ")")


def library_path() -> Path:
    library()
    assert _lib_path is not None
    return _lib_path


def check(status) -> None:
    """Raise the exception for a non-NULL ``pb_status *`` (and release it)."""
    if not status:
        return
    lib = library()
    try:
        code = lib.pbStatusGetCode(status)
        message = lib.pbStatusGetMessage(status).decode("utf-8", "replace")
    finally:
        lib.pbStatusDestroy(status)
    raise _error(code, message)


def version() -> str:
    """pbVersion(), e.g. "0.1.0 (LLVM 22.1.0)"."""
    return library().pbVersion().decode()


def target_names() -> list[str]:
    """The targets this build knows (pbTargetNames())."""
    text = library().pbTargetNames().decode()
    return [t.strip() for t in text.split(",") if t.strip()]


class ArtifactHandle:
    """Owns a ``pb_artifact *``."""

    __slots__ = ("_ptr", "_lib")

    def __init__(self, ptr: int):
        self._lib = library()
        self._ptr = ctypes.c_void_p(ptr)

    @classmethod
    def compile(cls, text: str, target: str, options: str | None) -> "ArtifactHandle":
        lib = library()
        data = text.encode("utf-8")
        out = ctypes.c_void_p()
        check(lib.pbCompile(data, len(data), target.encode(),
                            options.encode() if options else None,
                            ctypes.byref(out)))
        return cls(out.value)

    @classmethod
    def load(cls, path: str | os.PathLike) -> "ArtifactHandle":
        lib = library()
        out = ctypes.c_void_p()
        check(lib.pbArtifactLoad(os.fsencode(path), ctypes.byref(out)))
        return cls(out.value)

    @classmethod
    def from_bytes(cls, data: bytes) -> "ArtifactHandle":
        lib = library()
        out = ctypes.c_void_p()
        check(lib.pbArtifactLoadFromMemory(data, len(data), ctypes.byref(out)))
        return cls(out.value)

    def metadata_json(self) -> str:
        return self._lib.pbArtifactGetMetadata(self._ptr).decode("utf-8")

    def save(self, path: str | os.PathLike) -> None:
        check(self._lib.pbArtifactSave(self._ptr, os.fsencode(path)))

    def __del__(self):
        ptr = getattr(self, "_ptr", None)
        if ptr:
            self._lib.pbArtifactDestroy(ptr)
            self._ptr = None


class ExecutableHandle:
    """Owns a ``pb_executable *``."""

    __slots__ = ("_ptr", "_lib")

    def __init__(self, artifact: ArtifactHandle, emulate: bool = False):
        """pbExecutableLoad, or with ``emulate`` pbExecutableLoadEmulated
        (an NVIDIA artifact's kernels run on the CPU in the emulator)."""
        self._lib = library()
        out = ctypes.c_void_p()
        load = (self._lib.pbExecutableLoadEmulated if emulate
                else self._lib.pbExecutableLoad)
        check(load(artifact._ptr, ctypes.byref(out)))
        self._ptr = out

    def run(self, entry: bytes, buffers, num_buffers: int, stream: int | None = None,
            sizes: Sequence[int] = ()) -> None:
        """``buffers`` is a ctypes array of ``void *`` (inputs, then outputs);
        ``stream`` is a CUstream (None or 0: the default stream) for NVIDIA
        executables and must be None on CPUs and for emulated executables;
        ``sizes``: the values of the entry's sizes (dynamic shapes), in the
        order of the metadata's "sizes"."""
        stream_arg = ctypes.c_void_p(stream) if stream else None
        if not sizes:
            check(self._lib.pbExecutableRun(self._ptr, entry, buffers, num_buffers,
                                            stream_arg))
            return
        values = (ctypes.c_int64 * len(sizes))(*sizes)
        check(self._lib.pbExecutableRunWithSizes(self._ptr, entry, buffers, num_buffers,
                                                 values, len(sizes), stream_arg))

    def read_profile(self, count: int) -> list[tuple[int, int]]:
        """pbExecutableReadProfile: (nanoseconds, calls) of kernel call
        sites 0 .. count-1 of a CPU artifact compiled with profile=1."""
        ns = (ctypes.c_uint64 * max(count, 1))()
        calls = (ctypes.c_uint64 * max(count, 1))()
        check(self._lib.pbExecutableReadProfile(self._ptr, ns, calls, count))
        return [(ns[i], calls[i]) for i in range(count)]

    def reset_profile(self) -> None:
        check(self._lib.pbExecutableResetProfile(self._ptr))

    def __del__(self):
        ptr = getattr(self, "_ptr", None)
        if ptr:
            self._lib.pbExecutableDestroy(ptr)
            self._ptr = None
