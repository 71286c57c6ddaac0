"""Constants, broadcasts, reshapes, transposes, slices, concatenation,
padding, iota and reverse."""

from __future__ import annotations

import math

import numpy as np
import torch

from ._common import *  # noqa: F401,F403


@register("stablehlo.constant")
def _constant(cx):
    a = cx.attr("value")
    shape, dtype = cx.shape, cx.dtype
    if getattr(a, "is_splat", False):
        v = a.get_splat_value()
        try:
            value = v.value
        except AttributeError:
            value = np.array(a).reshape(-1)[0].item()
        if dtype == torch.bool:
            value = bool(value)
        elif is_float(dtype):
            value = float(value)
        else:
            value = int(value)
        return Splat(value, shape, dtype)
    arr = np.array(a)
    if dtype == torch.bfloat16:
        raise cx.unsupported("a non-splat bf16 constant")
    t = torch.from_numpy(np.ascontiguousarray(arr)).reshape(shape)
    if t.dtype != dtype:
        t = t.to(dtype)
    if t.numel() and bool((t == t.reshape(-1)[0]).all()) and not (
            is_float(dtype) and bool(torch.isnan(t).any())):
        return Splat(t.reshape(-1)[0].item(), shape, dtype)
    return cx.b.constant_tensor(t)


@register("stablehlo.broadcast_in_dim")
def _broadcast_in_dim(cx):
    dims = cx.ints("broadcast_dimensions")
    out_shape = cx.shape
    x = cx.raw[0]
    if isinstance(x, Splat):
        return Splat(x.value, out_shape, x.dtype)
    if isinstance(x, Broadcast):  # a broadcast of a broadcast: one
        dims = [dims[d] for d in x.dims]
        x = x.source
    return broadcast_in_dim(cx.b, x, dims, out_shape)


def broadcast_in_dim(b, x: Value, dims, out_shape):
    """A reshape when only unit dims are added (or dropped: a size-1 dim
    broadcast to a larger one is left out of the source), else a lazy
    Broadcast of the source's kept dims, which elementwise users read
    through their own maps and others materialize."""
    out_shape = tuple(out_shape)
    R = len(out_shape)
    if x.shape == out_shape and list(dims) == list(range(R)):
        return x
    keep = [i for i, d in enumerate(x.shape) if d == out_shape[dims[i]]]
    kept_dims = [dims[i] for i in keep]
    if len(keep) != x.rank:
        x = b.reshape(x, [x.shape[i] for i in keep])
    if kept_dims == sorted(kept_dims) and math.prod(out_shape) == x.numel:
        return b.reshape(x, out_shape)  # only unit dims added
    return Broadcast(x, kept_dims, out_shape)


@register("stablehlo.reshape")
def _reshape(cx):
    x = cx.raw[0]
    if isinstance(x, Splat):
        return Splat(x.value, cx.shape, x.dtype)
    return cx.b.reshape(x, cx.shape)


@register("stablehlo.transpose")
def _transpose(cx):
    """A transpose is not emitted here: it becomes a Permuted view of its
    operand (of the operand's own source when that is Permuted too, the
    permutations composed), which a contraction reads in place through its
    indexing maps and any other user materializes as one linalg.transpose.
    A transpose that only moves unit dims is a reshape, and one that
    cancels the permutation of a Permuted operand (a contraction written in
    the layout of its transposing user) is that operand's source."""
    x = cx.raw[0]
    if isinstance(x, Splat):
        return Splat(x.value, cx.shape, x.dtype)
    perm = cx.ints("permutation")
    if isinstance(x, Permuted):
        perm = [x.perm[p] for p in perm]
        x = x.source
    if perm == list(range(x.rank)):
        return x
    if [p for p in perm if x.shape[p] != 1] == sorted(p for p in perm if x.shape[p] != 1):
        return cx.b.reshape(x, cx.shape)
    return Permuted(x, perm)


@register("stablehlo.slice")
def _slice(cx):
    x = cx.raw[0]
    if isinstance(x, Splat):
        return Splat(x.value, cx.shape, x.dtype)
    start = cx.ints("start_indices")
    strides = cx.ints("strides", [1] * x.rank)
    return cx.b.extract_slice(x, start, cx.shape, strides)


@register("stablehlo.concatenate")
def _concatenate(cx):
    dim = cx.int("dimension")
    values = [cx.value(i) for i in range(len(cx.raw)) if cx.operand_type(i)[0][dim] != 0]
    if len(values) == 1:
        return values[0]
    return cx.b.concat(values, dim, cx.shape, cx.dtype)


@register("stablehlo.pad")
def _pad(cx):
    b = cx.b
    if 0 in cx.raw[0].shape:  # all padding
        value = cx.scalar(1)
        if isinstance(value, Scalar):
            return b.fill(value, cx.shape, cx.dtype)
        return Splat(value, cx.shape, cx.dtype)
    x = cx.value(0)
    low = cx.ints("edge_padding_low")
    high = cx.ints("edge_padding_high")
    interior = cx.ints("interior_padding")
    if any(i < 0 for i in interior):
        raise cx.unsupported("negative interior padding")
    value = cx.scalar(1)
    # Pad with the non-negative parts (interior padding through a strided
    # insert), then crop what negative edge padding removes.
    full = [max(lo, 0) + (d - 1) * (i + 1) + 1 + max(hi, 0) if d else max(lo, 0) + max(hi, 0)
            for d, lo, hi, i in zip(x.shape, low, high, interior)]
    if all(v == 0 for v in interior) and all(v >= 0 for v in low + high):
        return b.pad(x, low, high, value)
    dest = b.fill(value, full, x.dtype)
    padded = b.insert_into(dest, x, [max(lo, 0) for lo in low], [i + 1 for i in interior])
    if all(v >= 0 for v in low + high):
        return padded
    offsets = [max(-lo, 0) for lo in low]
    return b.extract_slice(padded, offsets, cx.shape, [1] * x.rank)


@register("stablehlo.iota")
def _iota(cx):
    dim = cx.int("iota_dimension")
    shape, dtype = cx.shape, cx.dtype
    b = cx.b
    R = len(shape)
    if shape[dim] == 1:
        return Splat(0, shape, dtype)
    out = b.empty(shape, dtype)

    def body(bb, o):
        return [bb.cast(bb.index(dim), dtype)]
    return b.generic([], [], [out], [identity_map(R)], ["parallel"] * R, body)[0]


@register("stablehlo.reverse")
def _reverse(cx):
    x = cx.raw[0]
    if isinstance(x, Splat):
        return x
    dims = set(cx.ints("dimensions"))
    R = x.rank
    results = [f"{x.shape[d] - 1} - d{d}" if d in dims and x.shape[d] > 1 else f"d{d}"
               for d in range(R)]
    out = cx.b.empty(x.shape, x.dtype)
    return cx.b.generic([x], [affine_map(R, results)], [out], [identity_map(R)],
                        ["parallel"] * R, lambda bb, a, o: [a])[0]
