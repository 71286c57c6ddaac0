"""Decompositions of the multi-tensor ops that optimizers use.

``torch.optim`` updates its parameters with the foreach ops by default
(``aten._foreach_add.List``, ``_foreach_addcmul.Scalar``, ...: one op over
a list of tensors). PyTorch has no decomposition for them, and they would
leave ``torch.compile(optimizer.step)`` in eager. Here each becomes the
per-tensor ATen ops it stands for, which AOTAutograd decomposes further
into the core ATen ops the emitters take; the compiler then fuses each
parameter's update into one loop nest. (With ``fused=True`` dynamo hands
no graph to the backend: the fused step runs in PyTorch.)
"""

from __future__ import annotations

from typing import Callable

import torch

__all__ = ["foreach_decompositions"]

aten = torch.ops.aten

# Foreach ops that are not the torch function of the same name per tensor.
_SPECIAL = {
    "copy": lambda self, src, non_blocking=False: aten.copy.default(self, src),
    "zero": lambda self: torch.zeros_like(self),
    "norm": lambda self, ord=2, dtype=None: torch.linalg.vector_norm(self, ord, dtype=dtype),
    "max": lambda self: torch.amax(self, dim=list(range(self.dim()))),
    "addcmul": lambda self, t1, t2, value=1: torch.addcmul(self, t1, t2, value=value),
    "addcdiv": lambda self, t1, t2, value=1: torch.addcdiv(self, t1, t2, value=value),
}


def _per_tensor(name: str, overload: str) -> Callable:
    """``aten._foreach_<name>.<overload>`` as a loop over its lists: a list
    argument (of tensors, or of scalars for the ScalarList overloads) is
    indexed, anything else is passed to every call."""
    fn = _SPECIAL.get(name) or getattr(torch, name)
    # addcmul/addcdiv's Tensor overload takes its per-tensor values as one
    # 1-d tensor, where the per-tensor op takes a Scalar.
    values_tensor = name in ("addcmul", "addcdiv") and overload == "Tensor"

    def decomposition(*args, **kwargs):
        n = next(len(a) for a in args if isinstance(a, (list, tuple)))
        results = []
        for i in range(n):
            call = [a[i] if isinstance(a, (list, tuple)) else a for a in args]
            if values_tensor:
                self, t1, t2, values = call
                product = t1 * t2 if name == "addcmul" else t1 / t2
                results.append(self + values[i] * product)
                continue
            results.append(fn(*call, **kwargs))
        return results

    return decomposition


def _foreach_names() -> list[str]:
    return sorted({s.name[len("aten::_foreach_"):] for s in torch._C._jit_get_all_schemas()
                   if s.name.startswith("aten::_foreach_") and not s.name.endswith("_")})


def foreach_decompositions() -> dict:
    """OpOverload -> decomposition for every functional foreach op that has a
    per-tensor counterpart."""
    table: dict = {}
    for name in _foreach_names():
        if name not in _SPECIAL and not callable(getattr(torch, name, None)):
            continue  # e.g. _foreach_powsum: no per-tensor op of that name
        packet = getattr(aten, "_foreach_" + name)
        for overload in packet.overloads():
            if overload.endswith("out"):
                continue
            table[getattr(packet, overload)] = _per_tensor(name, overload)
    return table
