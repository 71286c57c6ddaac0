"""dot_general and convolution, onto linalg's named contractions."""

from __future__ import annotations

import math

import torch

from ._common import *  # noqa: F401,F403
from ...torch.ops.nn import conv_nchw


def _acc(dtype):
    if dtype == torch.bool:
        raise Unsupported("boolean contraction")
    return compute_dtype(dtype)


def _matmul(b, x: Value, y: Value, acc) -> Value:
    """(B, M, K) x (B, K, N) or (M, K) x (K, N) in ``acc``."""
    if x.rank == 3:
        shape, op = (x.shape[0], x.shape[1], y.shape[2]), "linalg.batch_matmul"
    else:
        shape, op = (x.shape[0], y.shape[1]), "linalg.matmul"
    init = b.fill(0, shape, acc)
    return b.tensor_op(f"{op} ins({x.name}, {y.name} : {x.type}, {y.type}) "
                       f"outs({init.name} : {init.type}) -> {init.type}", shape, acc)



def _operand(cx, i):
    """Operand ``i`` as (source Value, permutation): a Permuted operand is
    read in place (its dim d is the source's dim perm[d])."""
    v = cx.raw[i]
    if isinstance(v, Permuted):
        return v.source, list(v.perm)
    v = cx.value(i)
    return v, list(range(v.rank))


def _user_layout(cx):
    """The permutation of the result's only user when that is a
    stablehlo.transpose (its dim j is the result's dim perm[j]), else None."""
    uses = list(cx.op.results[0].uses)
    if len(uses) != 1:
        return None
    owner = uses[0].owner
    owner = getattr(owner, "operation", owner)
    if owner.name != "stablehlo.transpose":
        return None
    from ..converter import attr_ints
    return attr_ints(owner.attributes["permutation"])


@register("stablehlo.dot_general")
def _dot_general(cx):
    """Two forms, chosen per op:

    - operands whose dims already run (batch, free, contracting) and
      (batch, contracting, free), and a result that no transpose reads:
      ``linalg.matmul`` / ``linalg.batch_matmul`` on collapsed views
      (x @ W of a dense layer, its heads merged into N);
    - otherwise a multiply-accumulate ``linalg.generic`` that reads both
      operands in place, permuted operands (a stablehlo.transpose) through
      its maps, and writes the result in the layout of its only user when
      that is a transpose (attention's ``p @ v``, whose (b, h, d, q) result
      JAX transposes to (b, q, h, d)), so that no ``linalg.transpose`` runs
      around it. Its parallel loops follow the result's dims, then one
      reduction loop per contracting pair; input 0 (the compiler's A) is the
      operand that does not index the result's innermost dim, which is then
      an N loop of B and C for the matrix units (a B read with N strided,
      k of q @ k^T, is packed transposed in registers), and the
      probabilities of an attention are its A, as ``pb-fuse-attention``
      wants them.

    Matrix-vector forms and contractions without contracting dims take the
    first form with the operands transposed."""
    from jaxlib.mlir.dialects import stablehlo as shlo
    dn = shlo.DotDimensionNumbers(cx.attr("dot_dimension_numbers"))
    lb, rb = list(dn.lhs_batching_dimensions), list(dn.rhs_batching_dimensions)
    lc, rc = list(dn.lhs_contracting_dimensions), list(dn.rhs_contracting_dimensions)
    if cx.has("algorithm"):
        raise cx.unsupported("a dot algorithm attribute")
    return _contract(cx, lb, rb, lc, rc)


@register("stablehlo.dot")
def _dot(cx):
    """The legacy dot (TensorFlow emits it for tf.matmul and Dense):
    vector or matrix operands, the lhs's last dim contracted with the
    rhs's first; a dot_general without batch dims."""
    xr, yr = cx.raw[0], cx.raw[1]
    if xr.rank not in (1, 2) or yr.rank not in (1, 2):
        raise cx.unsupported(f"operands of rank {xr.rank} and {yr.rank} (1 or 2 only)")
    return _contract(cx, [], [], [xr.rank - 1], [0])


def _contract(cx, lb, rb, lc, rc):
    b = cx.b
    out_dtype = cx.dtype
    acc = _acc(out_dtype)
    xr, yr = cx.raw[0], cx.raw[1]
    lf = [i for i in range(xr.rank) if i not in lb and i not in lc]
    rf = [i for i in range(yr.rank) if i not in rb and i not in rc]
    plain = (not isinstance(xr, Permuted) and not isinstance(yr, Permuted)
             and lb + lf + lc == list(range(xr.rank)) and rb + rc + rf == list(range(yr.rank)))
    layout = _user_layout(cx)
    if lf and rf and lc and (not plain or layout is not None):
        r = _contraction_generic(cx, lb, rb, lc, rc, lf, rf, layout, acc)
        if r is not None:
            return r
    x, y = cx.value(0), cx.value(1)
    if x.dtype != y.dtype:
        x, y = b.convert(x, acc), b.convert(y, acc)
    bs = [x.shape[i] for i in lb]
    B = math.prod(bs)
    M = math.prod(x.shape[i] for i in lf)
    N = math.prod(y.shape[i] for i in rf)
    K = math.prod(x.shape[i] for i in lc)
    xt = b.transpose(x, lb + lf + lc)
    yt = b.transpose(y, rb + rc + rf)
    if lb:
        xm = b.reshape(xt, (B, M, K))
        ym = b.reshape(yt, (B, K, N))
    else:
        xm = b.reshape(xt, (M, K))
        ym = b.reshape(yt, (K, N))
    r = _matmul(b, xm, ym, acc)
    r = b.reshape(r, cx.shape)
    return b.convert(r, out_dtype)


def _contraction_generic(cx, lb, rb, lc, rc, lf, rf, layout, acc):
    """The multiply-accumulate generic of ``_dot_general`` (None when the
    result's innermost dim in the chosen layout is a batch dim)."""
    b = cx.b
    out_shape = cx.shape
    R = len(out_shape)
    nb = len(lb)
    perm = list(layout) if layout is not None else list(range(R))
    # The result's dim d is loop perm.index(d); contracting pair k is loop R + k.
    loop = {d: perm.index(d) for d in range(R)}
    inner = perm[-1]
    if inner < nb:
        if layout is None:
            return None
        perm = list(range(R))  # the result's own layout then
        loop = {d: d for d in range(R)}
        inner = perm[-1]
        layout = None
        if inner < nb:
            return None
    (xs, xp), (ys, yp) = _operand(cx, 0), _operand(cx, 1)

    def loops_of(rank, batch, free, contracting, free_base):
        out = []
        for i in range(rank):
            if i in batch:
                out.append(loop[batch.index(i)])
            elif i in free:
                out.append(loop[free_base + free.index(i)])
            else:
                out.append(R + contracting.index(i))
        return out

    xl = loops_of(len(xp), lb, lf, lc, nb)
    yl = loops_of(len(yp), rb, rf, rc, nb + len(lf))
    n = R + len(lc)

    def source_map(src, p, loops):
        res = [""] * src.rank
        for i, s_ in enumerate(p):
            res[s_] = f"d{loops[i]}"
        return affine_map(n, res)

    xm, ym = source_map(xs, xp, xl), source_map(ys, yp, yl)
    ins, maps = [xs, ys], [xm, ym]
    if inner < nb + len(lf):  # the innermost dim is lhs-free: lhs is B
        ins, maps = [ys, xs], [ym, xm]
    c_shape = [out_shape[d] for d in perm]
    init = b.fill(0, c_shape, acc)

    def body(bb, a, c, o):
        a, c = bb.cast(a, acc), bb.cast(c, acc)
        if is_float(acc):
            return [bb.bin("arith.addf", o, bb.bin("arith.mulf", a, c))]
        return [bb.bin("arith.addi", o, bb.bin("arith.muli", a, c))]
    r = b.generic(ins, maps, [init], [affine_map(n, [f"d{i}" for i in range(R)])],
                  ["parallel"] * R + ["reduction"] * len(lc), body)[0]
    r = b.convert(r, cx.dtype)
    if layout is None:
        return r
    return Permuted(r, [perm.index(d) for d in range(R)])


@register("stablehlo.convolution")
def _convolution(cx):
    from jaxlib.mlir.dialects import stablehlo as shlo
    dn = shlo.ConvDimensionNumbers(cx.attr("dimension_numbers"))
    b = cx.b
    x, w = cx.value(0), cx.value(1)
    nd = x.rank - 2
    if cx.int("batch_group_count", 1) != 1:
        raise cx.unsupported("batch_group_count > 1")
    groups = cx.int("feature_group_count", 1)
    if nd not in (1, 2, 3):
        raise cx.unsupported(f"{nd}-d convolution")
    if nd == 3 and groups != 1:
        raise cx.unsupported("grouped 3-d convolution")
    strides = cx.ints("window_strides", [1] * nd)
    lhs_dil = cx.ints("lhs_dilation", [1] * nd)
    rhs_dil = cx.ints("rhs_dilation", [1] * nd)
    padding = cx.int_matrix("padding") if cx.has("padding") else [[0, 0]] * nd
    reversal = []
    if cx.has("window_reversal"):
        reversal = [bool(v) for v in cx.attr("window_reversal")]
    out_dtype = cx.dtype
    acc = _acc(out_dtype)
    if x.dtype != w.dtype:
        x, w = b.convert(x, acc), b.convert(w, acc)
    if (nd == 2 and groups == 1 and not any(reversal) and all(d == 1 for d in lhs_dil)
            and all(v >= 0 for p in padding for v in p)
            and dn.input_feature_dimension == x.rank - 1):
        return _conv_nhwc(cx, dn, x, w, strides, rhs_dil, padding, acc, out_dtype)
    if (nd == 2 and groups > 1 and not any(reversal) and all(d == 1 for d in lhs_dil)
            and all(v >= 0 for p in padding for v in p)
            and dn.input_feature_dimension == x.rank - 1
            and x.shape[dn.input_feature_dimension] == groups
            and w.shape[dn.kernel_input_feature_dimension] == 1
            and w.shape[dn.kernel_output_feature_dimension] == groups):
        return _conv_depthwise_nhwc(cx, dn, x, w, strides, rhs_dil, padding, acc, out_dtype)
    # Operands in (N, C, spatial...) and (O, I, spatial...).
    xs = list(dn.input_spatial_dimensions)
    ks = list(dn.kernel_spatial_dimensions)
    os_ = list(dn.output_spatial_dimensions)
    x = b.transpose(x, [dn.input_batch_dimension, dn.input_feature_dimension] + xs)
    w = b.transpose(w, [dn.kernel_output_feature_dimension,
                        dn.kernel_input_feature_dimension] + ks)
    if any(reversal):
        R = w.rank
        res = [f"{w.shape[d] - 1} - d{d}" if d >= 2 and reversal[d - 2] else f"d{d}"
               for d in range(R)]
        e = b.empty(w.shape, w.dtype)
        w = b.generic([w], [affine_map(R, res)], [e], [identity_map(R)], ["parallel"] * R,
                      lambda bb, a, o: [a])[0]
    # lhs dilation (transposed convolutions) as zeros between the input's
    # elements, then padding (negative padding crops).
    low = [p[0] for p in padding]
    high = [p[1] for p in padding]
    if any(d != 1 for d in lhs_dil) or any(v < 0 for v in low + high):
        full = [max(lo, 0) + (d - 1) * ld + 1 + max(hi, 0)
                for d, lo, hi, ld in zip(x.shape[2:], low, high, lhs_dil)]
        dest = b.fill(0, list(x.shape[:2]) + full, x.dtype)
        x = b.insert_into(dest, x, [0, 0] + [max(lo, 0) for lo in low], [1, 1] + lhs_dil)
        if any(v < 0 for v in low + high):
            offs = [0, 0] + [max(-lo, 0) for lo in low]
            sizes = list(x.shape[:2]) + [f - max(-lo, 0) - max(-hi, 0)
                                         for f, lo, hi in zip(full, low, high)]
            x = b.extract_slice(x, offs, sizes, [1] * x.rank)
    else:
        x = b.pad(x, [0, 0] + low, [0, 0] + high, 0)
    # Result in (N, O, spatial...), then in the op's layout.
    out_shape = cx.shape
    n_o_shape = ([out_shape[dn.output_batch_dimension], out_shape[dn.output_feature_dimension]]
                 + [out_shape[d] for d in os_])
    if nd == 1:
        x = b.reshape(x, (x.shape[0], x.shape[1], 1, x.shape[2]))
        w = b.reshape(w, (w.shape[0], w.shape[1], 1, w.shape[2]))
        strides, rhs_dil = [1] + strides, [1] + rhs_dil
        conv_shape = (n_o_shape[0], n_o_shape[1], 1, n_o_shape[2])
    else:
        conv_shape = tuple(n_o_shape)
    r = conv_nchw(b, x, w, strides, rhs_dil, groups, conv_shape, acc)
    r = b.reshape(r, n_o_shape)
    # (N, O, spatial...) -> the output's dimension order.
    order = [dn.output_batch_dimension, dn.output_feature_dimension] + os_
    inv = [order.index(d) for d in range(len(order))]
    r = b.transpose(r, inv)
    return b.convert(r, out_dtype)


def _conv_depthwise_nhwc(cx, dn, x, w, strides, rhs_dil, padding, acc, out_dtype):
    """A channels-last depthwise 2-d convolution (one input and one output
    channel per group: Keras' DepthwiseConv2D, Flax's feature_group_count =
    channels) as the generic over (n, oh, ow, kh, kw, c) that the
    compiler's ``pb-conv-to-channels-last`` builds from PyTorch's depthwise
    convolutions: the channel loop innermost and parallel (vectorized), the
    (kh, kw, 1, c) filter read in place as (kh, kw, c), no layout change
    around it (the NCHW grouped form left a transpose of the input and of
    the result per convolution, which the padding between them kept S1
    from folding)."""
    b = cx.b
    xs = list(dn.input_spatial_dimensions)
    ks = list(dn.kernel_spatial_dimensions)
    os_ = list(dn.output_spatial_dimensions)
    x = b.transpose(x, [dn.input_batch_dimension] + xs + [dn.input_feature_dimension])
    w = b.transpose(w, ks + [dn.kernel_input_feature_dimension,
                             dn.kernel_output_feature_dimension])
    w = b.reshape(w, (w.shape[0], w.shape[1], w.shape[3]))
    x = b.pad(x, [0] + [p[0] for p in padding] + [0], [0] + [p[1] for p in padding] + [0], 0)
    out = cx.shape
    order = [dn.output_batch_dimension] + os_ + [dn.output_feature_dimension]
    init = b.fill(0, tuple(out[d] for d in order), acc)
    (sh, sw), (dh, dw) = strides, rhs_dil
    ih = "d1" + (f" * {sh}" if sh != 1 else "") + " + d3" + (f" * {dh}" if dh != 1 else "")
    iw = "d2" + (f" * {sw}" if sw != 1 else "") + " + d4" + (f" * {dw}" if dw != 1 else "")
    maps = [affine_map(6, ["d0", ih, iw, "d5"]), affine_map(6, ["d3", "d4", "d5"])]
    its = ["parallel"] * 3 + ["reduction"] * 2 + ["parallel"]
    r = b.generic([x, w], maps, [init], [affine_map(6, ["d0", "d1", "d2", "d5"])], its,
                  lambda bb, a, f, o: [bb.bin("arith.addf", o, bb.bin("arith.mulf", a, f))])[0]
    r = b.transpose(r, [order.index(d) for d in range(len(order))])
    return b.convert(r, out_dtype)


def _conv_nhwc(cx, dn, x, w, strides, rhs_dil, padding, acc, out_dtype):
    """A channels-last 2-d convolution (Flax's NHWC / HWIO) as the
    multiply-accumulate generic over (n, oh, ow, f, kh, kw, c) that the
    compiler's ``pb-conv-to-channels-last`` builds from NCHW convolutions
    (the form its matrix-unit mapping takes), with the filter read in
    place: no layout change runs around it, where the NCHW form left a
    transpose of the input, the filter and the result per convolution on
    every call (operands are transposed only when their dimension order
    differs from NHWC / HWIO)."""
    b = cx.b
    xs = list(dn.input_spatial_dimensions)
    ks = list(dn.kernel_spatial_dimensions)
    os_ = list(dn.output_spatial_dimensions)
    x = b.transpose(x, [dn.input_batch_dimension] + xs + [dn.input_feature_dimension])
    w = b.transpose(w, ks + [dn.kernel_input_feature_dimension,
                             dn.kernel_output_feature_dimension])
    x = b.pad(x, [0] + [p[0] for p in padding] + [0], [0] + [p[1] for p in padding] + [0], 0)
    out = cx.shape
    order = [dn.output_batch_dimension] + os_ + [dn.output_feature_dimension]
    shape = tuple(out[d] for d in order)
    init = b.fill(0, shape, acc)
    (sh, sw), (dh, dw) = strides, rhs_dil
    ih = "d1" + (f" * {sh}" if sh != 1 else "") + " + d4" + (f" * {dh}" if dh != 1 else "")
    iw = "d2" + (f" * {sw}" if sw != 1 else "") + " + d5" + (f" * {dw}" if dw != 1 else "")
    maps = [affine_map(7, ["d0", ih, iw, "d6"]), affine_map(7, ["d4", "d5", "d6", "d3"])]
    its = ["parallel"] * 4 + ["reduction"] * 3
    r = b.generic([x, w], maps, [init], [affine_map(7, ["d0", "d1", "d2", "d3"])], its,
                  lambda bb, a, f, o: [bb.bin("arith.addf", o, bb.bin("arith.mulf", a, f))])[0]
    r = b.transpose(r, [order.index(d) for d in range(len(order))])
    return b.convert(r, out_dtype)
