"""Reductions: reduce and reduce_window with add/mul/max/min/and/or/xor
bodies."""

from __future__ import annotations

import math

import torch

from ._common import *  # noqa: F401,F403

# Body op -> (float, integer, boolean) op combining an accumulator and an
# element (reductions, windowed reductions and scatters).
COMBINERS = {
    "stablehlo.add": ("arith.addf", "arith.addi", "arith.ori"),
    "stablehlo.multiply": ("arith.mulf", "arith.muli", "arith.andi"),
    "stablehlo.maximum": ("arith.maximumf", "arith.maxsi", "arith.ori"),
    "stablehlo.minimum": ("arith.minimumf", "arith.minsi", "arith.andi"),
    "stablehlo.and": (None, "arith.andi", "arith.andi"),
    "stablehlo.or": (None, "arith.ori", "arith.ori"),
    "stablehlo.xor": (None, "arith.xori", "arith.xori"),
}


def body_combiner(cx: OpContext, region: int = 0) -> str:
    """The body op of a single-input reduction region, as its StableHLO
    name; unsupported unless the body is one binary op of the two
    arguments followed by the return."""
    args, ops = cx.region_ops(region)
    if len(args) != 2 or len(ops) != 2 or ops[1].name != "stablehlo.return":
        raise cx.unsupported(f"a reduction body of {len(ops)} ops over {len(args)} "
                             "arguments (only one add/mul/max/min/and/or/xor)")
    op = ops[0]
    if op.name not in COMBINERS:
        raise cx.unsupported(f"a reduction body of {op.name}")
    if set(op.operands) != {args[0], args[1]}:
        raise cx.unsupported("a reduction body that does not combine its two arguments")
    if list(ops[1].operands)[0] != op.results[0]:
        raise cx.unsupported("a reduction body that does not return its result")
    return op.name


def combine(b, kind: str, acc: Scalar, x: Scalar) -> Scalar:
    """``acc`` combined with ``x`` (converted to the accumulator's type) by
    the body op ``kind``."""
    fop, iop, bop = COMBINERS[kind]
    x = b.cast(x, acc.dtype)
    if is_float(acc.dtype):
        if fop is None:
            raise Unsupported(f"{kind} of floats")
        return b.bin(fop, acc, x)
    return b.bin(bop if acc.dtype == torch.bool else iop, acc, x)


def acc_dtype(dtype):
    """Float sums accumulate in f32 for f16/bf16."""
    return compute_dtype(dtype)


def init_scalar(cx: OpContext, i: int, dtype):
    """The init operand ``i`` as a python number or a top-level Scalar of
    ``dtype``."""
    v = cx.scalar(i)
    if isinstance(v, Scalar):
        return cx.b.cast(v, dtype)
    return v


@register("stablehlo.reduce")
def _reduce(cx):
    n = len(cx.raw) // 2
    if n != 1:
        raise cx.unsupported(f"a reduction of {n} operands together")
    kind = body_combiner(cx)
    b = cx.b
    dims = cx.ints("dimensions")
    out_dtype = cx.dtype
    acc = acc_dtype(out_dtype) if kind in ("stablehlo.add", "stablehlo.multiply") else out_dtype
    init = init_scalar(cx, 1, acc)
    if 0 in cx.raw[0].shape:  # nothing to reduce: the init value
        if isinstance(init, Scalar):
            return b.convert(b.fill(init, cx.shape, acc), out_dtype)
        return Splat(init, cx.shape, out_dtype)
    x = cx.value(0)
    if not dims:
        return b.convert(x, out_dtype)
    rank = x.rank
    kept = [i for i in range(rank) if i not in dims]
    out_shape = [x.shape[i] for i in kept]
    out = b.fill(init, out_shape, acc)
    its = ["reduction" if i in dims else "parallel" for i in range(rank)]
    r = b.generic([x], [identity_map(rank)], [out], [affine_map(rank, [f"d{i}" for i in kept])],
                  its, lambda bb, a, o: [combine(bb, kind, o, a)])[0]
    return b.convert(r, out_dtype)


@register("stablehlo.reduce_window")
def _reduce_window(cx):
    n = len(cx.raw) // 2
    if n != 1:
        raise cx.unsupported(f"a windowed reduction of {n} operands together")
    kind = body_combiner(cx)
    b = cx.b
    x = cx.value(0)
    R = x.rank
    window = cx.ints("window_dimensions")
    strides = cx.ints("window_strides", [1] * R)
    base_dil = cx.ints("base_dilations", [1] * R)
    win_dil = cx.ints("window_dilations", [1] * R)
    padding = cx.int_matrix("padding") if cx.has("padding") else [[0, 0]] * R
    out_shape, out_dtype = cx.shape, cx.dtype
    acc = acc_dtype(out_dtype) if kind in ("stablehlo.add", "stablehlo.multiply") else out_dtype
    init = init_scalar(cx, 1, x.dtype)
    pooled = _as_pooling(cx, kind, x, window, strides, base_dil, win_dil, padding, init, acc)
    if pooled is not None:
        return b.convert(pooled, out_dtype)
    # Base dilation and padding: the input padded with the init value (a
    # strided insert for base dilation), then every window inside it.
    low = [p[0] for p in padding]
    high = [p[1] for p in padding]
    if any(d != 1 for d in base_dil) or any(v < 0 for v in low + high):
        full = [max(lo, 0) + (d - 1) * bd + 1 + max(hi, 0)
                for d, lo, hi, bd in zip(x.shape, low, high, base_dil)]
        dest = b.fill(init, full, x.dtype)
        x = b.insert_into(dest, x, [max(lo, 0) for lo in low], base_dil)
        if any(v < 0 for v in low + high):
            offs = [max(-lo, 0) for lo in low]
            sizes = [f - max(-lo, 0) - max(-hi, 0) for f, lo, hi in zip(full, low, high)]
            x = b.extract_slice(x, offs, sizes, [1] * R)
    else:
        x = b.pad(x, low, high, init)
    # Iteration space: output dims d0..d{R-1}, window dims d{R}..d{2R-1};
    # window dims of size 1 are left out.
    wdims = [i for i in range(R) if window[i] != 1]
    nd = R + len(wdims)
    exprs = []
    for i in range(R):
        e = f"d{i}" if strides[i] == 1 else f"d{i} * {strides[i]}"
        if i in wdims:
            k = R + wdims.index(i)
            e += f" + d{k}" if win_dil[i] == 1 else f" + d{k} * {win_dil[i]}"
        exprs.append(e)
    wshape = [window[i] for i in wdims]
    init_acc = init if not isinstance(init, Scalar) else b.cast(init, acc)
    out = b.fill(init_acc, out_shape, acc)
    its = ["parallel"] * R + ["reduction"] * len(wdims)
    if wdims:
        shape_t = b.empty(wshape, acc)
        r = b.generic([x, shape_t], [affine_map(nd, exprs),
                                     affine_map(nd, [f"d{R + j}" for j in range(len(wdims))])],
                      [out], [affine_map(nd, [f"d{i}" for i in range(R)])], its,
                      lambda bb, a, _w, o: [combine(bb, kind, o, a)])[0]
    else:
        r = b.generic([x], [affine_map(nd, exprs)], [out],
                      [affine_map(nd, [f"d{i}" for i in range(R)])], its,
                      lambda bb, a, o: [combine(bb, kind, o, a)])[0]
    return b.convert(r, out_dtype)


_POOL_KINDS = {"stablehlo.maximum": "max", "stablehlo.add": "sum"}


def _as_pooling(cx, kind, x, window, strides, base_dil, win_dil, padding, init, acc):
    """A windowed max or sum over two dimensions of a rank-4 operand (the
    spatial ones of a max_pool or avg_pool, NHWC in Flax) as
    ``linalg.pooling_nchw_max`` / ``_sum`` between transposes, as the torch
    frontend emits pooling: the compiler keeps pooling in its input's
    layout (``pb-propagate-layouts``) and cancels the transposes. None when
    the window does not have that form (base dilation, negative padding,
    integers, or a window over other dimensions)."""
    R = x.rank
    if R != 4 or kind not in _POOL_KINDS or not is_float(x.dtype) or x.dtype != acc:
        return None
    if any(d != 1 for d in base_dil) or any(v < 0 for p in padding for v in p):
        return None
    spatial = [i for i in range(R) if window[i] != 1 or strides[i] != 1 or win_dil[i] != 1
               or padding[i] != [0, 0]]
    if len(spatial) > 2:
        return None
    others = [i for i in range(R) if i not in spatial]
    spatial += [i for i in others[2:]]
    others = others[:2]
    if len(spatial) != 2 or isinstance(init, Scalar):
        return None
    b = cx.b
    perm = others + spatial
    xt = b.transpose(x, perm)
    low = [0, 0] + [padding[i][0] for i in spatial]
    high = [0, 0] + [padding[i][1] for i in spatial]
    xt = b.pad(xt, low, high, init)
    out_shape = [cx.shape[i] for i in perm]
    wnd = b.empty([window[i] for i in spatial], acc)
    out = b.fill(init, out_shape, acc)
    attrs = (f"{{dilations = dense<[{win_dil[spatial[0]]}, {win_dil[spatial[1]]}]> : "
             f"tensor<2xi64>, strides = dense<[{strides[spatial[0]]}, {strides[spatial[1]]}]> "
             ": tensor<2xi64>}")
    r = b.tensor_op(f"linalg.pooling_nchw_{_POOL_KINDS[kind]} {attrs} ins({xt.name}, "
                    f"{wnd.name} : {xt.type}, {wnd.type}) outs({out.name} : {out.type}) -> "
                    f"{out.type}", out_shape, acc)
    return b.transpose(r, [perm.index(d) for d in range(R)])


# select_and_scatter's select body: the comparison it makes of the
# selected element so far (first argument) with the next one in the window,
# as (the window's reduction, whether the first of equal elements wins).
_SELECTIONS = {"GE": ("stablehlo.maximum", True), "GT": ("stablehlo.maximum", False),
               "LE": ("stablehlo.minimum", True), "LT": ("stablehlo.minimum", False)}


def _select_kind(cx) -> tuple[str, bool]:
    from jaxlib.mlir.dialects import stablehlo as shlo
    args, ops = cx.region_ops(0)
    if (len(args) != 2 or len(ops) != 2 or ops[0].name != "stablehlo.compare"
            or list(ops[0].operands) != [args[0], args[1]]
            or ops[1].name != "stablehlo.return"):
        raise cx.unsupported("a select body other than one comparison of its arguments")
    direction = shlo.ComparisonDirectionAttr(ops[0].attributes["comparison_direction"]).value
    if direction not in _SELECTIONS:
        raise cx.unsupported(f"a select body comparing with {direction}")
    return _SELECTIONS[direction]


@register("stablehlo.select_and_scatter")
def _select_and_scatter(cx):
    """The gradient of a windowed max (or min), as jax.grad makes of a max
    pool: each window's source value goes to the element its select body
    picks, combined by the scatter body into the init value. Without a
    scatter, in three nests: each window's extreme; the offset in the
    window of the element selected (the first, or for a last-wins select
    the last, equal to the extreme); then for each element of the operand,
    over the window offsets, the windows that could hold it there and
    selected it add their source value."""
    from .indexing import _and, _clamp, _extract, _ibin, _icmp
    b = cx.b
    reduction, first_wins = _select_kind(cx)
    scatter = body_combiner(cx, 1)
    x, source = cx.value(0), cx.value(1)
    if not is_float(x.dtype):
        raise cx.unsupported("select_and_scatter of integers")
    R = x.rank
    window = cx.ints("window_dimensions", [1] * R)
    strides = cx.ints("window_strides", [1] * R)
    padding = cx.int_matrix("padding") if cx.has("padding") else [[0, 0]] * R
    if any(v < 0 for p in padding for v in p):
        raise cx.unsupported("select_and_scatter with negative padding")
    out_shape = list(source.shape)
    acc = acc_dtype(cx.dtype) if scatter in ("stablehlo.add", "stablehlo.multiply") \
        else cx.dtype
    # Padding is never selected where a window has an element of its own.
    never = float("-inf") if reduction == "stablehlo.maximum" else float("inf")
    low = [p[0] for p in padding]
    xp = b.pad(x, low, [p[1] for p in padding], never)
    nd = 2 * R
    x_map = affine_map(nd, [f"d{i} * {strides[i]} + d{R + i}" for i in range(R)])
    k_map = affine_map(nd, [f"d{R + i}" for i in range(R)])
    o_map = affine_map(nd, [f"d{i}" for i in range(R)])
    its = ["parallel"] * R + ["reduction"] * R
    extent = b.empty(window, torch.int8)  # gives the window loops their extent
    extreme = b.generic([xp, extent], [x_map, k_map], [b.fill(never, out_shape, x.dtype)],
                        [o_map], its, lambda bb, a, _w, o: [combine(bb, reduction, o, a)])[0]
    # A window offset as one number, row-major.
    wstrides = [1] * R
    for i in reversed(range(R - 1)):
        wstrides[i] = wstrides[i + 1] * window[i + 1]

    def offset(bb):
        lin = None
        for i in range(R):
            if window[i] == 1:
                continue
            term = bb.index(R + i)
            if wstrides[i] != 1:
                term = _ibin(bb, "arith.muli", term, bb.const(wstrides[i], INDEX))
            lin = term if lin is None else _ibin(bb, "arith.addi", lin, term)
        return bb.const(0, INDEX) if lin is None else lin
    none = math.prod(window) if first_wins else -1

    def pick(bb, a, _w, m, chosen):
        here = bb.cast(offset(bb), torch.int64)
        better = "arith.minsi" if first_wins else "arith.maxsi"
        return [bb.select(bb.cmp("eq", a, m), bb.bin(better, chosen, here), chosen)]
    selected = b.generic([xp, extent, extreme], [x_map, k_map, o_map],
                         [b.fill(none, out_shape, torch.int64)], [o_map], its, pick)[0]
    init = init_scalar(cx, 2, acc)

    def spread(bb, _w, result):
        # The window o holding this element at offset k: o * s + k = p + low.
        hit, index = None, []
        for i in range(R):
            t = _ibin(bb, "arith.subi", _ibin(bb, "arith.addi", bb.index(i),
                                              bb.const(low[i], INDEX)), bb.index(R + i))
            hit = _and(bb, hit, _icmp(bb, "sge", t, bb.const(0, INDEX)))
            o = t
            if strides[i] != 1:
                s = bb.const(strides[i], INDEX)
                hit = _and(bb, hit, _icmp(bb, "eq", _ibin(bb, "arith.remsi", t, s),
                                          bb.const(0, INDEX)))
                o = _ibin(bb, "arith.divsi", t, s)
            hit = _and(bb, hit, _icmp(bb, "slt", o, bb.const(out_shape[i], INDEX)))
            index.append(_clamp(bb, o, 0, out_shape[i] - 1))
        chosen = _extract(bb, selected, index)
        hit = _and(bb, hit, bb.cmp("eq", chosen, bb.cast(offset(bb), torch.int64)))
        value = bb.cast(_extract(bb, source, index), acc)
        return [bb.select(hit, combine(bb, scatter, result, value), result)]
    r = b.generic([extent], [k_map], [b.fill(init, list(x.shape), acc)], [o_map], its,
                  spread)[0]
    return b.convert(r, cx.dtype)
