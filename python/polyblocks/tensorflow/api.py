"""``polyblocks.tensorflow.function``: TensorFlow functions compiled by
PolyBlocks.

    @polyblocks.tensorflow.function
    def f(x): ...

    g = polyblocks.tensorflow.function(model_fn, target="cpu-host")

The function is traced by TensorFlow as ``tf.function(fn,
jit_compile=True)`` and lowered to StableHLO by TensorFlow's XLA bridge
(``experimental_get_compiler_ir(...)(stage="stablehlo")``); the StableHLO
is converted to the compiler's input contract (:mod:`polyblocks.stablehlo`,
shared with the JAX frontend) and compiled with :func:`polyblocks.compile`
(whose in-process and disk caches apply). One compilation per signature:
the nested structure of the arguments, each tensor's shape and dtype, and
the other arguments' python values (as ``tf.function`` retraces on them).

The variables the function reads (a Keras model's weights) are read at
every call, so that assigning them (training, ``load_weights``) is seen
by the next call; tensors cross into and out of the compiled code by
DLPack, without copies. Results are ``tf.Tensor``s, in the structure the
function returns.

When the program has an op the converter does not support, that signature
runs through ``tf.function(jit_compile=True)`` (XLA), or a plain
``tf.function`` when XLA cannot compile it either, after one warning on the
``polyblocks`` logger naming the op; ``strict=True`` raises
NotImplementedError instead, naming the op and the TensorFlow op that built
it.
"""

from __future__ import annotations

import functools
import logging
import threading
from typing import Callable

import numpy as np
import torch

from .. import compiler as _compiler
from .._capi import PolyBlocksError, UnsupportedError
from ..stablehlo import Converted, UnsupportedOp, parse_and_convert
from ..torch.mlir import Unsupported

__all__ = ["function", "load", "Function", "Lowered"]

log = logging.getLogger("polyblocks")


def function(func: Callable | None = None, *, input_signature=None, target: str = "auto",
             strict: bool = False, options: dict | str | None = None):
    """Compiles ``func`` with PolyBlocks; usable as ``@function``,
    ``@function(...)`` or ``function(func, ...)``, as ``tf.function``.
    ``input_signature``: as ``tf.function``'s (a list of
    ``tf.TensorSpec``); compilation is per concrete shape all the same.
    ``target``: "auto" (``cpu-host``) or a CPU target name; ``options``:
    compile options as for :func:`polyblocks.compile`."""
    if func is None:
        return functools.partial(function, input_signature=input_signature, target=target,
                                 strict=strict, options=options)
    return Function(func, input_signature, target, strict, options)


def load(path: str, signature: str = "serving_default", *, target: str = "auto",
         strict: bool = False, options: dict | str | None = None) -> "Function":
    """A SavedModel's signature (``tf.saved_model.load(path).signatures
    [signature]``) as a :class:`Function`, called with the signature's
    keyword arguments; its results are the signature's dict of tensors.
    Raises KeyError naming the signatures the SavedModel has when
    ``signature`` is not one of them."""
    import tensorflow as tf

    loaded = tf.saved_model.load(path)
    sigs = dict(loaded.signatures)
    if signature not in sigs:
        raise KeyError(f"polyblocks.tensorflow.load: {path} has no signature {signature!r}; "
                       f"it has {sorted(sigs) or 'none'}")
    concrete = sigs[signature]

    def serve(**inputs):
        return concrete(**inputs)

    serve.__name__ = f"{signature}"
    fn = Function(serve, None, target, strict, options)
    fn.saved_model = loaded  # keeps the variables alive
    return fn


class Lowered:
    """What :meth:`Function.lower` returns: the module PolyBlocks compiles
    (``as_text()``) and TensorFlow's StableHLO (``stablehlo_text()``)."""

    def __init__(self, stablehlo: str, converted: Converted | None, error: Exception | None,
                 target: str):
        self._stablehlo = stablehlo
        self.converted = converted
        self.error = error
        self.target = target

    def as_text(self) -> str:
        """The input-contract MLIR module that PolyBlocks compiles; raises
        NotImplementedError naming the op when the program cannot be
        converted."""
        if self.converted is None:
            raise NotImplementedError(f"polyblocks.tensorflow: {self.error}") from self.error
        return self.converted.text

    def stablehlo_text(self) -> str:
        """TensorFlow's StableHLO module for these arguments."""
        return self._stablehlo

    def compile(self, options=None):
        """The PolyBlocks artifact of this lowering."""
        return _compiler.compile(self.as_text(), self.target, options)


# ---------------------------------------------------------------------------
# One signature's compiled program
# ---------------------------------------------------------------------------

class _Compiled:
    """The program compiled for one signature, with what it needs to find
    ``main``'s arguments at a call: the positions of the flat argument
    tensors, the variables (read at each call, all at once) and the
    constants TensorFlow captured."""

    def __init__(self, converted: Converted, executable, concrete, n_flat: int,
                 flat_leaf: list | None, captures: list, variables: list):
        import tensorflow as tf

        self.converted = converted
        self.executable = executable
        self.concrete = concrete
        self.n_flat = n_flat
        # flat_leaf[k]: the index of main's argument k among the call's
        # pytree leaves, when every flat argument is a leaf tensor as is
        # (else the arguments are canonicalized by TensorFlow at each call).
        self.flat_leaf = flat_leaf
        # Per captured input: ("var", index in variables) or ("const", tensor).
        self.captures = captures
        self.variables = variables
        self.read_variables = None
        if variables:
            self.read_variables = tf.function(lambda: [v.read_value() for v in variables],
                                              autograph=False)
        self.structure = concrete.structured_outputs
        self.needed = sorted({i for i in converted.arg_indices}
                             | {v for kind, v in converted.plan if kind == "input"})
        self.dtypes = [t[1] for t in converted.input_types]

    def flat_args(self, args, kwargs, leaves) -> list:
        if self.flat_leaf is not None:
            return [leaves[i] for i in self.flat_leaf]
        return _flat_inputs(self.concrete, args, kwargs)

    def run(self, args, kwargs, leaves):
        import tensorflow as tf

        conv = self.converted
        flat = self.flat_args(args, kwargs, leaves)
        values = self.read_variables() if self.read_variables is not None else ()
        main: dict = {}
        for i in self.needed:
            if i < self.n_flat:
                main[i] = flat[i]
            else:
                kind, v = self.captures[i - self.n_flat]
                main[i] = values[v] if kind == "var" else v
        inputs = [_to_torch(main[i], self.dtypes[i]) for i in conv.arg_indices]
        outs = self.executable.run("forward", inputs) if self.executable else []
        results = []
        for kind, v in conv.plan:
            if kind == "result":
                results.append(_to_tf(outs[v]))
            elif kind == "input":
                results.append(tf.convert_to_tensor(main[v], dtype=_tf_dtype(self.dtypes[v])))
            else:
                value, shape, dtype = v
                results.append(tf.fill(shape, tf.constant(value, dtype=_tf_dtype(dtype))))
        return tf.nest.pack_sequence_as(self.structure, results, expand_composites=True)


class _Fallback:
    """A signature that runs through TensorFlow (XLA, or no XLA)."""

    def __init__(self, fn):
        self.fn = fn

    def run(self, args, kwargs, leaves):
        return self.fn(*args, **kwargs)


# ---------------------------------------------------------------------------
# The function
# ---------------------------------------------------------------------------

class Function:
    """A TensorFlow function compiled by PolyBlocks per signature."""

    def __init__(self, func, input_signature, target, strict, options):
        import tensorflow as tf

        self._func = func
        self._target = target
        self._strict = bool(strict)
        self._options = options
        self._xla = tf.function(func, input_signature=input_signature, jit_compile=True)
        self._plain = tf.function(func, input_signature=input_signature)
        self._cache: dict = {}
        self._lock = threading.Lock()
        self._warned: set = set()
        functools.update_wrapper(self, func)

    @property
    def cache_size(self) -> int:
        """Number of signatures compiled (or fallen back) so far."""
        return len(self._cache)

    def _resolve_target(self) -> str:
        return "cpu-host" if self._target == "auto" else self._target

    def __call__(self, *args, **kwargs):
        leaves, key = _signature(args, kwargs)
        entry = self._cache.get(key)
        if entry is None:
            with self._lock:
                entry = self._cache.get(key)
                if entry is None:
                    entry = self._compile(args, kwargs, leaves)
                    self._cache[key] = entry
        return entry.run(args, kwargs, leaves)

    def lower(self, *args, **kwargs) -> Lowered:
        """Traces and converts for these arguments, without compiling."""
        text = self._stablehlo(args, kwargs)
        try:
            conv, err = parse_and_convert(text), None
        except Unsupported as e:
            conv, err = None, e
        return Lowered(text, conv, err, self._resolve_target())

    # -- compilation -----------------------------------------------------
    def _stablehlo(self, args, kwargs) -> str:
        return self._xla.experimental_get_compiler_ir(*args, **kwargs)(stage="stablehlo")

    def _compile(self, args, kwargs, leaves):
        name = getattr(self._func, "__name__", "function")
        target = self._resolve_target()
        try:
            if not target.startswith("cpu"):
                raise Unsupported(f"target {target!r}: the TensorFlow frontend runs compiled "
                                  "code on the CPU only")
            _check_leaves(leaves)
            try:
                text = self._stablehlo(args, kwargs)
            except Unsupported:
                raise
            except Exception as e:  # XLA's bridge cannot lower the function
                return self._fall_back(name, e, xla=False)
            conv = parse_and_convert(text)
            concrete = self._xla.get_concrete_function(*args, **kwargs)
            entry = self._bind(conv, concrete, args, kwargs, leaves)
            if any(kind == "result" for kind, _ in conv.plan):
                art = _compiler.compile(conv.text, target, self._options)
                entry.executable = art.executable()
        except (Unsupported, UnsupportedError) as e:
            return self._fall_back(name, e, xla=True)
        except PolyBlocksError:
            raise
        log.debug("polyblocks.tensorflow.function: compiled %s for %s (%d ops)", name, target,
                  len(conv.ops))
        return entry

    def _fall_back(self, name, e, xla: bool):
        if self._strict:
            raise NotImplementedError(
                f"polyblocks.tensorflow.function (strict): {name}: {e}") from e
        what = e.op if isinstance(e, UnsupportedOp) else str(e).splitlines()[0]
        if what not in self._warned:
            self._warned.add(what)
            log.warning("polyblocks.tensorflow.function: %s runs through %s: %s", name,
                        "tf.function(jit_compile=True) (XLA)" if xla
                        else "tf.function (XLA cannot compile it either)", e)
        return _Fallback(self._xla if xla else self._plain)

    def _bind(self, conv: Converted, concrete, args, kwargs, leaves) -> _Compiled:
        """Where each of ``main``'s arguments comes from at a call."""
        import tensorflow as tf

        flat = _flat_inputs(concrete, args, kwargs)
        captured = list(concrete.captured_inputs)
        if len(conv.input_types) != len(flat) + len(captured):
            raise Unsupported(f"the lowered program takes {len(conv.input_types)} arguments "
                              f"for {len(flat)} tensors and {len(captured)} captured values")
        by_handle = {id(v.handle): v for v in concrete.variables}
        variables: list = []
        captures: list = []
        for c in captured:
            if c.dtype == tf.resource:
                v = by_handle.get(id(c))
                if v is None:
                    raise Unsupported("the function captures a resource that is not a "
                                      "variable (a table or an iterator)")
                captures.append(("var", len(variables)))
                variables.append(v)
            else:
                captures.append(("const", c))
        ids = {id(leaf): i for i, leaf in enumerate(leaves)}
        flat_leaf = [ids.get(id(t)) for t in flat]
        if any(i is None for i in flat_leaf):
            flat_leaf = None
        n_results = len(tf.nest.flatten(concrete.structured_outputs, expand_composites=True))
        if n_results != len(conv.plan):
            raise Unsupported(f"the function returns {n_results} values besides tensors "
                              f"for {len(conv.plan)} results of the lowered program")
        return _Compiled(conv, None, concrete, len(flat), flat_leaf, captures, variables)


# ---------------------------------------------------------------------------
# Signatures and tensors across the boundary
# ---------------------------------------------------------------------------

def _signature(args, kwargs):
    """The call's pytree leaves, and its cache key: the tree structure and
    per leaf its shape and dtype (tensors, arrays) or its python value."""
    import jax

    leaves, tree = jax.tree_util.tree_flatten((args, kwargs))
    key = [tree]
    for leaf in leaves:
        shape = getattr(leaf, "shape", None)
        dtype = getattr(leaf, "dtype", None)
        if shape is not None and dtype is not None and not callable(shape):
            key.append((type(leaf), tuple(shape), str(dtype)))
        else:
            try:
                hash(leaf)
                key.append((type(leaf), leaf))
            except TypeError:
                key.append((type(leaf), id(leaf)))
    return leaves, tuple(key)


def _check_leaves(leaves):
    import tensorflow as tf

    for leaf in leaves:
        if isinstance(leaf, tf.Variable):
            raise Unsupported("a variable passed as an argument (capture it, as a Keras "
                              "model's weights are, instead)")
        device = getattr(leaf, "device", "") or ""
        if isinstance(device, str) and ":GPU:" in device:
            raise Unsupported(f"a tensor on {device}: the TensorFlow frontend runs on the CPU")


def _flat_inputs(concrete, args, kwargs) -> list:
    """The tensors that ``concrete`` takes for ``args`` and ``kwargs``, in
    the order of its (and ``main``'s) arguments, as TensorFlow binds them."""
    from tensorflow.python.eager.polymorphic_function import function_type_utils

    ftype = concrete.function_type
    bound = function_type_utils.canonicalize_function_inputs(args, kwargs, ftype)
    if isinstance(bound, tuple):  # (bound arguments, filtered flat arguments)
        bound = bound[0]
    return list(ftype.unpack_inputs(bound))


_TORCH_TO_TF = {
    torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16",
    torch.float64: "float64", torch.bool: "bool", torch.int8: "int8", torch.uint8: "uint8",
    torch.int16: "int16", torch.int32: "int32", torch.int64: "int64",
}


def _tf_dtype(dtype):
    import tensorflow as tf
    return tf.as_dtype(_TORCH_TO_TF[dtype])


def _to_torch(value, want) -> torch.Tensor:
    """``value`` (a tf.Tensor, an array or a python number) as a torch
    tensor of dtype ``want``, sharing a tensor's memory."""
    import tensorflow as tf

    if isinstance(value, tf.Tensor):
        if value.dtype != _tf_dtype(want):
            value = tf.cast(value, _tf_dtype(want))
        try:
            return torch.from_dlpack(tf.experimental.dlpack.to_dlpack(value))
        except Exception:  # a layout DLPack does not take: copy
            return torch.from_numpy(np.ascontiguousarray(value.numpy()))
    t = torch.as_tensor(np.asarray(value))
    return t if t.dtype == want else t.to(want)


def _to_tf(t: torch.Tensor):
    import tensorflow as tf

    try:
        return tf.experimental.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(t))
    except Exception:  # an alignment or layout TensorFlow does not take: copy
        if t.dtype == torch.bfloat16:
            return tf.cast(tf.constant(t.float().numpy()), tf.bfloat16)
        return tf.constant(t.contiguous().numpy())
