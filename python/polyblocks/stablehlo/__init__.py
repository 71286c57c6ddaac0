"""The StableHLO frontend shared by JAX and TensorFlow.

``convert(module)`` turns a StableHLO module (a jaxlib ``ir.Module``) into
the compiler's input contract, one emitter per op (:mod:`.ops`);
``parse(text)`` reads StableHLO text or bytecode, whichever framework
printed it, into such a module. The frameworks' layers
(:mod:`polyblocks.jax`, :mod:`polyblocks.tensorflow`) only produce the
StableHLO and marshal arrays.
"""

from .converter import (Converted, OpContext, UnsupportedOp, convert, register)
from .parse import parse, parse_and_convert

__all__ = ["convert", "parse", "parse_and_convert", "Converted", "OpContext", "UnsupportedOp",
           "register"]
