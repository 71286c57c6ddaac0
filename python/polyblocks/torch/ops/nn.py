"""Contractions (matmuls, convolutions, transposed convolutions) and normalization."""

from __future__ import annotations

from ._common import *  # noqa: F401,F403
from .elementwise import *  # noqa: F401,F403
from .reductions import *  # noqa: F401,F403
from .. import int8_ops  # noqa: F401  (defines torch.ops.polyblocks.conv2d_int8)


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


@register(aten._int_mm.default)
def _int_mm(cx, x, y):
    """torch._int_mm: int8 x int8 -> int32, linalg.matmul sign-extending its
    i8 operands into the i32 accumulator."""
    return _matmul(cx.b, x, y, torch.int32, False)


@register(aten.bmm.default)
def _bmm(cx, x, y):
    return _matmul(cx.b, x, y, cx.dtype, True)


def _scaled_sum(cx, bias, mm, beta, alpha):
    """beta * bias + alpha * mm (bias ignored when beta is 0), as torch's
    addmm/baddbmm define it."""
    if beta == 0:
        return ew(cx, [mm], lambda b, m: _alpha_mul(b, m, alpha))
    return ew(cx, [bias, mm], lambda b, c, m: _add(b, _alpha_mul(b, c, beta),
                                                   _alpha_mul(b, m, alpha)))


@register(aten.addmm.default)
def _addmm(cx, bias, x, y, *, beta=1, alpha=1):
    mm = _matmul(cx.b, x, y, compute_dtype(cx.dtype), False)
    return _scaled_sum(cx, bias, mm, beta, alpha)


@register(aten.baddbmm.default)
def _baddbmm(cx, bias, x, y, *, beta=1, alpha=1):
    mm = _matmul(cx.b, x, y, compute_dtype(cx.dtype), True)
    return _scaled_sum(cx, bias, mm, beta, alpha)


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


def conv_nchw(b, x: Value, w: Value, stride, dilation, groups: int, conv_shape,
              acc) -> Value:
    """A 2-d or 3-d convolution of an already padded (N, C, spatial...)
    input ``x`` with an (F, C / groups, window...) filter ``w`` into
    ``conv_shape`` (N, F, spatial...), accumulated in ``acc``: the named
    linalg convolution, grouped ones (2-d only) through
    linalg.conv_2d_ngchw_gfchw on reshaped operands."""
    nd = x.rank - 2
    attrs = (f"{{dilations = dense<[{', '.join(map(str, dilation))}]> : tensor<{nd}xi64>, "
             f"strides = dense<[{', '.join(map(str, stride))}]> : tensor<{nd}xi64>}}")
    if groups == 1:
        op = "linalg.conv_2d_nchw_fchw" if nd == 2 else "linalg.conv_3d_ncdhw_fcdhw"
        init = b.fill(0, conv_shape, acc)
        return b.tensor_op(f"{op} {attrs} ins({x.name}, {w.name} : {x.type}, {w.type}) "
                           f"outs({init.name} : {init.type}) -> {init.type}", conv_shape, acc)
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
    return b.reshape(r, conv_shape)


@register(torch.ops.polyblocks.conv2d_int8.default)
def _conv2d_int8(cx, x, w, stride, dilation):
    """polyblocks::conv2d_int8 (int8_ops.py): the named convolution
    sign-extending its i8 operands into the i32 accumulator."""
    return conv_nchw(cx.b, x, w, list(stride), list(dilation), 1, cx.shape, torch.int32)


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
    r = conv_nchw(b, x, w, stride, dilation, groups, conv_shape, acc)
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


# ---------------------------------------------------------------------------
# Convolution backward (AOTAutograd's training graphs): the input's gradient
# is the transposed convolution of the output's gradient with the same
# filter; the filter's gradient a contraction of the padded input with the
# output's gradient over the batch and the output positions; the bias's a
# sum of the output's gradient.
# ---------------------------------------------------------------------------

@register(aten.convolution_backward.default)
def _convolution_backward(cx, grad_out, x, w, bias_sizes, stride, padding, dilation,
                          transposed, output_padding, groups, output_mask):
    b = cx.b
    nd = x.rank - 2
    if transposed:
        raise Unsupported("backward of a transposed convolution")
    if nd not in (1, 2, 3):
        raise Unsupported(f"backward of a {nd}-d convolution")

    def per_dim(v):
        v = list(v)
        return v * nd if len(v) == 1 else v
    stride, padding, dilation = map(per_dim, (stride, padding, dilation))
    ks = w.shape[2:]
    results = [None, None, None]
    if output_mask[0] and cx.result(0) is not None:
        # The output positions cover the input up to (out - 1) * stride +
        # dilation * (k - 1) + 1 - 2 * padding; the rest of each input dim
        # (stride - 1 at most) is the transposed convolution's output
        # padding.
        extra = [i + 2 * p - ((o - 1) * s + d * (k - 1) + 1)
                 for i, o, s, p, d, k in zip(x.shape[2:], grad_out.shape[2:], stride,
                                              padding, dilation, ks)]
        sub = EmitContext(b, cx.node, cx.result(0))
        results[0] = _conv_transpose(sub, grad_out, w, None, stride, padding, dilation,
                                     extra, groups)
    if output_mask[1] and cx.result(1) is not None:
        results[1] = _convolution_weight_grad(b, grad_out, x, ks, stride, padding,
                                              dilation, groups, cx.result(1).dtype)
    if len(output_mask) > 2 and output_mask[2] and cx.result(2) is not None:
        acc = _acc_dtype(cx.result(2).dtype)
        dims = [0] + list(range(2, grad_out.rank))
        total = b.reduce([b.convert(grad_out, acc)], dims, [(0, acc)],
                         lambda b, a, t: [_add(b, t, a)])[0]
        results[2] = b.convert(total, cx.result(2).dtype)
    return results


def _convolution_weight_grad(b, grad_out, x, ks, stride, padding, dilation, groups,
                             dtype) -> Value:
    """dW[f, c, k...] = sum over n and the output positions o... of
    grad_out[n, f, o...] * x_padded[n, c, o * stride + k * dilation...].

    Ungrouped: a GEMM, dW[f, (k..., c)] = grad_out[f, (n, o...)] x
    cols[(k..., c), (n, o...)]^T, with cols the padded input's windows
    (im2col), which pb-map-matrix-units runs on the micro-kernel (the
    channels innermost: the GEMM's N is C, not the window's last extent),
    then transposed to (f, c, k...). Grouped
    (depthwise included): one multiply-accumulate linalg.generic over
    (group, f, c, k..., n, o...), left to loop tiling."""
    nd = x.rank - 2
    acc = _acc_dtype(dtype)
    n, c = x.shape[0], x.shape[1]
    f = grad_out.shape[1]
    g = groups
    out_sp = tuple(grad_out.shape[2:])
    xp = b.pad(x, [0, 0] + list(padding), [0, 0] + list(padding), 0)
    # Only the extent the windows read, (o - 1) * stride + (k - 1) *
    # dilation + 1 per dim: past it (a strided 1x1 convolution of an even
    # size) the maps below would read a strict part of the input, which
    # linalg's unit-dimension folding turns into an invalid generic.
    reach = [(o - 1) * st + (k - 1) * d + 1
             for o, st, k, d in zip(out_sp, stride, ks, dilation)]
    if any(r < e for r, e in zip(reach, xp.shape[2:])):
        xp = b.extract_slice(xp, [0] * x.rank, [n, c] + reach, [1] * x.rank)

    def mac(b, a, gv, t):
        return [_add(b, t, _mul(b, b.cast(gv, acc), b.cast(a, acc)))]
    if g == 1:
        # cols[k..., c, n, o...] = xp[n, c, o * stride + k * dilation...]
        loops = 2 + 2 * nd
        kd = [f"d{i}" for i in range(nd)]
        od = [f"d{2 + nd + i}" for i in range(nd)]
        x_map = affine_map(loops, [f"d{1 + nd}", f"d{nd}"] + [
            f"{o} * {s} + {k} * {d}" for o, k, s, d in zip(od, kd, stride, dilation)])
        cols_shape = tuple(ks) + (c, n) + out_sp
        cols = b.generic([xp], [x_map], [b.empty(cols_shape, x.dtype)],
                         [identity_map(loops)], ["parallel"] * loops,
                         lambda b, a, o: [a])[0]
        ckk = c * math.prod(ks)
        nhw = n * math.prod(out_sp)
        cols = b.reshape(cols, (ckk, nhw))
        go = b.reshape(b.transpose(grad_out, [1, 0] + list(range(2, 2 + nd))), (f, nhw))
        init = b.fill(0, (f, ckk), acc)
        r = b.generic([go, cols], [affine_map(3, ["d0", "d2"]), affine_map(3, ["d1", "d2"])],
                      [init], [affine_map(3, ["d0", "d1"])],
                      ["parallel", "parallel", "reduction"],
                      lambda b, gv, a, t: mac(b, a, gv, t))[0]
        r = b.transpose(b.reshape(r, (f,) + tuple(ks) + (c,)),
                        [0, 1 + nd] + list(range(1, 1 + nd)))
        return b.convert(r, dtype)
    xg = b.reshape(xp, (n, g, c // g) + xp.shape[2:])
    gg = b.reshape(grad_out, (n, g, f // g) + out_sp)
    # Loops: d0 = group, d1 = f, d2 = c, d3.. = window, then n, outputs.
    kd = [f"d{3 + i}" for i in range(nd)]
    nn_ = f"d{3 + nd}"
    od = [f"d{4 + nd + i}" for i in range(nd)]
    loops = 4 + 2 * nd
    x_map = affine_map(loops, [nn_, "d0", "d2"] + [
        f"{o} * {s} + {k} * {d}" for o, k, s, d in zip(od, kd, stride, dilation)])
    g_map = affine_map(loops, [nn_, "d0", "d1"] + od)
    out_shape = (g, f // g, c // g) + tuple(ks)
    out_map = affine_map(loops, ["d0", "d1", "d2"] + kd)
    init = b.fill(0, out_shape, acc)
    its = ["parallel"] * (3 + nd) + ["reduction"] * (1 + nd)
    r = b.generic([xg, gg], [x_map, g_map], [init], [out_map], its, mac)[0]
    r = b.reshape(r, (f, c // g) + tuple(ks))
    return b.convert(r, dtype)


# Everything, underscored helpers included, for the later op families.
__all__ = [n for n in dir() if not n.startswith("__")]
