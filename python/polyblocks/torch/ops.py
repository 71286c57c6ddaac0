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

from __future__ import annotations

import math
import operator
from typing import Callable, Sequence

import torch

from .mlir import (INDEX, FunctionBuilder, Scalar, Unsupported, Value,
                   affine_map, compute_dtype, identity_map,
                   is_float, is_int)

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


class EmitContext:
    """What an emitter sees of the node it emits."""

    def __init__(self, b: FunctionBuilder, node, out):
        self.b = b
        self.node = node
        self.out = out  # FakeTensor, or a tuple/list of them

    @property
    def shape(self) -> tuple:
        return tuple(int(s) for s in self.out.shape)

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


# ---------------------------------------------------------------------------
# Elementwise unary
# ---------------------------------------------------------------------------

_MATH_UNARY = {
    aten.exp.default: "math.exp",
    aten.exp2.default: "math.exp2",
    aten.expm1.default: "math.expm1",
    aten.log.default: "math.log",
    aten.log2.default: "math.log2",
    aten.log10.default: "math.log10",
    aten.log1p.default: "math.log1p",
    aten.sqrt.default: "math.sqrt",
    aten.rsqrt.default: "math.rsqrt",
    aten.sin.default: "math.sin",
    aten.cos.default: "math.cos",
    aten.tan.default: "math.tan",
    aten.asin.default: "math.asin",
    aten.acos.default: "math.acos",
    aten.atan.default: "math.atan",
    aten.sinh.default: "math.sinh",
    aten.cosh.default: "math.cosh",
    aten.tanh.default: "math.tanh",
    aten.asinh.default: "math.asinh",
    aten.acosh.default: "math.acosh",
    aten.atanh.default: "math.atanh",
    aten.erf.default: "math.erf",
    aten.erfc.default: "math.erfc",
}


def _make_math_unary(opname):
    def emit(cx, x):
        return ew(cx, [x], lambda b, a: b.un(opname, a))
    return emit


for _op, _name in _MATH_UNARY.items():
    register(_op)(_make_math_unary(_name))


def _rounding(opname):
    def emit(cx, x):
        if not is_float(cx.dtype):
            return cx.b.convert(x, cx.dtype)
        return ew(cx, [x], lambda b, a: b.un(opname, a))
    return emit


register(aten.ceil.default)(_rounding("math.ceil"))
register(aten.floor.default)(_rounding("math.floor"))
register(aten.trunc.default)(_rounding("math.trunc"))
register(aten.round.default)(_rounding("math.roundeven"))


@register(aten.round.decimals)
def _round_decimals(cx, x, decimals=0):
    if decimals == 0:
        return _rounding("math.roundeven")(cx, x)
    if not is_float(cx.dtype):
        raise Unsupported("round(decimals) of integers")
    p = 10.0 ** abs(decimals)

    def f(b, a):
        c = b.const(p, a.dtype)
        if decimals > 0:
            return _div(b, b.un("math.roundeven", _mul(b, a, c)), c)
        return _mul(b, b.un("math.roundeven", _div(b, a, c)), c)
    return ew(cx, [x], f)


@register(aten.abs.default)
def _abs(cx, x):
    if cx.dtype == torch.bool:
        return x
    return ew(cx, [x], lambda b, a: b.un("math.absf" if is_float(a.dtype) else "math.absi", a))


@register(aten.neg.default)
def _neg_op(cx, x):
    return ew(cx, [x], _neg)


@register(aten.reciprocal.default)
def _reciprocal(cx, x):
    return ew(cx, [x], lambda b, a: _div(b, b.const(1.0, a.dtype), a))


@register(aten.sigmoid.default)
def _sigmoid(cx, x):
    def f(b, a):
        one = b.const(1.0, a.dtype)
        return _div(b, one, _add(b, one, b.un("math.exp", _neg(b, a))))
    return ew(cx, [x], f)


@register(aten.sign.default, aten.sgn.default)
def _sign(cx, x):
    if cx.dtype == torch.bool:
        return x

    def f(b, a):
        z = _zero(b, a.dtype)
        pos = b.cast(b.cmp("gt", a, z), a.dtype)
        neg = b.cast(b.cmp("lt", a, z), a.dtype)
        r = _sub(b, pos, neg)
        if is_float(a.dtype):  # sign(nan) = nan? torch gives 0 for nan
            r = b.select(_is_nan(b, a), b.const(0.0, a.dtype), r)
        return r
    return ew(cx, [x], f)


@register(aten.signbit.default)
def _signbit(cx, x):
    if not is_float(x.dtype):
        return ew(cx, [x], lambda b, a: b.cmp("lt", a, _zero(b, a.dtype)), compute=x.dtype)
    ibits = {torch.float32: torch.int32, torch.float64: torch.int64,
             torch.float16: torch.int16, torch.bfloat16: torch.int16}[x.dtype]

    def f(b, a):
        from .mlir import mlir_type
        i = Scalar(b.op(f"arith.bitcast {a.name} : {a.type} to {mlir_type(ibits)}"), ibits)
        return b.cmp("lt", i, _zero(b, ibits))
    return ew(cx, [x], f, compute=x.dtype)


@register(aten.logical_not.default)
def _logical_not(cx, x):
    return ew(cx, [x], lambda b, a: b.cmp("eq", a, _zero(b, a.dtype)), compute=x.dtype)


@register(aten.bitwise_not.default)
def _bitwise_not(cx, x):
    if is_float(x.dtype):
        raise Unsupported("bitwise_not of floats")
    return ew(cx, [x], lambda b, a: b.bin("arith.xori", a, b.const(-1 if a.dtype != torch.bool
                                                                     else True, a.dtype)))


@register(aten.relu.default)
def _relu(cx, x):
    if cx.dtype == torch.bool:
        return x
    return ew(cx, [x], lambda b, a: _max(b, a, _zero(b, a.dtype)))


@register(aten.isnan.default)
def _isnan(cx, x):
    if not is_float(x.dtype):
        return cx.b.fill(False, cx.shape, torch.bool)
    return ew(cx, [x], lambda b, a: _is_nan(b, a), compute=x.dtype)


@register(aten.isinf.default)
def _isinf(cx, x):
    if not is_float(x.dtype):
        return cx.b.fill(False, cx.shape, torch.bool)
    return ew(cx, [x], lambda b, a: b.cmp("eq", b.un("math.absf", a), b.const(math.inf, a.dtype)),
              compute=x.dtype)


@register(aten.isfinite.default)
def _isfinite(cx, x):
    if not is_float(x.dtype):
        return cx.b.fill(True, cx.shape, torch.bool)
    return ew(cx, [x], lambda b, a: b.cmp("lt", b.un("math.absf", a), b.const(math.inf, a.dtype)),
              compute=x.dtype)


@register(aten.isposinf.default, aten.isneginf.default)
def _isposneginf(cx, x):
    if not is_float(x.dtype):
        return cx.b.fill(False, cx.shape, torch.bool)
    v = math.inf if cx.node.target is aten.isposinf.default else -math.inf
    return ew(cx, [x], lambda b, a: b.cmp("eq", a, b.const(v, a.dtype)), compute=x.dtype)


@register(aten.nan_to_num.default)
def _nan_to_num(cx, x, nan=0.0, posinf=None, neginf=None):
    if not is_float(cx.dtype):
        return x
    fi = torch.finfo(cx.dtype)
    posinf = fi.max if posinf is None else posinf
    neginf = fi.min if neginf is None else neginf

    def f(b, a):
        r = b.select(_is_nan(b, a), b.const(nan, a.dtype), a)
        r = b.select(b.cmp("eq", a, b.const(math.inf, a.dtype)), b.const(posinf, a.dtype), r)
        return b.select(b.cmp("eq", a, b.const(-math.inf, a.dtype)), b.const(neginf, a.dtype), r)
    # In the result dtype (not the compute type), so the finite limits are exact.
    return ew(cx, [x], f, compute=cx.dtype)


def _gelu_fn(approximate):
    def f(b, a):
        half = b.const(0.5, a.dtype)
        one = b.const(1.0, a.dtype)
        if approximate == "tanh":
            k = b.const(math.sqrt(2.0 / math.pi), a.dtype)
            c = b.const(0.044715, a.dtype)
            x3 = _mul(b, _mul(b, a, a), a)
            inner = _mul(b, k, _add(b, a, _mul(b, c, x3)))
            return _mul(b, _mul(b, half, a), _add(b, one, b.un("math.tanh", inner)))
        r2 = b.const(1.0 / math.sqrt(2.0), a.dtype)
        return _mul(b, _mul(b, a, half), _add(b, one, b.un("math.erf", _mul(b, a, r2))))
    return f


@register(aten.gelu.default)
def _gelu(cx, x, approximate="none"):
    return ew(cx, [x], _gelu_fn(approximate))


@register(aten.silu.default)
def _silu(cx, x):
    def f(b, a):
        one = b.const(1.0, a.dtype)
        return _div(b, a, _add(b, one, b.un("math.exp", _neg(b, a))))
    return ew(cx, [x], f)


@register(aten.elu.default)
def _elu(cx, x, alpha=1.0, scale=1.0, input_scale=1.0):
    def f(b, a):
        z = _zero(b, a.dtype)
        neg = _mul(b, b.un("math.expm1", _mul(b, a, b.const(input_scale, a.dtype))),
                   _mul(b, b.const(alpha, a.dtype), b.const(scale, a.dtype)))
        pos = _mul(b, a, b.const(scale, a.dtype))
        return b.select(b.cmp("le", a, z), neg, pos)
    return ew(cx, [x], f)


@register(aten.leaky_relu.default)
def _leaky_relu(cx, x, negative_slope=0.01):
    def f(b, a):
        return b.select(b.cmp("gt", a, _zero(b, a.dtype)), a,
                        _mul(b, a, b.const(negative_slope, a.dtype)))
    return ew(cx, [x], f)


@register(aten.hardtanh.default)
def _hardtanh(cx, x, min_val=-1.0, max_val=1.0):
    return ew(cx, [x], lambda b, a: _min(b, _max(b, a, b.const(min_val, a.dtype)),
                                          b.const(max_val, a.dtype)))


@register(aten.hardsigmoid.default)
def _hardsigmoid(cx, x):
    def f(b, a):
        t = _add(b, a, b.const(3.0, a.dtype))
        t = _min(b, _max(b, t, _zero(b, a.dtype)), b.const(6.0, a.dtype))
        return _div(b, t, b.const(6.0, a.dtype))
    return ew(cx, [x], f)


@register(aten.hardswish.default)
def _hardswish(cx, x):
    def f(b, a):
        t = _add(b, a, b.const(3.0, a.dtype))
        t = _min(b, _max(b, t, _zero(b, a.dtype)), b.const(6.0, a.dtype))
        return _div(b, _mul(b, a, t), b.const(6.0, a.dtype))
    return ew(cx, [x], f)


@register(aten.softplus.default)
def _softplus(cx, x, beta=1.0, threshold=20.0):
    def f(b, a):
        bx = _mul(b, a, b.const(beta, a.dtype))
        soft = _div(b, b.un("math.log1p", b.un("math.exp", bx)), b.const(beta, a.dtype))
        return b.select(b.cmp("gt", bx, b.const(threshold, a.dtype)), a, soft)
    return ew(cx, [x], f)


@register(aten.logit.default)
def _logit(cx, x, eps=None):
    def f(b, a):
        if eps is not None:
            lo, hi = b.const(eps, a.dtype), b.const(1.0 - eps, a.dtype)
            a = b.select(b.cmp("lt", a, lo), lo, b.select(b.cmp("gt", a, hi), hi, a))
        return b.un("math.log", _div(b, a, _sub(b, b.const(1.0, a.dtype), a)))
    return ew(cx, [x], f)


# ---------------------------------------------------------------------------
# Elementwise binary and ternary
# ---------------------------------------------------------------------------

def _alpha_mul(b, y, alpha):
    if alpha is None or alpha == 1:
        return y
    return _mul(b, y, b.const(alpha, y.dtype))


@register(aten.add.Tensor, aten.add.Scalar)
def _add_op(cx, x, y, alpha=1):
    return ew(cx, [x, y], lambda b, p, q: _add(b, p, _alpha_mul(b, q, alpha)))


@register(aten.sub.Tensor, aten.sub.Scalar)
def _sub_op(cx, x, y, alpha=1):
    if cx.dtype == torch.bool:
        raise Unsupported("bool subtraction")
    return ew(cx, [x, y], lambda b, p, q: _sub(b, p, _alpha_mul(b, q, alpha)))


@register(aten.rsub.Tensor, aten.rsub.Scalar)
def _rsub_op(cx, x, y, alpha=1):
    return ew(cx, [x, y], lambda b, p, q: _sub(b, q, _alpha_mul(b, p, alpha)))


@register(aten.mul.Tensor, aten.mul.Scalar)
def _mul_op(cx, x, y):
    return ew(cx, [x, y], _mul)


def _div_trunc(b, p, q):
    if is_float(p.dtype):
        return b.un("math.trunc", _div(b, p, q))
    return b.bin("arith.divsi", p, q)


def _div_floor(b, p, q):
    if not is_float(p.dtype):
        return b.bin("arith.floordivsi", p, q)
    # c10's div_floor_floating.
    z = _zero(b, p.dtype)
    one = b.const(1.0, p.dtype)
    mod = b.bin("arith.remf", p, q)
    div = _div(b, _sub(b, p, mod), q)
    adjust = _and(b, b.cmp("ne", mod, z), b.cmp("ne", b.cmp("lt", q, z), b.cmp("lt", mod, z)))
    div = b.select(adjust, _sub(b, div, one), div)
    fl = b.un("math.floor", div)
    fl = b.select(b.cmp("gt", _sub(b, div, fl), b.const(0.5, p.dtype)), _add(b, fl, one), fl)
    zero_case = b.bin("math.copysign", z, _div(b, p, q))
    res = b.select(b.cmp("ne", div, z), fl, zero_case)
    return b.select(b.cmp("eq", q, z), _div(b, p, q), res)


@register(aten.div.Tensor, aten.div.Scalar)
def _div_op(cx, x, y):
    return ew(cx, [x, y], _div)


@register(aten.div.Tensor_mode, aten.div.Scalar_mode)
def _div_mode(cx, x, y, rounding_mode=None):
    if rounding_mode is None:
        return ew(cx, [x, y], _div)
    if not is_float(cx.dtype) and isinstance(y, (int, float)) and y == 0:
        raise Unsupported("integer division by zero")
    fn = _div_trunc if rounding_mode == "trunc" else _div_floor
    return ew(cx, [x, y], fn)


@register(aten.floor_divide.default)
def _floor_divide(cx, x, y):
    return ew(cx, [x, y], _div_floor)


def _fmod(b, p, q):
    if is_float(p.dtype):
        return b.bin("arith.remf", p, q)
    return b.bin("arith.remsi", p, q)


def _remainder(b, p, q):
    z = _zero(b, p.dtype)
    m = _fmod(b, p, q)
    adjust = _and(b, b.cmp("ne", m, z), b.cmp("ne", b.cmp("lt", m, z), b.cmp("lt", q, z)))
    return b.select(adjust, _add(b, m, q), m)


@register(aten.fmod.Tensor, aten.fmod.Scalar)
def _fmod_op(cx, x, y):
    return ew(cx, [x, y], _fmod)


@register(aten.remainder.Tensor, aten.remainder.Scalar)
def _remainder_op(cx, x, y):
    return ew(cx, [x, y], _remainder)


def _pow_scalar_exponent(b, a, e):
    """x ** e for a python scalar e, with the special cases of ATen's CPU
    kernel (exact squares, sqrt, reciprocal...)."""
    if is_float(a.dtype):
        if e == 2:
            return _mul(b, a, a)
        if e == 3:
            return _mul(b, _mul(b, a, a), a)
        if e == 0.5:
            return b.un("math.sqrt", a)
        if e == -0.5:
            return b.un("math.rsqrt", a)
        if e == -1:
            return _div(b, b.const(1.0, a.dtype), a)
        if e == -2:
            return _div(b, b.const(1.0, a.dtype), _mul(b, a, a))
        if e == 1:
            return a
        if e == 0:
            return b.const(1.0, a.dtype)
        return b.bin("math.powf", a, b.const(e, a.dtype))
    e = int(e)
    if e < 0:
        raise Unsupported("integer pow with a negative exponent")
    r = b.const(1, a.dtype)
    base = a
    while e:
        if e & 1:
            r = _mul(b, r, base)
        e >>= 1
        if e:
            base = _mul(b, base, base)
    return r


@register(aten.pow.Tensor_Scalar)
def _pow_ts(cx, x, e):
    _check_number(e)
    return ew(cx, [x], lambda b, a: _pow_scalar_exponent(b, a, e))


@register(aten.pow.Tensor_Tensor, aten.pow.Scalar)
def _pow_tt(cx, x, y):
    if not is_float(cx.dtype):
        return ew(cx, [x, y], lambda b, p, q: b.bin("math.ipowi", p, q))
    return ew(cx, [x, y], lambda b, p, q: b.bin("math.powf", p, q))


@register(aten.maximum.default)
def _maximum(cx, x, y):
    return ew(cx, [x, y], _max)


@register(aten.minimum.default)
def _minimum(cx, x, y):
    return ew(cx, [x, y], _min)


@register(aten.fmax.default)
def _fmax(cx, x, y):
    if not is_float(cx.dtype):
        return ew(cx, [x, y], _max)
    return ew(cx, [x, y], lambda b, p, q: b.bin("arith.maxnumf", p, q))


@register(aten.fmin.default)
def _fmin(cx, x, y):
    if not is_float(cx.dtype):
        return ew(cx, [x, y], _min)
    return ew(cx, [x, y], lambda b, p, q: b.bin("arith.minnumf", p, q))


@register(aten.atan2.default)
def _atan2(cx, x, y):
    return ew(cx, [x, y], lambda b, p, q: b.bin("math.atan2", p, q))


@register(aten.copysign.Tensor, aten.copysign.Scalar)
def _copysign(cx, x, y):
    return ew(cx, [x, y], lambda b, p, q: b.bin("math.copysign", p, q))


@register(aten.hypot.default)
def _hypot(cx, x, y):
    def f(b, p, q):
        return b.un("math.sqrt", _add(b, _mul(b, p, p), _mul(b, q, q)))
    return ew(cx, [x, y], f)


def _make_compare(pred):
    def emit(cx, x, y):
        cd = promote(x, y)
        return ew(cx, [x, y], lambda b, p, q: b.cmp(pred, p, q), compute=cd)
    return emit


for _pred in ("eq", "ne", "lt", "le", "gt", "ge"):
    register(getattr(aten, _pred).Tensor, getattr(aten, _pred).Scalar)(_make_compare(_pred))


def _make_logical(kind):
    def emit(cx, x, y):
        def f(b, p, q):
            p = b.cast(p, torch.bool)
            q = b.cast(q, torch.bool)
            return b.bin(f"arith.{kind}", p, q)
        return ew(cx, [x, y], f, compute=promote(x, y))
    return emit


register(aten.logical_and.default)(_make_logical("andi"))
register(aten.logical_or.default)(_make_logical("ori"))
register(aten.logical_xor.default)(_make_logical("xori"))


def _make_bitwise(kind):
    def emit(cx, x, y):
        if is_float(cx.dtype):
            raise Unsupported("bitwise ops on floats")
        return ew(cx, [x, y], lambda b, p, q: b.bin(f"arith.{kind}", p, q))
    return emit


register(aten.bitwise_and.Tensor, aten.bitwise_and.Scalar)(_make_bitwise("andi"))
register(aten.bitwise_or.Tensor, aten.bitwise_or.Scalar)(_make_bitwise("ori"))
register(aten.bitwise_xor.Tensor, aten.bitwise_xor.Scalar)(_make_bitwise("xori"))


@register(aten.bitwise_left_shift.Tensor, aten.bitwise_left_shift.Tensor_Scalar,
          aten.__lshift__.Scalar, aten.__lshift__.Tensor)
def _lshift(cx, x, y):
    if not is_int(cx.dtype):
        raise Unsupported("shift of non-integers")
    bits = _bits(cx.dtype)

    def f(b, p, q):
        sh = b.bin("arith.shli", p, q)
        big = _or(b, b.cmp("ge", q, b.const(bits, q.dtype)), b.cmp("lt", q, _zero(b, q.dtype)))
        return b.select(big, _zero(b, p.dtype), sh)
    return ew(cx, [x, y], f)


@register(aten.bitwise_right_shift.Tensor, aten.bitwise_right_shift.Tensor_Scalar,
          aten.__rshift__.Scalar, aten.__rshift__.Tensor)
def _rshift(cx, x, y):
    if not is_int(cx.dtype):
        raise Unsupported("shift of non-integers")
    bits = _bits(cx.dtype)

    def f(b, p, q):
        big = _or(b, b.cmp("ge", q, b.const(bits, q.dtype)), b.cmp("lt", q, _zero(b, q.dtype)))
        q2 = b.select(big, b.const(bits - 1, q.dtype), q)
        return b.bin("arith.shrsi", p, q2)
    return ew(cx, [x, y], f)


@register(aten.where.self, aten.where.ScalarSelf, aten.where.ScalarOther, aten.where.Scalar)
def _where(cx, cond, x, y):
    cd = compute_dtype(cx.dtype)
    tensors = [v for v in (cond, x, y) if isinstance(v, Value)]

    def body(b, *s):
        it = iter(s)
        vals = []
        for i, o in enumerate((cond, x, y)):
            dt = torch.bool if i == 0 else cd
            vals.append(b.cast(next(it), dt) if isinstance(o, Value) else b.const(o, dt))
        return b.select(*vals)
    return cx.b.elementwise(tensors, cx.shape, cx.dtype, body)


@register(aten.clamp.default, aten.clamp.Tensor)
def _clamp(cx, x, min=None, max=None):
    ops = [x] + [v for v in (min, max) if v is not None]

    def f(b, a, *bounds):
        it = iter(bounds)
        if min is not None:
            a = _max(b, a, next(it))
        if max is not None:
            a = _min(b, a, next(it))
        return a
    return ew(cx, ops, f)


@register(aten.clamp_min.default, aten.clamp_min.Tensor)
def _clamp_min(cx, x, m):
    return ew(cx, [x, m], _max)


@register(aten.clamp_max.default, aten.clamp_max.Tensor)
def _clamp_max(cx, x, m):
    return ew(cx, [x, m], _min)


@register(aten.lerp.Scalar, aten.lerp.Tensor)
def _lerp(cx, x, y, w):
    def f(b, s, e, wt):
        # ATen: w < 0.5 ? s + w * (e - s) : e - (e - s) * (1 - w)
        d = _sub(b, e, s)
        lo = _add(b, s, _mul(b, wt, d))
        hi = _sub(b, e, _mul(b, d, _sub(b, b.const(1.0, wt.dtype), wt)))
        small = b.cmp("lt", b.un("math.absf", wt), b.const(0.5, wt.dtype))
        return b.select(small, lo, hi)
    return ew(cx, [x, y, w], f)


@register(aten.addcmul.default)
def _addcmul(cx, x, t1, t2, value=1):
    return ew(cx, [x, t1, t2], lambda b, a, p, q: _add(b, a, _mul(b, b.const(value, a.dtype),
                                                                     _mul(b, p, q))))


@register(aten.addcdiv.default)
def _addcdiv(cx, x, t1, t2, value=1):
    return ew(cx, [x, t1, t2], lambda b, a, p, q: _add(b, a, _mul(b, b.const(value, a.dtype),
                                                                     _div(b, p, q))))


@register(aten.xlogy.Tensor, aten.xlogy.Scalar_Other, aten.xlogy.Scalar_Self)
def _xlogy(cx, x, y):
    def f(b, p, q):
        z = _zero(b, p.dtype)
        r = _mul(b, p, b.un("math.log", q))
        r = b.select(b.cmp("eq", p, z), z, r)
        return b.select(_is_nan(b, q), q, r)
    return ew(cx, [x, y], f)


# ---------------------------------------------------------------------------
# Type conversion, copies, factories
# ---------------------------------------------------------------------------

@register(aten._to_copy.default)
def _to_copy(cx, x, dtype=None, layout=None, device=None, pin_memory=None,
             non_blocking=False, memory_format=None):
    if device is not None and torch.device(device).type != "cpu":
        raise Unsupported("device transfer")
    return cx.b.convert(x, cx.dtype)


@register(prims.convert_element_type.default)
def _convert_element_type(cx, x, dtype):
    return cx.b.convert(x, cx.dtype)


def _view_like(cx, x, *args, **kwargs):
    return cx.b.reshape(x, cx.shape)


for _op in (aten.view.default, aten._unsafe_view.default, aten.reshape.default,
            aten.squeeze.default, aten.squeeze.dim, aten.squeeze.dims,
            aten.unsqueeze.default, aten.alias.default, aten.clone.default,
            aten.lift_fresh_copy.default, aten.detach.default,
            aten.view_copy.default, aten.flatten.using_ints,
            aten.unflatten.int, aten._reshape_alias.default,
            aten.contiguous.default, aten.squeeze_copy.dims, aten.unsqueeze_copy.default,
            aten.alias_copy.default, prims.view_of.default):
    register(_op)(_view_like)


@register(aten.permute.default, aten.permute_copy.default)
def _permute(cx, x, dims):
    return cx.b.transpose(x, list(dims))


@register(aten.t.default)
def _t(cx, x):
    return cx.b.transpose(x, [1, 0]) if x.rank == 2 else x


@register(aten.transpose.int)
def _transpose(cx, x, d0, d1):
    if x.rank == 0:
        return x
    perm = list(range(x.rank))
    d0, d1 = d0 % x.rank, d1 % x.rank
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return cx.b.transpose(x, perm)


@register(aten.expand.default, aten.expand_copy.default)
def _expand(cx, x, size, implicit=False):
    return cx.b.broadcast_to(x, cx.shape)


@register(aten.copy.default)
def _copy(cx, dst, src, non_blocking=False):
    return cx.b.broadcast_to(cx.b.convert(src, cx.dtype), cx.shape) \
        if src.shape != cx.shape else cx.b.convert(src, cx.dtype)


@register(aten.full.default, aten.full_like.default, aten.new_full.default,
          aten.scalar_tensor.default, aten.fill.Scalar, aten.empty.memory_format,
          aten.empty_like.default, aten.new_empty.default, aten.empty_strided.default,
          aten.new_empty_strided.default, aten.zeros.default, aten.ones.default,
          aten.zeros_like.default, aten.ones_like.default, aten.new_zeros.default,
          aten.new_ones.default)
def _full(cx, *args, **kwargs):
    t = cx.node.target
    if t in (aten.full.default, aten.new_full.default):
        value = args[1] if t is aten.full.default else args[2]
    elif t is aten.full_like.default or t is aten.fill.Scalar:
        value = args[1]
    elif t is aten.scalar_tensor.default:
        value = args[0]
    elif t in (aten.ones.default, aten.ones_like.default, aten.new_ones.default):
        value = 1
    else:  # zeros / empty: any content is valid for empty
        value = 0
    if isinstance(value, Value):
        raise Unsupported("non-constant fill value")
    device = kwargs.get("device")
    if device is not None and torch.device(device).type != "cpu":
        raise Unsupported("factory on a non-CPU device")
    return cx.b.fill(_check_number(value), cx.shape, cx.dtype)


@register(aten.fill.Tensor)
def _fill_tensor(cx, x, value):
    return cx.b.broadcast_to(cx.b.reshape(cx.b.convert(value, cx.dtype), ()), cx.shape)


@register(aten.arange.start_step, aten.arange.default, aten.arange.start)
def _arange(cx, *args, **kwargs):
    t = cx.node.target
    if t is aten.arange.default:
        start, step = 0, 1
    elif t is aten.arange.start:
        start, step = args[0], 1
    else:
        start = args[0]
        step = args[2] if len(args) > 2 else kwargs.get("step", 1)
    dtype = cx.dtype
    acc = torch.float64 if is_float(dtype) else torch.int64
    n = cx.shape[0]

    def body(b, o):
        i = b.cast(b.index(0), acc)
        v = _add(b, b.const(start, acc), _mul(b, b.const(step, acc), i))
        return [v]
    out = cx.b.empty((n,), dtype)
    return cx.b.generic([], [], [out], [identity_map(1)], ["parallel"], body)[0]


@register(prims.iota.default)
def _iota(cx, length, *, start, step, dtype, device, requires_grad):
    def body(b, o):
        i = b.cast(b.index(0), torch.int64)
        return [_add(b, b.const(start, torch.int64), _mul(b, b.const(step, torch.int64), i))]
    out = cx.b.empty(cx.shape, cx.dtype)
    return cx.b.generic([], [], [out], [identity_map(1)], ["parallel"], body)[0]


@register(aten.linspace.default)
def _linspace(cx, start, end, steps, **kwargs):
    if isinstance(start, Value) or isinstance(end, Value):
        raise Unsupported("tensor linspace bounds")
    # Computed here in double, like the CPU kernel, and embedded.
    return cx.b.constant_tensor(torch.linspace(start, end, steps, dtype=cx.dtype))


# ---------------------------------------------------------------------------
# Reductions
# ---------------------------------------------------------------------------

def _sum_dtype(dtype):
    return torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype


def _empty_reduction(cx, x, value):
    """A reduction over no elements: its identity everywhere."""
    return cx.b.fill(value, cx.shape, cx.dtype)


@register(aten.sum.dim_IntList, aten.sum.default)
def _sum(cx, x, dim=None, keepdim=False, *, dtype=None):
    if x.name is None:
        return _empty_reduction(cx, x, 0)
    acc = _sum_dtype(cx.dtype)
    dims = _dims_arg(dim, x.rank)
    if x.rank == 0:
        return cx.b.convert(x, cx.dtype)
    r, = cx.b.reduce([x], dims, [(0, acc)],
                     lambda b, a, s: [_add(b, s, b.cast(a, acc))], keepdim)
    return cx.b.convert(r, cx.dtype)


@register(aten.prod.default, aten.prod.dim_int)
def _prod(cx, x, dim=None, keepdim=False, *, dtype=None):
    if x.name is None:
        return _empty_reduction(cx, x, 1)
    acc = _sum_dtype(cx.dtype)
    dims = _dims_arg(dim, x.rank)
    if x.rank == 0:
        return cx.b.convert(x, cx.dtype)
    r, = cx.b.reduce([x], dims, [(1, acc)],
                     lambda b, a, s: [_mul(b, s, b.cast(a, acc))], keepdim)
    return cx.b.convert(r, cx.dtype)


@register(aten.mean.dim, aten.mean.default)
def _mean(cx, x, dim=None, keepdim=False, *, dtype=None):
    if not is_float(cx.dtype):
        raise Unsupported("mean of integers")
    acc = _sum_dtype(cx.dtype)
    dims = _dims_arg(dim, x.rank)
    if x.rank == 0:
        return cx.b.convert(x, cx.dtype)
    n = math.prod(x.shape[d] for d in dims)
    s, = cx.b.reduce([x], dims, [(0, acc)],
                     lambda b, a, t: [_add(b, t, b.cast(a, acc))], keepdim)
    return ew(cx, [s], lambda b, a: _div(b, a, b.const(float(n), acc)), compute=acc)


def _minmax_reduce(cx, x, dims, keepdim, is_max):
    dt = x.dtype
    init = _fneg_inf(dt) if is_max else _fpos_inf(dt)
    comb = _max if is_max else _min
    if x.rank == 0:
        return x
    r, = cx.b.reduce([x], dims, [(init, dt)], lambda b, a, s: [comb(b, s, a)], keepdim)
    return r


@register(aten.amax.default, aten.amin.default)
def _amax(cx, x, dim=(), keepdim=False):
    return _minmax_reduce(cx, x, _dims_arg(dim, x.rank), keepdim,
                          cx.node.target is aten.amax.default)


@register(aten.max.default, aten.min.default)
def _max_all(cx, x):
    return _minmax_reduce(cx, x, list(range(x.rank)), False,
                          cx.node.target is aten.max.default)


def _arg_reduce(cx, x, dim, keepdim, is_max, want_values):
    """(values, indices) of max/min over ``dim`` (None: flattened); ties
    and NaNs resolved like ATen (first index; NaN wins), order-independently."""
    b = cx.b
    # dim=None reduces over every dim with the row-major flat index (no
    # reshape to 1-d needed).
    dims = list(range(x.rank)) if dim is None else [dim % x.rank if x.rank else 0]
    if x.rank == 0:
        vals = x
        idx = b.fill(0, (), torch.int64)
        return vals, idx
    dt = x.dtype
    init = _fneg_inf(dt) if is_max else _fpos_inf(dt)

    strides = [math.prod(x.shape[i + 1:]) for i in range(x.rank)]

    def body(b, a, m, mi):
        j = None
        for d in dims:
            t = b.cast(b.index(d), torch.int64)
            if dim is None and strides[d] != 1:
                t = _mul(b, t, b.const(strides[d], torch.int64))
            j = t if j is None else _add(b, j, t)
        better = b.cmp("gt" if is_max else "lt", a, m)
        equal = b.cmp("eq", a, m)
        if is_float(dt):
            a_nan = _is_nan(b, a)
            m_nan = _is_nan(b, m)
            better = _or(b, better, _and(b, a_nan, _not(b, m_nan)))
            equal = _or(b, equal, _and(b, a_nan, m_nan))
        earlier = b.cmp("lt", j, mi)
        take = _or(b, better, _and(b, equal, earlier))
        return [b.select(take, a, m), b.select(take, j, mi)]

    big = (1 << 62)
    vals, idx = b.reduce([x], dims, [(init, dt), (big, torch.int64)], body,
                         keepdim and dim is not None)
    # An all-(-inf) row keeps the initial index: fix it up to 0.
    idx = b.elementwise([idx], idx.shape, torch.int64,
                        lambda b, i: b.select(b.cmp("eq", i, b.const(big, torch.int64)),
                                              b.const(0, torch.int64), i))
    if dim is None and keepdim:
        shape = (1,) * len(cx.node.args[0].meta["val"].shape)
        vals, idx = b.reshape(vals, shape), b.reshape(idx, shape)
    return vals, idx


@register(aten.max.dim, aten.min.dim)
def _max_dim(cx, x, dim, keepdim=False):
    vals, idx = _arg_reduce(cx, x, dim, keepdim, cx.node.target is aten.max.dim, True)
    return [vals, idx]


@register(aten.argmax.default, aten.argmin.default)
def _argmax(cx, x, dim=None, keepdim=False):
    _, idx = _arg_reduce(cx, x, dim, keepdim, cx.node.target is aten.argmax.default, False)
    return cx.b.reshape(idx, cx.shape)


@register(aten.any.default, aten.any.dim, aten.any.dims, aten.all.default, aten.all.dim,
          aten.all.dims)
def _any_all(cx, x, dim=None, keepdim=False):
    is_any = cx.node.target in (aten.any.default, aten.any.dim, aten.any.dims)
    if x.name is None:
        return _empty_reduction(cx, x, not is_any)
    if x.rank == 0:
        return cx.b.convert(x, torch.bool)
    dims = _dims_arg(dim, x.rank)

    def body(b, a, s):
        a = b.cast(a, torch.bool)
        return [_or(b, s, a) if is_any else _and(b, s, a)]
    r, = cx.b.reduce([x], dims, [(not is_any, torch.bool)], body, keepdim)
    return cx.b.convert(r, cx.dtype)


def _var_impl(cx, x, dims, correction, keepdim):
    b = cx.b
    acc = _sum_dtype(x.dtype) if is_float(x.dtype) else torch.float32
    n = math.prod(x.shape[d] for d in dims) if x.rank else 1
    if x.rank == 0:
        x = b.reshape(x, (1,))
        dims = [0]
    s, = b.reduce([x], dims, [(0, acc)], lambda b, a, t: [_add(b, t, b.cast(a, acc))], True)
    mean = b.elementwise([s], s.shape, acc, lambda b, a: _div(b, a, b.const(float(n), acc)))

    def sq(b, a, m, t):
        d = _sub(b, b.cast(a, acc), m)
        return [_add(b, t, _mul(b, d, d))]
    out_shape = [1 if i in dims else x.shape[i] for i in range(x.rank)]
    kept = [i for i in range(x.rank) if i not in dims]
    acc0 = b.fill(0, [x.shape[i] for i in kept], acc)
    mv, mmap = b.broadcast_operand(mean, x.shape)
    ss, = b.generic([x, mv], [identity_map(x.rank), mmap],
                    [acc0], [affine_map(x.rank, [f"d{i}" for i in kept])],
                    ["reduction" if i in dims else "parallel" for i in range(x.rank)], sq)
    denom = float(max(0, n - correction))
    var = b.elementwise([ss], ss.shape, acc, lambda b, a: _div(b, a, b.const(denom, acc)))
    if keepdim:
        var = b.reshape(var, out_shape)
        mean_out = mean
    else:
        mean_out = b.reshape(mean, [x.shape[i] for i in kept])
    return var, mean_out


@register(aten.var.correction, aten.var.dim, aten.var.default)
def _var(cx, x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    if cx.node.target is aten.var.correction:
        correction = 1 if correction is None else correction
    else:
        if isinstance(dim, bool):  # var.default(x, unbiased)
            unbiased, dim = dim, None
        correction = 1 if unbiased is None or unbiased else 0
    dims = _dims_arg(dim, x.rank)
    var, _ = _var_impl(cx, x, dims, correction, keepdim)
    return cx.b.convert(cx.b.reshape(var, cx.shape), cx.dtype)


@register(aten.var_mean.correction)
def _var_mean(cx, x, dim=None, *, correction=None, keepdim=False):
    correction = 1 if correction is None else correction
    dims = _dims_arg(dim, x.rank)
    var, mean = _var_impl(cx, x, dims, correction, keepdim)
    shape = tuple(cx.result(0).shape)
    return [cx.b.convert(cx.b.reshape(var, shape), cx.result(0).dtype),
            cx.b.convert(cx.b.reshape(mean, shape), cx.result(1).dtype)]


def _scan(cx, x, dim, combine, init):
    """Inclusive scan along ``dim`` as a masked reduction over a second index
    (quadratic in the scanned size, which is fine for the sizes it gets)."""
    b = cx.b
    if x.rank == 0:
        return b.convert(x, cx.dtype)
    d = dim % x.rank
    acc = _sum_dtype(cx.dtype)
    r = x.rank
    in_map = affine_map(r + 1, [f"d{r}" if i == d else f"d{i}" for i in range(r)])
    out_map = affine_map(r + 1, [f"d{i}" for i in range(r)])
    init_t = b.fill(init, x.shape, acc)

    def body(b, a, s):
        i = b.index(d)
        k = b.index(r)
        inside = Scalar(b.op(f"arith.cmpi ule, {k.name}, {i.name} : index"), torch.bool)
        return [b.select(inside, combine(b, s, b.cast(a, acc)), s)]
    out, = b.generic([x], [in_map], [init_t], [out_map],
                     ["parallel"] * r + ["reduction"], body)
    return b.convert(out, cx.dtype)


@register(aten.cumsum.default)
def _cumsum(cx, x, dim, *, dtype=None):
    return _scan(cx, x, dim, _add, 0)


@register(aten.cumprod.default)
def _cumprod(cx, x, dim, *, dtype=None):
    return _scan(cx, x, dim, _mul, 1)


@register(aten._softmax.default, aten._log_softmax.default)
def _softmax(cx, x, dim, half_to_float=False):
    b = cx.b
    acc = compute_dtype(cx.dtype)
    if x.rank == 0:
        v = 0.0 if cx.node.target is aten._log_softmax.default else 1.0
        return ew(cx, [x], lambda b, a: b.select(_is_nan(b, a), a, b.const(v, a.dtype)))
    d = dim % x.rank
    xc = b.convert(x, acc)
    m, = b.reduce([xc], [d], [(-math.inf, acc)], lambda b, a, s: [_max(b, s, a)], True)
    e = b.elementwise([xc, m], x.shape, acc, lambda b, a, mm: b.un("math.exp", _sub(b, a, mm)))
    s, = b.reduce([e], [d], [(0, acc)], lambda b, a, t: [_add(b, t, a)], True)
    if cx.node.target is aten._softmax.default:
        return b.elementwise([e, s], x.shape, cx.dtype, lambda b, a, t: _div(b, a, t))
    return b.elementwise([xc, m, s], x.shape, cx.dtype,
                         lambda b, a, mm, t: _sub(b, _sub(b, a, mm), b.un("math.log", t)))


@register(aten.logsumexp.default)
def _logsumexp(cx, x, dim, keepdim=False):
    b = cx.b
    acc = compute_dtype(cx.dtype)
    dims = _dims_arg(dim, x.rank)
    if x.rank == 0:
        return b.convert(x, cx.dtype)
    xc = b.convert(x, acc)
    m, = b.reduce([xc], dims, [(-math.inf, acc)], lambda b, a, s: [_max(b, s, a)], True)

    def fix(b, mm):  # |max| = inf: subtract 0 instead
        inf = b.cmp("eq", b.un("math.absf", mm), b.const(math.inf, acc))
        return b.select(inf, _zero(b, acc), mm)
    m = b.elementwise([m], m.shape, acc, fix)
    e = b.elementwise([xc, m], x.shape, acc, lambda b, a, mm: b.un("math.exp", _sub(b, a, mm)))
    s, = b.reduce([e], dims, [(0, acc)], lambda b, a, t: [_add(b, t, a)], True)
    r = b.elementwise([s, m], s.shape, cx.dtype, lambda b, t, mm: _add(b, b.un("math.log", t), mm))
    return b.reshape(r, cx.shape)


# ---------------------------------------------------------------------------
# Contractions
# ---------------------------------------------------------------------------

def _acc_dtype(dtype):
    if dtype in (torch.float16, torch.bfloat16):
        return torch.float32
    if dtype == torch.bool:
        raise Unsupported("bool matmul")
    return dtype


def _matmul(b, x: Value, y: Value, out_dtype, batch: bool) -> Value:
    acc = _acc_dtype(out_dtype)
    if batch:
        shape = (x.shape[0], x.shape[1], y.shape[2])
        op = "linalg.batch_matmul"
    else:
        shape = (x.shape[0], y.shape[1])
        op = "linalg.matmul"
    init = b.fill(0, shape, acc)
    r = b.tensor_op(f"{op} ins({x.name}, {y.name} : {x.type}, {y.type}) "
                    f"outs({init.name} : {init.type}) -> {init.type}", shape, acc)
    return b.convert(r, out_dtype)


@register(aten.mm.default)
def _mm(cx, x, y):
    return _matmul(cx.b, x, y, cx.dtype, False)


@register(aten.bmm.default)
def _bmm(cx, x, y):
    return _matmul(cx.b, x, y, cx.dtype, True)


@register(aten.addmm.default)
def _addmm(cx, bias, x, y, *, beta=1, alpha=1):
    mm = _matmul(cx.b, x, y, compute_dtype(cx.dtype), False)
    if beta == 0:
        return ew(cx, [mm], lambda b, m: _alpha_mul(b, m, alpha))
    return ew(cx, [bias, mm], lambda b, c, m: _add(b, _alpha_mul(b, c, beta),
                                                   _alpha_mul(b, m, alpha)))


@register(aten.baddbmm.default)
def _baddbmm(cx, bias, x, y, *, beta=1, alpha=1):
    mm = _matmul(cx.b, x, y, compute_dtype(cx.dtype), True)
    if beta == 0:
        return ew(cx, [mm], lambda b, m: _alpha_mul(b, m, alpha))
    return ew(cx, [bias, mm], lambda b, c, m: _add(b, _alpha_mul(b, c, beta),
                                                   _alpha_mul(b, m, alpha)))


@register(aten.mv.default)
def _mv(cx, m, v):
    b = cx.b
    r = _matmul(b, m, b.reshape(v, (v.shape[0], 1)), cx.dtype, False)
    return b.reshape(r, cx.shape)


@register(aten.dot.default, aten.vdot.default)
def _dot(cx, x, y):
    b = cx.b
    r = _matmul(b, b.reshape(x, (1, x.shape[0])), b.reshape(y, (y.shape[0], 1)), cx.dtype, False)
    return b.reshape(r, ())


@register(aten.convolution.default)
def _convolution(cx, x, w, bias, stride, padding, dilation, transposed, output_padding,
                 groups):
    b = cx.b
    nd = x.rank - 2
    if transposed:
        return _conv_transpose(cx, x, w, bias, stride, padding, dilation, output_padding,
                               groups)
    if nd not in (1, 2, 3):
        raise Unsupported(f"{nd}-d convolution")
    if nd == 3 and groups != 1:
        raise Unsupported("grouped 3-d convolution")
    stride, padding, dilation = list(stride), list(padding), list(dilation)
    if len(stride) == 1:
        stride *= nd
    if len(padding) == 1:
        padding *= nd
    if len(dilation) == 1:
        dilation *= nd
    out_shape = cx.shape
    acc = _acc_dtype(cx.dtype)
    # padding: per dim, a size or a (low, high) pair (transposed convolution).
    padding = [p if isinstance(p, tuple) else (p, p) for p in padding]
    if nd == 1:  # as 2-d with a unit height
        x = b.reshape(x, (x.shape[0], x.shape[1], 1, x.shape[2]))
        w = b.reshape(w, (w.shape[0], w.shape[1], 1, w.shape[2]))
        stride, padding, dilation = [1] + stride, [(0, 0)] + padding, [1] + dilation
        conv_shape = (out_shape[0], out_shape[1], 1, out_shape[2])
        nd = 2
    else:
        conv_shape = out_shape
    x = b.pad(x, [0, 0] + [p[0] for p in padding], [0, 0] + [p[1] for p in padding], 0)
    attrs = (f"{{dilations = dense<[{', '.join(map(str, dilation))}]> : tensor<{nd}xi64>, "
             f"strides = dense<[{', '.join(map(str, stride))}]> : tensor<{nd}xi64>}}")
    if groups == 1:
        op = "linalg.conv_2d_nchw_fchw" if nd == 2 else "linalg.conv_3d_ncdhw_fcdhw"
        init = b.fill(0, conv_shape, acc)
        r = b.tensor_op(f"{op} {attrs} ins({x.name}, {w.name} : {x.type}, {w.type}) "
                        f"outs({init.name} : {init.type}) -> {init.type}", conv_shape, acc)
    else:
        n, c = x.shape[0], x.shape[1]
        f = w.shape[0]
        g = groups
        xg = b.reshape(x, (n, g, c // g) + x.shape[2:])
        wg = b.reshape(w, (g, f // g) + w.shape[1:])
        gshape = (conv_shape[0], g, f // g) + tuple(conv_shape[2:])
        init = b.fill(0, gshape, acc)
        r = b.tensor_op(f"linalg.conv_2d_ngchw_gfchw {attrs} ins({xg.name}, {wg.name} : "
                        f"{xg.type}, {wg.type}) outs({init.name} : {init.type}) -> {init.type}",
                        gshape, acc)
        r = b.reshape(r, conv_shape)
    r = b.reshape(r, out_shape)
    if bias is None:
        return b.convert(r, cx.dtype)
    bshape = (1, out_shape[1]) + (1,) * (len(out_shape) - 2)
    return ew(cx, [r, b.reshape(bias, bshape)], _add)


# ---------------------------------------------------------------------------
# Normalization
# ---------------------------------------------------------------------------

@register(aten.native_layer_norm.default)
def _layer_norm(cx, x, normalized_shape, weight, bias, eps):
    b = cx.b
    acc = compute_dtype(x.dtype)
    k = len(normalized_shape)
    dims = list(range(x.rank - k, x.rank))
    xc = b.convert(x, acc)
    var, mean = _var_impl(cx, xc, dims, 0, True)
    rstd = b.elementwise([var], var.shape, acc,
                         lambda b, v: b.un("math.rsqrt", _add(b, v, b.const(eps, acc))))
    ops = [xc, mean, rstd]
    wshape = (1,) * (x.rank - k) + tuple(normalized_shape)
    if weight is not None:
        ops.append(b.reshape(weight, wshape))
    if bias is not None:
        ops.append(b.reshape(bias, wshape))

    def f(b, a, m, r, *wb):
        y = _mul(b, _sub(b, a, m), r)
        it = iter(wb)
        if weight is not None:
            y = _mul(b, y, b.cast(next(it), acc))
        if bias is not None:
            y = _add(b, y, b.cast(next(it), acc))
        return y
    out = b.elementwise(ops, x.shape, cx.result(0).dtype, f)
    mean_shape, rstd_shape = tuple(cx.result(1).shape), tuple(cx.result(2).shape)
    return [out,
            b.convert(b.reshape(mean, mean_shape), cx.result(1).dtype) if cx.used(1) else None,
            b.convert(b.reshape(rstd, rstd_shape), cx.result(2).dtype) if cx.used(2) else None]


@register(aten._native_batch_norm_legit_no_training.default)
def _batch_norm_inference(cx, x, weight, bias, running_mean, running_var, momentum, eps):
    b = cx.b
    if cx.used(1) or cx.used(2):
        raise Unsupported("saved statistics of inference batch_norm")
    acc = compute_dtype(x.dtype)
    c = x.shape[1]
    cshape = (1, c) + (1,) * (x.rank - 2)
    ops = [x, b.reshape(running_mean, cshape), b.reshape(running_var, cshape)]
    if weight is not None:
        ops.append(b.reshape(weight, cshape))
    if bias is not None:
        ops.append(b.reshape(bias, cshape))

    def f(b, a, m, v, *wb):
        a, m, v = b.cast(a, acc), b.cast(m, acc), b.cast(v, acc)
        invstd = _div(b, b.const(1.0, acc), b.un("math.sqrt", _add(b, v, b.const(eps, acc))))
        y = _mul(b, _sub(b, a, m), invstd)
        it = iter(wb)
        if weight is not None:
            y = _mul(b, y, b.cast(next(it), acc))
        if bias is not None:
            y = _add(b, y, b.cast(next(it), acc))
        return y
    return [b.elementwise(ops, x.shape, cx.result(0).dtype, f), None, None]


@register(aten.native_group_norm.default)
def _group_norm(cx, x, weight, bias, n, c, hw, group, eps):
    b = cx.b
    acc = compute_dtype(x.dtype)
    xg = b.convert(b.reshape(x, (n, group, (c // group) * hw)), acc)
    var, mean = _var_impl(cx, xg, [2], 0, True)
    rstd = b.elementwise([var], var.shape, acc,
                         lambda b, v: b.un("math.rsqrt", _add(b, v, b.const(eps, acc))))
    shape4 = (n, group, c // group, hw)
    xs = b.reshape(xg, shape4)
    ms = b.reshape(mean, (n, group, 1, 1))
    rs = b.reshape(rstd, (n, group, 1, 1))
    ops = [xs, ms, rs]
    if weight is not None:
        ops.append(b.reshape(weight, (1, group, c // group, 1)))
    if bias is not None:
        ops.append(b.reshape(bias, (1, group, c // group, 1)))

    def f(b, a, m, r, *wb):
        y = _mul(b, _sub(b, a, m), r)
        it = iter(wb)
        if weight is not None:
            y = _mul(b, y, b.cast(next(it), acc))
        if bias is not None:
            y = _add(b, y, b.cast(next(it), acc))
        return y
    out = b.elementwise(ops, shape4, cx.result(0).dtype, f)
    out = b.reshape(out, tuple(cx.result(0).shape))
    return [out,
            b.convert(b.reshape(mean, (n, group)), cx.result(1).dtype) if cx.used(1) else None,
            b.convert(b.reshape(rstd, (n, group)), cx.result(2).dtype) if cx.used(2) else None]


# ---------------------------------------------------------------------------
# Pooling
# ---------------------------------------------------------------------------

def _pool_params(nd, kernel, stride, padding, dilation=1):
    kernel = list(kernel) if isinstance(kernel, (list, tuple)) else [kernel]
    kernel = kernel * nd if len(kernel) == 1 else kernel
    stride = list(stride) if isinstance(stride, (list, tuple)) else [stride]
    stride = kernel if not stride else (stride * nd if len(stride) == 1 else stride)
    padding = list(padding) if isinstance(padding, (list, tuple)) else [padding]
    padding = padding * nd if len(padding) == 1 else padding
    dilation = list(dilation) if isinstance(dilation, (list, tuple)) else [dilation]
    dilation = dilation * nd if len(dilation) == 1 else dilation
    return kernel, stride, padding, dilation


def _pool(b, x: Value, kind: str, kernel, stride, dilation, out_shape, init, acc) -> Value:
    nd = len(kernel)
    if nd != 2:
        raise Unsupported(f"{nd}-d pooling")
    wnd = b.empty(kernel, acc)
    out = b.fill(init, out_shape, acc)
    attrs = (f"{{dilations = dense<[{', '.join(map(str, dilation))}]> : tensor<2xi64>, "
             f"strides = dense<[{', '.join(map(str, stride))}]> : tensor<2xi64>}}")
    return b.tensor_op(f"linalg.pooling_nchw_{kind} {attrs} ins({x.name}, {wnd.name} : "
                       f"{x.type}, {wnd.type}) outs({out.name} : {out.type}) -> {out.type}",
                       out_shape, acc)


def _pad_for_pool(b, x, kernel, stride, padding, dilation, out_spatial, value):
    """Pads the spatial dims so every window of the output fits (ceil_mode
    windows may read past the explicit padding; those reads see ``value``)."""
    low, high = [0, 0], [0, 0]
    for i, (k, s, p, d, o) in enumerate(zip(kernel, stride, padding, dilation, out_spatial)):
        size = x.shape[2 + i]
        need = (o - 1) * s + (k - 1) * d + 1
        low.append(p)
        high.append(max(need - size - p, 0))
    return b.pad(x, low, high, value)


@register(aten.max_pool2d_with_indices.default)
def _max_pool2d(cx, x, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    b = cx.b
    if cx.used(1):
        raise Unsupported("max_pool2d indices")
    kernel, stride, padding, dilation = _pool_params(2, kernel_size, stride, padding, dilation)
    out_shape = tuple(cx.result(0).shape)
    squeeze = x.rank == 3
    if squeeze:
        x = b.reshape(x, (1,) + x.shape)
        out_shape = (1,) + out_shape
    init = _fneg_inf(x.dtype)
    xp = _pad_for_pool(b, x, kernel, stride, padding, dilation, out_shape[2:], init)
    r = _pool(b, xp, "max", kernel, stride, dilation, out_shape, init, x.dtype)
    return [b.reshape(r, tuple(cx.result(0).shape)), None]


@register(aten.avg_pool2d.default)
def _avg_pool2d(cx, x, kernel_size, stride=(), padding=0, ceil_mode=False,
                count_include_pad=True, divisor_override=None):
    b = cx.b
    kernel, stride, padding, _ = _pool_params(2, kernel_size, stride, padding)
    out_shape = cx.shape
    squeeze = x.rank == 3
    if squeeze:
        x = b.reshape(x, (1,) + x.shape)
        out_shape = (1,) + out_shape
    acc = compute_dtype(x.dtype)
    if not is_float(x.dtype):
        raise Unsupported("integer avg_pool2d")
    xc = b.convert(x, acc)
    H, W = x.shape[2], x.shape[3]
    OH, OW = out_shape[2], out_shape[3]
    xp = _pad_for_pool(b, xc, kernel, stride, padding, [1, 1], (OH, OW), 0)
    s = _pool(b, xp, "sum", kernel, stride, [1, 1], out_shape, 0, acc)
    if divisor_override:
        div = b.fill(float(divisor_override), (1, 1, 1, 1), acc)
    else:  # ATen's divisor per output position
        d = torch.empty(OH, OW, dtype=torch.float64)
        for oh in range(OH):
            for ow in range(OW):
                hs, ws = oh * stride[0] - padding[0], ow * stride[1] - padding[1]
                he, we = min(hs + kernel[0], H + padding[0]), min(ws + kernel[1], W + padding[1])
                pool = (he - hs) * (we - ws)
                hs, ws, he, we = max(hs, 0), max(ws, 0), min(he, H), min(we, W)
                d[oh, ow] = pool if count_include_pad else (he - hs) * (we - ws)
        div = b.reshape(b.constant_tensor(d.to(acc)), (1, 1, OH, OW))
    r = b.elementwise([s, div], out_shape, x.dtype, lambda b, a, q: _div(b, a, q))
    return b.reshape(r, cx.shape)


@register(aten._adaptive_avg_pool2d.default, aten.adaptive_avg_pool2d.default)
def _adaptive_avg_pool2d(cx, x, output_size):
    b = cx.b
    out_shape = cx.shape
    squeeze = x.rank == 3
    if squeeze:
        x = b.reshape(x, (1,) + x.shape)
        out_shape = (1,) + out_shape
    if not is_float(x.dtype):
        raise Unsupported("integer adaptive_avg_pool2d")
    acc = compute_dtype(x.dtype)
    xc = b.convert(x, acc)
    N, C, H, W = x.shape
    OH, OW = out_shape[2], out_shape[3]
    if H % OH == 0 and W % OW == 0:
        kh, kw = H // OH, W // OW
        s = _pool(b, xc, "sum", [kh, kw], [kh, kw], [1, 1], out_shape, 0, acc)
        r = ew(cx, [s], lambda b, a: _div(b, a, b.const(float(kh * kw), acc)),
               out_dtype=x.dtype, out_shape=out_shape)
        return b.reshape(r, cx.shape)
    # General bins: sum through 0/1 bin masks, then divide by the bin sizes.
    mh = torch.zeros(OH, H, dtype=acc)
    mw = torch.zeros(OW, W, dtype=acc)
    cnt = torch.zeros(OH, OW, dtype=torch.float64)
    for i in range(OH):
        hs, he = (i * H) // OH, -((-(i + 1) * H) // OH)
        mh[i, hs:he] = 1
        for j in range(OW):
            ws, we = (j * W) // OW, -((-(j + 1) * W) // OW)
            cnt[i, j] = (he - hs) * (we - ws)
    for j in range(OW):
        ws, we = (j * W) // OW, -((-(j + 1) * W) // OW)
        mw[j, ws:we] = 1
    mhv, mwv = b.constant_tensor(mh), b.constant_tensor(mw)
    init = b.fill(0, (N, C, OH, OW), acc)
    # dims: n c i j h w
    s, = b.generic([xc, mhv, mwv],
                   [affine_map(6, ["d0", "d1", "d4", "d5"]), affine_map(6, ["d2", "d4"]),
                    affine_map(6, ["d3", "d5"])],
                   [init], [affine_map(6, ["d0", "d1", "d2", "d3"])],
                   ["parallel"] * 4 + ["reduction"] * 2,
                   lambda b, a, p, q, o: [_add(b, o, _mul(b, a, _mul(b, p, q)))])
    cv = b.reshape(b.constant_tensor(cnt.to(acc)), (1, 1, OH, OW))
    r = b.elementwise([s, cv], out_shape, x.dtype, lambda b, a, q: _div(b, a, q))
    return b.reshape(r, cx.shape)


# ---------------------------------------------------------------------------
# Shapes, slicing, indexing
# ---------------------------------------------------------------------------

def _norm_slice(start, end, step, size):
    start = 0 if start is None else start
    end = size if end is None else end
    if start < 0:
        start += size
    if end < 0:
        end += size
    start = min(max(start, 0), size)
    end = min(max(end, start), size)
    return start, end, step


@register(aten.slice.Tensor, aten.slice_copy.Tensor)
def _slice(cx, x, dim=0, start=None, end=None, step=1):
    d = dim % x.rank
    start, end, step = _norm_slice(start, end, step, x.shape[d])
    offsets = [0] * x.rank
    strides = [1] * x.rank
    offsets[d], strides[d] = start, step
    return cx.b.extract_slice(x, offsets, cx.shape, strides)


@register(aten.select.int, aten.select_copy.int)
def _select(cx, x, dim, index):
    d = dim % x.rank
    index = index + x.shape[d] if index < 0 else index
    offsets = [0] * x.rank
    offsets[d] = index
    sizes = list(x.shape)
    sizes[d] = 1
    return cx.b.extract_slice(x, offsets, sizes, [1] * x.rank, result_shape=cx.shape)


@register(aten.split_with_sizes.default, aten.split.Tensor, aten.split_with_sizes_copy.default,
          aten.split_copy.Tensor, aten.unsafe_split.Tensor)
def _split(cx, x, sizes, dim=0):
    d = dim % x.rank
    outs = []
    off = 0
    for i, r in enumerate(cx.out):
        n = int(r.shape[d])
        if cx.used(i) and r.numel() > 0:
            offsets = [0] * x.rank
            offsets[d] = off
            outs.append(cx.b.extract_slice(x, offsets, tuple(r.shape), [1] * x.rank))
        else:
            outs.append(None)
        off += n
    return outs


@register(aten.unbind.int, aten.unbind_copy.int)
def _unbind(cx, x, dim=0):
    d = dim % x.rank
    outs = []
    for i, r in enumerate(cx.out):
        if not cx.used(i) or r.numel() == 0:
            outs.append(None)
            continue
        offsets = [0] * x.rank
        offsets[d] = i
        sizes = list(x.shape)
        sizes[d] = 1
        outs.append(cx.b.extract_slice(x, offsets, sizes, [1] * x.rank,
                                       result_shape=tuple(r.shape)))
    return outs


@register(aten.cat.default)
def _cat(cx, tensors, dim=0):
    tensors = [t for t in tensors if t.name is not None]  # drop empty tensors
    d = dim % len(cx.shape)
    tensors = [cx.b.convert(t, cx.dtype) for t in tensors]
    if len(tensors) == 1:
        return tensors[0]
    return cx.b.concat(tensors, d, cx.shape, cx.dtype)


@register(aten.stack.default)
def _stack(cx, tensors, dim=0):
    d = dim % len(cx.shape)
    parts = []
    for t in tensors:
        shape = list(t.shape)
        shape.insert(d, 1)
        parts.append(cx.b.reshape(cx.b.convert(t, cx.dtype), shape))
    if len(parts) == 1:
        return parts[0]
    return cx.b.concat(parts, d, cx.shape, cx.dtype)


@register(aten.constant_pad_nd.default)
def _constant_pad_nd(cx, x, pad, value=0):
    b = cx.b
    n = len(pad) // 2
    low, high = [0] * x.rank, [0] * x.rank
    for i in range(n):
        low[x.rank - 1 - i] = pad[2 * i]
        high[x.rank - 1 - i] = pad[2 * i + 1]
    if any(v < 0 for v in low + high):  # negative padding crops first
        offsets = [max(-v, 0) for v in low]
        sizes = [s - max(-lo, 0) - max(-hi, 0) for s, lo, hi in zip(x.shape, low, high)]
        x = b.extract_slice(x, offsets, sizes, [1] * x.rank)
        low, high = [max(v, 0) for v in low], [max(v, 0) for v in high]
    return b.pad(x, low, high, value)


def _gather_body(b, src: Value, idx_fn):
    """Scalar src[idx_fn(b)] inside a region."""
    idx = idx_fn(b)
    return Scalar(b.op(f"tensor.extract {src.name}[{', '.join(i.name for i in idx)}] : "
                       f"{src.type}"), src.dtype)


def _wrap_index(b, i: Scalar, size: int) -> Scalar:
    """An index value from an integer tensor element: negative values wrap,
    then it is clamped into [0, size) so a bad index never reads out of
    bounds (eager raises for those)."""
    i = b.cast(i, torch.int64)
    n = b.const(size, torch.int64)
    z = b.const(0, torch.int64)
    i = b.select(b.cmp("lt", i, z), _add(b, i, n), i)
    i = b.bin("arith.maxsi", i, z)
    i = b.bin("arith.minsi", i, b.const(size - 1, torch.int64))
    return b.cast(i, INDEX)


@register(aten.index_select.default)
def _index_select(cx, x, dim, index):
    b = cx.b
    d = dim % x.rank if x.rank else 0
    if x.rank == 0:
        return b.reshape(x, cx.shape)
    idx = b.reshape(index, (index.numel,))
    out = b.empty(cx.shape, cx.dtype)
    r = len(cx.shape)

    def body(b, k, o):
        def idx_fn(b):
            return [_wrap_index(b, k, x.shape[d]) if i == d else b.index(i) for i in range(r)]
        return [_gather_body(b, x, idx_fn)]
    return b.generic([idx], [affine_map(r, [f"d{d}"])], [out], [identity_map(r)],
                     ["parallel"] * r, body)[0]


@register(aten.gather.default)
def _gather(cx, x, dim, index, sparse_grad=False):
    b = cx.b
    r = len(cx.shape)
    if x.rank == 0:
        return b.reshape(x, cx.shape)
    d = dim % x.rank
    out = b.empty(cx.shape, cx.dtype)

    def body(b, k, o):
        def idx_fn(b):
            return [_wrap_index(b, k, x.shape[d]) if i == d else b.index(i) for i in range(r)]
        return [_gather_body(b, x, idx_fn)]
    return b.generic([index], [identity_map(r)], [out], [identity_map(r)],
                     ["parallel"] * r, body)[0]


@register(aten.embedding.default)
def _embedding(cx, weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    b = cx.b
    r = len(cx.shape)
    ir = indices.rank
    out = b.empty(cx.shape, cx.dtype)

    def body(b, k, o):
        def idx_fn(b):
            return [_wrap_index(b, k, weight.shape[0]), b.index(r - 1)]
        return [_gather_body(b, weight, idx_fn)]
    return b.generic([indices], [affine_map(r, [f"d{i}" for i in range(ir)])], [out],
                     [identity_map(r)], ["parallel"] * r, body)[0]


@register(aten.index.Tensor, aten._unsafe_index.Tensor)
def _index(cx, x, indices):
    """Advanced indexing x[i0, i1, ...] with index tensors (None = full
    slice); bool masks are data-dependent and not supported."""
    b = cx.b
    indices = list(indices) + [None] * (x.rank - len(indices))
    if any(i is not None and i.dtype == torch.bool for i in indices):
        raise Unsupported("boolean mask indexing")
    pos = [i for i, t in enumerate(indices) if t is not None]
    bshape = tuple(torch.broadcast_shapes(*[torch.Size(indices[i].shape) for i in pos]))
    adjacent = pos == list(range(pos[0], pos[-1] + 1))
    r = len(cx.shape)
    br = len(bshape)
    # Output dims: [before..., bcast..., after...] when adjacent, else [bcast..., rest...]
    if adjacent:
        first = pos[0]
        bdims = list(range(first, first + br))
    else:
        first = 0
        bdims = list(range(0, br))
    out = b.empty(cx.shape, cx.dtype)
    ins, maps = [], []
    for i in pos:
        t = indices[i]
        res, keep = [], []
        for k, s in enumerate(t.shape):
            od = bdims[br - t.rank + k]
            if s == bshape[br - t.rank + k]:
                res.append(f"d{od}")
                keep.append(s)
        ins.append(b.reshape(t, keep) if len(keep) != t.rank else t)
        maps.append(affine_map(r, res))
    # Which output dim feeds each non-indexed input dim.
    other_dims = [d for d in range(r) if d not in bdims]
    src_of = {}
    it = iter(other_dims)
    for i in range(x.rank):
        if indices[i] is None:
            src_of[i] = next(it)

    def body(b, *s):
        ks = s[:len(ins)]

        def idx_fn(b):
            res = []
            kit = iter(ks)
            for i in range(x.rank):
                if indices[i] is None:
                    res.append(b.index(src_of[i]))
                else:
                    res.append(_wrap_index(b, next(kit), x.shape[i]))
            return res
        return [_gather_body(b, x, idx_fn)]
    return b.generic(ins, maps, [out], [identity_map(r)], ["parallel"] * r, body)[0]


@register(aten.flip.default)
def _flip(cx, x, dims):
    b = cx.b
    if x.rank == 0:
        return x
    dims = {d % x.rank for d in dims}
    res = [f"-d{i} + {x.shape[i] - 1}" if i in dims else f"d{i}" for i in range(x.rank)]
    out = b.empty(x.shape, x.dtype)
    return b.generic([x], [affine_map(x.rank, res)], [out], [identity_map(x.rank)],
                     ["parallel"] * x.rank, lambda b, a, o: [a])[0]


@register(aten.roll.default)
def _roll(cx, x, shifts, dims=()):
    b = cx.b
    shifts = list(shifts) if isinstance(shifts, (list, tuple)) else [shifts]
    dims = list(dims) if isinstance(dims, (list, tuple)) else [dims]
    if not dims:
        flat = b.reshape(x, (x.numel,))
        return b.reshape(_roll_dims(b, flat, shifts, [0]), cx.shape)
    return _roll_dims(b, x, shifts, dims)


def _roll_dims(b, x, shifts, dims):
    for s, d in zip(shifts, dims):
        d %= x.rank
        n = x.shape[d]
        s %= n
        if s == 0:
            continue
        offs = [0] * x.rank
        sizes = list(x.shape)
        offs[d], sizes[d] = n - s, s
        tail = b.extract_slice(x, offs, sizes, [1] * x.rank)
        offs2 = [0] * x.rank
        sizes2 = list(x.shape)
        sizes2[d] = n - s
        head = b.extract_slice(x, offs2, sizes2, [1] * x.rank)
        x = b.concat([tail, head], d, x.shape, x.dtype)
    return x


@register(aten.as_strided.default, aten.as_strided_copy.default)
def _as_strided(cx, x, size, stride, storage_offset=None):
    """as_strided over a contiguous input: a gather from its flat storage."""
    b = cx.b
    src = cx.node.args[0].meta["val"]
    if not src.is_contiguous() or src.storage_offset() != 0:
        raise Unsupported("as_strided of a non-contiguous input")
    flat = b.reshape(x, (max(x.numel, 1),)) if x.rank else b.reshape(x, (1,))
    off = storage_offset or 0
    r = len(cx.shape)
    out = b.empty(cx.shape, cx.dtype)

    def body(b, o):
        def idx_fn(b):
            acc = b.const(off, INDEX)
            for i in range(r):
                term = Scalar(b.op(f"arith.muli {b.index(i).name}, "
                                   f"{b.const(stride[i], INDEX).name} : index"), INDEX)
                acc = Scalar(b.op(f"arith.addi {acc.name}, {term.name} : index"), INDEX)
            return [acc]
        return [_gather_body(b, flat, idx_fn)]
    return b.generic([], [], [out], [identity_map(r)], ["parallel"] * r, body)[0]


@register(aten.diagonal.default, aten.diagonal_copy.default)
def _diagonal(cx, x, offset=0, dim1=0, dim2=1):
    b = cx.b
    d1, d2 = dim1 % x.rank, dim2 % x.rank
    r = len(cx.shape)
    rest = [i for i in range(x.rank) if i not in (d1, d2)]
    res = [None] * x.rank
    for k, i in enumerate(rest):
        res[i] = f"d{k}"
    diag = f"d{r - 1}"
    res[d1] = f"{diag} + {max(-offset, 0)}"
    res[d2] = f"{diag} + {max(offset, 0)}"
    out = b.empty(cx.shape, cx.dtype)
    return b.generic([x], [affine_map(r, res)], [out], [identity_map(r)],
                     ["parallel"] * r, lambda b, a, o: [a])[0]


@register(aten.repeat.default)
def _repeat(cx, x, repeats):
    b = cx.b
    r = len(repeats)
    x = b.reshape(x, (1,) * (r - x.rank) + x.shape)
    # Broadcast to [rep0, s0, rep1, s1, ...] then collapse pairs.
    inter = []
    for rep, s in zip(repeats, x.shape):
        inter += [rep, s]
    xe = b.reshape(x, sum(([1, s] for s in x.shape), []))
    return b.reshape(b.broadcast_to(xe, inter), cx.shape)


@register(aten.tril.default, aten.triu.default)
def _tri(cx, x, diagonal=0):
    r = x.rank
    lower = cx.node.target is aten.tril.default

    def f(b, a):
        i = b.cast(b.index(r - 2), torch.int64)
        j = b.cast(b.index(r - 1), torch.int64)
        jd = _sub(b, j, b.const(diagonal, torch.int64))
        keep = b.cmp("le" if lower else "ge", jd, i)
        return b.select(keep, a, _zero(b, a.dtype))
    return ew(cx, [x], f, compute=x.dtype)


@register(aten.linalg_vector_norm.default)
def _vector_norm(cx, x, ord=2, dim=None, keepdim=False, *, dtype=None):
    b = cx.b
    if not is_float(cx.dtype):
        raise Unsupported("integer norm")
    acc = compute_dtype(cx.dtype)
    if x.rank == 0:
        x = b.reshape(x, (1,))
        dims = [0]
    else:
        dims = _dims_arg(dim, x.rank)
    ord = float(ord)
    if ord == math.inf or ord == -math.inf:
        init = 0.0 if ord > 0 else math.inf
        comb = _max if ord > 0 else _min
        r, = b.reduce([x], dims, [(init, acc)],
                      lambda b, a, s: [comb(b, s, b.un("math.absf", b.cast(a, acc)))], keepdim)
        return b.convert(b.reshape(r, cx.shape), cx.dtype)
    if ord == 0:
        r, = b.reduce([x], dims, [(0.0, acc)],
                      lambda b, a, s: [_add(b, s, b.cast(b.cmp("ne", b.cast(a, acc),
                                                               _zero(b, acc)), acc))], keepdim)
        return b.convert(b.reshape(r, cx.shape), cx.dtype)

    def body(b, a, s):
        v = b.un("math.absf", b.cast(a, acc))
        if ord == 2:
            p = _mul(b, v, v)
        elif ord == 1:
            p = v
        else:
            p = b.bin("math.powf", v, b.const(ord, acc))
        return [_add(b, s, p)]
    r, = b.reduce([x], dims, [(0.0, acc)], body, keepdim)
    if ord == 2:
        fin = (lambda b, a: b.un("math.sqrt", a))
    elif ord == 1:
        fin = (lambda b, a: a)
    else:
        fin = (lambda b, a: b.bin("math.powf", a, b.const(1.0 / ord, acc)))
    out = b.elementwise([r], r.shape, cx.dtype, fin)
    return b.reshape(out, cx.shape)


# ---------------------------------------------------------------------------
# Scatters: each output element gathers the updates that land on it, as a
# reduction over the update positions (quadratic, exact, race-free).
# ---------------------------------------------------------------------------

def _extract(b, src: Value, idx) -> Scalar:
    return Scalar(b.op(f"tensor.extract {src.name}[{', '.join(i.name for i in idx)}] : "
                       f"{src.type}"), src.dtype)


def _index_lt(b, i: Scalar, n: int) -> Scalar:
    return Scalar(b.op(f"arith.cmpi ult, {i.name}, {b.const(n, INDEX).name} : index"),
                  torch.bool)


def _clamp_index(b, i: Scalar, n: int) -> Scalar:
    return Scalar(b.op(f"arith.minui {i.name}, {b.const(n - 1, INDEX).name} : index"), INDEX)


_SCATTER_COMBINE = {
    "sum": (0, _add), "add": (0, _add), "prod": (1, _mul), "multiply": (1, _mul),
    "amax": (None, _max), "amin": (None, _min), "mean": (0, _add),
}


def _scatter_impl(cx, x, dim, index, src, reduce=None, include_self=True):
    """out = x with src[j] combined into out[.., index[j], ..] along ``dim``
    (torch.scatter / scatter_add / scatter_reduce semantics)."""
    b = cx.b
    if x.rank == 0 or index.name is None:
        return b.convert(x, cx.dtype)
    d = dim % x.rank
    r = x.rank
    acc_dt = x.dtype
    if reduce is None:
        init_v, comb = 0, (lambda b, acc, v: v)
    else:
        init_v, comb = _SCATTER_COMBINE[reduce]
    if init_v is None:
        init_v = _fneg_inf(acc_dt) if reduce == "amax" else _fpos_inf(acc_dt)
    acc0 = b.fill(init_v, x.shape, acc_dt)
    cnt0 = b.fill(0, x.shape, torch.int64)
    jdim = r  # the extra (reduction) iteration dim: position along `dim` in index

    def body(b, acc, cnt):
        coords = [b.index(i) for i in range(r)]
        j = b.index(jdim)
        valid = None
        for k in range(r):
            if k == d:
                continue
            if index.shape[k] < x.shape[k]:
                lt = _index_lt(b, coords[k], index.shape[k])
                valid = lt if valid is None else _and(b, valid, lt)
        pos = [(_clamp_index(b, coords[k], index.shape[k]) if index.shape[k] < x.shape[k]
                else coords[k]) if k != d else j for k in range(r)]
        target = _wrap_index(b, _extract(b, index, pos), x.shape[d])
        hit = Scalar(b.op(f"arith.cmpi eq, {target.name}, {coords[d].name} : index"), torch.bool)
        if valid is not None:
            hit = _and(b, hit, valid)
        if isinstance(src, Value):
            spos = [_clamp_index(b, p, src.shape[k]) if src.shape[k] < index.shape[k] else p
                    for k, p in enumerate(pos)]
            v = b.cast(_extract(b, src, spos), acc_dt)
        else:
            v = b.const(src, acc_dt)
        new = comb(b, acc, v)
        one = b.const(1, torch.int64)
        return [b.select(hit, new, acc), b.select(hit, _add(b, cnt, one), cnt)]

    maps = [affine_map(r + 1, [f"d{i}" for i in range(r)])] * 2
    # A (never read) operand that gives the extra dim its extent.
    extent = b.fill(0, (index.shape[d],), torch.int8)
    acc, cnt = b.generic([extent], [affine_map(r + 1, [f"d{r}"])], [acc0, cnt0], maps,
                         ["parallel"] * r + ["reduction"], lambda b, _e, a, c: body(b, a, c))
    # Combine with x.
    def fin(b, xv, a, c):
        z = b.const(0, torch.int64)
        touched = b.cmp("gt", c, z)
        if reduce is None:
            return b.select(touched, a, xv)
        if reduce == "mean":
            cf = b.cast(c, acc_dt)
            if include_self:
                num = _add(b, xv, a)
                den = _add(b, cf, b.const(1, acc_dt))
            else:
                num, den = a, cf
            q = _div(b, num, den) if is_float(acc_dt) else b.bin("arith.floordivsi", num, den)
            return b.select(touched, q, xv)
        merged = comb(b, xv, a) if include_self else a
        return b.select(touched, merged, xv)
    return b.elementwise([x, acc, cnt], x.shape, cx.dtype, fin)


@register(aten.scatter.src, aten.scatter.value)
def _scatter(cx, x, dim, index, src, *, reduce=None):
    if reduce is not None:
        reduce = {"add": "sum", "multiply": "prod"}[reduce]
    return _scatter_impl(cx, x, dim, index, src, reduce)


@register(aten.scatter.reduce, aten.scatter.value_reduce)
def _scatter_reduce_legacy(cx, x, dim, index, src, reduce):
    return _scatter_impl(cx, x, dim, index, src, {"add": "sum", "multiply": "prod"}[reduce])


@register(aten.scatter_add.default)
def _scatter_add(cx, x, dim, index, src):
    return _scatter_impl(cx, x, dim, index, src, "sum")


@register(aten.scatter_reduce.two)
def _scatter_reduce(cx, x, dim, index, src, reduce, *, include_self=True):
    return _scatter_impl(cx, x, dim, index, src, reduce, include_self)


@register(aten.index_put.default, aten._unsafe_index_put.default)
def _index_put(cx, x, indices, values, accumulate=False):
    """x[indices] = values (or += with accumulate), by the same gathering
    reduction over the positions of the (broadcast) index tensors."""
    b = cx.b
    indices = list(indices) + [None] * (x.rank - len(indices))
    if any(i is not None and (i.dtype == torch.bool or i.name is None) for i in indices):
        raise Unsupported("boolean mask or empty index in index_put")
    pos = [i for i, t in enumerate(indices) if t is not None]
    bshape = tuple(torch.broadcast_shapes(*[torch.Size(indices[i].shape) for i in pos]))
    adjacent = pos == list(range(pos[0], pos[-1] + 1))
    r, br = x.rank, len(bshape)
    # Shape of x[indices] (what values broadcasts to), as iteration dims:
    # x's dims are d0..d{r-1}, the index positions d{r}..d{r+br-1}.
    rest = [i for i in range(r) if indices[i] is None]
    if adjacent:
        res_dims = [f"d{i}" for i in range(pos[0])] + [f"d{r + k}" for k in range(br)] + \
                   [f"d{i}" for i in range(pos[-1] + 1, r)]
        res_shape = list(x.shape[:pos[0]]) + list(bshape) + list(x.shape[pos[-1] + 1:])
    else:
        res_dims = [f"d{r + k}" for k in range(br)] + [f"d{i}" for i in rest]
        res_shape = list(bshape) + [x.shape[i] for i in rest]
    n = r + br
    ins, maps = [], []
    # values, broadcast to res_shape
    vr = values.rank
    keep, vmap = [], []
    for k, s in enumerate(values.shape):
        od = len(res_shape) - vr + k
        if s == res_shape[od]:
            keep.append(s)
            vmap.append(res_dims[od])
        elif s != 1:
            raise Unsupported("index_put values do not broadcast")
    ins.append(b.reshape(values, keep) if len(keep) != vr else values)
    maps.append(affine_map(n, vmap))
    for i in pos:
        t = indices[i]
        tk, tm = [], []
        for k, s in enumerate(t.shape):
            bd = br - t.rank + k
            if s == bshape[bd]:
                tk.append(s)
                tm.append(f"d{r + bd}")
        ins.append(b.reshape(t, tk) if len(tk) != t.rank else t)
        maps.append(affine_map(n, tm))
    acc_dt = x.dtype
    acc0 = b.fill(0, x.shape, acc_dt)
    cnt0 = b.fill(0, x.shape, torch.int64)
    out_map = affine_map(n, [f"d{i}" for i in range(r)])

    def body(b, v, *rest_args):
        idx_vals = rest_args[:len(pos)]
        acc, cnt = rest_args[len(pos):]
        hit = None
        for k, i in enumerate(pos):
            target = _wrap_index(b, idx_vals[k], x.shape[i])
            h = Scalar(b.op(f"arith.cmpi eq, {target.name}, {b.index(i).name} : index"),
                       torch.bool)
            hit = h if hit is None else _and(b, hit, h)
        v = b.cast(v, acc_dt)
        new = _add(b, acc, v) if accumulate else v
        return [b.select(hit, new, acc), b.select(hit, _add(b, cnt, b.const(1, torch.int64)),
                                                  cnt)]
    acc, cnt = b.generic(ins, maps, [acc0, cnt0], [out_map, out_map],
                         ["parallel"] * r + ["reduction"] * br, body)

    def fin(b, xv, a, c):
        touched = b.cmp("gt", c, b.const(0, torch.int64))
        return b.select(touched, _add(b, xv, a) if accumulate else a, xv)
    return b.elementwise([x, acc, cnt], x.shape, cx.dtype, fin)


@register(aten.index_reduce.default)
def _index_reduce(cx, x, dim, index, source, reduce, *, include_self=True):
    """index_reduce along ``dim`` with a 1-d index: as scatter_reduce with the
    index broadcast over source's other dims."""
    b = cx.b
    if x.rank == 0:
        x1 = b.reshape(x, (1,))
        src1 = b.reshape(source, (1,))
        sub = EmitContext(b, cx.node, torch.empty(1, dtype=cx.dtype))
        r = _scatter_impl(sub, x1, 0, b.reshape(index, (1,)), src1, reduce, include_self)
        return b.reshape(r, ())
    d = dim % x.rank
    shape = [1] * source.rank
    shape[d] = index.shape[0]
    idx = b.broadcast_to(b.reshape(index, shape), source.shape)
    return _scatter_impl(cx, x, d, idx, source, reduce, include_self)


@register(aten.slice_scatter.default)
def _slice_scatter(cx, x, src, dim=0, start=None, end=None, step=1):
    b = cx.b
    d = dim % x.rank
    start, end, step = _norm_slice(start, end, step, x.shape[d])
    offsets = [0] * x.rank
    strides = [1] * x.rank
    offsets[d], strides[d] = start, step
    if src.name is None:
        return b.convert(x, cx.dtype)
    return b.insert_into(b.copy(b.convert(x, cx.dtype)), b.convert(src, cx.dtype), offsets,
                         strides)


@register(aten.select_scatter.default)
def _select_scatter(cx, x, src, dim, index):
    b = cx.b
    d = dim % x.rank
    index = index + x.shape[d] if index < 0 else index
    shape = list(src.shape)
    shape.insert(d, 1)
    offsets = [0] * x.rank
    offsets[d] = index
    return b.insert_into(b.copy(b.convert(x, cx.dtype)),
                         b.reshape(b.convert(src, cx.dtype), shape), offsets)


@register(aten.diagonal_scatter.default)
def _diagonal_scatter(cx, x, src, offset=0, dim1=0, dim2=1):
    b = cx.b
    d1, d2 = dim1 % x.rank, dim2 % x.rank
    n = src.shape[-1]

    def body(b, xv, o):
        i1, i2 = b.index(d1), b.index(d2)
        k = Scalar(b.op(f"arith.subi {i1.name}, {b.const(max(-offset, 0), INDEX).name} : index"),
                   INDEX)
        on = Scalar(b.op(f"arith.cmpi eq, {b.op(f'arith.subi {i2.name}, {i1.name} : index')}, "
                         f"{b.const(offset, INDEX).name} : index"), torch.bool)
        on = _and(b, on, _index_lt(b, k, n))
        rest = [b.index(i) for i in range(x.rank) if i not in (d1, d2)]
        v = _extract(b, src, rest + [_clamp_index(b, k, n)])
        return [b.select(on, v, xv)]
    out = b.empty(x.shape, cx.dtype)
    return b.generic([x], [identity_map(x.rank)], [out], [identity_map(x.rank)],
                     ["parallel"] * x.rank, body)[0]


@register(aten.narrow_copy.default, aten.narrow.default)
def _narrow(cx, x, dim, start, length):
    d = dim % x.rank
    start = start + x.shape[d] if start < 0 else start
    offsets = [0] * x.rank
    offsets[d] = start
    return cx.b.extract_slice(x, offsets, cx.shape, [1] * x.rank)


@register(aten.addmv.default)
def _addmv(cx, bias, m, v, *, beta=1, alpha=1):
    b = cx.b
    mv = b.reshape(_matmul(b, m, b.reshape(v, (v.shape[0], 1)), compute_dtype(cx.dtype),
                           False), (m.shape[0],))
    if beta == 0:
        return ew(cx, [mv], lambda b, t: _alpha_mul(b, t, alpha))
    return ew(cx, [bias, mv], lambda b, c, t: _add(b, _alpha_mul(b, c, beta),
                                                   _alpha_mul(b, t, alpha)))


@register(aten.addbmm.default)
def _addbmm(cx, bias, x, y, *, beta=1, alpha=1):
    b = cx.b
    bm = _matmul(b, x, y, compute_dtype(cx.dtype), True)
    s, = b.reduce([bm], [0], [(0, bm.dtype)], lambda b, a, t: [_add(b, t, a)])
    if beta == 0:
        return ew(cx, [s], lambda b, t: _alpha_mul(b, t, alpha))
    return ew(cx, [bias, s], lambda b, c, t: _add(b, _alpha_mul(b, c, beta),
                                                  _alpha_mul(b, t, alpha)))


@register(aten.ldexp.Tensor)
def _ldexp(cx, x, e):
    return ew(cx, [x, e], lambda b, p, q: _mul(b, p, b.un("math.exp2", q)))


@register(aten.angle.default)
def _angle(cx, x):
    def f(b, a):
        z = _zero(b, a.dtype)
        pi = b.const(math.pi, a.dtype)
        r = b.select(b.cmp("lt", a, z), pi, z)
        return b.select(_is_nan(b, a), a, r)
    return ew(cx, [x], f)


@register(aten.dist.default)
def _dist(cx, x, y, p=2):
    b = cx.b
    shape = tuple(torch.broadcast_shapes(torch.Size(x.shape), torch.Size(y.shape)))
    d = ew(cx, [x, y], _sub, out_shape=shape)
    return _vector_norm(cx, d, p)  # over every dim of d


@register(aten.unfold.default)
def _unfold(cx, x, dim, size, step):
    b = cx.b
    if x.rank == 0:
        return b.reshape(x, cx.shape)
    d = dim % x.rank
    r = len(cx.shape)
    res = [f"d{i}" for i in range(x.rank)]
    res[d] = f"d{d} * {step} + d{r - 1}"
    out = b.empty(cx.shape, cx.dtype)
    return b.generic([x], [affine_map(r, res)], [out], [identity_map(r)],
                     ["parallel"] * r, lambda b, a, o: [a])[0]


def _scan2(cx, x, dim, is_max):
    """cummax/cummin: (values, indices), ties to the later index like ATen."""
    b = cx.b
    d = dim % x.rank if x.rank else 0
    if x.rank == 0:
        return [x, b.fill(0, (), torch.int64)]
    r = x.rank
    in_map = affine_map(r + 1, [f"d{r}" if i == d else f"d{i}" for i in range(r)])
    out_map = affine_map(r + 1, [f"d{i}" for i in range(r)])
    init = _fneg_inf(x.dtype) if is_max else _fpos_inf(x.dtype)
    v0 = b.fill(init, x.shape, x.dtype)
    i0 = b.fill(-1, x.shape, torch.int64)

    def body(b, a, m, mi):
        i = b.index(d)
        k = b.index(r)
        inside = Scalar(b.op(f"arith.cmpi ule, {k.name}, {i.name} : index"), torch.bool)
        kk = b.cast(k, torch.int64)
        better = b.cmp("gt" if is_max else "lt", a, m)
        equal = b.cmp("eq", a, m)
        if is_float(a.dtype):
            an, mn = _is_nan(b, a), _is_nan(b, m)
            better = _or(b, better, _and(b, an, _not(b, mn)))
            equal = _or(b, equal, _and(b, an, mn))
        later = b.cmp("gt", kk, mi)
        take = _and(b, inside, _or(b, better, _and(b, equal, later)))
        return [b.select(take, a, m), b.select(take, kk, mi)]
    vals, idx = b.generic([x], [in_map], [v0, i0], [out_map, out_map],
                          ["parallel"] * r + ["reduction"], body)
    return [vals, idx]


@register(aten.cummax.default, aten.cummin.default)
def _cummax(cx, x, dim):
    return _scan2(cx, x, dim, cx.node.target is aten.cummax.default)


@register(aten.logcumsumexp.default)
def _logcumsumexp(cx, x, dim):
    """log(cumsum(exp(x - m))) + m with m the max along ``dim``."""
    b = cx.b
    if x.rank == 0:
        return b.convert(x, cx.dtype)
    d = dim % x.rank
    acc = compute_dtype(cx.dtype)
    xc = b.convert(x, acc)
    m, = b.reduce([xc], [d], [(-math.inf, acc)], lambda b, a, s: [_max(b, s, a)], True)

    def fix(b, mm):
        inf = b.cmp("eq", b.un("math.absf", mm), b.const(math.inf, acc))
        return b.select(inf, _zero(b, acc), mm)
    m = b.elementwise([m], m.shape, acc, fix)
    e = b.elementwise([xc, m], x.shape, acc, lambda b, a, mm: b.un("math.exp", _sub(b, a, mm)))

    sub = EmitContext(b, cx.node, torch.empty(x.shape, dtype=acc))
    c = _scan(sub, e, d, _add, 0)
    return b.elementwise([c, m], x.shape, cx.dtype,
                         lambda b, s, mm: _add(b, b.un("math.log", s), mm))


# ---------------------------------------------------------------------------
# N-d pooling by windows read with tensor.extract (max with indices, 1-d/3-d
# pooling, adaptive max pooling): iteration space [n, c, o..., k...].
# ---------------------------------------------------------------------------

def _i64(b, v):
    return b.const(v, torch.int64)


def _window_reduce(cx, x, nd, out_spatial, kernel, coord_fn, kind, want_idx):
    """kind "max": (values, flat spatial indices) like ATen's max pooling
    (first maximum wins, NaN propagates); kind "sum": (sum, count of valid
    positions). ``coord_fn(b, i, o, k)`` gives (input coordinate, extra
    validity or None) for spatial dim i, output index o and window index k
    (i64 scalars)."""
    b = cx.b
    N, C = x.shape[0], x.shape[1]
    sizes = x.shape[2:]
    out_shape = (N, C) + tuple(out_spatial)
    r = 2 + nd
    n_it = r + nd
    acc_dt = x.dtype if kind == "max" else compute_dtype(x.dtype)
    init = _fneg_inf(x.dtype) if kind == "max" else 0
    v0 = b.fill(init, out_shape, acc_dt)
    i0 = b.fill(-1 if kind == "max" else 0, out_shape, torch.int64)
    extent = b.fill(0, tuple(kernel), torch.int8)
    out_map = affine_map(n_it, [f"d{i}" for i in range(r)])
    strides = [math.prod(sizes[i + 1:]) for i in range(nd)]

    def body(b, _e, m, mi):
        valid = None
        coords = []
        flat = _i64(b, 0)
        for i in range(nd):
            o = b.cast(b.index(2 + i), torch.int64)
            k = b.cast(b.index(r + i), torch.int64)
            c, extra = coord_fn(b, i, o, k)
            ok = _and(b, b.cmp("ge", c, _i64(b, 0)), b.cmp("lt", c, _i64(b, sizes[i])))
            if extra is not None:
                ok = _and(b, ok, extra)
            valid = ok if valid is None else _and(b, valid, ok)
            cc = b.bin("arith.minsi", b.bin("arith.maxsi", c, _i64(b, 0)), _i64(b, sizes[i] - 1))
            coords.append(b.cast(cc, INDEX))
            flat = _add(b, flat, _mul(b, cc, _i64(b, strides[i])))
        v = _extract(b, x, [b.index(0), b.index(1)] + coords)
        if kind == "sum":
            v = b.cast(v, acc_dt)
            return [b.select(valid, _add(b, m, v), m),
                    b.select(valid, _add(b, mi, _i64(b, 1)), mi)]
        better = b.cmp("gt", v, m)
        equal = b.cmp("eq", v, m)
        first = b.cmp("lt", mi, _i64(b, 0))  # nothing taken yet
        if is_float(v.dtype):
            vn, mn = _is_nan(b, v), _is_nan(b, m)
            better = _or(b, better, _and(b, vn, _not(b, mn)))
            equal = _or(b, equal, _and(b, vn, mn))
        earlier = b.cmp("lt", flat, mi)
        take = _or(b, first, _or(b, better, _and(b, equal, earlier)))
        take = _and(b, valid, take)
        return [b.select(take, v, m), b.select(take, flat, mi)]
    vals, idx = b.generic([extent], [affine_map(n_it, [f"d{r + i}" for i in range(nd)])],
                          [v0, i0], [out_map, out_map],
                          ["parallel"] * r + ["reduction"] * nd, body)
    return vals, idx


def _batched(b, x, nd):
    """Adds the batch dim of an unbatched pooling input."""
    return (b.reshape(x, (1,) + x.shape), True) if x.rank == nd + 1 else (x, False)


def _max_pool_nd(cx, x, nd, kernel_size, stride, padding, dilation, ceil_mode):
    b = cx.b
    kernel, stride, padding, dilation = _pool_params(nd, kernel_size, stride, padding, dilation)
    out0 = tuple(cx.result(0).shape)
    x, unbatched = _batched(b, x, nd)
    out_spatial = out0[-nd:]

    def coord(b, i, o, k):
        c = _add(b, _sub(b, _mul(b, o, _i64(b, stride[i])), _i64(b, padding[i])),
                 _mul(b, k, _i64(b, dilation[i])))
        return c, None
    vals, idx = _window_reduce(cx, x, nd, out_spatial, kernel, coord, "max", cx.used(1))
    return [b.reshape(vals, out0), b.reshape(idx, out0) if cx.used(1) else None]


@register(aten.max_pool2d_with_indices.default)
def _max_pool2d(cx, x, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    b = cx.b
    if cx.used(1):
        return _max_pool_nd(cx, x, 2, kernel_size, stride, padding, dilation, ceil_mode)
    kernel, stride, padding, dilation = _pool_params(2, kernel_size, stride, padding, dilation)
    out_shape = tuple(cx.result(0).shape)
    squeeze = x.rank == 3
    if squeeze:
        x = b.reshape(x, (1,) + x.shape)
        out_shape = (1,) + out_shape
    init = _fneg_inf(x.dtype)
    xp = _pad_for_pool(b, x, kernel, stride, padding, dilation, out_shape[2:], init)
    r = _pool(b, xp, "max", kernel, stride, dilation, out_shape, init, x.dtype)
    return [b.reshape(r, tuple(cx.result(0).shape)), None]


@register(aten.max_pool3d_with_indices.default)
def _max_pool3d(cx, x, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return _max_pool_nd(cx, x, 3, kernel_size, stride, padding, dilation, ceil_mode)


@register(aten.avg_pool3d.default)
def _avg_pool3d(cx, x, kernel_size, stride=(), padding=0, ceil_mode=False,
                count_include_pad=True, divisor_override=None):
    b = cx.b
    nd = 3
    if not is_float(x.dtype):
        raise Unsupported("integer avg_pool3d")
    kernel, stride, padding, _ = _pool_params(nd, kernel_size, stride, padding)
    xb, unbatched = _batched(b, x, nd)
    out_spatial = cx.shape[-nd:]
    sizes = xb.shape[2:]

    def coord(b, i, o, k):
        return _add(b, _sub(b, _mul(b, o, _i64(b, stride[i])), _i64(b, padding[i])), k), None
    s, _ = _window_reduce(cx, xb, nd, out_spatial, kernel, coord, "sum", False)
    if divisor_override:
        div = b.fill(float(divisor_override), (1,) * (2 + nd), s.dtype)
    else:
        d = torch.empty(*out_spatial, dtype=torch.float64)
        for idx in torch.cartesian_prod(*[torch.arange(o) for o in out_spatial]).reshape(
                -1, nd).tolist():
            pool, valid = 1, 1
            for i, o in enumerate(idx):
                st = o * stride[i] - padding[i]
                en = min(st + kernel[i], sizes[i] + padding[i])
                pool *= en - st
                valid *= min(en, sizes[i]) - max(st, 0)
            d[tuple(idx)] = pool if count_include_pad else valid
        div = b.reshape(b.constant_tensor(d.to(s.dtype)), (1, 1) + tuple(out_spatial))
    out_b = (xb.shape[0], xb.shape[1]) + tuple(out_spatial)
    r = b.elementwise([s, div], out_b, cx.dtype, lambda b, a, q: _div(b, a, q))
    return b.reshape(r, cx.shape)


def _adaptive_bounds(o, size, out):
    return (o * size) // out, -((-(o + 1) * size) // out)


def _adaptive_max(cx, x, nd, output_size):
    b = cx.b
    out0 = tuple(cx.result(0).shape)
    xb, _ = _batched(b, x, nd)
    sizes = xb.shape[2:]
    out_spatial = out0[-nd:]
    kernel = [max(_adaptive_bounds(o, s, O)[1] - _adaptive_bounds(o, s, O)[0]
                  for o in range(O)) for s, O in zip(sizes, out_spatial)]

    def coord(b, i, o, k):
        s, O = sizes[i], out_spatial[i]
        start = b.bin("arith.floordivsi", _mul(b, o, _i64(b, s)), _i64(b, O))
        end = b.bin("arith.ceildivsi", _mul(b, _add(b, o, _i64(b, 1)), _i64(b, s)), _i64(b, O))
        c = _add(b, start, k)
        return c, b.cmp("lt", c, end)
    vals, idx = _window_reduce(cx, xb, nd, out_spatial, kernel, coord, "max", True)
    return [b.reshape(vals, out0), b.reshape(idx, out0) if cx.used(1) else None]


@register(aten.adaptive_max_pool2d.default)
def _adaptive_max_pool2d(cx, x, output_size):
    return _adaptive_max(cx, x, 2, output_size)


@register(aten.adaptive_max_pool3d.default)
def _adaptive_max_pool3d(cx, x, output_size):
    return _adaptive_max(cx, x, 3, output_size)


@register(aten._adaptive_avg_pool3d.default, aten.adaptive_avg_pool3d.default)
def _adaptive_avg_pool3d(cx, x, output_size):
    b = cx.b
    nd = 3
    if not is_float(x.dtype):
        raise Unsupported("integer adaptive_avg_pool3d")
    xb, _ = _batched(b, x, nd)
    sizes = xb.shape[2:]
    out_spatial = cx.shape[-nd:]
    kernel = [max(_adaptive_bounds(o, s, O)[1] - _adaptive_bounds(o, s, O)[0]
                  for o in range(O)) for s, O in zip(sizes, out_spatial)]

    def coord(b, i, o, k):
        s, O = sizes[i], out_spatial[i]
        start = b.bin("arith.floordivsi", _mul(b, o, _i64(b, s)), _i64(b, O))
        end = b.bin("arith.ceildivsi", _mul(b, _add(b, o, _i64(b, 1)), _i64(b, s)), _i64(b, O))
        c = _add(b, start, k)
        return c, b.cmp("lt", c, end)
    s, cnt = _window_reduce(cx, xb, nd, out_spatial, kernel, coord, "sum", False)
    out_b = (xb.shape[0], xb.shape[1]) + tuple(out_spatial)
    r = b.elementwise([s, cnt], out_b, cx.dtype,
                      lambda b, a, c: _div(b, a, b.cast(c, a.dtype)))
    return b.reshape(r, cx.shape)


# ---------------------------------------------------------------------------
# Transposed convolution: a stride-1 convolution of the input dilated by the
# stride and padded by dilation * (kernel - 1) - padding, with the kernel
# flipped and its in/out channels swapped.
# ---------------------------------------------------------------------------

def _conv_transpose(cx, x, w, bias, stride, padding, dilation, output_padding, groups):
    b = cx.b
    nd = x.rank - 2
    if nd not in (1, 2, 3) or (nd == 3 and groups != 1):
        raise Unsupported(f"{nd}-d transposed convolution with groups={groups}")

    def per_dim(v):
        v = list(v)
        return v * nd if len(v) == 1 else v
    stride, padding, dilation, output_padding = map(per_dim, (stride, padding, dilation,
                                                             output_padding))
    cin, cout_g = w.shape[0], w.shape[1]
    ks = w.shape[2:]
    g = groups
    # Dilate the input by the stride.
    dil_shape = list(x.shape[:2]) + [(s - 1) * st + 1 for s, st in zip(x.shape[2:], stride)]
    if any(st != 1 for st in stride):
        z = b.fill(0, dil_shape, x.dtype)
        x = b.insert_into(z, x, [0] * x.rank, [1, 1] + stride)
    # Pad (or crop) each side.
    low = [d * (k - 1) - p for d, k, p in zip(dilation, ks, padding)]
    high = [lo + op for lo, op in zip(low, output_padding)]
    if any(v < 0 for v in low + high):
        offs = [0, 0] + [max(-v, 0) for v in low]
        sz = list(x.shape[:2]) + [s - max(-lo, 0) - max(-hi, 0)
                                  for s, lo, hi in zip(x.shape[2:], low, high)]
        x = b.extract_slice(x, offs, sz, [1] * x.rank)
        low, high = [max(v, 0) for v in low], [max(v, 0) for v in high]
    # Kernel: [cin, cout/g, k...] -> [g, cout/g, cin/g, flipped k...]
    wg = b.reshape(w, (g, cin // g, cout_g) + tuple(ks))
    wt = b.transpose(wg, [0, 2, 1] + list(range(3, 3 + nd)))
    res = [f"d{i}" for i in range(3)] + [f"-d{3 + i} + {k - 1}" for i, k in enumerate(ks)]
    wf = b.generic([wt], [affine_map(3 + nd, res)], [b.empty(wt.shape, wt.dtype)],
                   [identity_map(3 + nd)], ["parallel"] * (3 + nd), lambda b, a, o: [a])[0]
    wf = b.reshape(wf, (g * cout_g, cin // g) + tuple(ks))
    sub = EmitContext(b, cx.node, cx.out)
    return _convolution(sub, x, wf, bias, [1] * nd, [(lo, hi) for lo, hi in zip(low, high)],
                        dilation, False, [0] * nd, groups)
