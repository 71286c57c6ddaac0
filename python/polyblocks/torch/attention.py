"""Decompositions of PyTorch's CPU attention op and of its backward.

``F.scaled_dot_product_attention`` on the CPU dispatches to
``aten._scaled_dot_product_flash_attention_for_cpu``, which returns the
output and the log-sum-exp of each query row's scores; its backward,
``..._for_cpu_backward``, recomputes the probabilities from that
log-sum-exp. PyTorch's own decomposition of the forward op is meant for
inference: its second result is the probability matrix, not the
log-sum-exp, and its backward has none. In a training graph the backward
would run in eager on a wrong log-sum-exp (gradients off by orders of
magnitude). Here the forward is the attention's math in ATen ops,
softmax(Q K^T * scale + mask) V (the softmax that pb-fuse-attention
recognizes in inference graphs, where the log-sum-exp is dead), and the
true log-sum-exp; the backward is the standard attention gradient in ATen
ops:

    P = exp(S - lse),  dV = P^T dO,  dP = dO V^T,
    dS = P * (dP - rowsum(dO * O)),  dQ = dS K * scale,  dK = dS^T Q * scale,

with grouped-query attention's K and V gradients summed over each group.
Dropout inside attention is not decomposed (``NotImplemented``): the op
then runs in eager, said by the backend's fallback warning.
"""

from __future__ import annotations

import math

import torch

__all__ = ["attention_decompositions"]

aten = torch.ops.aten


def _scores(query, key, attn_mask, is_causal, scale):
    """S = Q K^T * scale with the mask applied (-inf where masked), in the
    accumulation dtype, K's heads repeated for grouped-query attention."""
    acc = torch.float32 if query.dtype in (torch.float16, torch.bfloat16) else query.dtype
    q, k = query.to(acc), key.to(acc)
    if k.size(-3) != q.size(-3):
        k = k.repeat_interleave(q.size(-3) // k.size(-3), dim=-3)
    scale = scale if scale is not None else 1.0 / math.sqrt(query.size(-1))
    s = torch.matmul(q, k.transpose(-2, -1)) * scale
    if is_causal:
        L, S = s.size(-2), s.size(-1)
        keep = torch.ones(L, S, dtype=torch.bool, device=s.device).tril()
        s = s.masked_fill(~keep, float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            s = s.masked_fill(~attn_mask, float("-inf"))
        else:
            s = s + attn_mask.to(acc)
    return s, scale


def _forward(query, key, value, dropout_p=0.0, is_causal=False, *, attn_mask=None,
             scale=None):
    """softmax(Q K^T * scale + mask) V, the scale applied to the scores
    (PyTorch's math op scales Q and K by its square root each: with K a KV
    cache, a pass over the whole cache per step, which also keeps K's
    transpose from folding into the product), and the log-sum-exp of the
    same scores."""
    if dropout_p != 0.0:
        return NotImplemented
    s, _ = _scores(query, key, attn_mask, is_causal, scale)
    v = value.to(s.dtype)
    if v.size(-3) != s.size(-3):
        v = v.repeat_interleave(s.size(-3) // v.size(-3), dim=-3)
    output = torch.matmul(torch.softmax(s, dim=-1), v).to(query.dtype)
    # The flash op's output layout, as PyTorch's decomposition keeps it.
    output = (output.permute(2, 0, 1, 3).contiguous(memory_format=torch.contiguous_format)
              .permute(1, 2, 0, 3))
    lse = torch.logsumexp(s, dim=-1).to(torch.float32)
    return output, lse


def _backward(grad_out, query, key, value, out, logsumexp, dropout_p, is_causal, *,
              attn_mask=None, scale=None):
    if dropout_p != 0.0:
        return NotImplemented
    s, scale = _scores(query, key, attn_mask, is_causal, scale)
    acc = s.dtype
    p = torch.exp(s - logsumexp.to(acc).unsqueeze(-1))
    if attn_mask is not None:
        # A row masked whole has lse = -inf: no probability, no gradient.
        p = torch.where(torch.isinf(logsumexp).unsqueeze(-1), 0.0, p)
    groups = query.size(-3) // key.size(-3)
    q, go, o = query.to(acc), grad_out.to(acc), out.to(acc)
    k, v = key.to(acc), value.to(acc)
    if groups != 1:
        k = k.repeat_interleave(groups, dim=-3)
        v = v.repeat_interleave(groups, dim=-3)
    dv = torch.matmul(p.transpose(-2, -1), go)
    dp = torch.matmul(go, v.transpose(-2, -1))
    delta = (go * o).sum(dim=-1, keepdim=True)
    ds = p * (dp - delta) * scale
    dq = torch.matmul(ds, k)
    dk = torch.matmul(ds.transpose(-2, -1), q)
    if groups != 1:
        def fold(t):
            return t.unflatten(-3, (key.size(-3), groups)).sum(dim=-3)
        dk, dv = fold(dk), fold(dv)
    return dq.to(query.dtype), dk.to(key.dtype), dv.to(value.dtype)


def attention_decompositions() -> dict:
    """OpOverload -> decomposition for the CPU attention op and its backward."""
    return {
        aten._scaled_dot_product_flash_attention_for_cpu.default: _forward,
        aten._scaled_dot_product_flash_attention_for_cpu_backward.default: _backward,
    }
