"""StableHLO (as jaxlib's MLIR bindings hold it) -> input-contract MLIR.

``convert(module)`` walks the public ``main`` function of a module that
``jax.jit(f).lower(...)`` produced, op by op through the MLIR Python
bindings that jaxlib ships (not by parsing its text, whose printed form
changes between StableHLO versions), and emits one ``func.func @forward``
in linalg/tensor/arith/math with :class:`polyblocks.torch.mlir.FunctionBuilder`,
the text builder the torch frontend uses. Private functions that ``main``
calls are inlined. An op without an emitter, or an emitter that cannot
handle its attributes, raises :class:`UnsupportedOp` naming the op and its
source location.

Emitters are registered per op name in :mod:`polyblocks.stablehlo.ops`; each gets
an :class:`OpContext` and returns the op's results (``Value``s or
:class:`Splat`s).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
import torch

from ..torch.mlir import FunctionBuilder, Unsupported, Value

__all__ = ["convert", "Converted", "UnsupportedOp", "Splat", "Permuted", "Broadcast", "OpContext",
           "register", "EMITTERS", "element_dtype"]

EMITTERS: dict[str, Callable] = {}
# Ops whose emitters handle operands with no elements (which are Splats:
# materializing one is an error).
EMPTY_OPERANDS_OK = {"stablehlo.concatenate", "stablehlo.dynamic_update_slice",
                     "stablehlo.pad", "stablehlo.reduce"}
# Ops whose emitters read Permuted operands as they are (composing the
# permutation into their own indexing); every other op gets them
# materialized.
PERMUTED_OPERANDS_OK = {"stablehlo.transpose", "stablehlo.dot_general", "stablehlo.dot"}
# Ops whose emitters read Broadcast operands through broadcasting maps
# (the elementwise ops of ops/elementwise.py add theirs).
BROADCAST_OPERANDS_OK = {"stablehlo.broadcast_in_dim"}


def register(*names: str):
    def wrap(fn):
        for n in names:
            EMITTERS[n] = fn
        return fn
    return wrap


class UnsupportedOp(Unsupported):
    """An op (or a form of it) that the converter does not handle.

    ``op``: the StableHLO op name; ``location``: where the program built it
    (file:line when the module has it)."""

    def __init__(self, op: str, reason: str, location: str = ""):
        self.op = op
        self.reason = reason
        self.location = location
        where = f" at {location}" if location else ""
        super().__init__(f"{op}{where}: {reason}")


_ELEMENT_DTYPES = {
    "f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16,
    "f64": torch.float64, "i1": torch.bool, "i8": torch.int8, "i16": torch.int16,
    "i32": torch.int32, "i64": torch.int64,
}


def element_dtype(type_str: str):
    try:
        return _ELEMENT_DTYPES[type_str]
    except KeyError:
        raise Unsupported(f"element type {type_str} is not supported") from None


def tensor_shape_dtype(t) -> tuple[tuple[int, ...], Any]:
    """(shape, torch dtype) of an MLIR ranked tensor type."""
    from jaxlib.mlir import ir
    try:
        rt = ir.RankedTensorType(t)
    except (ValueError, TypeError):
        raise Unsupported(f"type {t} is not a ranked tensor") from None
    if not rt.has_static_shape:
        raise Unsupported(f"type {t} has a dynamic shape")
    return tuple(int(d) for d in rt.shape), element_dtype(str(rt.element_type))


class _Deferred:
    """A tensor value not emitted where it is defined: ``materialize``
    emits it (once) when an op needs it as a tensor Value."""

    __slots__ = ("shape", "dtype", "_materialized")

    def __init__(self, shape, dtype):
        self.shape = tuple(int(d) for d in shape)
        self.dtype = dtype
        self._materialized = None

    @property
    def rank(self) -> int:
        return len(self.shape)

    def materialize(self, b: FunctionBuilder) -> Value:
        if self._materialized is None:
            self._materialized = self._emit(b)
        return self._materialized

    def _emit(self, b: FunctionBuilder) -> Value:
        raise NotImplementedError


class Splat(_Deferred):
    """A tensor whose elements all equal one python number; materialized
    (a linalg.fill) only when an op needs it as a tensor."""

    __slots__ = ("value",)

    def __init__(self, value, shape, dtype):
        super().__init__(shape, dtype)
        self.value = value

    def _emit(self, b: FunctionBuilder) -> Value:
        if 0 in self.shape:
            raise Unsupported("a tensor with no elements used as an operand")
        return b.fill(self.value, self.shape, self.dtype)


class Permuted(_Deferred):
    """``source`` with its dimensions permuted (result dim i is source dim
    ``perm[i]``), not yet emitted: a stablehlo.transpose, or a contraction
    written in the layout its transposing user wants. Emitters that index
    their operands through affine maps (dot_general) read ``source`` in
    place, a transpose of it composes the two permutations (a pair that
    cancels emits nothing), and any other user gets it materialized once as
    a linalg.transpose."""

    __slots__ = ("source", "perm")

    def __init__(self, source: Value, perm):
        self.source = source
        self.perm = tuple(int(p) for p in perm)
        super().__init__([source.shape[p] for p in self.perm], source.dtype)

    def _emit(self, b: FunctionBuilder) -> Value:
        return b.transpose(self.source, self.perm)


class Broadcast(_Deferred):
    """``source`` broadcast to ``shape`` (source dim i is dim ``dims[i]``,
    of the same extent; the other dims repeat it), not yet emitted: a
    stablehlo.broadcast_in_dim that adds non-unit dims. An elementwise op
    reads the source through a broadcasting indexing map of its own
    generic (``as_operand``), as the torch frontend's broadcasting
    operands are read, so that no tensor of the full shape is written and
    no reshape separates the broadcast from its consumer (a softmax's row
    maximum, broadcast over the keys, then subtracted); any other user
    materializes it once as a copying linalg.generic."""

    __slots__ = ("source", "dims")

    def __init__(self, source: Value, dims, shape):
        self.source = source
        self.dims = tuple(int(d) for d in dims)
        super().__init__(shape, source.dtype)

    def _emit(self, b: FunctionBuilder) -> Value:
        from ..torch.mlir import affine_map, identity_map
        R = len(self.shape)
        out = b.empty(self.shape, self.dtype)
        return b.generic([self.source], [affine_map(R, [f"d{d}" for d in self.dims])], [out],
                         [identity_map(R)], ["parallel"] * R, lambda bb, a, o: [a])[0]

    def as_operand(self, b: FunctionBuilder) -> Value:
        """The source with unit dims where the broadcast repeats it, which
        the builder's elementwise ops broadcast by their maps (materialized
        when the source's dims are not in the result's order)."""
        if list(self.dims) != sorted(self.dims):
            return self.materialize(b)
        shape = [1] * len(self.shape)
        for i, d in enumerate(self.dims):
            shape[d] = self.source.shape[i]
        return b.reshape(self.source, shape)


def describe_location(loc) -> str:
    """Where an op came from, as its MLIR location says: file:line as JAX
    writes them (a name over a call site chain), or the op's name as
    TensorFlow writes it ("model/dense/MatMul", fused with the line of
    TensorFlow's own code that built it, which is not worth showing);
    '' when it has none."""
    text = str(loc)
    found = re.findall(r'"([^"]+)"(:\d+)?', text)
    for path, line in found:
        if line and "/tensorflow/" not in path and "/keras/" not in path:
            return f"{path}{line}"
    for name, line in found:
        if not line:
            return name
    return next((f"{path}{line}" for path, line in found if line), "")


class OpContext:
    """What an emitter sees of the op it converts."""

    def __init__(self, conv: "_Converter", op, operands: list):
        self.conv = conv
        self.b = conv.b
        self.op = op
        self.name = op.name
        self.raw = operands  # Values or Splats

    # -- operands --------------------------------------------------------
    def value(self, i: int) -> Value:
        """Operand ``i`` as a tensor Value (splats and permutations
        materialized)."""
        v = self.raw[i]
        return v.materialize(self.b) if isinstance(v, _Deferred) else v

    def values(self) -> list[Value]:
        return [self.value(i) for i in range(len(self.raw))]

    def splat(self, i: int):
        """The python number of operand ``i`` when it is a splat constant,
        else None."""
        v = self.raw[i]
        return v.value if isinstance(v, Splat) else None

    def scalar(self, i: int):
        """Operand ``i`` (a rank-0 tensor) as a top-level Scalar, or its
        python number when it is a constant."""
        v = self.raw[i]
        if isinstance(v, Splat):
            return v.value
        if v.rank != 0:
            raise self.unsupported(f"operand {i} is not a scalar")
        from ..torch.mlir import Scalar
        return Scalar(self.b.op(f"tensor.extract {v.name}[] : {v.type}"), v.dtype)

    # -- results ---------------------------------------------------------
    @property
    def result_types(self) -> list[tuple[tuple[int, ...], Any]]:
        return [tensor_shape_dtype(r.type) for r in self.op.results]

    @property
    def shape(self) -> tuple[int, ...]:
        return self.result_types[0][0]

    @property
    def dtype(self):
        return self.result_types[0][1]

    def operand_type(self, i: int):
        return tensor_shape_dtype(self.op.operands[i].type)

    # -- attributes ------------------------------------------------------
    def has(self, name: str) -> bool:
        return name in self.op.attributes

    def attr(self, name: str):
        try:
            return self.op.attributes[name]
        except KeyError:
            raise self.unsupported(f"no attribute {name!r}") from None

    def ints(self, name: str, default=None) -> list[int]:
        """An integer array attribute (DenseI64ArrayAttr or dense elements),
        flattened."""
        if not self.has(name):
            if default is not None:
                return list(default)
            raise self.unsupported(f"no attribute {name!r}")
        return attr_ints(self.attr(name))

    def int_matrix(self, name: str) -> list[list[int]]:
        """A 2-d dense integer attribute (e.g. padding) as rows."""
        a = self.attr(name)
        arr = np.array(a)
        return [[int(x) for x in row] for row in arr.reshape(arr.shape[0], -1)]

    def int(self, name: str, default=None) -> int:
        if not self.has(name):
            if default is not None:
                return default
            raise self.unsupported(f"no attribute {name!r}")
        from jaxlib.mlir import ir
        return int(ir.IntegerAttr(self.attr(name)).value)

    def unsupported(self, reason: str) -> UnsupportedOp:
        return UnsupportedOp(self.name, reason, describe_location(self.op.location))

    # -- regions ---------------------------------------------------------
    def region_ops(self, index: int = 0) -> tuple[list, list]:
        """(block arguments, ops) of the single block of region ``index``."""
        region = self.op.regions[index]
        blocks = list(region.blocks)
        if len(blocks) != 1:
            raise self.unsupported(f"region with {len(blocks)} blocks")
        return list(blocks[0].arguments), [o.operation for o in blocks[0].operations]

    def inline_call(self, callee: str, args: list) -> list:
        return self.conv.call(callee, args)


def attr_ints(a) -> list[int]:
    try:
        return [int(x) for x in a]
    except TypeError:
        return [int(x) for x in np.array(a).reshape(-1)]


@dataclass
class Converted:
    """A converted module: the text of the input-contract module, which of
    ``main``'s arguments ``forward`` takes, and how ``main``'s results are
    rebuilt from ``forward``'s results."""

    text: str
    arg_indices: list[int]
    # Per main result: ("result", k), ("input", i) (main's argument i
    # returned as is) or ("splat", (value, shape, dtype)).
    plan: list[tuple]
    input_types: list[tuple]   # (shape, dtype) of every main argument
    output_types: list[tuple]  # (shape, dtype) of every main result
    ops: list[str] = field(default_factory=list)


class _Converter:
    def __init__(self, module):
        self.b = FunctionBuilder()
        self.funcs = {}
        for op in module.body.operations:
            op = op.operation
            if op.name == "func.func":
                self.funcs[_sym_name(op)] = op
        self.ops: list[str] = []
        self._depth = 0

    def run_block(self, block, args: Sequence) -> list:
        env: dict = {}
        for a, v in zip(block.arguments, args):
            env[a] = v
        for op in block.operations:
            op = op.operation
            name = op.name
            operands = [env[v] for v in op.operands]
            if name in ("func.return", "stablehlo.return"):
                return operands
            if name not in ("func.call", "call"):
                operands = [v.materialize(self.b) if (
                    isinstance(v, Permuted) and name not in PERMUTED_OPERANDS_OK
                    or isinstance(v, Broadcast) and name not in BROADCAST_OPERANDS_OK) else v
                    for v in operands]
            if name == "func.call" or name == "call":
                results = self.call(_callee(op), operands)
            else:
                fn = EMITTERS.get(name)
                if fn is None:
                    raise UnsupportedOp(name, "not supported",
                                        describe_location(op.location))
                cx = OpContext(self, op, operands)
                types = cx.result_types
                if types and all(0 in shape for shape, _ in types):
                    # Results with no elements: nothing to compute.
                    results = [Splat(0, shape, dtype) for shape, dtype in types]
                    for r, v in zip(op.results, results):
                        env[r] = v
                    continue
                if name not in EMPTY_OPERANDS_OK and any(0 in v.shape for v in operands):
                    raise cx.unsupported("an operand has no elements")
                try:
                    results = fn(cx)
                except UnsupportedOp:
                    raise
                except Unsupported as e:
                    raise cx.unsupported(str(e)) from None
                self.ops.append(name)
            if not isinstance(results, (list, tuple)):
                results = [results]
            if len(results) != len(op.results):
                raise UnsupportedOp(name, f"emitter returned {len(results)} results, "
                                    f"the op has {len(op.results)}")
            for r, v in zip(op.results, results):
                _check_result(name, r, v)
                env[r] = v
        raise Unsupported("block without a terminator")

    def call(self, callee: str, args: list) -> list:
        fn = self.funcs.get(callee)
        if fn is None:
            raise Unsupported(f"call to unknown function @{callee}")
        self._depth += 1
        if self._depth > 64:
            raise Unsupported(f"calls nested too deeply (recursion through @{callee}?)")
        try:
            return self.run_block(fn.regions[0].blocks[0], args)
        finally:
            self._depth -= 1


def _check_result(name, r, v) -> None:
    shape, dtype = tensor_shape_dtype(r.type)
    if not isinstance(v, (Value, _Deferred)):
        raise UnsupportedOp(name, f"emitter returned {type(v).__name__}")
    if tuple(v.shape) != shape or v.dtype != dtype:
        raise UnsupportedOp(name, f"emitter produced {list(v.shape)} {v.dtype}, the op "
                            f"has {list(shape)} {dtype} (a converter bug)")


def _sym_name(op) -> str:
    from jaxlib.mlir import ir
    return ir.StringAttr(op.attributes["sym_name"]).value


def _callee(op) -> str:
    from jaxlib.mlir import ir
    a = op.attributes["callee"]
    try:
        return ir.FlatSymbolRefAttr(a).value
    except (ValueError, TypeError):
        return str(a).lstrip("@")


_VIEW_DEF = re.compile(r"^  (%[\w]+) = (?:tensor\.expand_shape|tensor\.collapse_shape|"
                       r"tensor\.empty)\b")
_NAME = re.compile(r"%[\w]+")


def _drop_unused_views(lines: list[str], results: list[str]) -> list[str]:
    """``lines`` without the reshapes and empty tensors that nothing reads:
    the unit-dim views that elementwise ops make of their operands and
    results when a user reads the value in another shape (the compiler's
    canonicalization would drop them too; left out, the module reads as
    what it computes). ``results``: the names the function returns."""
    uses: dict[str, int] = {n: 1 for n in results}
    for line in lines:
        for n in _NAME.findall(line):
            uses[n] = uses.get(n, 0) + 1
    keep = [True] * len(lines)
    changed = True
    while changed:
        changed = False
        for i, line in enumerate(lines):
            if not keep[i]:
                continue
            m = _VIEW_DEF.match(line)
            if m and uses.get(m.group(1), 0) == 1:
                keep[i] = False
                changed = True
                for n in _NAME.findall(line):
                    uses[n] -= 1
    return [line for line, k in zip(lines, keep) if k]


def convert(module, func_name: str = "forward") -> Converted:
    """Converts ``module`` (a jaxlib ``ir.Module``) and returns the text of
    an input-contract module; raises UnsupportedOp/Unsupported."""
    from . import ops  # noqa: F401  (registers the emitters)

    conv = _Converter(module)
    main = conv.funcs.get("main")
    if main is None:
        raise Unsupported("the module has no @main function")
    block = main.regions[0].blocks[0]
    input_types = [tensor_shape_dtype(a.type) for a in block.arguments]
    output_types = []
    for r in block.operations[len(block.operations) - 1].operation.operands:
        output_types.append(tensor_shape_dtype(r.type))
    args: list = []
    func_args: list[tuple[int, Value]] = []
    for i, (shape, dtype) in enumerate(input_types):
        if 0 in shape:
            args.append(Splat(0, shape, dtype))
            continue
        v = Value(f"%arg{len(func_args)}", shape, dtype)
        func_args.append((i, v))
        args.append(v)
    results = conv.run_block(block, args)
    b = conv.b
    results = [v.materialize(b) if isinstance(v, (Permuted, Broadcast)) else v
               for v in results]
    arg_index = {v.name: i for i, v in func_args}
    plan: list[tuple] = []
    outs: list[Value] = []
    seen: dict[str, int] = {}
    for v, (shape, dtype) in zip(results, output_types):
        if isinstance(v, Splat):
            plan.append(("splat", (v.value, v.shape, v.dtype)))
            continue
        if v.name in arg_index:
            plan.append(("input", arg_index[v.name]))
            continue
        if v.name in seen:
            plan.append(("result", seen[v.name]))
            continue
        seen[v.name] = len(outs)
        plan.append(("result", len(outs)))
        outs.append(v)
    # Arguments the computation does not read are not forward's arguments.
    body = "\n".join(_drop_unused_views(b.lines, [v.name for v in outs]))
    used = [(i, v) for i, v in func_args if re.search(re.escape(v.name) + r"\b", body)
            or any(o.name == v.name for o in outs)]
    renames = {v.name: f"%in{k}" for k, (_, v) in enumerate(used)}
    if renames:
        body = re.sub(r"%arg\d+\b", lambda m: renames.get(m.group(0), m.group(0)), body)
    arg_text = ", ".join(f"{renames[v.name]}: {v.type}" for _, v in used)
    res_types = ", ".join(v.type for v in outs)
    lines = ["module {", f"func.func @{func_name}({arg_text}) -> ({res_types}) {{", body]
    if outs:
        names = ", ".join(renames.get(v.name, v.name) for v in outs)
        lines.append(f"  return {names} : {res_types}")
    else:
        lines.append("  return")
    lines += ["}", "}"]
    return Converted(text="\n".join(lines) + "\n", arg_indices=[i for i, _ in used],
                     plan=plan, input_types=input_types, output_types=output_types,
                     ops=conv.ops)
