"""A small text builder for input-contract MLIR (func, linalg, tensor, arith,
math over ranked tensors).

Tensor values are :class:`Value` (SSA name, shape, torch dtype); an extent
is an int, or a :class:`SymDim` where it is known only at run time (an
integer expression of the graph's size symbols, dynamo's s0, s1...);
scalars inside ``linalg.generic`` bodies are :class:`Scalar` (SSA name and a
torch dtype, or ``INDEX`` for ``index``). Emitters build IR only through
:class:`FunctionBuilder`, whose helpers cover the common shapes of code:
elementwise maps with broadcasting, reductions, reshapes, copies, padding.
"""

from __future__ import annotations

import math
from typing import Callable, Iterable, Sequence

import torch

__all__ = ["Unsupported", "Value", "Scalar", "INDEX", "FunctionBuilder",
           "mlir_type", "tensor_type", "is_float", "is_int", "compute_dtype",
           "SymDim", "to_dim", "is_static"]


class Unsupported(Exception):
    """An op, dtype or argument the emitter does not handle (falls back)."""


class SymDim:
    """An extent known only at run time: an integer expression (sympy) of
    the graph's size symbols. It takes part in shape arithmetic (+, -, *,
    exact //) and compares by identity of the expressions, which is what
    the traced graph knows of it (dynamo guards sizes that a branch
    compared; its symbols are at least 2, so an extent never equals 0 or
    1). What needs its value as a number (int(), ordering, float()) raises
    Unsupported: the op then has no symbolic form yet."""

    __slots__ = ("expr",)

    def __init__(self, expr):
        import sympy
        self.expr = sympy.sympify(expr)

    @staticmethod
    def _of(value):
        return value.expr if isinstance(value, SymDim) else value

    @staticmethod
    def make(expr):
        """``expr`` as an int when it is a number, else as a SymDim."""
        import sympy
        expr = sympy.expand(sympy.sympify(expr))
        if expr.is_Integer:
            return int(expr)
        return SymDim(expr)

    def __add__(self, other):
        return SymDim.make(self.expr + SymDim._of(other))

    __radd__ = __add__

    def __sub__(self, other):
        return SymDim.make(self.expr - SymDim._of(other))

    def __rsub__(self, other):
        return SymDim.make(SymDim._of(other) - self.expr)

    def __mul__(self, other):
        return SymDim.make(self.expr * SymDim._of(other))

    __rmul__ = __mul__

    def __floordiv__(self, other):
        import sympy
        q = sympy.cancel(self.expr / SymDim._of(other))
        if not (q.is_polynomial() and all(
                c.is_Integer for c in sympy.Poly(q, *q.free_symbols).coeffs())
                if q.free_symbols else q.is_Integer):
            raise Unsupported(f"the size {self.expr} // {other} is not exact")
        return SymDim.make(q)

    def __rfloordiv__(self, other):
        raise Unsupported(f"division by the size {self.expr} known only at run time")

    def __eq__(self, other):
        if isinstance(other, (SymDim, int)) and not isinstance(other, bool):
            import sympy
            return sympy.expand(self.expr - SymDim._of(other)) == 0
        return NotImplemented

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self):
        return hash(self.expr)

    def _numeric(self, *args):
        raise Unsupported(f"the size {self.expr} is known only at run time")

    __int__ = __index__ = __float__ = __bool__ = _numeric
    __lt__ = __le__ = __gt__ = __ge__ = __mod__ = __rmod__ = __neg__ = _numeric

    def __str__(self):
        # Extents print through the builder (an SSA value); text that
        # formats one with str() has no symbolic form.
        raise Unsupported(f"the size {self.expr} is known only at run time")

    def __repr__(self):
        return f"SymDim({self.expr})"


def to_dim(size):
    """A torch size (int or SymInt) as an extent: an int or a SymDim."""
    if isinstance(size, SymDim):
        return size
    if isinstance(size, torch.SymInt):
        expr = size.node.expr
        return SymDim.make(expr)
    return int(size)


def is_static(shape) -> bool:
    return not any(isinstance(d, SymDim) for d in shape)


INDEX = "index"

_ELEMENT_TYPES = {
    torch.float32: "f32",
    torch.float16: "f16",
    torch.bfloat16: "bf16",
    torch.float64: "f64",
    torch.bool: "i1",
    torch.int8: "i8",
    torch.int16: "i16",
    torch.int32: "i32",
    torch.int64: "i64",
    INDEX: "index",
}

_FLOATS = (torch.float32, torch.float16, torch.bfloat16, torch.float64)
_INTS = (torch.int8, torch.int16, torch.int32, torch.int64)
_BITS = {torch.bool: 1, torch.int8: 8, torch.int16: 16, torch.int32: 32,
         torch.int64: 64, torch.float16: 16, torch.bfloat16: 16,
         torch.float32: 32, torch.float64: 64, INDEX: 64}


def mlir_type(dtype) -> str:
    try:
        return _ELEMENT_TYPES[dtype]
    except KeyError:
        raise Unsupported(f"dtype {dtype} is not supported") from None


def tensor_type(shape: Sequence[int], dtype) -> str:
    et = mlir_type(dtype)
    if not shape:
        return f"tensor<{et}>"
    shape = [to_dim(d) for d in shape]
    return "tensor<" + "x".join("?" if isinstance(d, SymDim) else str(d)
                                for d in shape) + f"x{et}>"


def is_float(dtype) -> bool:
    return dtype in _FLOATS


def is_int(dtype) -> bool:
    """Signed integers (not bool)."""
    return dtype in _INTS


def compute_dtype(dtype):
    """The type arithmetic runs in: f16/bf16 compute in f32, like eager."""
    if dtype in (torch.float16, torch.bfloat16):
        return torch.float32
    return dtype


class Value:
    """An SSA tensor value.

    ``reduced``: produced by a reduction. ``unit_source``: when this value is
    a reshape of another that only adds or drops unit dims, that other value
    (consumers that broadcast read it directly)."""

    __slots__ = ("name", "shape", "dtype", "reduced", "unit_source")

    def __init__(self, name: str, shape: Sequence[int], dtype):
        self.name = name
        self.shape = tuple(to_dim(d) for d in shape)
        self.dtype = dtype
        self.reduced = False
        self.unit_source = None

    @property
    def type(self) -> str:
        return tensor_type(self.shape, self.dtype)

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    def __repr__(self) -> str:
        return f"Value({self.name}: {self.type})"


class Scalar:
    """An SSA scalar inside a region."""

    __slots__ = ("name", "dtype")

    def __init__(self, name: str, dtype):
        self.name = name
        self.dtype = dtype

    @property
    def type(self) -> str:
        return mlir_type(self.dtype)

    def __repr__(self) -> str:
        return f"Scalar({self.name}: {self.type})"


def _dims(n: int, prefix: str = "d") -> list[str]:
    return [f"{prefix}{i}" for i in range(n)]


def affine_map(num_dims: int, results: Iterable[str]) -> str:
    return f"affine_map<({', '.join(_dims(num_dims))}) -> ({', '.join(results)})>"


def identity_map(rank: int) -> str:
    return affine_map(rank, _dims(rank))


def broadcast_map(in_shape: Sequence[int], out_shape: Sequence[int]) -> str:
    """Map from the output's iteration space to an input broadcast to it
    (numpy rules: trailing alignment; size-1 input dims read index 0)."""
    r, R = len(in_shape), len(out_shape)
    if r > R:
        raise Unsupported(f"cannot broadcast {list(in_shape)} to {list(out_shape)}")
    results = []
    for i, d in enumerate(in_shape):
        od = R - r + i
        if d == out_shape[od]:
            results.append(f"d{od}")
        elif d == 1:
            results.append("0")
        else:
            raise Unsupported(f"cannot broadcast {list(in_shape)} to {list(out_shape)}")
    return affine_map(R, results)


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """numpy's broadcast of ``shapes``, whose extents may be SymDims."""
    if all(is_static(s) for s in shapes):
        return tuple(torch.broadcast_shapes(*[torch.Size(s) for s in shapes]))
    rank = max(len(s) for s in shapes)
    result = []
    for i in range(rank):
        extents = {s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0}
        extents.discard(1)
        if len(extents) > 1:
            raise Unsupported(f"cannot broadcast {[list(s) for s in shapes]}")
        result.append(extents.pop() if extents else 1)
    return tuple(result)


def _float_literal(value: float, dtype) -> str:
    t = torch.tensor(float(value), dtype=torch.float64).to(dtype)
    int_type, width = {
        torch.float32: (torch.int32, 8), torch.float64: (torch.int64, 16),
        torch.float16: (torch.int16, 4), torch.bfloat16: (torch.int16, 4)}[dtype]
    bits = int(t.view(int_type).item()) & ((1 << (4 * width)) - 1)
    return f"0x{bits:0{width}X}"


def _int_literal(value: int, dtype) -> str:
    if dtype == torch.bool:
        return "true" if value else "false"
    bits = _BITS[dtype]
    value = int(value) & ((1 << bits) - 1)
    if value >= 1 << (bits - 1):  # two's complement, printed signed
        value -= 1 << bits
    return str(value)


class FunctionBuilder:
    """Builds the body of one func.func as text."""

    def __init__(self, sizes: dict | None = None):
        self.lines: list[str] = []
        self._counter = 0
        self._indent = 2
        self._const_cache: dict[tuple, str] = {}
        # Size symbol (sympy) -> the SSA name of the function argument that
        # holds it; None: any symbol gets a name of its own (node_support,
        # which emits one node on made-up arguments).
        self.sizes = sizes
        # Extents computed from the sizes (s0 * 12), at the start of the
        # function: every region below may use them.
        self.prologue: list[str] = []
        self._size_cache: dict = {}

    # -- extents known only at run time -------------------------------------
    def size_value(self, extent) -> str:
        """The SSA name of an index holding ``extent`` (an int or a SymDim),
        computed in the function's prologue."""
        import sympy
        if not isinstance(extent, sympy.Basic):  # (terms recurse as sympy)
            extent = SymDim._of(to_dim(extent))
        expr = sympy.expand(sympy.sympify(extent))
        name = self._size_cache.get(expr)
        if name is not None:
            return name
        if expr.is_Integer:
            name = self._prologue_op(f"arith.constant {int(expr)} : index")
        elif expr.is_Symbol:
            if self.sizes is None:
                name = f"%{expr.name}"
            elif expr in self.sizes:
                name = self.sizes[expr]
            else:
                raise Unsupported(f"the size {expr} is no input's")
        elif expr.is_Add or expr.is_Mul:
            opname = "arith.addi" if expr.is_Add else "arith.muli"
            terms = [self.size_value(t) for t in expr.args]
            name = terms[0]
            for t in terms[1:]:
                name = self._prologue_op(f"{opname} {name}, {t} : index")
        elif type(expr).__name__ == "FloorDiv" and len(expr.args) == 2:
            a, b_ = (self.size_value(t) for t in expr.args)
            name = self._prologue_op(f"arith.floordivsi {a}, {b_} : index")
        else:
            raise Unsupported(f"the size {expr} has no arithmetic form here")
        self._size_cache[expr] = name
        return name

    def _prologue_op(self, text: str) -> str:
        name = self.fresh("s")
        self.prologue.append(f"  {name} = {text}")
        return name

    def sizes_text(self, extents) -> str:
        """``[a, b, ...]`` of a mixed static/dynamic list (offsets, sizes)."""
        extents = [to_dim(e) for e in extents]
        return "[" + ", ".join(self.size_value(e) if isinstance(e, SymDim) else str(e)
                               for e in extents) + "]"

    # -- plumbing ----------------------------------------------------------
    def fresh(self, prefix: str = "v") -> str:
        self._counter += 1
        return f"%{prefix}{self._counter}"

    def emit(self, line: str) -> None:
        self.lines.append(" " * self._indent + line)

    def op(self, text: str, prefix: str = "v") -> str:
        name = self.fresh(prefix)
        self.emit(f"{name} = {text}")
        return name

    def tensor_op(self, text: str, shape, dtype) -> Value:
        return Value(self.op(text), shape, dtype)

    # -- scalars (valid at the current nesting level) ----------------------
    def const(self, value, dtype) -> Scalar:
        """A scalar constant of ``dtype`` (python bool/int/float value,
        converted like torch converts a Scalar)."""
        if isinstance(value, SymDim):
            # An extent known at run time as a number (a mean's divisor).
            size = Scalar(self.size_value(value), INDEX)
            return self.cast(size, dtype)
        if dtype == INDEX:
            return Scalar(self.op(f"arith.constant {int(value)} : index", "c"), INDEX)
        if is_float(dtype):
            lit = _float_literal(value, dtype)
        else:
            if isinstance(value, float):
                if math.isnan(value) or math.isinf(value):
                    raise Unsupported(f"cannot convert {value} to {dtype}")
                value = bool(value) if dtype == torch.bool else int(value)
            lit = _int_literal(value, dtype)
        text = (f"arith.constant {lit}" if dtype == torch.bool
                else f"arith.constant {lit} : {mlir_type(dtype)}")
        return Scalar(self.op(text, "c"), dtype)

    def un(self, opname: str, a: Scalar) -> Scalar:
        return Scalar(self.op(f"{opname} {a.name} : {a.type}"), a.dtype)

    def bin(self, opname: str, a: Scalar, b: Scalar) -> Scalar:
        assert a.dtype == b.dtype, (opname, a, b)
        return Scalar(self.op(f"{opname} {a.name}, {b.name} : {a.type}"), a.dtype)

    def cmp(self, pred: str, a: Scalar, b: Scalar) -> Scalar:
        """Compare by torch semantics: pred in eq ne lt le gt ge."""
        assert a.dtype == b.dtype, (pred, a, b)
        if is_float(a.dtype):
            fpred = {"eq": "oeq", "ne": "une", "lt": "olt", "le": "ole",
                     "gt": "ogt", "ge": "oge"}[pred]
            return Scalar(self.op(f"arith.cmpf {fpred}, {a.name}, {b.name} : {a.type}"),
                          torch.bool)
        if a.dtype == torch.bool:
            ipred = {"eq": "eq", "ne": "ne", "lt": "ult", "le": "ule",
                     "gt": "ugt", "ge": "uge"}[pred]
        else:
            ipred = {"eq": "eq", "ne": "ne", "lt": "slt", "le": "sle",
                     "gt": "sgt", "ge": "sge"}[pred]
        return Scalar(self.op(f"arith.cmpi {ipred}, {a.name}, {b.name} : {a.type}"),
                      torch.bool)

    def select(self, cond: Scalar, a: Scalar, b: Scalar) -> Scalar:
        assert a.dtype == b.dtype and cond.dtype == torch.bool, (cond, a, b)
        return Scalar(self.op(f"arith.select {cond.name}, {a.name}, {b.name} : {a.type}"),
                      a.dtype)

    def cast(self, a: Scalar, dtype) -> Scalar:
        """Convert like ``tensor.to(dtype)`` (float->int truncates toward 0,
        to bool is != 0, from bool is 0/1)."""
        src = a.dtype
        if src == dtype:
            return a
        st, dt = mlir_type(src), mlir_type(dtype)
        if dtype == torch.bool:
            zero = self.const(0, src)
            return self.cmp("ne", a, zero)
        if src == INDEX:
            if is_float(dtype):
                a = self.cast(a, torch.int64)
                return self.cast(a, dtype)
            return Scalar(self.op(f"arith.index_cast {a.name} : index to {dt}"), dtype)
        if dtype == INDEX:
            if is_float(src):
                a = self.cast(a, torch.int64)
                st = "i64"
            return Scalar(self.op(f"arith.index_cast {a.name} : {st} to index"), INDEX)
        if is_float(src) and is_float(dtype):
            if src == torch.bfloat16 and dtype == torch.float16 or \
                    src == torch.float16 and dtype == torch.bfloat16:
                a = self.cast(a, torch.float32)
                return self.cast(a, dtype)
            if dtype == torch.bfloat16 and src == torch.float64:
                a = self.cast(a, torch.float32)  # like c10: double -> float -> bf16
                return self.cast(a, dtype)
            op = "arith.extf" if _BITS[dtype] > _BITS[src] else "arith.truncf"
            return Scalar(self.op(f"{op} {a.name} : {st} to {dt}"), dtype)
        if is_float(dtype):  # int or bool -> float
            op = "arith.uitofp" if src == torch.bool else "arith.sitofp"
            return Scalar(self.op(f"{op} {a.name} : {st} to {dt}"), dtype)
        if is_float(src):  # float -> int
            return Scalar(self.op(f"arith.fptosi {a.name} : {st} to {dt}"), dtype)
        # int/bool -> int
        if _BITS[dtype] > _BITS[src]:
            op = "arith.extui" if src == torch.bool else "arith.extsi"
        else:
            op = "arith.trunci"
        return Scalar(self.op(f"{op} {a.name} : {st} to {dt}"), dtype)

    def index(self, dim: int) -> Scalar:
        return Scalar(self.op(f"linalg.index {dim} : index", "i"), INDEX)

    # -- tensors -----------------------------------------------------------
    def empty(self, shape, dtype) -> Value:
        shape = [to_dim(d) for d in shape]
        dynamic = ", ".join(self.size_value(d) for d in shape if isinstance(d, SymDim))
        return self.tensor_op(f"tensor.empty({dynamic}) : {tensor_type(shape, dtype)}",
                              shape, dtype)

    def fill(self, value, shape, dtype) -> Value:
        """A tensor of ``shape`` filled with a python number or a Scalar."""
        e = self.empty(shape, dtype)
        s = value if isinstance(value, Scalar) else self.const(value, dtype)
        assert s.dtype == dtype
        return self.tensor_op(
            f"linalg.fill ins({s.name} : {s.type}) outs({e.name} : {e.type}) -> {e.type}",
            shape, dtype)

    def generic(self, inputs: Sequence[Value], input_maps: Sequence[str],
                outputs: Sequence[Value], output_maps: Sequence[str],
                iterators: Sequence[str],
                body: Callable[..., Sequence[Scalar]]) -> list[Value]:
        """linalg.generic; ``body(self, *input_scalars, *output_scalars)``
        returns the yielded scalars (converted to the output dtypes)."""
        ins = ", ".join(v.name for v in inputs)
        ins_t = ", ".join(v.type for v in inputs)
        outs = ", ".join(v.name for v in outputs)
        outs_t = ", ".join(v.type for v in outputs)
        maps = ", ".join(list(input_maps) + list(output_maps))
        its = ", ".join(f'"{it}"' for it in iterators)
        names = [self.fresh("a") for _ in range(len(inputs) + len(outputs))]
        dtypes = [v.dtype for v in inputs] + [v.dtype for v in outputs]
        results = [self.fresh() for _ in outputs]
        head = (f"linalg.generic {{indexing_maps = [{maps}], iterator_types = [{its}]}}"
                + (f" ins({ins} : {ins_t})" if inputs else "")
                + f" outs({outs} : {outs_t}) {{")
        if len(results) == 1:
            self.emit(f"{results[0]} = {head}")
            res_names = [results[0]]
        else:
            base = self.fresh()
            self.emit(f"{base}:{len(results)} = {head}")
            res_names = [f"{base}#{i}" for i in range(len(results))]
        args = ", ".join(f"{n}: {mlir_type(d)}" for n, d in zip(names, dtypes))
        self.emit(f"^bb0({args}):")
        self._indent += 2
        saved_cache = self._const_cache
        self._const_cache = {}
        scalars = [Scalar(n, d) for n, d in zip(names, dtypes)]
        yielded = list(body(self, *scalars))
        assert len(yielded) == len(outputs)
        yielded = [self.cast(y, o.dtype) for y, o in zip(yielded, outputs)]
        self.emit("linalg.yield " + ", ".join(y.name for y in yielded) + " : "
                  + ", ".join(y.type for y in yielded))
        self._indent -= 2
        self._const_cache = saved_cache
        rt = outs_t if len(outputs) == 1 else f"({outs_t})"
        self.emit(f"}} -> {rt}")
        results = [Value(n, o.shape, o.dtype) for n, o in zip(res_names, outputs)]
        if "reduction" in iterators:
            for r_ in results:
                r_.reduced = True
        return results

    def elementwise(self, inputs: Sequence[Value], out_shape, out_dtype,
                    fn: Callable[..., Scalar]) -> Value:
        """An elementwise map over ``out_shape``, inputs broadcast to it;
        ``fn(self, *input_scalars)`` returns the result scalar."""
        out_shape = tuple(out_shape)
        if 1 in out_shape:
            # Computed over the non-unit dims, then reshaped: consumers that
            # broadcast read the squeezed value (see reshape()).
            sq_dims = [i for i, d in enumerate(out_shape) if d != 1]
            pos = {od: k for k, od in enumerate(sq_dims)}
            R = len(out_shape)
            ops, maps = [], []
            for v in inputs:
                results, keep = [], []
                for i, d in enumerate(v.shape):
                    od = R - v.rank + i
                    if od < 0 or (d != 1 and d != out_shape[od]):
                        raise Unsupported(
                            f"cannot broadcast {list(v.shape)} to {list(out_shape)}")
                    if d != 1:
                        results.append(f"d{pos[od]}")
                        keep.append(d)
                ops.append(self.reshape(v, keep))
                maps.append(affine_map(len(sq_dims), results))
            sq_shape = [out_shape[i] for i in sq_dims]
            out = self.empty(sq_shape, out_dtype)
            res = self.generic(ops, maps, [out], [identity_map(len(sq_shape))],
                               ["parallel"] * len(sq_shape),
                               lambda b, *s: [fn(b, *s[:len(ops)])])[0]
            return self.reshape(res, out_shape)
        out = self.empty(out_shape, out_dtype)
        inputs, maps = zip(*[self.broadcast_operand(v, out_shape) for v in inputs]) \
            if inputs else ((), ())
        rank = len(out_shape)
        return self.generic(inputs, maps, [out], [identity_map(rank)],
                            ["parallel"] * rank,
                            lambda b, *s: [fn(b, *s[:len(inputs)])])[0]

    def broadcast_operand(self, v: Value, out_shape) -> tuple[Value, str]:
        """``v`` read broadcast over the iteration space of ``out_shape``:
        its broadcast unit dims are collapsed away and the map projects onto
        the remaining dims.

        (Broadcasting by a constant-0 map on a unit dim is also valid MLIR,
        but S3 fusion currently miscompiles it after a reduction.)"""
        r, R = v.rank, len(out_shape)
        if r > R:
            raise Unsupported(f"cannot broadcast {list(v.shape)} to {list(out_shape)}")
        src = v.unit_source
        if src is not None and 1 not in src.shape:
            # Read the value before unit dims were added (no reshape chain).
            results = []
            for i, d in enumerate(v.shape):
                od = R - r + i
                if d != 1:
                    if d != out_shape[od]:
                        raise Unsupported(
                            f"cannot broadcast {list(v.shape)} to {list(out_shape)}")
                    results.append(f"d{od}")
            return src, affine_map(R, results)
        keep, results = [], []
        for i, d in enumerate(v.shape):
            od = R - r + i
            if d == out_shape[od]:
                keep.append(d)
                results.append(f"d{od}")
            elif d != 1:
                raise Unsupported(f"cannot broadcast {list(v.shape)} to {list(out_shape)}")
        if len(keep) != r:
            v = self.reshape(v, keep)
        return v, affine_map(R, results)

    def convert(self, x: Value, dtype) -> Value:
        if x.dtype == dtype:
            return x
        return self.elementwise([x], x.shape, dtype, lambda b, a: b.cast(a, dtype))

    def copy(self, x: Value) -> Value:
        """A fresh, dense copy of ``x`` (linalg.copy)."""
        e = self.empty(x.shape, x.dtype)
        return self.tensor_op(
            f"linalg.copy ins({x.name} : {x.type}) outs({e.name} : {e.type}) -> {e.type}",
            x.shape, x.dtype)

    def broadcast_to(self, x: Value, shape) -> Value:
        shape = tuple(shape)
        if x.shape == shape:
            return x
        return self.elementwise([x], shape, x.dtype, lambda b, a: a)

    def reduce(self, inputs: Sequence[Value], dims: Sequence[int],
               inits: Sequence[tuple], body: Callable[..., Sequence[Scalar]],
               keepdim: bool = False) -> list[Value]:
        """A reduction over ``dims`` of the same-shaped ``inputs``.

        ``inits`` are (python value, dtype) of each accumulator;
        ``body(self, *input_scalars, *acc_scalars)`` returns new accumulators."""
        shape = inputs[0].shape
        rank = len(shape)
        dims = sorted({d % rank for d in dims}) if rank else []
        kept = [i for i in range(rank) if i not in dims]
        out_shape = [shape[i] for i in kept]
        accs = [self.fill(v, out_shape, dt) for v, dt in inits]
        in_maps = [identity_map(rank)] * len(inputs)
        out_map = affine_map(rank, [f"d{i}" for i in kept])
        its = ["reduction" if i in dims else "parallel" for i in range(rank)]
        results = self.generic(inputs, in_maps, accs, [out_map] * len(accs), its, body)
        for r_ in results:
            r_.reduced = True
        if keepdim:
            ks = [1 if i in dims else shape[i] for i in range(rank)]
            results = [self.reshape(r, ks) for r in results]
        return results

    def reshape(self, x: Value, shape) -> Value:
        """Row-major reshape with tensor.collapse_shape/expand_shape.

        Reshapes that only add or drop unit dims remember their source; of a
        reduction result they are emitted as a linalg.generic copy instead
        (S3 fusion currently miscompiles a reduction whose result is
        expanded/collapsed before a broadcasting consumer)."""
        shape = tuple(to_dim(s) for s in shape)
        if x.shape == shape:
            return x
        if [d for d in x.shape if d != 1] == [d for d in shape if d != 1]:
            base = x.unit_source or x
            if base.shape == shape:
                return base
            if base.reduced:
                out = self._unit_copy(base, shape)
            else:
                out = self._reshape(base, shape)
            out.unit_source = base
            return out
        return self._reshape(x, shape)

    def _unit_copy(self, x: Value, shape) -> Value:
        """``x`` with unit dims added/dropped, as a copying linalg.generic."""
        rank = len(shape)
        src_dims = [i for i, d in enumerate(x.shape) if d != 1]
        dst_dims = [i for i, d in enumerate(shape) if d != 1]
        res = ["0"] * x.rank
        for s_, d_ in zip(src_dims, dst_dims):
            res[s_] = f"d{d_}"
        out = self.empty(shape, x.dtype)
        return self.generic([x], [affine_map(rank, res)], [out], [identity_map(rank)],
                            ["parallel"] * rank, lambda b, a, o: [a])[0]

    def _reshape(self, x: Value, shape) -> Value:
        if x.shape == shape:
            return x
        assert math.prod(shape) == x.numel, (x, shape)
        groups = _reassociation(x.shape, shape)
        if groups is None and not (is_static(x.shape) and is_static(shape)):
            raise Unsupported(f"reshape of {list(x.shape)} to {list(shape)} "
                              "through one dimension of run-time size")
        if groups is not None and len(shape) < x.rank:
            return self._collapse(x, groups, shape)
        if groups is not None and len(shape) > x.rank:
            return self._expand(x, groups, shape)
        flat = x if x.rank == 1 else self._collapse(
            x, [list(range(x.rank))] if x.rank else [], (x.numel,))
        if x.rank == 0:
            flat = self._expand(x, [], (1,))
        if len(shape) == 1:
            return flat
        if len(shape) == 0:
            return self._collapse(flat, [], ())
        return self._expand(flat, [list(range(len(shape)))], shape)

    def _collapse(self, x: Value, groups, shape) -> Value:
        r = "[" + ", ".join("[" + ", ".join(map(str, g)) + "]" for g in groups) + "]"
        out_t = tensor_type(shape, x.dtype)
        return self.tensor_op(f"tensor.collapse_shape {x.name} {r} : {x.type} into {out_t}",
                              shape, x.dtype)

    def _expand(self, x: Value, groups, shape) -> Value:
        r = "[" + ", ".join("[" + ", ".join(map(str, g)) + "]" for g in groups) + "]"
        out_t = tensor_type(shape, x.dtype)
        os_ = self.sizes_text(shape)
        return self.tensor_op(
            f"tensor.expand_shape {x.name} {r} output_shape {os_} : {x.type} into {out_t}",
            shape, x.dtype)

    def transpose(self, x: Value, perm: Sequence[int]) -> Value:
        perm = [p % max(x.rank, 1) for p in perm]
        if perm == list(range(x.rank)):
            return x
        shape = [x.shape[p] for p in perm]
        e = self.empty(shape, x.dtype)
        return self.tensor_op(
            f"linalg.transpose ins({x.name} : {x.type}) outs({e.name} : {e.type}) "
            f"permutation = [{', '.join(map(str, perm))}]", shape, x.dtype)

    def extract_slice(self, x: Value, offsets, sizes, strides, result_shape=None) -> Value:
        """tensor.extract_slice (rank-reducing when ``result_shape`` drops
        unit dims), materialized with linalg.copy when it is strided."""
        result_shape = tuple(sizes) if result_shape is None else tuple(result_shape)
        if (tuple(offsets) == (0,) * x.rank and tuple(sizes) == x.shape
                and all(s == 1 for s in strides)):
            return self.reshape(x, result_shape)
        out_t = tensor_type(result_shape, x.dtype)
        v = self.tensor_op(
            f"tensor.extract_slice {x.name}{self.sizes_text(offsets)} "
            f"{self.sizes_text(sizes)} [{', '.join(map(str, strides))}] : "
            f"{x.type} to {out_t}", result_shape, x.dtype)
        return self.copy(v)

    def insert_into(self, dest: Value, src: Value, offsets, strides=None) -> Value:
        """Writes ``src`` into ``dest`` at ``offsets`` (same rank) as
        extract_slice + linalg.copy + insert_slice, which bufferizes in place.

        This is also how padding is emitted: a bare ``tensor.pad`` whose
        result feeds another op is currently miscompiled by S3 fusion (the
        input is never copied in; see python/README.md), this form is not."""
        strides = strides or [1] * dest.rank
        offs = self.sizes_text(offsets)
        sizes = self.sizes_text(src.shape)
        strs = ", ".join(map(str, strides))
        sl = self.tensor_op(
            f"tensor.extract_slice {dest.name}{offs} {sizes} [{strs}] : "
            f"{dest.type} to {src.type}", src.shape, src.dtype)
        c = self.tensor_op(
            f"linalg.copy ins({src.name} : {src.type}) outs({sl.name} : {sl.type}) "
            f"-> {sl.type}", src.shape, src.dtype)
        return self.tensor_op(
            f"tensor.insert_slice {c.name} into {dest.name}{offs} {sizes} [{strs}] : "
            f"{src.type} into {dest.type}", dest.shape, dest.dtype)

    def pad(self, x: Value, low: Sequence[int], high: Sequence[int], value) -> Value:
        """Constant padding (non-negative ``low``/``high``)."""
        if all(v == 0 for v in low) and all(v == 0 for v in high):
            return x
        shape = [d + lo + hi for d, lo, hi in zip(x.shape, low, high)]
        dest = self.fill(value, shape, x.dtype)
        return self.insert_into(dest, x, low)

    def concat(self, values: Sequence[Value], dim: int, shape, dtype) -> Value:
        dest = self.empty(shape, dtype)
        off = 0
        for v in values:
            if v.shape[dim] == 0:
                continue
            offsets = [0] * len(shape)
            offsets[dim] = off
            dest = self.insert_into(dest, v, offsets)
            off += v.shape[dim]
        return dest

    def constant_tensor(self, t: torch.Tensor) -> Value:
        """A dense constant holding the values of ``t`` (hex form)."""
        t = t.detach().contiguous().cpu()
        dtype = t.dtype
        flat = t.reshape(-1)
        if dtype == torch.bool:
            # MLIR reads i1 elements' hex data bit-packed, lowest bit first
            # (one byte of 0x00 or 0xFF is a splat).
            import numpy as np
            raw = np.packbits(flat.numpy(), bitorder="little").tobytes()
        else:
            raw = flat.view(torch.uint8).numpy().tobytes()
        tt = tensor_type(t.shape, dtype)
        return self.tensor_op(f'arith.constant dense<"0x{raw.hex().upper()}"> : {tt}',
                              t.shape, dtype)


def _reassociation(src: Sequence[int], dst: Sequence[int]):
    """Groups of ``long``'s dims that multiply to each of ``short``'s dims
    (the reassociation of a collapse from src to dst, or an expand), or None."""
    if len(src) == len(dst):
        return None
    long, short = (src, dst) if len(src) > len(dst) else (dst, src)
    if not short:
        return [] if all(d == 1 for d in long) else None
    groups, i = [], 0
    for j, s in enumerate(short):
        g, p = [], 1
        while i < len(long):
            g.append(i)
            p *= long[i]
            i += 1
            # Extents of run-time size: a group ends where the product is
            # the same expression (s0 x 12 for s0 * 12).
            if p == s or (is_static([p, s]) and p > s):
                break
        if p != s:
            return None
        if j == len(short) - 1:
            while i < len(long) and long[i] == 1:
                g.append(i)
                i += 1
        groups.append(g)
    if i != len(long):
        return None
    return groups
