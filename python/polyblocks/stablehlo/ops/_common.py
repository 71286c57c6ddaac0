"""Helpers shared by the StableHLO op emitters."""

from __future__ import annotations

from typing import Callable, Sequence

import torch

from ...torch.mlir import (INDEX, FunctionBuilder, Scalar, Unsupported, Value,
                           affine_map, compute_dtype, identity_map, is_float, is_int,
                           mlir_type, tensor_type)
from ..converter import Broadcast, OpContext, Permuted, Splat, register

__all__ = ["INDEX", "FunctionBuilder", "Scalar", "Unsupported", "Value", "affine_map",
           "compute_dtype", "identity_map", "is_float", "is_int", "mlir_type",
           "tensor_type", "OpContext", "Permuted", "Broadcast", "Splat", "register", "map_elements",
           "float_min", "float_max", "int_min", "int_max"]


def map_elements(cx: OpContext, fn: Callable[..., Scalar], operands: Sequence = None,
                 shape=None, dtype=None, compute=None):
    """An elementwise op over ``operands`` (default: all of the op's),
    all of the result's shape or rank 0 (broadcast). Splat operands become
    constants in the body; when every operand is a splat the result is
    computed on the host where that is exact (left to MLIR's folder
    otherwise). Broadcast operands are read through broadcasting maps.
    ``compute``: the dtype float math runs in (default: f32 for f16/bf16
    results and operands, as XLA's CPU back end does)."""
    b = cx.b
    raw = [v.as_operand(b) if isinstance(v, Broadcast) else v
           for v in (cx.raw if operands is None else operands)]
    shape = cx.shape if shape is None else tuple(shape)
    dtype = cx.dtype if dtype is None else dtype
    tensors, slots = [], []
    for v in raw:
        if isinstance(v, Splat):
            slots.append(("const", v.value, v.dtype))
        else:
            slots.append(("in", len(tensors), v.dtype))
            tensors.append(v)

    def body(bb, *scalars):
        args = []
        for kind, x, dt in slots:
            if kind == "const":
                s = bb.const(x, dt)
            else:
                s = scalars[x]
            args.append(s)
        return fn(bb, *args)

    if not tensors:
        # Every operand constant: one element computed, then filled.
        one = b.elementwise([], (), dtype, lambda bb: body(bb))
        return b.broadcast_to(one, shape) if shape else one
    return b.elementwise(tensors, shape, dtype, body)


def float_min(dtype) -> float:
    return -float("inf")


def float_max(dtype) -> float:
    return float("inf")


def int_min(dtype) -> int:
    return int(torch.iinfo(dtype).min) if dtype != torch.bool else 0


def int_max(dtype) -> int:
    return int(torch.iinfo(dtype).max) if dtype != torch.bool else 1
