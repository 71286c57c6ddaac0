"""Elementwise StableHLO (and CHLO) ops: arithmetic, math, comparisons,
select, clamp, conversions, bitwise ops."""

from __future__ import annotations

import torch

from ._common import *  # noqa: F401,F403
from ..converter import BROADCAST_OPERANDS_OK, EMITTERS

# ---------------------------------------------------------------------------
# Scalar helpers (StableHLO semantics)
# ---------------------------------------------------------------------------


def _widen(b, a: Scalar) -> Scalar:
    """f16/bf16 compute in f32 (results rounded once, by the yield)."""
    return b.cast(a, compute_dtype(a.dtype))


def _float_un(opname):
    def fn(b, a):
        if not is_float(a.dtype):
            raise Unsupported(f"{opname} of {a.dtype}")
        return b.un(opname, _widen(b, a))
    return fn


_MATH = {
    "stablehlo.exponential": "math.exp",
    "stablehlo.exponential_minus_one": "math.expm1",
    "stablehlo.log": "math.log",
    "stablehlo.log_plus_one": "math.log1p",
    "stablehlo.tanh": "math.tanh",
    "stablehlo.sqrt": "math.sqrt",
    "stablehlo.rsqrt": "math.rsqrt",
    "stablehlo.cbrt": "math.cbrt",
    "stablehlo.sine": "math.sin",
    "stablehlo.cosine": "math.cos",
    "stablehlo.tan": "math.tan",
    "stablehlo.floor": "math.floor",
    "stablehlo.ceil": "math.ceil",
    "stablehlo.round_nearest_even": "math.roundeven",
    "stablehlo.round_nearest_afz": "math.round",
    "chlo.erf": "math.erf",
    "chlo.erfc": "math.erfc",
    "chlo.tan": "math.tan",
    "chlo.sinh": "math.sinh",
    "chlo.cosh": "math.cosh",
    "chlo.asin": "math.asin",
    "chlo.acos": "math.acos",
    "chlo.atan": "math.atan",
    "chlo.asinh": "math.asinh",
    "chlo.acosh": "math.acosh",
    "chlo.atanh": "math.atanh",
}


def _make_math(opname):
    def emit(cx):
        return map_elements(cx, _float_un(opname))
    return emit


for _name, _op in _MATH.items():
    register(_name)(_make_math(_op))


@register("stablehlo.logistic")
def _logistic(cx):
    def fn(b, a):
        x = _widen(b, a)
        one = b.const(1, x.dtype)
        e = b.un("math.exp", b.un("arith.negf", x))
        return b.bin("arith.divf", one, b.bin("arith.addf", one, e))
    return map_elements(cx, fn)


@register("stablehlo.negate")
def _negate(cx):
    def fn(b, a):
        if is_float(a.dtype):
            return b.un("arith.negf", a)
        return b.bin("arith.subi", b.const(0, a.dtype), a)
    return map_elements(cx, fn)


@register("stablehlo.abs")
def _abs(cx):
    def fn(b, a):
        if is_float(a.dtype):
            return b.un("math.absf", a)
        return b.un("math.absi", a)
    return map_elements(cx, fn)


@register("stablehlo.sign")
def _sign(cx):
    def fn(b, a):
        zero = b.const(0, a.dtype)
        one = b.const(1, a.dtype)
        if is_float(a.dtype):
            # copysign(1, x) for non-zero x; x itself for +-0 and NaN.
            s = b.bin("math.copysign", one, a)
            keep = b.cmp("ne", a, a)  # NaN
            is_zero = b.cmp("eq", a, zero)
            s = b.select(is_zero, a, s)
            return b.select(keep, a, s)
        neg = b.const(-1, a.dtype)
        return b.select(b.cmp("lt", a, zero), neg, b.select(b.cmp("gt", a, zero), one, zero))
    return map_elements(cx, fn)


@register("stablehlo.is_finite")
def _is_finite(cx):
    def fn(b, a):
        ax = b.un("math.absf", a)
        inf = b.const(float("inf"), a.dtype)
        return Scalar(b.op(f"arith.cmpf one, {ax.name}, {inf.name} : {ax.type}"), torch.bool)
    return map_elements(cx, fn)


@register("chlo.square")
def _square(cx):
    def fn(b, a):
        if is_float(a.dtype):
            a = _widen(b, a)
            return b.bin("arith.mulf", a, a)
        if a.dtype == torch.bool:
            return a
        return b.bin("arith.muli", a, a)
    return map_elements(cx, fn)


@register("stablehlo.popcnt")
def _popcnt(cx):
    def fn(b, a):
        if not is_int(a.dtype):
            raise Unsupported(f"popcnt of {a.dtype}")
        return b.un("math.ctpop", a)
    return map_elements(cx, fn)


@register("stablehlo.not")
def _not(cx):
    def fn(b, a):
        return b.bin("arith.xori", a, b.const(-1 if a.dtype != torch.bool else 1, a.dtype))
    return map_elements(cx, fn)


def _arith(fop, iop, bop=None):
    def fn(b, x, y):
        if is_float(x.dtype):
            return b.bin(fop, _widen(b, x), _widen(b, y))
        if x.dtype == torch.bool:
            if bop is None:
                raise Unsupported("boolean operands")
            return b.bin(bop, x, y)
        return b.bin(iop, x, y)
    return fn


_BINARY = {
    "stablehlo.add": _arith("arith.addf", "arith.addi", "arith.ori"),
    "stablehlo.subtract": _arith("arith.subf", "arith.subi"),
    "stablehlo.multiply": _arith("arith.mulf", "arith.muli", "arith.andi"),
    "stablehlo.maximum": _arith("arith.maximumf", "arith.maxsi", "arith.ori"),
    "stablehlo.minimum": _arith("arith.minimumf", "arith.minsi", "arith.andi"),
    "stablehlo.atan2": _arith("math.atan2", None),
}


def _make_binary(fn):
    def emit(cx):
        return map_elements(cx, fn)
    return emit


for _name, _fn in _BINARY.items():
    register(_name)(_make_binary(_fn))


def _bitwise(op):
    def fn(b, x, y):
        if is_float(x.dtype):
            raise Unsupported("float operands")
        return b.bin(op, x, y)
    return fn


register("stablehlo.and")(_make_binary(_bitwise("arith.andi")))
register("stablehlo.or")(_make_binary(_bitwise("arith.ori")))
register("stablehlo.xor")(_make_binary(_bitwise("arith.xori")))


def _int_div_parts(b, x, y):
    """(safe divisor, y == 0, x == MIN && y == -1) for signed division."""
    zero = b.const(0, x.dtype)
    one = b.const(1, x.dtype)
    by_zero = b.cmp("eq", y, zero)
    overflow = b.bin("arith.andi", b.cmp("eq", x, b.const(int_min(x.dtype), x.dtype)),
                     b.cmp("eq", y, b.const(-1, x.dtype)))
    bad = b.bin("arith.ori", by_zero, overflow)
    return b.select(bad, one, y), by_zero, overflow


@register("stablehlo.divide")
def _divide(cx):
    def fn(b, x, y):
        if is_float(x.dtype):
            return b.bin("arith.divf", _widen(b, x), _widen(b, y))
        if x.dtype == torch.bool:
            raise Unsupported("boolean division")
        # StableHLO: x / 0 = -1, MIN / -1 = MIN (no trap).
        safe, by_zero, overflow = _int_div_parts(b, x, y)
        q = b.bin("arith.divsi", x, safe)
        q = b.select(overflow, x, q)
        return b.select(by_zero, b.const(-1, x.dtype), q)
    return map_elements(cx, fn)


@register("stablehlo.remainder")
def _remainder(cx):
    def fn(b, x, y):
        if is_float(x.dtype):
            return b.bin("arith.remf", _widen(b, x), _widen(b, y))
        if x.dtype == torch.bool:
            raise Unsupported("boolean remainder")
        # StableHLO: x % 0 = x, MIN % -1 = 0.
        safe, by_zero, overflow = _int_div_parts(b, x, y)
        r = b.bin("arith.remsi", x, safe)
        r = b.select(overflow, b.const(0, x.dtype), r)
        return b.select(by_zero, x, r)
    return map_elements(cx, fn)


@register("stablehlo.power")
def _power(cx):
    def fn(b, x, y):
        if not is_float(x.dtype):
            raise Unsupported("integer power")
        return b.bin("math.powf", _widen(b, x), _widen(b, y))
    return map_elements(cx, fn)


def _shift(kind):
    def fn(b, x, y):
        if not is_int(x.dtype):
            raise Unsupported(f"shift of {x.dtype}")
        bits = torch.iinfo(x.dtype).bits
        # Shifts by a negative amount or by the width or more: 0 (logical,
        # left) or the sign (arithmetic), as StableHLO defines.
        out_of_range = Scalar(b.op(f"arith.cmpi uge, {y.name}, "
                                   f"{b.const(bits, x.dtype).name} : {x.type}"), torch.bool)
        safe = b.select(out_of_range, b.const(0, x.dtype), y)
        if kind == "left":
            r = b.bin("arith.shli", x, safe)
            return b.select(out_of_range, b.const(0, x.dtype), r)
        if kind == "logical":
            r = b.bin("arith.shrui", x, safe)
            return b.select(out_of_range, b.const(0, x.dtype), r)
        r = b.bin("arith.shrsi", x, safe)
        sign = b.bin("arith.shrsi", x, b.const(bits - 1, x.dtype))
        return b.select(out_of_range, sign, r)
    return fn


register("stablehlo.shift_left")(_make_binary(_shift("left")))
register("stablehlo.shift_right_logical")(_make_binary(_shift("logical")))
register("stablehlo.shift_right_arithmetic")(_make_binary(_shift("arithmetic")))


# ---------------------------------------------------------------------------
# Comparisons, select, clamp
# ---------------------------------------------------------------------------

_DIRECTIONS = {"EQ": "eq", "NE": "ne", "LT": "lt", "LE": "le", "GT": "gt", "GE": "ge"}


@register("stablehlo.compare")
def _compare(cx):
    from jaxlib.mlir.dialects import stablehlo as shlo
    direction = shlo.ComparisonDirectionAttr(cx.attr("comparison_direction")).value
    pred = _DIRECTIONS.get(direction)
    if pred is None:
        raise cx.unsupported(f"comparison direction {direction}")
    ctype = None
    if cx.has("compare_type"):
        ctype = shlo.ComparisonTypeAttr(cx.attr("compare_type")).value
    if ctype == "TOTALORDER":
        raise cx.unsupported("TOTALORDER comparison")
    if ctype == "UNSIGNED":
        _, dt = cx.operand_type(0)
        if dt != torch.bool:
            raise cx.unsupported("UNSIGNED comparison of signed integer types")

    def fn(b, x, y):
        return b.cmp(pred, x, y)
    return map_elements(cx, fn, dtype=torch.bool)


@register("stablehlo.select")
def _select(cx):
    return map_elements(cx, lambda b, c, x, y: b.select(c, x, y))


@register("stablehlo.clamp")
def _clamp(cx):
    # clamp(min, operand, max) = min(max(operand, min), max); min and max
    # may be rank 0.
    def fn(b, lo, x, hi):
        if is_float(x.dtype):
            return b.bin("arith.minimumf", b.bin("arith.maximumf", x, lo), hi)
        if x.dtype == torch.bool:
            return b.bin("arith.andi", b.bin("arith.ori", x, lo), hi)
        return b.bin("arith.minsi", b.bin("arith.maxsi", x, lo), hi)
    return map_elements(cx, fn)


# ---------------------------------------------------------------------------
# Conversions
# ---------------------------------------------------------------------------

@register("stablehlo.convert")
def _convert(cx):
    dtype = cx.dtype
    v = cx.raw[0]
    if isinstance(v, Splat):
        if is_float(dtype):
            return Splat(float(v.value), cx.shape, dtype)
        if dtype == torch.bool:
            return Splat(bool(v.value), cx.shape, dtype)
        if isinstance(v.value, float) and v.value != v.value:
            raise cx.unsupported("NaN converted to an integer")
        return map_elements(cx, lambda b, a: b.cast(a, dtype))
    return cx.b.convert(v, dtype)


@register("stablehlo.bitcast_convert")
def _bitcast(cx):
    (shape, src), dst = cx.operand_type(0), cx.dtype
    if shape == cx.shape and src == dst:  # bool to bool included
        return cx.raw[0]
    if shape != cx.shape or src.itemsize != dst.itemsize or torch.bool in (src, dst):
        raise cx.unsupported("bitcast between element types of different widths")

    def fn(b, a):
        return Scalar(b.op(f"arith.bitcast {a.name} : {a.type} to {mlir_type(dst)}"), dst)
    return map_elements(cx, fn)


@register("stablehlo.optimization_barrier")
def _barrier(cx):
    return list(cx.raw)


@register("stablehlo.reduce_precision")
def _reduce_precision(cx):
    e, m = cx.int("exponent_bits"), cx.int("mantissa_bits")
    known = {(8, 23): torch.float32, (5, 10): torch.float16, (8, 7): torch.bfloat16,
             (11, 52): torch.float64}
    target = known.get((e, m))
    if target is None:
        raise cx.unsupported(f"reduce_precision to e{e}m{m}")
    x = cx.value(0)
    if torch.finfo(target).bits >= torch.finfo(x.dtype).bits:
        return x
    return cx.b.convert(cx.b.convert(x, target), x.dtype)


# The emitters above that build their result with map_elements read
# Broadcast operands through broadcasting maps; the others get them
# materialized.
BROADCAST_OPERANDS_OK.update(
    n for n, fn in EMITTERS.items() if fn.__module__ == __name__ and n not in (
        "stablehlo.convert", "stablehlo.bitcast_convert", "stablehlo.optimization_barrier",
        "stablehlo.reduce_precision"))
