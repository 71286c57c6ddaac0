"""PyTorch frontend: the ``polyblocks`` torch.compile backend and the
FX -> MLIR emitter."""

from .backend import Options, compile_graph, polyblocks_backend, register
from .emitter import emit_graph, node_support
from .mlir import Unsupported
from .ops import EMITTERS

__all__ = ["EMITTERS", "Options", "Unsupported", "compile_graph", "emit_graph",
           "node_support", "polyblocks_backend", "register"]
