"""Reductions."""

from __future__ import annotations

from ._common import *  # noqa: F401,F403
from .elementwise import *  # noqa: F401,F403


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


# Everything, underscored helpers included, for the later op families.
__all__ = [n for n in dir() if not n.startswith("__")]
