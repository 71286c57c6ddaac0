"""Shapes, slicing, indexing and scatters."""

from __future__ import annotations

from ._common import *  # noqa: F401,F403
from .elementwise import *  # noqa: F401,F403
from .reductions import *  # noqa: F401,F403
from .nn import *  # noqa: F401,F403


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
    if any(isinstance(v, SymDim) for v in (start, end, x.shape[d])):
        # Sizes known at run time: the slice starts at `start` (a
        # non-negative int or a size) and its length is the result's.
        start = 0 if start is None else start
        if isinstance(start, int) and start < 0:
            raise Unsupported("a slice from the end of a dimension of run-time size")
        offsets = [0] * x.rank
        strides = [1] * x.rank
        offsets[d], strides[d] = start, step
        return cx.b.extract_slice(x, offsets, cx.shape, strides)
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
        shape = tuple(to_dim(e) for e in r.shape)
        if cx.used(i) and not has_no_elements(shape):
            offsets = [0] * x.rank
            offsets[d] = off
            outs.append(cx.b.extract_slice(x, offsets, shape, [1] * x.rank))
        else:
            outs.append(None)
        off = off + shape[d]
    return outs


@register(aten.unbind.int, aten.unbind_copy.int)
def _unbind(cx, x, dim=0):
    d = dim % x.rank
    outs = []
    for i, r in enumerate(cx.out):
        shape = tuple(to_dim(e) for e in r.shape)
        if not cx.used(i) or has_no_elements(shape):
            outs.append(None)
            continue
        offsets = [0] * x.rank
        offsets[d] = i
        sizes = list(x.shape)
        sizes[d] = 1
        outs.append(cx.b.extract_slice(x, offsets, sizes, [1] * x.rank,
                                       result_shape=shape))
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
    bshape = broadcast_shapes(*[indices[i].shape for i in pos])
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


# The most rows a one-dimensional index_put writes as slices (a decode
# step's KV-cache update: one position); more take the gathering reduction.
_MAX_SLICED_ROWS = 16


def _index_put_rows(cx, x, dim: int, index, values):
    """x[..., index, ...] = values along ``dim`` for an index of a few
    static positions: each row of values inserted into x as a slice at its
    (wrapped, clamped) position. Bufferization writes the rows into x's
    buffer where it may (an input that the graph updates in place, a KV
    cache: pb.in_place), else into a copy of x; the gathering reduction
    would pass over every element of x once per position, through two
    temporaries of x's size."""
    b = cx.b
    x = b.convert(x, cx.dtype)
    values = b.convert(values, cx.dtype)
    sizes = list(values.shape)
    sizes[dim] = 1
    for j in range(index.shape[0]):
        at = _wrap_index(b, _gather_body(b, index, lambda b: [b.const(j, INDEX)]),
                         x.shape[dim])
        offsets = [0] * x.rank
        offsets[dim] = j
        row = b.extract_slice(values, offsets, sizes, [1] * x.rank) \
            if values.shape[dim] != 1 else values
        offs = ["0"] * x.rank
        offs[dim] = at.name
        offs_text = "[" + ", ".join(offs) + "]"
        sizes_text = b.sizes_text(row.shape)
        ones = ", ".join(["1"] * x.rank)
        sl = b.tensor_op(f"tensor.extract_slice {x.name}{offs_text} {sizes_text} [{ones}] : "
                         f"{x.type} to {row.type}", row.shape, row.dtype)
        c = b.tensor_op(f"linalg.copy ins({row.name} : {row.type}) outs({sl.name} : "
                        f"{sl.type}) -> {sl.type}", row.shape, row.dtype)
        x = b.tensor_op(f"tensor.insert_slice {c.name} into {x.name}{offs_text} "
                        f"{sizes_text} [{ones}] : {row.type} into {x.type}",
                        x.shape, x.dtype)
    return x


@register(aten.index_put.default, aten._unsafe_index_put.default)
def _index_put(cx, x, indices, values, accumulate=False):
    """x[indices] = values (or += with accumulate), by the same gathering
    reduction over the positions of the (broadcast) index tensors; one
    index tensor of a few static positions and values of x[indices]'s
    shape (a KV-cache update) as slices (_index_put_rows)."""
    b = cx.b
    indices = list(indices) + [None] * (x.rank - len(indices))
    if any(i is not None and (i.dtype == torch.bool or i.name is None) for i in indices):
        raise Unsupported("boolean mask or empty index in index_put")
    given = [i for i, t in enumerate(indices) if t is not None]
    if not accumulate and len(given) == 1 and indices[given[0]].rank == 1:
        d, index = given[0], indices[given[0]]
        n = index.shape[0]
        expected = list(x.shape)
        expected[d] = n
        if isinstance(n, int) and 0 < n <= _MAX_SLICED_ROWS and \
                list(values.shape) == expected and \
                all(isinstance(e, int) for e in x.shape[d:d + 1]):
            return _index_put_rows(cx, x, d, index, values)
    pos = [i for i, t in enumerate(indices) if t is not None]
    bshape = broadcast_shapes(*[indices[i].shape for i in pos])
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
    shape = broadcast_shapes(x.shape, y.shape)
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


# Everything, underscored helpers included, for the later op families.
__all__ = [n for n in dir() if not n.startswith("__")]
