"""The emitter registry, EmitContext and helpers shared by the op families."""

from __future__ import annotations

import math
import operator
from typing import Callable, Sequence

import torch

from ..mlir import (INDEX, FunctionBuilder, Scalar, SymDim, Unsupported, Value,
                   affine_map, broadcast_shapes, compute_dtype, identity_map,
                   is_float, is_int, to_dim)

aten = torch.ops.aten
prims = torch.ops.prims

EMITTERS: dict = {}
# Ops whose emitters accept inputs with no elements (Values named None).
EMPTY_INPUTS_OK = {aten.cat.default, aten.sum.dim_IntList, aten.sum.default,
                   aten.prod.default, aten.prod.dim_int, aten.any.default, aten.any.dim,
                   aten.any.dims, aten.all.default, aten.all.dim, aten.all.dims}


def register(*targets):
    def wrap(fn):
        for t in targets:
            EMITTERS[t] = fn
        return fn
    return wrap


def has_no_elements(shape) -> bool:
    """Whether a shape of extents (ints, SymDims: at least 2) is empty."""
    return any(isinstance(e, int) and e == 0 for e in shape)


class EmitContext:
    """What an emitter sees of the node it emits."""

    def __init__(self, b: FunctionBuilder, node, out):
        self.b = b
        self.node = node
        self.out = out  # FakeTensor, or a tuple/list of them

    @property
    def shape(self) -> tuple:
        return tuple(to_dim(s) for s in self.out.shape)

    @property
    def dtype(self):
        return self.out.dtype

    def result(self, i: int):
        return self.out[i]

    def used(self, i: int) -> bool:
        """Whether result ``i`` of a multi-result node is read."""
        for user in self.node.users:
            if user.target is operator.getitem and user.args[1] == i:
                return True
            if user.target is not operator.getitem:
                return True
        return False


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------

def _is_scalar(x) -> bool:
    return isinstance(x, (bool, int, float)) and not isinstance(x, Value)


def _check_number(x):
    if isinstance(x, complex):
        raise Unsupported("complex scalars are not supported")
    return x


def _stand_in(x):
    """A cheap object with x's type-promotion behaviour."""
    if isinstance(x, Value):
        return torch.empty((1,) * min(x.rank, 1), dtype=x.dtype)
    return _check_number(x)


def promote(*xs):
    """torch.result_type over Values and python scalars."""
    from torch._prims_common import ELEMENTWISE_TYPE_PROMOTION_KIND, elementwise_dtypes
    items = [_stand_in(x) for x in xs if x is not None]
    return elementwise_dtypes(
        *items, type_promotion_kind=ELEMENTWISE_TYPE_PROMOTION_KIND.DEFAULT)[1]


def ew(cx: EmitContext, operands: Sequence, fn: Callable[..., Scalar],
       compute=None, out_dtype=None, out_shape=None) -> Value:
    """Elementwise over ``operands`` (Values broadcast to the result, python
    scalars as constants), each converted to ``compute`` before ``fn``."""
    out_dtype = out_dtype or cx.dtype
    out_shape = cx.shape if out_shape is None else tuple(out_shape)
    cd = compute or compute_dtype(out_dtype)
    tensors = [o for o in operands if isinstance(o, Value)]

    def body(b, *scalars):
        it = iter(scalars)
        vals = []
        for o in operands:
            if isinstance(o, Value):
                vals.append(b.cast(next(it), cd))
            else:
                vals.append(b.const(_check_number(o), cd))
        return fn(b, *vals)

    return cx.b.elementwise(tensors, out_shape, out_dtype, body)


def _dims_arg(dims, rank):
    if dims is None or (isinstance(dims, (list, tuple)) and len(dims) == 0):
        return list(range(rank))
    if isinstance(dims, int):
        dims = [dims]
    return sorted({d % rank for d in dims}) if rank else []


def _zero(b, dtype):
    return b.const(0, dtype)


def _fneg_inf(dtype):
    return -math.inf if is_float(dtype) else (False if dtype == torch.bool
                                             else -(1 << (_bits(dtype) - 1)))


def _fpos_inf(dtype):
    return math.inf if is_float(dtype) else (True if dtype == torch.bool
                                            else (1 << (_bits(dtype) - 1)) - 1)


def _bits(dtype):
    return {torch.int8: 8, torch.int16: 16, torch.int32: 32, torch.int64: 64}[dtype]


def _is_nan(b, x):
    return Scalar(b.op(f"arith.cmpf uno, {x.name}, {x.name} : {x.type}"), torch.bool)


def _and(b, x, y):
    return b.bin("arith.andi", x, y)


def _or(b, x, y):
    return b.bin("arith.ori", x, y)


def _not(b, x):
    return b.bin("arith.xori", x, b.const(True, torch.bool))


def _max(b, x, y):
    """max propagating NaN (torch.maximum)."""
    if is_float(x.dtype):
        return b.bin("arith.maximumf", x, y)
    if x.dtype == torch.bool:
        return _or(b, x, y)
    return b.bin("arith.maxsi", x, y)


def _min(b, x, y):
    if is_float(x.dtype):
        return b.bin("arith.minimumf", x, y)
    if x.dtype == torch.bool:
        return _and(b, x, y)
    return b.bin("arith.minsi", x, y)


def _add(b, x, y):
    if x.dtype == torch.bool:
        return _or(b, x, y)
    return b.bin("arith.addf" if is_float(x.dtype) else "arith.addi", x, y)


def _sub(b, x, y):
    return b.bin("arith.subf" if is_float(x.dtype) else "arith.subi", x, y)


def _mul(b, x, y):
    if x.dtype == torch.bool:
        return _and(b, x, y)
    return b.bin("arith.mulf" if is_float(x.dtype) else "arith.muli", x, y)


def _div(b, x, y):
    if not is_float(x.dtype):
        raise Unsupported("integer true division")
    return b.bin("arith.divf", x, y)


def _neg(b, x):
    if is_float(x.dtype):
        return b.un("arith.negf", x)
    return b.bin("arith.subi", _zero(b, x.dtype), x)


def _require_float(x):
    if not is_float(x.dtype):
        raise Unsupported(f"needs a floating-point type, got {x.dtype}")


def _as_value_shape(cx, x):
    return x.shape if isinstance(x, Value) else ()


# Everything, underscored helpers included, for the later op families.
__all__ = [n for n in dir() if not n.startswith("__")]
