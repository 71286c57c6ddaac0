"""Pooling (windowed reductions, N-d pooling with indices, adaptive pooling)."""

from __future__ import annotations

import itertools

from ._common import *  # noqa: F401,F403
from .elementwise import *  # noqa: F401,F403
from .reductions import *  # noqa: F401,F403
from .nn import *  # noqa: F401,F403
from .shapes import *  # noqa: F401,F403


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


# Everything, underscored helpers included, for the later op families.
# ---------------------------------------------------------------------------
# Max pooling backward: each output's gradient goes to the input position its
# index names. Deterministic, without a scatter: for each window offset k,
# the outputs whose index is the position they read at k add their gradient
# to that position of a padded gradient (a strided slice of it, one slice
# per offset), in a fixed order.
# ---------------------------------------------------------------------------

def _add_over_offsets(b, go_shape, in_sp, kernel, stride, padding, dilation, acc, part):
    """The input's gradient from its windows' contributions: for each window
    offset k (in order), ``part(k)`` (a tensor of the output's shape, in
    ``acc``) added to the strided slice of a padded gradient that the
    windows read at k; cropped to the input ((n, c) + spatial)."""
    n, c = go_shape[0], go_shape[1]
    out_sp = list(go_shape[2:])
    # Padded so that every window position of every output is inside
    # (ceil_mode windows may end past the high padding).
    high = [max(p, (o - 1) * s + (k - 1) * d + 1 - i - p)
            for i, o, s, p, d, k in zip(in_sp, out_sp, stride, padding, dilation, kernel)]
    grad = b.fill(0, [n, c] + [i + p + h for i, p, h in zip(in_sp, padding, high)], acc)
    strides = [1, 1] + list(stride)
    for offset in itertools.product(*[range(k) for k in kernel]):
        start = [0, 0] + [k * d for k, d in zip(offset, dilation)]
        window = b.extract_slice(grad, start, [n, c] + out_sp, strides)
        grad = b.insert_into(grad, b.elementwise([window, part(offset)], tuple(go_shape), acc,
                                                 lambda b, w, q: _add(b, w, q)),
                             start, strides)
    return b.extract_slice(grad, [0, 0] + list(padding), [n, c] + list(in_sp),
                           [1] * (2 + len(in_sp)))


def _max_pool_backward(cx, grad_out, x, nd, kernel_size, stride, padding, dilation,
                       indices):
    b = cx.b
    kernel, stride, padding, dilation = _pool_params(nd, kernel_size, stride, padding,
                                                     dilation)
    go, unbatched = _batched(b, grad_out, nd)
    idx, _ = _batched(b, indices, nd)
    xs, _ = _batched(b, x, nd)
    in_sp = list(xs.shape[2:])
    acc = compute_dtype(cx.dtype)

    def contribution(offset):
        def hit(b, g, i):
            flat = None
            for dim in range(nd):
                o = b.cast(b.index(2 + dim), torch.int64)
                pos = _add(b, _sub(b, _mul(b, o, _i64(b, stride[dim])), _i64(b, padding[dim])),
                           _i64(b, offset[dim] * dilation[dim]))
                flat = pos if flat is None else _add(b, _mul(b, flat, _i64(b, in_sp[dim])), pos)
            taken = b.cmp("eq", b.cast(i, torch.int64), flat)
            return b.select(taken, b.cast(g, acc), b.const(0, acc))
        return b.elementwise([go, idx], go.shape, acc, hit)
    r = _add_over_offsets(b, go.shape, in_sp, kernel, stride, padding, dilation, acc,
                          contribution)
    r = b.convert(r, cx.dtype)
    return b.reshape(r, tuple(cx.shape)) if unbatched else r


@register(aten.max_pool2d_with_indices_backward.default)
def _max_pool2d_backward(cx, grad_out, x, kernel_size, stride, padding, dilation,
                         ceil_mode, indices):
    return _max_pool_backward(cx, grad_out, x, 2, kernel_size, stride, padding, dilation,
                              indices)


@register(aten.max_pool3d_with_indices_backward.default)
def _max_pool3d_backward(cx, grad_out, x, kernel_size, stride, padding, dilation,
                         ceil_mode, indices):
    return _max_pool_backward(cx, grad_out, x, 3, kernel_size, stride, padding, dilation,
                              indices)



# ---------------------------------------------------------------------------
# Average pooling backward: each output's gradient divided by its window's
# divisor (ATen's, per output position, a product of per-dim counts), then
# added, for each window offset, to a strided slice of a padded gradient;
# deterministic, no scatter. Adaptive pooling: equal bins are such windows;
# other bins spread their gradient through 0/1 bin masks (two contractions).
# ---------------------------------------------------------------------------

def _avg_divisor(in_sp, out_sp, kernel, stride, padding, count_include_pad,
                 divisor_override) -> torch.Tensor:
    if divisor_override:
        return torch.full(tuple(out_sp), float(divisor_override), dtype=torch.float64)
    div = None
    for i, o, s, p, k in zip(in_sp, out_sp, stride, padding, kernel):
        counts = []
        for oi in range(o):
            start, end = oi * s - p, min(oi * s - p + k, i + p)
            counts.append(end - start if count_include_pad
                          else min(end, i) - max(start, 0))
        dim = torch.tensor(counts, dtype=torch.float64)
        div = dim if div is None else div.unsqueeze(-1) * dim
    return div


def _spread_windows(cx, go, in_sp, kernel, stride, padding, div):
    """sum over window offsets of (go / div) into a padded gradient, cropped
    to the input (go and the result batched: (n, c) + spatial)."""
    b = cx.b
    nd = len(in_sp)
    out_sp = list(go.shape[2:])
    acc = compute_dtype(cx.dtype)
    divisor = b.reshape(b.constant_tensor(div.to(acc)), (1, 1) + tuple(out_sp))
    scaled = b.elementwise([go, divisor], go.shape, acc,
                           lambda b, g, q: _div(b, b.cast(g, acc), q))
    r = _add_over_offsets(b, go.shape, in_sp, kernel, stride, padding, [1] * nd, acc,
                          lambda offset: scaled)
    return b.convert(r, cx.dtype)


def _avg_pool_backward(cx, grad_out, x, nd, kernel_size, stride, padding, ceil_mode,
                       count_include_pad, divisor_override):
    b = cx.b
    if not is_float(cx.dtype):
        raise Unsupported("integer avg_pool backward")
    kernel, stride, padding, _ = _pool_params(nd, kernel_size, stride, padding)
    go, unbatched = _batched(b, grad_out, nd)
    xs, _ = _batched(b, x, nd)
    in_sp = list(xs.shape[2:])
    div = _avg_divisor(in_sp, go.shape[2:], kernel, stride, padding, count_include_pad,
                       divisor_override)
    r = _spread_windows(cx, go, in_sp, kernel, stride, padding, div)
    return b.reshape(r, tuple(cx.shape)) if unbatched else r


@register(aten.avg_pool2d_backward.default)
def _avg_pool2d_backward(cx, grad_out, x, kernel_size, stride, padding, ceil_mode,
                         count_include_pad, divisor_override):
    return _avg_pool_backward(cx, grad_out, x, 2, kernel_size, stride, padding, ceil_mode,
                              count_include_pad, divisor_override)


@register(aten.avg_pool3d_backward.default)
def _avg_pool3d_backward(cx, grad_out, x, kernel_size, stride, padding, ceil_mode,
                         count_include_pad, divisor_override):
    return _avg_pool_backward(cx, grad_out, x, 3, kernel_size, stride, padding, ceil_mode,
                              count_include_pad, divisor_override)


def _adaptive_avg_pool_backward(cx, grad_out, x, nd):
    b = cx.b
    if not is_float(cx.dtype):
        raise Unsupported("integer adaptive_avg_pool backward")
    go, unbatched = _batched(b, grad_out, nd)
    xs, _ = _batched(b, x, nd)
    in_sp, out_sp = list(xs.shape[2:]), list(go.shape[2:])
    if all(i % o == 0 for i, o in zip(in_sp, out_sp)):
        kernel = [i // o for i, o in zip(in_sp, out_sp)]
        div = _avg_divisor(in_sp, out_sp, kernel, kernel, [0] * nd, True, None)
        r = _spread_windows(cx, go, in_sp, kernel, kernel, [0] * nd, div)
        return b.reshape(r, tuple(cx.shape)) if unbatched else r
    if nd != 2:
        raise Unsupported(f"{nd}-d adaptive_avg_pool backward with unequal bins")
    acc = compute_dtype(cx.dtype)
    (H, W), (OH, OW) = in_sp, out_sp
    masks, counts = [], []
    for size, bins in ((H, OH), (W, OW)):
        mask = torch.zeros(bins, size, dtype=acc)
        for i in range(bins):
            mask[i, (i * size) // bins:-((-(i + 1) * size) // bins)] = 1
        masks.append(b.constant_tensor(mask))
        counts.append(mask.sum(1).double())
    div = counts[0].unsqueeze(-1) * counts[1]
    divisor = b.reshape(b.constant_tensor(div.to(acc)), (1, 1, OH, OW))
    n, c = go.shape[0], go.shape[1]
    scaled = b.elementwise([go, divisor], go.shape, acc,
                           lambda b, g, q: _div(b, b.cast(g, acc), q))

    def mac(b, g, m, t):
        return [_add(b, t, _mul(b, g, m))]
    # t[n, c, i, w] = sum_j scaled[n, c, i, j] * mask_w[j, w]
    t = b.generic([scaled, masks[1]], [affine_map(5, ["d0", "d1", "d2", "d4"]),
                                       affine_map(5, ["d4", "d3"])],
                  [b.fill(0, (n, c, OH, W), acc)], [affine_map(5, ["d0", "d1", "d2", "d3"])],
                  ["parallel"] * 4 + ["reduction"], mac)[0]
    # r[n, c, h, w] = sum_i mask_h[i, h] * t[n, c, i, w]
    r = b.generic([t, masks[0]], [affine_map(5, ["d0", "d1", "d4", "d3"]),
                                  affine_map(5, ["d4", "d2"])],
                  [b.fill(0, (n, c, H, W), acc)], [affine_map(5, ["d0", "d1", "d2", "d3"])],
                  ["parallel"] * 4 + ["reduction"], mac)[0]
    r = b.convert(r, cx.dtype)
    return b.reshape(r, tuple(cx.shape)) if unbatched else r


@register(aten._adaptive_avg_pool2d_backward.default)
def _adaptive_avg_pool2d_backward(cx, grad_out, x):
    return _adaptive_avg_pool_backward(cx, grad_out, x, 2)


@register(aten._adaptive_avg_pool3d_backward.default)
def _adaptive_avg_pool3d_backward(cx, grad_out, x):
    return _adaptive_avg_pool_backward(cx, grad_out, x, 3)

__all__ = [n for n in dir() if not n.startswith("__")]
