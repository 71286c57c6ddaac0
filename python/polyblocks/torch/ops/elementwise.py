"""Elementwise unary, binary and ternary ops, type conversions, copies and factories."""

from __future__ import annotations

from ._common import *  # noqa: F401,F403


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
        from ..mlir import mlir_type
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


# Everything, underscored helpers included, for the later op families.
__all__ = [n for n in dir() if not n.startswith("__")]
