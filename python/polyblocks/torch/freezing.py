"""``freeze=True``: parameters and buffers become constants of the compiled
code.

Dynamo passes a module's parameters and buffers to the backend as graph
inputs, marked as static inputs; AOTAutograd keeps them as inputs of the
forward graph, after those it lifted itself from the module. Freezing, for
inference graphs only:
  1. replaces those inputs by constants holding their values at compile time
     (later changes to the module's parameters are not seen: recompile);
  2. folds an inference BatchNorm into the convolution before it (scaled
     weights, shifted bias), when the convolution has no other user;
  3. folds, in eager PyTorch at compile time, every op whose inputs are all
     constants and whose result is not larger than its largest input (weight
     transposes and reshapes, BatchNorm's scale and shift, ...), so that no
     broadcast of a constant is materialized;
  4. leaves the constants to the emitter, which writes them into the MLIR
     module as dense constants: S1 folds the layout changes it makes to them
     (e.g. a convolution's weights to channels-last), and the artifact holds
     them.
The compiled function then takes only the graph's real inputs. The cost is
compile time and artifact size proportional to the model's size.
"""

from __future__ import annotations

import logging
import operator

import torch
import torch.fx as fx

log = logging.getLogger("polyblocks")

__all__ = ["freeze_graph", "static_inputs"]

# Ops never folded: random, or with effects.
_NO_FOLD_PREFIXES = ("rand", "bernoulli", "native_dropout", "normal", "uniform",
                     "exponential", "multinomial", "empty", "copy_")


def static_inputs(gm: fx.GraphModule, example_inputs) -> list:
    """The values of the AOT forward graph's inputs that are parameters or
    buffers (None for the others): the module's own, which AOTAutograd puts
    first, then dynamo's inputs that it marked static."""
    own = [*dict(gm.named_parameters(remove_duplicate=False)).values(),
           *dict(gm.named_buffers(remove_duplicate=False)).values()]
    marked = [x if isinstance(x, torch.Tensor) and
              (isinstance(x, torch.nn.Parameter) or
               hasattr(x, "_dynamo_static_input_type")) else None
              for x in example_inputs]
    return own + marked


def _foldable(node: fx.Node, constants: set) -> bool:
    if node.op != "call_function":
        return False
    name = getattr(node.target, "__name__", str(node.target))
    if any(name.startswith(p) for p in _NO_FOLD_PREFIXES):
        return False
    if isinstance(node.target, torch._ops.OpOverload) and node.target._schema.is_mutable:
        return False
    inputs = node.all_input_nodes
    if not inputs or not all(n in constants for n in inputs):
        return False
    val = node.meta.get("val")
    if not isinstance(val, torch.Tensor):
        return False
    largest = max(n.meta["val"].numel() for n in inputs
                  if isinstance(n.meta.get("val"), torch.Tensor))
    return val.numel() <= largest


def _fold_batch_norms(gm: fx.GraphModule, constants: set, make_constant) -> int:
    """conv -> batch_norm (inference, constant statistics and affine) becomes
    one convolution with w' = w * g / sqrt(v + eps) per output channel and
    b' = (b - m) * g / sqrt(v + eps) + beta."""
    aten = torch.ops.aten
    folded = 0
    for bn in list(gm.graph.nodes):
        if bn.op != "call_function" or bn.target != aten._native_batch_norm_legit_no_training.default:
            continue
        conv, gamma, beta, mean, var = bn.args[:5]
        eps = bn.args[6] if len(bn.args) > 6 else bn.kwargs.get("eps", 1e-5)
        if not (isinstance(conv, fx.Node) and conv.target == aten.convolution.default
                and len(conv.users) == 1 and conv.args[6] is False):
            continue
        weight, bias = conv.args[1], conv.args[2]
        if not all(isinstance(n, fx.Node) and n in constants for n in (weight, gamma, beta, mean, var)):
            continue
        if bias is not None and bias not in constants:
            continue
        users = list(bn.users)
        if not all(u.target is operator.getitem and u.args[1] == 0 for u in users):
            continue
        value = lambda n: getattr(gm, n.target)  # noqa: E731
        w = value(weight)
        with torch.no_grad():
            scale = value(gamma) * torch.rsqrt(value(var) + eps)
            new_w = w * scale.reshape([-1] + [1] * (w.dim() - 1))
            b = value(bias) if bias is not None else torch.zeros_like(scale)
            new_b = (b - value(mean)) * scale + value(beta)
        args = list(conv.args)
        args[1] = make_constant(new_w.contiguous(), conv)
        args[2] = make_constant(new_b.contiguous(), conv)
        conv.args = tuple(args)
        conv.meta["val"] = bn.meta["val"][0] if isinstance(bn.meta.get("val"), tuple) else conv.meta["val"]
        for u in users:
            u.replace_all_uses_with(conv)
            gm.graph.erase_node(u)
        gm.graph.erase_node(bn)
        folded += 1
    return folded


def freeze_graph(gm: fx.GraphModule, values: list) -> fx.GraphModule:
    """Makes placeholder i of `gm` a constant holding values[i] where that is
    a tensor, and folds what depends only on constants (see the module's
    docstring). The placeholders stay (unused), so the graph's calling
    convention is unchanged."""
    graph = gm.graph
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    constants: set[fx.Node] = set()
    counter = [0]

    def make_constant(value: torch.Tensor, before: fx.Node) -> fx.Node:
        name = f"_pb_frozen_{counter[0]}"
        counter[0] += 1
        gm.register_buffer(name, value.detach(), persistent=False)
        with graph.inserting_before(before):
            node = graph.get_attr(name)
        node.meta["val"] = value.detach()
        constants.add(node)
        return node

    first = next(n for n in graph.nodes if n.op != "placeholder")
    if len(values) != len(placeholders):
        raise NotImplementedError(
            f"polyblocks: freeze=True: the graph has {len(placeholders)} inputs where "
            f"{len(values)} were expected (inputs mutated or wrapped by AOTAutograd)")
    for ph, value in zip(placeholders, values):
        if not ph.users or not isinstance(value, torch.Tensor):
            continue
        const = make_constant(value, first)
        ph.replace_all_uses_with(const)

    folded = _fold_batch_norms(gm, constants, make_constant)
    for node in list(graph.nodes):
        if not _foldable(node, constants):
            continue
        args, kwargs = torch.fx.node.map_arg(
            (node.args, node.kwargs), lambda n: getattr(gm, n.target))
        with torch.no_grad():
            value = node.target(*args, **kwargs)
        const = make_constant(value.contiguous(), node)
        node.replace_all_uses_with(const)
        graph.erase_node(node)
        folded += 1
    # Constants that nothing uses any more (inputs of folded ops).
    for node in list(graph.nodes):
        if node.op == "get_attr" and not node.users:
            delattr(gm, node.target)
            graph.erase_node(node)
    graph.lint()
    gm.recompile()
    log.debug("polyblocks: froze %d parameters, folded %d ops",
              sum(v is not None for v in values), folded)
    return gm
