"""PolyBlocks' own integer ops for the torch frontend, which ATen lacks on
the CPU: ``polyblocks::conv2d_int8``, an int8 x int8 -> int32 2-d
convolution that :mod:`polyblocks.torch.quantized` puts in place of a
quantized convolution (ATen's convolutions keep their operands' dtype).
The emitter (ops/nn.py) compiles it as a linalg convolution sign-extending
its operands into i32; this Python body (exact sums in f64) runs it where
it is not compiled."""

from __future__ import annotations

import torch

__all__ = ["conv2d_int8"]


@torch.library.custom_op("polyblocks::conv2d_int8", mutates_args=())
def conv2d_int8(x: torch.Tensor, w: torch.Tensor, stride: list[int],
                dilation: list[int]) -> torch.Tensor:
    """sum over (c, kh, kw) of x[n, c, oh * s + kh * d, ow * s + kw * d] x
    w[f, c, kh, kw] in int32: NCHW int8 input (already padded), FCHW int8
    filter, one group."""
    if x.dtype != torch.int8 or w.dtype != torch.int8:
        raise TypeError("polyblocks::conv2d_int8 takes int8 operands")
    return torch.nn.functional.conv2d(x.double(), w.double(), stride=stride,
                                      dilation=dilation).to(torch.int32)


@conv2d_int8.register_fake
def _(x, w, stride, dilation):
    n, _, h, wd = x.shape
    f, _, kh, kw = w.shape
    oh = (h - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    return x.new_empty((n, f, oh, ow), dtype=torch.int32)
