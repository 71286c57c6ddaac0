"""PT2E-quantized graphs: the quantize/dequantize patterns that
``convert_pt2e`` leaves, rewritten into integer and f32 ATen ops that the
backend compiles.

A model quantized with PT2E (``prepare_pt2e``/``convert_pt2e``, e.g. with
the x86 quantizer) reaches the backend as an f32 graph in which each
quantized tensor passes through ``quantized_decomposed.quantize_per_tensor``
and ``dequantize_per_tensor`` (activations, u8 or i8 with a scale and zero
point given as numbers) and each quantized weight through
``dequantize_per_channel`` (i8 with a scale and zero point per output
channel). On dynamo's graph, before AOTAutograd, :func:`lower_quantized`
rewrites:

- a linear layer whose input and weight are both dequantized, ``linear(
  dequantize_per_tensor(quantize_per_tensor(x, sx, zx)), dequantize_per_
  channel(wq, sw, zw), bias)``, into an int8 x int8 -> int32 matrix product
  (``aten._int_mm``, which the backend puts on the CPU's int8 matrix units):
  x is quantized straight to i8 (a u8 code q is stored as q - 128, its zero
  point shifted likewise), and

      y[m, n] = sx * sw[n] * (sum_k xq[m, k] wq[n, k] - zx' colsum(wq)[n]
                              - zw[n] rowsum(xq)[m] + K zx' zw[n]) + bias[n]

  with the integer sums exact in i32 (the reference computes them in f32);
- a 2-d convolution of one group whose input and weight are both
  dequantized, with zero weight zero points (symmetric, as the x86
  quantizer makes them), any C x KH x KW (the integer GEMM pads K to its
  unit's groups: an RGB stem's 3 x 7 x 7 too), into ``polyblocks::conv2d_int8`` (int8_ops.py) on x's codes padded with
  x's zero point (a padded zero of the dequantized input), minus zx' x the
  filter's sum per output channel, scaled by sx x sw and plus the bias;
- every other ``dequantize_per_tensor(quantize_per_tensor(x))`` into its
  f32 value (clamp(round(x / s) + z, qmin, qmax) - z) * s, and every other
  ``dequantize_per_channel`` of a weight into (wq - z[c]) * s[c]: such ops
  (grouped and depthwise convolutions, attention's matmuls, a residual
  add's operands) run in f32 with the quantized model's values.

Quantize ops whose codes leave the graph, ``.tensor`` overloads (scales as
tensors: dynamic quantization) and ``choose_qparams`` stay as they are and
run in eager (a warning names them).
"""

from __future__ import annotations

import torch
import torch.fx as fx

from . import int8_ops  # noqa: F401  (torch.ops.polyblocks.conv2d_int8)

__all__ = ["lower_quantized"]

aten = torch.ops.aten


def _quantized_ops():
    """The quantize/dequantize overloads, or None where no library defined
    them (nothing quantized can then appear in a graph)."""
    try:
        qd = torch.ops.quantized_decomposed
        return (qd.quantize_per_tensor.default, qd.dequantize_per_tensor.default,
                qd.dequantize_per_channel.default)
    except (AttributeError, RuntimeError):
        return None


def _shape(node) -> list[int] | None:
    value = node.meta.get("example_value", node.meta.get("val"))
    if isinstance(value, torch.Tensor) and all(isinstance(d, int) for d in value.shape):
        return list(value.shape)
    return None


def _f32_out(node) -> bool:
    """Whether a dequantize node returns f32 (its out_dtype, default f32)."""
    return node.kwargs.get("out_dtype") in (None, torch.float32)


def _is(node, target) -> bool:
    """Whether `node` calls `target` (an OpOverload; a call of its packet,
    as dynamo records a direct call, counts)."""
    if not (isinstance(node, fx.Node) and node.op == "call_function"):
        return False
    called = node.target
    if isinstance(called, torch._ops.OpOverloadPacket):
        called = called.default
    return called == target


# The linear layer as dynamo records it: ATen's op in an exported program's
# graph (convert_pt2e's output), the functional in Python code.
_LINEARS = (aten.linear.default, torch.nn.functional.linear, torch._C._nn.linear)


# The 2-d convolution as dynamo records it (ATen's in an exported program's
# graph, torch.conv2d = F.conv2d in Python code), and its defaults.
_CONV2DS = (aten.conv2d.default, torch.conv2d)


def _quantized_operands(x, w, ops, weight_rank: int):
    """For an op on `x` and `w`: when x is dequantize_per_tensor(
    quantize_per_tensor(source)) with the same numeric (scale, zero point,
    range) of a u8 or i8 code and w is dequantize_per_channel of an i8
    weight of `weight_rank` dimensions along axis 0, both into f32:
    (source, sx, zx, qmin, qmax, qtype, wq, sw, zw); else None."""
    quantize, dequantize, dequantize_channel = ops
    if not (_is(x, dequantize) and _is(x.args[0], quantize) and _is(w, dequantize_channel)
            and _f32_out(x) and _f32_out(w)):
        return None
    source, sx, zx, qmin, qmax, qtype = x.args[0].args[:6]
    wq, sw, zw, axis, wmin, wmax, wtype = w.args[:7]
    w_shape = _shape(wq)
    if (qtype not in (torch.uint8, torch.int8)
            or tuple(x.args[1:6]) != (sx, zx, qmin, qmax, qtype)
            or not isinstance(sx, float) or not isinstance(zx, int)
            or wtype != torch.int8 or (wmin, wmax) != (-128, 127) or axis != 0
            or w_shape is None or len(w_shape) != weight_rank):
        return None
    return source, sx, zx, qmin, qmax, qtype, wq, sw, zw
_CONV2D_DEFAULTS = (None, None, None, 1, 0, 1, 1)  # x, w, bias, stride, padding, dilation, groups


def _value(gm: fx.GraphModule, node, inputs: dict) -> torch.Tensor | None:
    """The tensor a graph input (its example input, from `inputs`) or a
    get_attr node holds when the graph is compiled, or None."""
    if not isinstance(node, fx.Node):
        return None
    value = inputs.get(node)
    if node.op == "get_attr":
        value = gm
        for part in node.target.split("."):
            value = getattr(value, part, None)
    return value if isinstance(value, torch.Tensor) else None


def _calls_any(node, targets) -> bool:
    """Whether `node` calls one of `targets` (OpOverloads, or functions as
    dynamo records Python calls)."""
    return any(_is(node, t) if isinstance(t, torch._ops.OpOverload)
               else node.op == "call_function" and node.target is t for t in targets)


def _pair(v) -> list[int] | None:
    if isinstance(v, int):
        return [v, v]
    if isinstance(v, (list, tuple)) and len(v) == 2 and all(isinstance(i, int) for i in v):
        return list(v)
    return None


def lower_quantized(gm: fx.GraphModule, example_inputs=None) -> bool:
    """Rewrites ``gm``'s quantize/dequantize patterns (see the module
    docstring) in place; returns whether it changed the graph.
    ``example_inputs`` (dynamo's, one per placeholder) tell whether the
    weights' zero points are zero."""
    ops = _quantized_ops()
    graph = gm.graph
    if ops is None or not any(_calls_any(n, ops) for n in graph.nodes):
        return False
    quantize, dequantize, dequantize_channel = ops
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    inputs = dict(zip(placeholders, example_inputs or ()))
    changed = False

    def call(target, *args, **kwargs):
        return graph.call_function(target, args, kwargs)

    def quantize_codes(x, scale, zero, qmin, qmax, offset):
        """clamp(round(x / scale) + zero, qmin, qmax) - offset, in f32 (as
        the reference quantizes: a bf16 or f16 x is widened first)."""
        value = x.meta.get("example_value", x.meta.get("val"))
        if not isinstance(value, torch.Tensor) or value.dtype != torch.float32:
            x = call(aten._to_copy.default, x, dtype=torch.float32)
        t = call(aten.mul.Tensor, x, 1.0 / scale)
        t = call(aten.round.default, t)
        t = call(aten.add.Tensor, t, float(zero - offset))
        return call(aten.clamp.default, t, float(qmin - offset), float(qmax - offset))

    def along(v, axis: int, rank: int):
        """A per-channel vector `v` shaped to broadcast along `axis`."""
        return call(aten.reshape.default, v, [-1 if d == axis else 1 for d in range(rank)])

    for node in list(graph.nodes):
        if not _calls_any(node, _LINEARS):
            continue
        bias = node.args[2] if len(node.args) > 2 else node.kwargs.get("bias")
        operands = _quantized_operands(node.args[0], node.args[1], ops, 2)
        if operands is None or _shape(operands[0]) is None:
            continue
        source, sx, zx, qmin, qmax, qtype, wq, sw, zw = operands
        x_shape, w_shape = _shape(source), _shape(wq)
        offset = 128 if qtype == torch.uint8 else 0
        zx_shifted = zx - offset
        k, n = w_shape[1], w_shape[0]
        with graph.inserting_before(node):
            codes = quantize_codes(source, sx, zx, qmin, qmax, offset)
            xq = call(aten._to_copy.default, codes, dtype=torch.int8)
            xq = call(aten.reshape.default, xq, [-1, k])
            acc = call(aten._int_mm.default, xq, call(aten.t.default, wq))
            w32 = call(aten._to_copy.default, wq, dtype=torch.int32)
            colsum = call(aten.sum.dim_IntList, w32, [1], False, dtype=torch.int32)
            zw32 = call(aten._to_copy.default, zw, dtype=torch.int32)
            x32 = call(aten._to_copy.default, xq, dtype=torch.int32)
            rowsum = call(aten.sum.dim_IntList, x32, [1], True, dtype=torch.int32)
            # zx' colsum + zw rowsum - K zx' zw, per (m, n).
            per_n = call(aten.sub.Tensor, call(aten.mul.Tensor, colsum, zx_shifted),
                         call(aten.mul.Tensor, zw32, k * zx_shifted))
            correction = call(aten.add.Tensor, call(aten.mul.Tensor, rowsum, zw32), per_n)
            exact = call(aten.sub.Tensor, acc, correction)
            scale = call(aten.mul.Tensor, call(aten._to_copy.default, sw, dtype=torch.float32),
                         sx)
            y = call(aten.mul.Tensor, call(aten._to_copy.default, exact, dtype=torch.float32),
                     scale)
            if bias is not None:
                y = call(aten.add.Tensor, y, bias)
            y = call(aten.reshape.default, y, x_shape[:-1] + [n])
        node.replace_all_uses_with(y)
        graph.erase_node(node)
        changed = True

    # Quantized 2-d convolutions (one group, symmetric weights): int8 x int8
    # -> int32 on x's codes padded with x's zero point (a padded zero of
    # the dequantized input), minus zx' x the filter's sums per channel.
    for node in list(graph.nodes):
        if not _calls_any(node, _CONV2DS):
            continue
        args = list(node.args) + list(_CONV2D_DEFAULTS[len(node.args):])
        for i, name in enumerate(("input", "weight", "bias", "stride", "padding", "dilation",
                                  "groups")):
            if name in node.kwargs:
                args[i] = node.kwargs[name]
        x, w, bias, stride, padding, dilation, groups = args
        stride, padding, dilation = _pair(stride), _pair(padding), _pair(dilation)
        operands = _quantized_operands(x, w, ops, 4)
        if operands is None or groups != 1 or not (stride and padding and dilation):
            continue
        source, sx, zx, qmin, qmax, qtype, wq, sw, zw = operands
        zero_points = _value(gm, zw, inputs)
        if zero_points is None or bool(zero_points.any()):
            continue
        offset = 128 if qtype == torch.uint8 else 0
        zx_shifted = zx - offset
        with graph.inserting_before(node):
            codes = quantize_codes(source, sx, zx, qmin, qmax, offset)
            xq = call(aten._to_copy.default, codes, dtype=torch.int8)
            if any(padding):
                xq = call(aten.constant_pad_nd.default, xq,
                          [padding[1], padding[1], padding[0], padding[0]], zx_shifted)
            acc = call(torch.ops.polyblocks.conv2d_int8.default, xq, wq, stride, dilation)
            w32 = call(aten._to_copy.default, wq, dtype=torch.int32)
            wsum = call(aten.sum.dim_IntList, w32, [1, 2, 3], False, dtype=torch.int32)
            correction = along(call(aten.mul.Tensor, wsum, zx_shifted), 1, 4)
            exact = call(aten.sub.Tensor, acc, correction)
            scale = along(call(aten.mul.Tensor,
                               call(aten._to_copy.default, sw, dtype=torch.float32), sx), 1, 4)
            y = call(aten.mul.Tensor, call(aten._to_copy.default, exact, dtype=torch.float32),
                     scale)
            if bias is not None:
                y = call(aten.add.Tensor, y, along(bias, 1, 4))
        node.replace_all_uses_with(y)
        graph.erase_node(node)
        changed = True

    # The other dequantized values, in f32.
    for node in list(graph.nodes):
        if not _f32_out(node):
            continue
        if _is(node, dequantize) and _is(node.args[0], quantize):
            q = node.args[0]
            source, scale, zero, qmin, qmax, qtype = q.args[:6]
            if (tuple(node.args[1:6]) != (scale, zero, qmin, qmax, qtype)
                    or not isinstance(scale, float) or not isinstance(zero, int)):
                continue
            with graph.inserting_before(node):
                codes = quantize_codes(source, scale, zero, qmin, qmax, zero)
                y = call(aten.mul.Tensor, codes, scale)
        elif _is(node, dequantize_channel):
            wq, scale, zero, axis = node.args[:4]
            shape = _shape(wq)
            if shape is None:
                continue
            axis = axis % len(shape)
            with graph.inserting_before(node):
                codes = call(aten._to_copy.default, wq, dtype=torch.float32)
                z = along(call(aten._to_copy.default, zero, dtype=torch.float32), axis,
                          len(shape))
                s = along(call(aten._to_copy.default, scale, dtype=torch.float32), axis,
                          len(shape))
                y = call(aten.mul.Tensor, call(aten.sub.Tensor, codes, z), s)
        else:
            continue
        node.replace_all_uses_with(y)
        graph.erase_node(node)
        changed = True

    if changed:
        # The quantize ops whose dequantize was rewritten, and their inputs'
        # orphans.
        for node in reversed(list(graph.nodes)):
            if (not node.users and any(_is(node, t)
                                       for t in (quantize, dequantize, dequantize_channel))):
                graph.erase_node(node)
        graph.lint()
        gm.recompile()
    return changed
