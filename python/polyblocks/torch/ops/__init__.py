"""ATen op -> MLIR emitters, one small function per op, in the table ``EMITTERS``.

An emitter is called as ``fn(cx, *args, **kwargs)`` with the node's
arguments, FX nodes replaced by :class:`~polyblocks.torch.mlir.Value` (or a
tuple of them for multi-result producers); ``cx`` (an :class:`EmitContext`)
gives the builder ``cx.b`` and the node's expected result (``cx.shape``,
``cx.dtype``, ``cx.out``). It returns a Value, or a list for multi-result
ops (None for results no user reads), and raises
:class:`~polyblocks.torch.mlir.Unsupported` for argument combinations it does
not handle, which makes the op fall back to eager.
"""

from ._common import EMITTERS, EMPTY_INPUTS_OK, EmitContext

# Importing each family registers its emitters in EMITTERS.
from . import elementwise, reductions, nn, shapes, pooling  # noqa: E402,F401

__all__ = ["EMITTERS", "EMPTY_INPUTS_OK", "EmitContext"]
