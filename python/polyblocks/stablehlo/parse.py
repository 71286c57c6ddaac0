"""StableHLO text or bytecode -> a module of jaxlib's MLIR bindings.

The bindings (and the StableHLO and CHLO dialects registered in them) come
with jaxlib, which the TensorFlow frontend therefore needs as well: the
module TensorFlow prints parses there unchanged.
"""

from __future__ import annotations

import math
import re

from ..torch.mlir import Unsupported

__all__ = ["context", "parse", "parse_and_convert"]


def context():
    """A fresh MLIR context with the dialects a StableHLO module uses
    (func, stablehlo, chlo, sdy, ...), as JAX lowers in."""
    from jax._src.interpreters import mlir as jax_mlir
    return jax_mlir.make_ir_context()


_I1_HEX = re.compile(r'dense<"0x([0-9A-Fa-f]*)">(\s*:\s*tensor<((?:\d+x)*)i1>)')


def _unpack_i1(m: re.Match) -> str:
    """A bit-packed i1 hex constant (eight elements a byte, the first in the
    lowest bit, as newer MLIR prints them; TensorFlow's does) in the byte
    per element that jaxlib's MLIR reads."""
    data, rest, dims = m.group(1), m.group(2), m.group(3)
    n = math.prod(int(d) for d in dims.split("x") if d)
    nbytes = len(data) // 2
    if nbytes == n or nbytes != (n + 7) // 8:
        return m.group(0)
    raw = bytes.fromhex(data)
    bits = "".join("01" if raw[i // 8] >> (i % 8) & 1 else "00" for i in range(n))
    return f'dense<"0x{bits}">{rest}'


def parse(source, ctx=None):
    """``source`` (StableHLO text, or serialized bytecode as bytes) as an
    ``ir.Module`` in ``ctx`` (a new context when None); raises Unsupported
    with MLIR's diagnostic when it does not parse."""
    from jaxlib.mlir import ir
    if isinstance(source, str) and "i1>" in source:
        source = _I1_HEX.sub(_unpack_i1, source)
    ctx = ctx or context()
    with ctx:
        try:
            return ir.Module.parse(source)
        except ir.MLIRError as e:
            raise Unsupported(f"the StableHLO module does not parse: {e}") from None


def parse_and_convert(source, func_name: str = "forward"):
    """:func:`parse` then :func:`polyblocks.stablehlo.convert` in the same
    context."""
    from .converter import convert
    ctx = context()
    module = parse(source, ctx)
    with ctx:
        return convert(module, func_name)
