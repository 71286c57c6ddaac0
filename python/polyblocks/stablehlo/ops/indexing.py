"""Indexing ops: gather, scatter, dynamic_slice and dynamic_update_slice.

All four read data at computed coordinates: each is one ``linalg.generic``
whose body computes an operand index with ``index`` arithmetic (start
indices read from the index tensors, clamped or checked as StableHLO and
XLA define) and reads the element with ``tensor.extract``, the form the
torch frontend emits for its gathers (index_select, embedding, gather).
Scatters are emitted as the torch frontend emits index_put and
scatter_add: every output element gathers the updates that land on it, in
a reduction over the update positions (exact and race-free, quadratic in
the number of scattered windows).
"""

from __future__ import annotations

from typing import Sequence

import torch

from ._common import *  # noqa: F401,F403
from .reductions import COMBINERS, combine

# ---------------------------------------------------------------------------
# Scalar index helpers (inside linalg.generic bodies)
# ---------------------------------------------------------------------------


def _extract(b, src: Value, idx: Sequence[Scalar]) -> Scalar:
    """``src[idx]`` (tensor.extract)."""
    return Scalar(b.op(f"tensor.extract {src.name}[{', '.join(i.name for i in idx)}] : "
                       f"{src.type}"), src.dtype)


def _as_index(b, s) -> Scalar:
    """An integer element (or a python int) as an ``index`` value
    (arith.index_cast: sign-extended)."""
    if isinstance(s, Scalar):
        if is_float(s.dtype) or s.dtype == torch.bool:
            raise Unsupported(f"start indices of {s.dtype}")
        return b.cast(s, INDEX)
    return b.const(int(s), INDEX)


def _ibin(b, op: str, x: Scalar, y: Scalar) -> Scalar:
    return Scalar(b.op(f"{op} {x.name}, {y.name} : index"), INDEX)


def _clamp(b, i: Scalar, lo: int, hi: int) -> Scalar:
    """``i`` clamped (signed) into [lo, hi]."""
    i = _ibin(b, "arith.maxsi", i, b.const(lo, INDEX))
    return _ibin(b, "arith.minsi", i, b.const(hi, INDEX))


def _icmp(b, pred: str, x: Scalar, y: Scalar) -> Scalar:
    return Scalar(b.op(f"arith.cmpi {pred}, {x.name}, {y.name} : index"), torch.bool)


def _and(b, x: Scalar | None, y: Scalar | None) -> Scalar | None:
    if x is None:
        return y
    if y is None:
        return x
    return b.bin("arith.andi", x, y)


def _slot_scalars(b, slots, scalars) -> list:
    """The body's values for ``slots`` (see :func:`_inputs`): a block
    argument for an input, a python number for a constant."""
    return [scalars[x] if kind == "in" else x for kind, x in slots]


def _inputs(items):
    """(tensors, maps, slots) for operands that are Values (read through an
    affine map) or Splats (a constant in the body)."""
    tensors, maps, slots = [], [], []
    for v, m in items:
        if isinstance(v, Splat):
            slots.append(("const", v.value))
        else:
            slots.append(("in", len(tensors)))
            tensors.append(v)
            maps.append(m)
    return tensors, maps, slots


def _index_components(b, idx, ivd: int):
    """The start-index tensor ``idx`` split along its index vector dim
    ``ivd`` (``ivd == rank``: an implicit trailing dim of size 1) into one
    tensor (or Splat) per component, each of the batch shape (``idx``'s
    other dims, in order)."""
    shape = tuple(idx.shape)
    if ivd == len(shape):
        return [idx], shape
    batch = shape[:ivd] + shape[ivd + 1:]
    if isinstance(idx, Splat):
        return [Splat(idx.value, batch, idx.dtype)] * shape[ivd], batch
    comps = []
    for k in range(shape[ivd]):
        if shape[ivd] == 1:
            comps.append(b.reshape(idx, batch))
            continue
        offs = [0] * len(shape)
        sizes = list(shape)
        offs[ivd], sizes[ivd] = k, 1
        comps.append(b.extract_slice(idx, offs, sizes, [1] * len(shape), batch))
    return comps, batch


def _start_scalars(cx, first: int, rank: int) -> list:
    """The rank-0 start-index operands ``first .. first + rank - 1`` as
    (operand, map) items for a generic over ``rank``-d iteration space."""
    return [(cx.raw[first + d], affine_map(rank, [])) for d in range(rank)]


# ---------------------------------------------------------------------------
# gather
# ---------------------------------------------------------------------------


@register("stablehlo.gather")
def _gather(cx):
    """stablehlo.gather with general dimension numbers (offset_dims,
    collapsed_slice_dims, operand_batching_dims, start_indices_batching_dims,
    start_index_map, index_vector_dim, slice_sizes), as the StableHLO spec
    defines it: start indices are clamped so that the whole slice is in
    bounds (``clamp(start, 0, dim - slice_size)``), as XLA does. A generic
    over the result's shape; the start indices are its inputs (one per
    index vector component), the operand is read with tensor.extract."""
    from jaxlib.mlir.dialects import stablehlo

    b = cx.b
    if len(cx.raw) != 2:
        raise cx.unsupported(f"a gather of {len(cx.raw)} operands")
    dn = stablehlo.GatherDimensionNumbers(cx.attr("dimension_numbers"))
    offset_dims = list(dn.offset_dims)
    collapsed = list(dn.collapsed_slice_dims)
    op_batch = list(dn.operand_batching_dims)
    idx_batch = list(dn.start_indices_batching_dims)
    start_map = list(dn.start_index_map)
    ivd = int(dn.index_vector_dim)
    slice_sizes = cx.ints("slice_sizes")
    x = cx.raw[0]
    idx = cx.raw[1]
    out_shape, out_dtype = cx.shape, cx.dtype
    if isinstance(x, Splat):
        return Splat(x.value, out_shape, out_dtype)
    R = len(out_shape)
    xr = x.rank
    batch_dims = [d for d in range(R) if d not in offset_dims]
    comps, bshape = _index_components(b, idx, ivd)
    if len(comps) != len(start_map) or len(bshape) != len(batch_dims):
        raise cx.unsupported("inconsistent gather dimension numbers")
    comp_map = affine_map(R, [f"d{d}" for d in batch_dims])
    tensors, maps, slots = _inputs([(c, comp_map) for c in comps])
    # The result dim each windowed (offset) operand dim is read along, and
    # the result dim each operand batching dim follows.
    windowed = [d for d in range(xr) if d not in collapsed and d not in op_batch]
    if len(windowed) != len(offset_dims):
        raise cx.unsupported("inconsistent gather offset dims")
    offset_of = dict(zip(windowed, offset_dims))
    batch_of = {}
    for od, sd in zip(op_batch, idx_batch):
        batch_of[od] = batch_dims[sd if sd < ivd else sd - 1]
    out = b.empty(out_shape, out_dtype)

    def body(bb, *s):
        starts = _slot_scalars(bb, slots, s)
        coords = []
        for d in range(xr):
            i = None
            if d in start_map:
                hi = x.shape[d] - slice_sizes[d]
                st = starts[start_map.index(d)]
                if isinstance(st, Scalar):
                    i = _clamp(bb, _as_index(bb, st), 0, hi)
                else:
                    i = bb.const(min(max(int(st), 0), hi), INDEX)
            elif d in batch_of:
                i = bb.index(batch_of[d])
            if d in offset_of:
                o = bb.index(offset_of[d])
                i = o if i is None else _ibin(bb, "arith.addi", i, o)
            coords.append(bb.const(0, INDEX) if i is None else i)
        return [_extract(bb, x, coords)]

    return b.generic(tensors, maps, [out], [identity_map(R)], ["parallel"] * R, body)[0]


# ---------------------------------------------------------------------------
# dynamic_slice / dynamic_update_slice
# ---------------------------------------------------------------------------


def _clamped_start(bb, s, size: int, extent: int) -> Scalar:
    """A start index clamped into [0, size - extent] (StableHLO's
    dynamic_slice and dynamic_update_slice)."""
    hi = size - extent
    if isinstance(s, Scalar):
        return _clamp(bb, _as_index(bb, s), 0, hi)
    return bb.const(min(max(int(s), 0), hi), INDEX)


@register("stablehlo.dynamic_slice")
def _dynamic_slice(cx):
    """stablehlo.dynamic_slice: the ``slice_sizes`` window of the operand
    at the rank-0 start indices, each clamped to [0, dim - size]. Constant
    starts give a tensor.extract_slice; others a generic over the result
    that reads the operand with tensor.extract."""
    b = cx.b
    x = cx.raw[0]
    sizes = cx.ints("slice_sizes")
    out_shape = cx.shape
    if isinstance(x, Splat):
        return Splat(x.value, out_shape, cx.dtype)
    R = x.rank
    if len(cx.raw) != 1 + R:
        raise cx.unsupported(f"{len(cx.raw) - 1} start indices for rank {R}")
    if all(isinstance(v, Splat) for v in cx.raw[1:]):
        offs = [min(max(int(cx.raw[1 + d].value), 0), x.shape[d] - sizes[d])
                for d in range(R)]
        return b.extract_slice(x, offs, sizes, [1] * R, out_shape)
    tensors, maps, slots = _inputs(_start_scalars(cx, 1, R))
    out = b.empty(out_shape, cx.dtype)

    def body(bb, *s):
        starts = _slot_scalars(bb, slots, s)
        coords = []
        for d in range(R):
            st = _clamped_start(bb, starts[d], x.shape[d], sizes[d])
            coords.append(_ibin(bb, "arith.addi", st, bb.index(d)) if sizes[d] != 1 else st)
        return [_extract(bb, x, coords)]

    return b.generic(tensors, maps, [out], [identity_map(R)], ["parallel"] * R, body)[0]


@register("stablehlo.dynamic_update_slice")
def _dynamic_update_slice(cx):
    """stablehlo.dynamic_update_slice: the operand with the update written
    at the rank-0 start indices, each clamped to [0, dim - update dim]. A
    generic over the operand's shape selects, per element, the update
    element (tensor.extract at the relative index, clamped into the update
    so that the read is always in bounds) or the operand's."""
    b = cx.b
    x, upd = cx.raw[0], cx.raw[1]
    shape, dtype = cx.shape, cx.dtype
    R = len(shape)
    if len(cx.raw) != 2 + R:
        raise cx.unsupported(f"{len(cx.raw) - 2} start indices for rank {R}")
    ushape = tuple(upd.shape)
    if ushape == shape:
        return upd  # the start indices clamp to 0
    if 0 in ushape:
        return x
    if isinstance(upd, Splat) and isinstance(x, Splat) and upd.value == x.value:
        return x
    items = [(x, identity_map(R))] + _start_scalars(cx, 2, R)
    tensors, maps, slots = _inputs(items)
    out = b.empty(shape, dtype)

    def body(bb, *s):
        vals = _slot_scalars(bb, slots, s)
        xv = vals[0] if isinstance(vals[0], Scalar) else bb.const(vals[0], dtype)
        inside = None
        rel = []
        for d in range(R):
            st = _clamped_start(bb, vals[1 + d], shape[d], ushape[d])
            r = _ibin(bb, "arith.subi", bb.index(d), st)
            # r < 0 is a large unsigned value: one unsigned compare checks both ends.
            inside = _and(bb, inside, _icmp(bb, "ult", r, bb.const(ushape[d], INDEX)))
            rel.append(_ibin(bb, "arith.minui", r, bb.const(ushape[d] - 1, INDEX)))
        if isinstance(upd, Splat):
            uv = bb.const(upd.value, dtype)
        else:
            uv = _extract(bb, upd, rel)
        return [bb.select(inside, uv, xv)]

    return b.generic(tensors, maps, [out], [identity_map(R)], ["parallel"] * R, body)[0]


# ---------------------------------------------------------------------------
# scatter
# ---------------------------------------------------------------------------

def _identity(kind: str, dtype):
    """The identity element of ``kind`` over ``dtype`` (float add: -0.0,
    so that x + identity is x for every x, -0.0 included)."""
    if dtype == torch.bool:
        return {"stablehlo.add": False, "stablehlo.multiply": True,
                "stablehlo.maximum": False, "stablehlo.minimum": True,
                "stablehlo.and": True, "stablehlo.or": False, "stablehlo.xor": False}[kind]
    if is_float(dtype):
        return {"stablehlo.add": -0.0, "stablehlo.multiply": 1.0,
                "stablehlo.maximum": float_min(dtype),
                "stablehlo.minimum": float_max(dtype)}[kind]
    return {"stablehlo.add": 0, "stablehlo.multiply": 1, "stablehlo.maximum": int_min(dtype),
            "stablehlo.minimum": int_max(dtype), "stablehlo.and": -1, "stablehlo.or": 0,
            "stablehlo.xor": 0}[kind]


def _scatter_kind(cx) -> str:
    """What the update computation does: "set" (returns the update),
    "keep" (returns the operand element) or the StableHLO name of one
    binary op of both arguments (add, multiply, maximum, minimum, and, or,
    xor); anything else is unsupported."""
    args, ops = cx.region_ops(0)
    if len(args) != 2:
        raise cx.unsupported(f"an update computation over {len(args)} arguments")
    if len(ops) == 1 and ops[0].name == "stablehlo.return":
        ret = list(ops[0].operands)
        if len(ret) == 1 and ret[0] == args[1]:
            return "set"
        if len(ret) == 1 and ret[0] == args[0]:
            return "keep"
    if len(ops) == 2 and ops[1].name == "stablehlo.return" and \
            ops[0].name in COMBINERS:
        operands = list(ops[0].operands)
        ret = list(ops[1].operands)
        if len(operands) == 2 and set(operands) == {args[0], args[1]} and \
                len(ret) == 1 and ret[0] == ops[0].results[0]:
            return ops[0].name
    names = ", ".join(o.name for o in ops)
    raise cx.unsupported(f"an update computation of [{names}] (only a returned update "
                         "or one add/multiply/maximum/minimum/and/or/xor of both arguments)")


@register("stablehlo.scatter")
def _scatter(cx):
    """stablehlo.scatter of one input with general dimension numbers
    (update_window_dims, inserted_window_dims, input_batching_dims,
    scatter_indices_batching_dims, scatter_dims_to_operand_dims,
    index_vector_dim) and an update computation that returns the update
    ("set") or combines both arguments with one commutative, associative
    op (add, multiply, maximum, minimum, and, or, xor).

    Start indices are not clamped: as XLA does, an update window that does
    not fit entirely inside the operand (``start < 0`` or
    ``start > dim - window``) is skipped, which is what JAX's default
    out-of-bounds mode (drop) relies on. With a combining op every update
    is applied (in an unspecified order, as StableHLO leaves it); with
    "set" and several updates to one element, one of them is kept (which
    one StableHLO leaves implementation-defined).

    Emitted as a reduction over the update positions per operand element:
    the hits are combined into an accumulator that starts at the op's
    identity, then merged with the operand (for "set": replace where an
    update landed, counted in a second accumulator)."""
    from jaxlib.mlir.dialects import stablehlo

    b = cx.b
    if len(cx.raw) != 3 or len(cx.op.results) != 1:
        raise cx.unsupported(f"a scatter of {(len(cx.raw) - 1) // 2} inputs together")
    kind = _scatter_kind(cx)
    x, idx, upd = cx.raw
    if kind == "keep":
        return x
    dn = stablehlo.ScatterDimensionNumbers(cx.attr("scatter_dimension_numbers"))
    window_dims = list(dn.update_window_dims)
    inserted = list(dn.inserted_window_dims)
    in_batch = list(dn.input_batching_dims)
    idx_batch = list(dn.scatter_indices_batching_dims)
    sdims = list(dn.scattered_dims_to_operand_dims)
    ivd = int(dn.index_vector_dim)
    shape, dtype = cx.shape, cx.dtype
    r = len(shape)
    ushape = tuple(upd.shape)
    if 0 in ushape or 0 in tuple(idx.shape):
        return x
    scatter_udims = [d for d in range(len(ushape)) if d not in window_dims]
    ns = len(scatter_udims)
    comps, bshape = _index_components(b, idx, ivd)
    if len(comps) != len(sdims) or len(bshape) != ns:
        raise cx.unsupported("inconsistent scatter dimension numbers")
    # Operand dims that update windows span (in updates' window dim order),
    # and the window size along every operand dim.
    windowed = [d for d in range(r) if d not in inserted and d not in in_batch]
    if len(windowed) != len(window_dims):
        raise cx.unsupported("inconsistent scatter window dims")
    wsize = [1] * r
    for d, u in zip(windowed, window_dims):
        wsize[d] = ushape[u]
    batch_pos = {}  # operand batching dim -> its position among the scatter dims
    for od, sd in zip(in_batch, idx_batch):
        batch_pos[od] = sd if sd < ivd else sd - 1
    n = r + ns
    # Iteration space: the operand's dims d0..d{r-1}, then the update
    # positions d{r}..d{n-1} (the reduction).
    comp_map = affine_map(n, [f"d{r + p}" for p in range(ns)])
    items = [(c, comp_map) for c in comps]
    # The updates are read through an affine map when every window dim
    # covers its whole operand dim from 0; else with tensor.extract.
    affine_upd = all(d not in sdims and wsize[d] == shape[d] for d in windowed)
    upd_window_of = dict(zip(window_dims, windowed))
    if affine_upd:
        res = [f"d{r + scatter_udims.index(u)}" if u in scatter_udims
               else f"d{upd_window_of[u]}" for u in range(len(ushape))]
        items.append((upd, affine_map(n, res)))
    tensors, maps, slots = _inputs(items)
    if ns and not any(isinstance(c, Value) for c in comps) and \
            not (affine_upd and isinstance(upd, Value)):
        # A (never read) operand that gives the update positions their extent.
        tensors.append(b.fill(0, bshape, torch.int8))
        maps.append(comp_map)
    is_set = kind == "set"
    acc_dt = dtype if is_set else compute_dtype(dtype)
    acc0 = b.fill(0 if is_set else _identity(kind, acc_dt), shape, acc_dt)
    outs = [acc0]
    if is_set:
        outs.append(b.fill(0, shape, torch.int64))
    out_map = affine_map(n, [f"d{i}" for i in range(r)])

    def body(bb, *s):
        vals = _slot_scalars(bb, slots, s)
        acc = s[len(tensors)]
        hit = None
        window = {}
        for d in range(r):
            st = None
            if d in sdims:
                k = sdims.index(d)
                st = _as_index(bb, vals[k])
                # XLA skips a window that does not fit: 0 <= start <= dim - window
                # (a negative start is a large unsigned value).
                fits = _icmp(bb, "ule", st, bb.const(shape[d] - wsize[d], INDEX))
                hit = _and(bb, hit, fits)
            elif d in batch_pos:
                st = bb.index(r + batch_pos[d])
            if d not in windowed:
                # Inserted or batching dim: the window has one element here.
                st = bb.const(0, INDEX) if st is None else st
                hit = _and(bb, hit, _icmp(bb, "eq", bb.index(d), st))
                continue
            if st is None and wsize[d] == shape[d]:
                continue  # the whole dim, from 0: every element is in the window
            w = bb.index(d) if st is None else _ibin(bb, "arith.subi", bb.index(d), st)
            hit = _and(bb, hit, _icmp(bb, "ult", w, bb.const(wsize[d], INDEX)))
            window[d] = w
        if affine_upd:
            v = vals[len(comps)]
            v = bb.const(v, upd.dtype) if not isinstance(v, Scalar) else v
        elif isinstance(upd, Splat):
            v = bb.const(upd.value, upd.dtype)
        else:
            uidx = []
            for u in range(len(ushape)):
                if u in scatter_udims:
                    uidx.append(bb.index(r + scatter_udims.index(u)))
                else:
                    d = upd_window_of[u]
                    w = window.get(d)
                    uidx.append(bb.index(d) if w is None else _ibin(
                        bb, "arith.minui", w, bb.const(ushape[u] - 1, INDEX)))
            v = _extract(bb, upd, uidx)
        if hit is None:
            hit = bb.const(True, torch.bool)
        if is_set:
            cnt = s[len(tensors) + 1]
            new = bb.cast(v, acc_dt)
            one = bb.const(1, torch.int64)
            return [bb.select(hit, new, acc),
                    bb.select(hit, bb.bin("arith.addi", cnt, one), cnt)]
        return [bb.select(hit, combine(bb, kind, acc, v), acc)]

    its = ["parallel"] * r + ["reduction"] * ns
    res = b.generic(tensors, maps, outs, [out_map] * len(outs), its, body)
    # Merge with the operand.
    if is_set:
        def fin(bb, xv, a, c):
            touched = bb.cmp("gt", c, bb.const(0, torch.int64))
            return bb.select(touched, a, bb.cast(xv, acc_dt))
    else:
        def fin(bb, xv, a):
            return combine(bb, kind, bb.cast(xv, acc_dt), a)
    return map_elements(cx, fin, [x] + res, shape, dtype)
