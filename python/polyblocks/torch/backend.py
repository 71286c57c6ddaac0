"""The ``polyblocks`` torch.compile backend.

    model = torch.compile(model, backend="polyblocks",
                          options={"target": "cpu-host", "strict": False,
                                   "fusion": True, "matrix_units": True})

Dynamo's graph goes through AOTAutograd with the core ATen decompositions;
each forward (or backward) graph is emitted as one input-contract MLIR
function and compiled by the C API. Ops without an emitter split the graph:
the supported parts are compiled, the rest runs eagerly, and each fallback
op is logged once on the ``polyblocks`` logger. ``strict=True`` raises
NotImplementedError naming the op instead. Graphs with symbolic shapes
(dynamo's automatic dynamic shapes, ``dynamic=True``, ``mark_dynamic``)
are compiled once for all sizes with ``dynamic_shapes="symbolic"``: the
artifact's entry takes the sizes at run time (docs/DynamicShapes.md). A
graph that cannot be (an op without a symbolic form yet, a training
graph, an op that falls back to eager), and every such graph with the
default ``dynamic_shapes="specialize"``, is compiled once per distinct set
of concrete input shapes and of the values of the 0-d inputs that the
graph reads with ``.item()``.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from typing import Any, Callable

import torch
import torch.fx as fx

from .. import compiler as _compiler
from .._capi import PolyBlocksError
from .attention import attention_decompositions
from .emitter import EmittedGraph, emit_graph, node_support, op_name
from .foreach import foreach_decompositions
from .mlir import Unsupported
from .quantized import lower_quantized

__all__ = ["polyblocks_backend", "Options", "register", "compile_graph"]

log = logging.getLogger("polyblocks")

_logged_fallbacks: set[str] = set()
_log_lock = threading.Lock()


@dataclasses.dataclass(frozen=True)
class Options:
    """Options of the backend (``torch.compile(..., options={...})``).

    target:       PolyBlocks target. "auto" (default): "cpu-host" for graphs
                  on CPU tensors, "nvidia-auto" (the current device's chip)
                  for graphs on CUDA tensors, "amd-auto" on a ROCm build's
                  GPU tensors. An explicit target must match the graph's
                  device ("nvidia-*" for CUDA, "amd-*" for ROCm, else CPU);
                  otherwise the graph runs in eager (an error with strict).
    strict:       raise NotImplementedError instead of falling back to eager.
    fusion:       S3 fusion on/off (ablation; None = compiler default).
    matrix_units: S3 matrix-unit mapping on/off (ablation; None = default).
    pipeline:     "optimized" (default) or "reference" (skips S3).
    freeze:       inference only: parameters and buffers become constants
                  of the compiled code, read once at compile time, and
                  what depends only on them is folded (see freezing.py).
    allow_tf32:   f32 matmuls and convolutions may use tf32 tensor cores
                  (NVIDIA targets). None (default): as PyTorch allows it,
                  torch.backends.cuda.matmul.allow_tf32 for matmuls and
                  torch.backends.cudnn.allow_tf32 for convolutions.
    codegen:      NVIDIA targets: "ptx" (default) or "tile-ir": contraction
                  kernels as CUDA Tile IR, assembled by NVIDIA's tileiras
                  (docs/TileIR.md); with ``emulate``, run by the tile
                  interpreter.
    emulate:      run an explicit "nvidia-sm80"/"nvidia-sm90"/"amd-gfx90a"/
                  "amd-gfx942" target's kernels on the CPU through the
                  kernel emulator (graphs on CPU tensors; slow, with
                  compute-sanitizer's checks: for testing the GPU back ends
                  without a GPU).
    dynamic_shapes: graphs with symbolic sizes: "specialize" (default):
                  one compile per distinct set of input shapes;
                  "symbolic": one compile for all sizes where the graph
                  has a symbolic form (inference graphs on CPU targets,
                  every op emitted), else as "specialize".
    """

    target: str = "auto"
    strict: bool = False
    fusion: bool | None = None
    matrix_units: bool | None = None
    pipeline: str | None = None
    freeze: bool = False
    allow_tf32: bool | None = None
    codegen: str | None = None
    emulate: bool = False
    dynamic_shapes: str = "specialize"

    @classmethod
    def parse(cls, options: dict | None) -> "Options":
        if options is None:
            return cls()
        if isinstance(options, Options):
            return options
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(options) - names)
        if unknown:
            raise ValueError(f"polyblocks: unknown backend options {unknown}; "
                             f"known: {sorted(names)}")
        if options.get("codegen") not in (None, "ptx", "tile-ir"):
            raise ValueError("polyblocks: option 'codegen' takes \"ptx\" or "
                             f"\"tile-ir\", not {options['codegen']!r}")
        if options.get("dynamic_shapes", "specialize") not in ("specialize", "symbolic"):
            raise ValueError("polyblocks: option 'dynamic_shapes' takes "
                             "\"specialize\" or \"symbolic\", not "
                             f"{options['dynamic_shapes']!r}")
        return cls(**options)

    def compiler_options(self, target: str = "") -> dict:
        options = {"fusion": self.fusion, "matrix_units": self.matrix_units,
                   "pipeline": self.pipeline, "allow_tf32": self.allow_tf32,
                   "codegen": self.codegen}
        if self.allow_tf32 is None and target.startswith("nvidia"):
            options["allow_tf32"] = bool(torch.backends.cuda.matmul.allow_tf32)
            options["allow_tf32_convolutions"] = bool(torch.backends.cudnn.allow_tf32)
        return options


def graph_device(gm: fx.GraphModule) -> torch.device:
    """The one device of a graph's tensor inputs and outputs (CPU when it has
    none); Unsupported when they span several devices."""
    devices = set()
    for node in gm.graph.nodes:
        if node.op not in ("placeholder", "output", "get_attr"):
            continue
        vals = [node.meta.get("val")] if node.op != "output" else [
            a.meta.get("val") for a in node.all_input_nodes]
        for v in vals:
            for t in (v if isinstance(v, (list, tuple)) else [v]):
                if isinstance(t, torch.Tensor):
                    devices.add(t.device)
    if len(devices) > 1:
        raise Unsupported("the graph's tensors are on several devices: " +
                          ", ".join(sorted(str(d) for d in devices)))
    return devices.pop() if devices else torch.device("cpu")


def resolve_target(target: str, device: torch.device,
                   emulate: bool = False) -> str:
    """The PolyBlocks target for a graph on ``device`` (see Options.target
    and Options.emulate)."""
    if emulate:
        if (not target.startswith(("nvidia-", "amd-"))
                or target in ("nvidia-auto", "amd-auto") or device.type != "cpu"):
            raise Unsupported(f"emulate needs an explicit NVIDIA or AMD target "
                              f"(nvidia-sm80, nvidia-sm90, amd-gfx90a, "
                              f"amd-gfx942) and CPU tensors, not target "
                              f"'{target}' on {device}")
        return target
    # torch's "cuda" device is a ROCm (HIP) one on ROCm builds of torch.
    rocm = device.type == "cuda" and bool(torch.version.hip)
    vendor, prefix = ("AMD", "amd-") if rocm else ("NVIDIA", "nvidia-")
    gpu = target.startswith(("nvidia-", "amd-"))
    if target == "auto":
        if device.type == "cpu":
            return "cpu-host"
        if device.type == "cuda":
            return prefix + "auto"
        raise Unsupported(f"no PolyBlocks target for tensors on {device}")
    if device.type == "cuda" and not target.startswith(prefix):
        raise Unsupported(f"the graph runs on {device}, but target '{target}' "
                          f"is not an {vendor} target")
    if device.type != "cuda" and gpu:
        raise Unsupported(f"target '{target}' needs CUDA (or ROCm) tensors; "
                          f"the graph runs on {device}")
    return target


def _log_fallback(op: str, reason: str) -> None:
    with _log_lock:
        if op in _logged_fallbacks:
            return
        _logged_fallbacks.add(op)
    log.warning("polyblocks: %s runs in eager (not compiled): %s", op, reason)


# ---------------------------------------------------------------------------
# Compiled graphs at run time
# ---------------------------------------------------------------------------

class CompiledGraph:
    """Runs one emitted graph's executable and rebuilds the graph's outputs."""

    def __init__(self, emitted: EmittedGraph, executable: _compiler.Executable | None,
                 device: torch.device = torch.device("cpu")):
        self.device = device
        self.emitted = emitted
        self.executable = executable
        self.arg_indices = emitted.arg_indices
        self.plan = emitted.plan
        self.single = emitted.single
        self.container = emitted.out_container
        self.arg_orders = emitted.arg_orders or [None] * len(self.arg_indices)
        # Sizes that SymInt arguments hold (the others come from the
        # tensors' extents).
        self.size_args = [(name, i) for name, i in emitted.sizes if i is not None]

    def __call__(self, *args):
        if self.executable is not None:
            # Arguments in their memory order (see EmittedGraph.arg_orders):
            # a channels-last tensor is passed without a copy.
            inputs = [args[i] if order is None else args[i].permute(order)
                      for i, order in zip(self.arg_indices, self.arg_orders)]
            sizes = {name: int(args[i]) for name, i in self.size_args} or None
            results = self.executable.run("forward", inputs, sizes=sizes)
        else:
            results = []
        outs = []
        for kind, v in self.plan:
            if kind == "result":
                outs.append(results[v])
            elif kind == "input":
                outs.append(args[v])
            elif kind == "clone":
                outs.append(results[v].clone())
            elif kind == "clone_input":
                outs.append(args[v].clone())
            elif kind == "empty":
                outs.append(torch.empty(v[0], dtype=v[1], device=self.device))
            elif isinstance(v, torch.Tensor):
                outs.append(v.to(self.device))
            else:
                outs.append(v)
        if self.single:
            return outs[0]
        return self.container(outs) if self.container in (tuple, list) else tuple(outs)


class _SubgraphModule(torch.nn.Module):
    def __init__(self, runner: CompiledGraph):
        super().__init__()
        self.runner = runner

    def forward(self, *args):
        return self.runner(*args)


class _NotSymbolic(Exception):
    """A graph with symbolic shapes that has no symbolic form yet: the
    backend compiles it per shape instead."""


def _shape_env(gm: fx.GraphModule):
    for node in gm.graph.nodes:
        val = node.meta.get("val")
        if isinstance(val, torch.SymInt):
            return val.node.shape_env
        if isinstance(val, torch.Tensor):
            for d in val.shape:
                if isinstance(d, torch.SymInt):
                    return d.node.shape_env
    return None


def _guard_count(gm: fx.GraphModule) -> int:
    env = _shape_env(gm)
    return len(env.guards) if env is not None else 0


class _NoNewGuards:
    """While a graph with symbolic shapes is emitted: an emitter that reads
    a symbolic size as a number (int() of a SymInt) raises Unsupported
    there, before torch records the guard that would specialize dynamo's
    graph to this call's sizes (and make every new size retrace it)."""

    def __init__(self, gm: fx.GraphModule):
        self.env = _shape_env(gm)

    # torch logs the exception of a failed evaluation as a warning.
    _LOGGER = "torch.fx.experimental.symbolic_shapes"

    def __enter__(self):
        if self.env is not None:
            def refuse(*args, **kwargs):
                raise Unsupported("an emitter read a symbolic size as a number")
            self.env._log_guard = refuse  # shadows ShapeEnv._log_guard
            self.level = logging.getLogger(self._LOGGER).level
            logging.getLogger(self._LOGGER).setLevel(logging.ERROR)
        return self

    def __exit__(self, *exc):
        if self.env is not None:
            self.env.__dict__.pop("_log_guard", None)
            logging.getLogger(self._LOGGER).setLevel(self.level)
        return False


def _check_no_new_guards(gm: fx.GraphModule, before: int) -> None:
    """An emitter that read a symbolic size as a number (int() of a
    SymInt) would have specialized the code to this call's sizes, silently:
    torch records that as a new guard, which makes the graph fall back to
    per-shape compiles here."""
    env = _shape_env(gm)
    if env is not None and len(env.guards) != before:
        raise Unsupported("an emitter read a symbolic size as a number: "
                          f"{env.guards[before].expr}")


def compile_graph(gm: fx.GraphModule, opts: Options,
                  guards: int | None = None) -> CompiledGraph:
    """Emits and compiles a fully supported graph (raises Unsupported or
    PolyBlocksError). ``guards``: for a graph with symbolic shapes, the
    count of its shape environment's guards before anything was emitted
    (see _check_no_new_guards)."""
    device = graph_device(gm)
    target = resolve_target(opts.target, device, opts.emulate)
    emitted = emit_graph(gm)
    if guards is not None:
        _check_no_new_guards(gm, guards)
    if log.isEnabledFor(logging.DEBUG):
        log.debug("polyblocks: MLIR for %d ops:\n%s", len(emitted.ops), emitted.text)
    if emitted.num_results == 0:
        return CompiledGraph(emitted, None, device)
    try:
        art = _compiler.compile(emitted.text, target=target,
                                options=opts.compiler_options(target))
    except PolyBlocksError as e:
        e.mlir = emitted.text  # for debugging
        raise
    return CompiledGraph(emitted, art.executable(emulate=opts.emulate), device)


# ---------------------------------------------------------------------------
# FX graph (after AOTAutograd) -> compiled callable
# ---------------------------------------------------------------------------

def _support_map(gm: fx.GraphModule) -> tuple[dict, list]:
    supported: dict[fx.Node, bool] = {}
    unsupported: list[tuple[fx.Node, str]] = []
    import operator
    for node in gm.graph.nodes:
        if node.op != "call_function":
            continue
        if node.target is operator.getitem:
            src = node.args[0]
            supported[node] = supported.get(src, False)
            continue
        ok, reason = node_support(node)
        supported[node] = ok
        if not ok:
            unsupported.append((node, reason))
    return supported, unsupported


def _eager(gm: fx.GraphModule):
    return gm.forward


def compile_fx_graph(gm: fx.GraphModule, example_inputs, opts: Options,
                     symbolic: bool = False) -> Callable:
    """The AOTAutograd forward/backward compiler: returns a callable taking
    the graph's inputs positionally. With ``symbolic``, a graph that cannot
    be compiled for all sizes raises _NotSymbolic."""
    from torch._subclasses.fake_tensor import unset_fake_temporarily
    with unset_fake_temporarily():  # emitters make real (small) tensors
        return _compile_fx_graph(gm, opts, symbolic)


def _compile_fx_graph(gm: fx.GraphModule, opts: Options, symbolic: bool = False) -> Callable:
    if symbolic:
        guards = _guard_count(gm)
        with _NoNewGuards(gm):
            supported, unsupported = _support_map(gm)
            if unsupported:
                node, reason = unsupported[0]
                raise _NotSymbolic(f"{op_name(node)} runs in eager: {reason}")
            try:
                return compile_graph(gm, opts, guards)
            except (Unsupported, PolyBlocksError) as e:
                raise _NotSymbolic(str(e)) from e
    supported, unsupported = _support_map(gm)
    if unsupported:
        node, reason = unsupported[0]
        if opts.strict:
            raise NotImplementedError(
                f"polyblocks (strict): {op_name(node)} is not supported: {reason}")
        for node, reason in unsupported:
            _log_fallback(op_name(node), reason)
        if not any(supported.values()):
            return _eager(gm)
        return _compile_partitioned(gm, supported, opts)
    try:
        return compile_graph(gm, opts)
    except (Unsupported, PolyBlocksError) as e:
        if opts.strict:
            raise
        log.warning("polyblocks: a graph of %d nodes runs in eager: %s",
                    len(gm.graph.nodes), e)
        return _eager(gm)


def _compile_partitioned(gm: fx.GraphModule, supported: dict, opts: Options):
    from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
    from torch.fx.passes.operator_support import OperatorSupportBase

    class _Support(OperatorSupportBase):
        def is_node_supported(self, submodules, node):
            return supported.get(node, False)

    partitioner = CapabilityBasedPartitioner(gm, _Support(), allows_single_node_partition=True)
    partitions = partitioner.propose_partitions()
    fused = partitioner.fuse_partitions(partitions)
    for node in list(fused.graph.nodes):
        if node.op != "call_module":
            continue
        sub = getattr(fused, node.target)
        if not isinstance(sub, fx.GraphModule):
            continue
        # Placeholders of the submodule get the metadata of the values fed in.
        phs = [n for n in sub.graph.nodes if n.op == "placeholder"]
        for ph, a in zip(phs, node.args):
            if isinstance(a, fx.Node) and "val" not in ph.meta and "val" in a.meta:
                ph.meta["val"] = a.meta["val"]
        try:
            runner = compile_graph(sub, opts)
        except (Unsupported, PolyBlocksError) as e:
            log.warning("polyblocks: a subgraph of %d nodes runs in eager: %s",
                        len(sub.graph.nodes), e)
            continue
        setattr(fused, node.target, _SubgraphModule(runner))
    fused.recompile()
    return fused.forward


# ---------------------------------------------------------------------------
# The dynamo backend
# ---------------------------------------------------------------------------

def _decompositions():
    from torch._decomp import core_aten_decompositions, get_decompositions
    table = dict(core_aten_decompositions())
    aten = torch.ops.aten
    # Ops that stay in core ATen but are simpler for us decomposed.
    table.update(get_decompositions([
        aten.upsample_nearest2d, aten.upsample_bilinear2d, aten.upsample_nearest1d,
        aten.upsample_linear1d, aten.upsample_nearest3d, aten._native_batch_norm_legit,
        aten._native_batch_norm_legit_functional, aten.native_dropout,
        aten.max_pool2d_with_indices_backward, aten.embedding_dense_backward,
        aten.adaptive_max_pool2d, aten.reflection_pad1d, aten.reflection_pad2d,
        aten.reflection_pad3d, aten.replication_pad1d, aten.replication_pad2d,
        aten.replication_pad3d, aten.nll_loss_forward, aten.nll_loss2d_forward,
        aten.grid_sampler_2d, aten.im2col, aten.col2im,
    ]))
    # The optimizers' multi-tensor updates, per tensor; CPU attention with
    # its true log-sum-exp, and its backward.
    table.update(foreach_decompositions())
    table.update(attention_decompositions())
    return table


def _has_symbolic(example_inputs) -> bool:
    for x in example_inputs:
        if isinstance(x, torch.SymInt):
            return True
        if isinstance(x, torch.Tensor) and any(not isinstance(s, int) for s in x.shape):
            return True
    return False


def _aot(gm: fx.GraphModule, example_inputs, opts: Options, symbolic: bool = False):
    from torch._functorch.aot_autograd import make_boxed_func

    def fw_compiler(g, inputs):
        return make_boxed_func(compile_fx_graph(g, inputs, opts, symbolic))

    inference_compiler = None
    if opts.freeze:
        from .freezing import freeze_graph, static_inputs
        if torch.is_grad_enabled() and any(
                isinstance(x, torch.Tensor) and x.requires_grad
                for x in [*example_inputs, *gm.parameters()]):
            raise NotImplementedError(
                "polyblocks: freeze=True is for inference: run the model under "
                "torch.no_grad() or torch.inference_mode()")
        values = static_inputs(gm, example_inputs)

        def inference_compiler(g, inputs):
            from torch._subclasses.fake_tensor import unset_fake_temporarily
            with unset_fake_temporarily():  # folds real values
                g = freeze_graph(g, values)
            return make_boxed_func(compile_fx_graph(g, inputs, opts, symbolic))

    # Through dynamo's own AOTAutograd backend helper (what custom backends
    # are meant to use): it counts the AOTAutograd compile, which dynamo's
    # DDP optimizer reads to hand the next bucket's graph fake outputs and
    # to find the bucket of a backward compiled lazily, and keeps dynamo
    # from tracing the backward compiler.
    from torch._dynamo.backends.common import aot_autograd
    # Inputs that an inference graph updates (a KV cache) stay updates
    # (copy_ into the input) rather than extra outputs that AOTAutograd
    # copies back: the executable writes them in place (pb.in_place).
    kwargs = {"fw_compiler": fw_compiler, "bw_compiler": fw_compiler,
              "decompositions": _decompositions(),
              "keep_inference_input_mutations": True}
    if inference_compiler is not None:
        kwargs["inference_compiler"] = inference_compiler
    return aot_autograd(**kwargs)(gm, example_inputs)


def _item_inputs(gm: fx.GraphModule) -> list[int]:
    """Positions of the graph inputs that the graph reads only through
    ``.item()``: with ``dynamic=True`` dynamo passes a module's float
    attributes (a layer norm's eps, a dropout's p) as 0-d tensors and reads
    them with ``.item()`` inside the graph."""
    positions = []
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    for i, node in enumerate(placeholders):
        if node.users and all(u.op == "call_method" and u.target == "item"
                              for u in node.users):
            positions.append(i)
    return positions


def _with_values(gm: fx.GraphModule, positions: list[int], values: list) -> fx.GraphModule:
    """A copy of ``gm`` whose ``.item()`` reads of the inputs at ``positions``
    are replaced by ``values`` (the inputs stay, unused)."""
    graph = fx.Graph()
    env: dict[fx.Node, fx.Node] = {}
    output = graph.graph_copy(gm.graph, env)
    graph.output(output)
    placeholders = [env[n] for n in gm.graph.nodes if n.op == "placeholder"]
    for pos, value in zip(positions, values):
        for item in list(placeholders[pos].users):
            for user in list(item.users):
                user.args = fx.node.map_arg(user.args, lambda n, i=item: value if n is i else n)
                user.kwargs = fx.node.map_arg(user.kwargs,
                                              lambda n, i=item: value if n is i else n)
            graph.erase_node(item)
    return fx.GraphModule(gm, graph)


class _Specializing:
    """For graphs with symbolic shapes (or scalar inputs read by ``.item()``):
    one static compilation per distinct set of concrete input shapes and
    scalar values, made at the first call with them."""

    def __init__(self, gm: fx.GraphModule, opts: Options):
        self.gm = gm
        self.opts = opts
        self.item_inputs = _item_inputs(gm)
        self.compiled: dict[tuple, Callable] = {}
        self.lock = threading.Lock()

    @staticmethod
    def _key(args) -> tuple:
        key = []
        for a in args:
            if isinstance(a, torch.Tensor):
                key.append((tuple(a.shape), a.dtype, a.device, a.requires_grad))
            else:
                key.append(a)
        return tuple(key)

    def __call__(self, *args):
        values = [args[i].item() for i in self.item_inputs]
        key = (self._key(args), tuple(values))
        fn = self.compiled.get(key)
        if fn is None:
            with self.lock:
                fn = self.compiled.get(key)
                if fn is None:
                    gm = _with_values(self.gm, self.item_inputs, values) \
                        if self.item_inputs else self.gm
                    fn = _aot(gm, list(args), self.opts)
                    self.compiled[key] = fn
        return fn(*args)


def polyblocks_backend(gm: fx.GraphModule, example_inputs, options: dict | None = None,
                       **kwargs: Any):
    """torch._dynamo backend: ``torch.compile(m, backend="polyblocks")``."""
    opts = Options.parse(options)
    # PT2E-quantized models: integer linear layers, the rest in f32.
    lower_quantized(gm, example_inputs)
    symbolic = _has_symbolic(example_inputs)
    items = _item_inputs(gm)
    if symbolic and opts.dynamic_shapes == "symbolic" and not _trains(gm, example_inputs):
        # One compile for all sizes, for the values that the .item() inputs
        # have now (a layer norm's eps); other values, compiles per shape.
        values = [example_inputs[i].item() for i in items]
        try:
            fn = _aot(_with_values(gm, items, values) if items else gm,
                      example_inputs, opts, symbolic=True)
        except _NotSymbolic as e:
            log.info("polyblocks: a graph with symbolic shapes is compiled "
                     "per shape: %s", e)
        else:
            return _ForValues(fn, items, values, lambda: _Specializing(gm, opts))
    if symbolic or items:
        return _Specializing(gm, opts)
    return _aot(gm, example_inputs, opts)


class _ForValues:
    """Runs ``fn``, compiled for the values ``values`` of the inputs at
    ``items`` that the graph reads with ``.item()``; other values run
    through the per-shape compiles of ``fallback()`` (made once)."""

    def __init__(self, fn: Callable, items: list[int], values: list, fallback):
        self.fn, self.items, self.values = fn, items, values
        self.make_fallback = fallback
        self.fallback = None

    def __call__(self, *args):
        if all(args[i].item() == v for i, v in zip(self.items, self.values)):
            return self.fn(*args)
        if self.fallback is None:
            self.fallback = self.make_fallback()
        return self.fallback(*args)


def _trains(gm: fx.GraphModule, example_inputs) -> bool:
    """Whether AOTAutograd would make a backward graph (compiled later,
    when it could no longer fall back to per-shape compiles)."""
    return torch.is_grad_enabled() and any(
        isinstance(x, torch.Tensor) and x.requires_grad
        for x in [*example_inputs, *gm.parameters()])


def register() -> None:
    """Registers the backend with torch._dynamo under the name "polyblocks"
    (unless an installed entry point already provides it: dynamo then loads
    it through the entry point, and registering twice would be an error)."""
    try:
        from torch._dynamo.backends import registry
    except ImportError:  # pragma: no cover
        return
    if "polyblocks" in registry._COMPILER_FNS:
        return
    try:
        from importlib.metadata import entry_points
        if any(ep.name == "polyblocks" for ep in entry_points(group="torch_dynamo_backends")):
            return
    except Exception:  # pragma: no cover - broken metadata: register directly
        pass
    registry.register_backend(compiler_fn=polyblocks_backend, name="polyblocks")
