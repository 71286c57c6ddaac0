"""PolyBlocks: an MLIR-based compiler for whole PyTorch programs.

    import polyblocks
    art = polyblocks.compile(mlir_text, target="cpu-host")
    y = torch.compile(model, backend="polyblocks", options={"strict": True})

Importing the package registers the ``polyblocks`` torch.compile backend.
"""

from ._capi import PolyBlocksError, StatusCode, UnsupportedError
from ._capi import target_names, version
from .compiler import Artifact, Executable, compile

__version__ = "0.1.0"

__all__ = ["Artifact", "Executable", "PolyBlocksError", "StatusCode",
           "UnsupportedError", "compile", "target_names", "version"]


def _register_torch_backend() -> None:
    try:
        from .torch import backend as _backend
    except ImportError:  # torch._dynamo unavailable: the C API still works
        return
    _backend.register()


_register_torch_backend()
