"""``polyblocks.jax.jit``: JAX functions compiled by PolyBlocks.

    @polyblocks.jax.jit
    def f(params, x): ...

    f = polyblocks.jax.jit(g, static_argnums=(1,), target="cpu-host")

The function is traced and lowered by JAX (``jax.jit(fun).lower(...)``),
its StableHLO converted to the compiler's input contract
(:mod:`polyblocks.stablehlo`) and compiled with
:func:`polyblocks.compile` (whose in-process and disk caches apply). One
compilation per abstract signature: the pytree structure of the dynamic
arguments, each leaf's shape, dtype and weak type, the static arguments'
values and the target. Arrays are passed to and from the compiled code by
DLPack, without copies; results are ``jax.Array``s on the inputs' device.

When the program has an op the converter does not support, the function
runs through ``jax.jit`` (XLA) for that signature, after one warning on the
``polyblocks`` logger that names the op; ``strict=True`` raises
NotImplementedError instead, naming the op and its source location.
"""

from __future__ import annotations

import functools
import inspect
import logging
import threading
from typing import Callable, Sequence

import torch

from .. import compiler as _compiler
from .._capi import PolyBlocksError, UnsupportedError
from ..torch.mlir import Unsupported
from ..stablehlo import Converted, UnsupportedOp, convert

__all__ = ["jit", "Jitted", "Lowered"]

log = logging.getLogger("polyblocks")


def jit(fun: Callable | None = None, *, static_argnums: int | Sequence[int] = (),
        static_argnames: str | Sequence[str] = (), target: str = "auto",
        strict: bool = False, options: dict | str | None = None, emulate: bool = False):
    """Compiles ``fun`` with PolyBlocks; usable as ``@jit``, ``@jit(...)``
    or ``jit(fun, ...)``, with the arguments ``jax.jit`` has of the same
    names. ``target``: "auto" (``cpu-host`` for CPU arrays, the device's
    NVIDIA chip for CUDA arrays) or a PolyBlocks target name; ``options``:
    compile options as for :func:`polyblocks.compile`. ``emulate=True``: an
    explicit NVIDIA target's kernels run on the CPU, on CPU arrays, in the
    kernel emulator (slow, with compute-sanitizer's checks: for testing the
    GPU back end without a GPU)."""
    if fun is None:
        return functools.partial(jit, static_argnums=static_argnums,
                                 static_argnames=static_argnames, target=target,
                                 strict=strict, options=options, emulate=emulate)
    return Jitted(fun, static_argnums, static_argnames, target, strict, options, emulate)


class Lowered:
    """What :meth:`Jitted.lower` returns: the module PolyBlocks compiles
    (``as_text()``), and JAX's own lowering (``jax_lowered``)."""

    def __init__(self, jax_lowered, converted: Converted | None, error: Exception | None,
                 target: str, options: dict | str | None = None):
        self.jax_lowered = jax_lowered
        self.converted = converted
        self.error = error
        self.target = target
        self.options = options

    def as_text(self) -> str:
        """The input-contract MLIR module that PolyBlocks compiles; raises
        NotImplementedError naming the op when the program cannot be
        converted."""
        if self.converted is None:
            raise NotImplementedError(f"polyblocks.jax: {self.error}") from self.error
        return self.converted.text

    def stablehlo_text(self) -> str:
        """JAX's StableHLO module, as ``jax.jit(f).lower(...).as_text()``."""
        return self.jax_lowered.as_text()

    def compile(self, options=None):
        """The PolyBlocks artifact of this lowering, compiled with `options`
        (default: those of the :func:`jit` that lowered it)."""
        text = self.as_text()
        return _compiler.compile(text, self.target,
                                 self.options if options is None else options)


class _Compiled:
    """One signature's compiled program (or its XLA fallback)."""

    __slots__ = ("converted", "executable", "out_tree", "fallback", "target", "cuda",
                 "arg_dtypes")

    @staticmethod
    def needs_run(conv: Converted) -> bool:
        return any(kind == "result" for kind, _ in conv.plan)

    def __init__(self, converted, executable, out_tree, fallback, target, emulated=False):
        self.converted = converted
        self.executable = executable
        self.out_tree = out_tree
        self.fallback = fallback
        self.target = target
        self.cuda = target.startswith("nvidia") and not emulated
        self.arg_dtypes = [] if converted is None else [
            (i, _jax_dtype(converted.input_types[i][1])) for i in converted.arg_indices]

    def run(self, leaves: list):
        import jax
        import jax.numpy as jnp

        conv = self.converted
        inputs = [_to_torch(leaves[i], dt, self.cuda) for i, dt in self.arg_dtypes]
        outs = self.executable.run("forward", inputs) if self.executable else []
        if self.cuda and outs:
            torch.cuda.current_stream().synchronize()
        results = []
        for kind, v in conv.plan:
            if kind == "result":
                results.append(_to_jax(outs[v]))
            elif kind == "input":
                results.append(_as_jax_array(leaves[v], conv.input_types[v][1]))
            else:
                value, shape, dtype = v
                results.append(jnp.full(shape, value, dtype=_jax_dtype(dtype)))
        return jax.tree_util.tree_unflatten(self.out_tree, results)


class Jitted:
    """A function compiled by PolyBlocks per abstract signature."""

    def __init__(self, fun, static_argnums, static_argnames, target, strict, options,
                 emulate=False):
        import jax

        self._fun = fun
        if isinstance(static_argnums, int):
            static_argnums = (static_argnums,)
        if isinstance(static_argnames, str):
            static_argnames = (static_argnames,)
        self._static_argnums, self._static_argnames = _resolve_static(
            fun, tuple(static_argnums), tuple(static_argnames))
        self._target = target
        self._strict = bool(strict)
        self._options = options
        self._emulate = bool(emulate)
        # keep_unused: main's arguments are all the dynamic leaves, in order.
        self._xla = jax.jit(fun, static_argnums=self._static_argnums,
                            static_argnames=self._static_argnames, keep_unused=True)
        self._cache: dict = {}
        self._lock = threading.Lock()
        self._warned: set = set()
        functools.update_wrapper(self, fun)

    # -- signature -------------------------------------------------------
    def _split(self, args, kwargs):
        import jax

        nums = {i if i >= 0 else i + len(args) for i in self._static_argnums}
        dyn_args = tuple(a for i, a in enumerate(args) if i not in nums)
        static = tuple((i, args[i]) for i in sorted(nums) if 0 <= i < len(args))
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in self._static_argnames}
        static_kw = tuple(sorted((k, kwargs[k]) for k in self._static_argnames if k in kwargs))
        leaves, treedef = jax.tree_util.tree_flatten((dyn_args, dyn_kwargs))
        return leaves, treedef, static, static_kw

    def _key(self, leaves, treedef, static, static_kw, target):
        # A jax.Array's aval (shape, dtype, weak type) is cached and hashable.
        avals = tuple(leaf.aval if type(leaf) is _ARRAY_TYPE else _abstract(leaf)
                      for leaf in leaves)
        key = (treedef, avals, static, static_kw, target)
        try:
            hash(key)
        except TypeError as e:
            raise ValueError(f"polyblocks.jax.jit: static arguments must be hashable ({e})") \
                from None
        return key

    def _resolve_target(self, leaves) -> str:
        if self._target != "auto":
            return self._target
        return "nvidia-auto" if _on_gpu(leaves) else "cpu-host"

    # -- public ----------------------------------------------------------
    def __call__(self, *args, **kwargs):
        leaves, treedef, static, static_kw = self._split(args, kwargs)
        target = self._resolve_target(leaves)
        key = self._key(leaves, treedef, static, static_kw, target)
        entry = self._cache.get(key)
        if entry is None:
            with self._lock:
                entry = self._cache.get(key)
                if entry is None:
                    entry = self._compile(args, kwargs, leaves, target)
                    self._cache[key] = entry
        if entry.fallback:
            return self._xla(*args, **kwargs)
        return entry.run(leaves)

    def lower(self, *args, **kwargs) -> Lowered:
        """Traces and converts for these arguments, without compiling."""
        leaves, _, _, _ = self._split(args, kwargs)
        jl = self._xla.lower(*args, **kwargs)
        try:
            conv = convert(jl.compiler_ir("stablehlo"))
            err = None
        except Unsupported as e:
            conv, err = None, e
        return Lowered(jl, conv, err, self._resolve_target(leaves), self._options)

    @property
    def cache_size(self) -> int:
        """Number of signatures compiled (or fallen back) so far."""
        return len(self._cache)

    # -- compilation -----------------------------------------------------
    def _compile(self, args, kwargs, leaves, target) -> _Compiled:
        jl = self._xla.lower(*args, **kwargs)
        name = getattr(self._fun, "__name__", "function")
        try:
            gpu, nvidia = _on_gpu(leaves), target.startswith("nvidia")
            if self._emulate and (not nvidia or target == "nvidia-auto" or gpu):
                raise Unsupported(f"emulate needs an explicit NVIDIA target (nvidia-sm80, "
                                  f"nvidia-sm90) and CPU arrays, not target {target!r}"
                                  + (" on GPU arrays" if gpu else ""))
            if gpu and not nvidia:
                raise Unsupported(f"target {target!r} is not an NVIDIA target, but the "
                                  "arguments are on a GPU")
            if nvidia and not gpu and not self._emulate:
                raise Unsupported(f"target {target!r} needs GPU arrays, but the arguments "
                                  "are on the CPU")
            conv = convert(jl.compiler_ir("stablehlo"))
            if len(conv.input_types) != len(leaves):
                raise Unsupported(f"the lowered program takes {len(conv.input_types)} "
                                  f"arguments for {len(leaves)} array leaves")
            executable = None
            if _Compiled.needs_run(conv):
                art = _compiler.compile(conv.text, target, self._options)
                executable = art.executable(emulate=self._emulate)
        except (Unsupported, UnsupportedError) as e:
            if self._strict:
                raise NotImplementedError(f"polyblocks.jax.jit (strict): {name}: {e}") from e
            what = e.op if isinstance(e, UnsupportedOp) else str(e)
            if what not in self._warned:
                self._warned.add(what)
                log.warning("polyblocks.jax.jit: %s runs through jax.jit (XLA): %s", name, e)
            return _Compiled(None, None, None, True, target)
        except PolyBlocksError:
            raise
        log.debug("polyblocks.jax.jit: compiled %s for %s (%d ops)", name, target,
                  len(conv.ops))
        return _Compiled(conv, executable, jl.out_tree, False, target, self._emulate)


# ---------------------------------------------------------------------------
# Arrays across the boundary
# ---------------------------------------------------------------------------

def _on_gpu(leaves) -> bool:
    """Whether the array arguments live on a GPU (CUDA) device: the first
    array argument's device decides (python numbers and numpy arrays are
    host values that go wherever the arrays are)."""
    for leaf in leaves:
        devices = getattr(leaf, "devices", None)
        if callable(devices):
            return any(d.platform in ("gpu", "cuda") for d in devices())
    return False


def _array_type():
    import jax.numpy as jnp
    return type(jnp.zeros(()))


_ARRAY_TYPE = _array_type()


def _abstract(leaf):
    import jax

    try:
        return jax.api_util.shaped_abstractify(leaf)
    except TypeError:
        raise TypeError(f"polyblocks.jax.jit: argument of type {type(leaf).__name__} "
                        "is not an array") from None


_TORCH_TO_JAX = {
    torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16",
    torch.float64: "float64", torch.bool: "bool", torch.int8: "int8",
    torch.int16: "int16", torch.int32: "int32", torch.int64: "int64",
}


def _jax_dtype(dtype):
    import jax.numpy as jnp
    return jnp.dtype(_TORCH_TO_JAX[dtype])


def _as_jax_array(leaf, dtype):
    """``leaf`` as a jax.Array of torch dtype ``dtype``."""
    import jax.numpy as jnp

    want = _jax_dtype(dtype)
    if type(leaf) is _ARRAY_TYPE and leaf.dtype == want:
        return leaf
    return jnp.asarray(leaf, dtype=want)


def _to_torch(leaf, want, cuda: bool) -> torch.Tensor:
    """``leaf`` (of jax dtype ``want`` once converted) as a torch tensor
    sharing its memory."""
    if type(leaf) is not _ARRAY_TYPE or leaf.dtype != want:
        import jax.numpy as jnp
        leaf = jnp.asarray(leaf, dtype=want)
    if cuda:
        leaf.block_until_ready()
    return torch.from_dlpack(leaf)


def _to_jax(t: torch.Tensor):
    import jax
    try:
        return jax.dlpack.from_dlpack(t)
    except Exception:  # an alignment or layout jax does not take: copy
        import jax.numpy as jnp
        if t.is_cuda:
            return jax.device_put(jnp.asarray(t.cpu().numpy()), jax.devices("gpu")[0])
        return jnp.asarray(t.float().numpy() if t.dtype == torch.bfloat16 else t.numpy(),
                           dtype=_jax_dtype(t.dtype))


def _resolve_static(fun, nums: tuple, names: tuple):
    """static_argnums and static_argnames completed from each other through
    ``fun``'s signature, as jax.jit does."""
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return nums, names
    positional = [p.name for p in params
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    nums_set = set(nums)
    names_set = set(names)
    for i in nums:
        j = i if i >= 0 else i + len(positional)
        if 0 <= j < len(positional) and params[j].kind != params[j].POSITIONAL_ONLY:
            names_set.add(positional[j])
    for n in names:
        if n in positional:
            nums_set.add(positional.index(n))
    return tuple(sorted(nums_set)), tuple(sorted(names_set))

