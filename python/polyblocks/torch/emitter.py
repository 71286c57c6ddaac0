"""FX graph (ATen, static shapes) -> input-contract MLIR.

``emit_graph(gm)`` emits ONE ``func.func @forward`` whose arguments are the
graph's placeholders that the computation reads, and whose results are the
distinct computed outputs; an :class:`OutputPlan` says how to rebuild the
graph's output structure from them (placeholders returned as-is, repeated
values, python constants). ``node_support(node)`` says whether a single node
can be emitted, by emitting it alone.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.fx as fx

from .mlir import (FunctionBuilder, SymDim, Unsupported, Value, mlir_type, tensor_type,
                   to_dim)
from .ops import EMITTERS, EMPTY_INPUTS_OK, EmitContext

__all__ = ["emit_graph", "node_support", "EmittedGraph", "op_name"]


def op_name(node: fx.Node) -> str:
    t = node.target
    if isinstance(t, torch._ops.OpOverload):
        return f"aten.{t.__name__}" if t.namespace == "aten" else f"{t.namespace}.{t.__name__}"
    return getattr(t, "__name__", str(t))


def _meta(node):
    return node.meta.get("val", None)


def _check_tensor_meta(t, what: str) -> None:
    if not isinstance(t, torch.Tensor):
        raise Unsupported(f"{what} is a {type(t).__name__}, not a tensor")
    if t.device.type not in ("cpu", "cuda"):
        raise Unsupported(f"{what} is on {t.device}")
    if t.is_sparse or t.layout != torch.strided:
        raise Unsupported(f"{what} has layout {t.layout}")
    mlir_type(t.dtype)  # raises for unsupported dtypes


def _shape(t) -> tuple:
    """A tensor's shape as extents (ints, SymDims for symbolic sizes)."""
    return tuple(to_dim(s) for s in t.shape)


def _has_no_elements(t) -> bool:
    """Whether ``t`` has no elements. Symbolic extents are at least 2 (dynamo
    specializes 0 and 1), and testing them through torch would add guards."""
    return any(isinstance(d, int) and d == 0 for d in _shape(t))


def _is_size(v) -> bool:
    return isinstance(v, (int, torch.SymInt)) and not isinstance(v, bool)


def _is_empty(v) -> bool:
    """A Value standing for a tensor with no elements: it has no SSA name
    and never appears in the IR (nothing needs computing)."""
    return isinstance(v, Value) and v.name is None


def _empty_value(t) -> Value:
    return Value(None, _shape(t), t.dtype)


def _check_result_meta(node) -> None:
    val = _meta(node)
    if val is None:
        raise Unsupported("no shape information")
    if isinstance(val, (list, tuple)):
        for i, v in enumerate(val):
            if isinstance(v, torch.Tensor) and _used_result(node, i):
                _check_tensor_meta(v, f"result {i}")
            elif v is not None and not isinstance(v, torch.Tensor):
                raise Unsupported(f"result {i} is a {type(v).__name__}")
    else:
        _check_tensor_meta(val, "the result")


def _used_result(node, i) -> bool:
    for user in node.users:
        if user.target is not operator.getitem or user.args[1] == i:
            return True
    return False


def _lookup(node):
    fn = EMITTERS.get(node.target)
    if fn is None:
        raise Unsupported("no emitter")
    return fn


def _map_args(args, env):
    def conv(a):
        if isinstance(a, fx.Node):
            return env[a]
        if isinstance(a, (list, tuple)):
            return type(a)(conv(x) for x in a)
        if isinstance(a, torch.dtype) or isinstance(a, (torch.device, torch.layout,
                                                       torch.memory_format)):
            return a
        if isinstance(a, torch.SymInt):
            return to_dim(a)
        return a
    return conv(args)


def _check_value(v, expect, what):
    if not isinstance(v, Value):
        raise Unsupported(f"emitter returned {type(v).__name__} for {what}")
    shape = _shape(expect)
    if v.shape != shape or v.dtype != expect.dtype:
        raise Unsupported(f"emitter produced {tensor_type(v.shape, v.dtype)} for {what}, "
                          f"expected {tensor_type(shape, expect.dtype)}")


def _emit_node(b: FunctionBuilder, node: fx.Node, env) -> Any:
    """Emits one call_function node; returns a Value or a list of them."""
    if node.target is operator.getitem:
        src, idx = node.args
        vals = env[src]
        if not isinstance(vals, (list, tuple)):
            raise Unsupported("getitem of a non-tuple")
        v = vals[idx]
        if v is None:
            raise Unsupported(f"result {idx} of {op_name(src)} is not emitted")
        return v
    val = _meta(node)
    if _is_size(val):
        # Arithmetic on sizes (sym_size, s0 * 12): an extent, no IR; where
        # it is used, the builder computes it from the entry's sizes.
        return to_dim(val)
    _check_result_meta(node)
    if isinstance(val, torch.Tensor) and _has_no_elements(val):
        return _empty_value(val)  # any op: nothing to compute
    fn = _lookup(node)
    for a in node.all_input_nodes:
        v = env.get(a)
        if v is None:
            raise Unsupported(f"input {a.name} unavailable")
        if _is_empty(v) and node.target not in EMPTY_INPUTS_OK:
            raise Unsupported(f"input {a.name} has no elements")
    args = _map_args(node.args, env)
    kwargs = _map_args(dict(node.kwargs), env)
    cx = EmitContext(b, node, _meta(node))
    result = fn(cx, *args, **kwargs)
    val = _meta(node)
    if isinstance(val, (list, tuple)):
        if not isinstance(result, (list, tuple)) or len(result) != len(val):
            raise Unsupported("emitter returned the wrong number of results")
        result = list(result)
        for i, (r, m) in enumerate(zip(result, val)):
            if isinstance(m, torch.Tensor) and _has_no_elements(m):
                result[i] = _empty_value(m)
            elif r is not None:
                _check_value(r, m, f"result {i}")
            elif _used_result(node, i):
                raise Unsupported(f"result {i} is used but not emitted")
        return list(result)
    _check_value(result, val, "the result")
    return result


def _get_attr(gm, target: str):
    obj = gm
    for part in target.split("."):
        obj = getattr(obj, part)
    return obj


_COPY_ = torch.ops.aten.copy_.default


def _input_update_problem(node: fx.Node) -> str:
    """Why ``copy_(input, value)`` (an input's update in place, which
    AOTAutograd leaves in inference graphs: a KV cache's) cannot be
    compiled, or "" when it can: the input a placeholder, the value of its
    shape."""
    dst, src = node.args[0], node.args[1]
    if not isinstance(dst, fx.Node) or dst.op != "placeholder":
        return "copy_ into a tensor that is no input of the graph"
    d, v = _meta(dst), _meta(src) if isinstance(src, fx.Node) else None
    if not isinstance(d, torch.Tensor) or not isinstance(v, torch.Tensor) or \
            tuple(d.shape) != tuple(v.shape):
        return "copy_ of a value that is no tensor of the input's shape"
    if _memory_order(d) is not None:
        return "copy_ into an input whose memory order is not its logical one"
    return ""


def node_support(node: fx.Node) -> tuple[bool, str]:
    """(supported, reason) for one call_function node, found by emitting it
    on placeholder arguments."""
    if node.op != "call_function":
        return False, f"{node.op} nodes are not compiled"
    if node.target is operator.getitem or _is_size(_meta(node)):
        return True, ""
    if node.target is _COPY_:
        why = _input_update_problem(node)
        return not why, why
    b = FunctionBuilder()
    env = {}
    try:
        _lookup(node)
        for i, a in enumerate(node.all_input_nodes):
            val = _meta(a)
            if val is None and a.op == "get_attr":
                val = _get_attr(a.graph.owning_module, a.target)
            if isinstance(val, (list, tuple)):
                vals = []
                for j, v in enumerate(val):
                    if isinstance(v, torch.Tensor) and v.device.type in ("cpu", "cuda"):
                        vals.append(_empty_value(v) if _has_no_elements(v) else
                                    Value(f"%in{i}_{j}", _shape(v), v.dtype))
                    else:
                        vals.append(None)
                env[a] = vals
            elif _is_size(val):
                env[a] = to_dim(val)
            else:
                _check_tensor_meta(val, f"input {a.name}")
                env[a] = _empty_value(val) if _has_no_elements(val) else \
                    Value(f"%in{i}", _shape(val), val.dtype)
        # getitem inputs: resolve through their producer
        _emit_node(b, node, env)
    except Unsupported as e:
        return False, str(e)
    except (TypeError, ValueError, KeyError, IndexError, AssertionError,
            AttributeError, NotImplementedError) as e:
        return False, f"emitter error: {type(e).__name__}: {e}"
    return True, ""


@dataclass
class EmittedGraph:
    text: str
    # Indices (into the graph's placeholders) of the func's arguments.
    arg_indices: list[int]
    # How to build the graph's outputs: ("result", k) -> func result k,
    # ("input", i) -> placeholder i, ("clone", k) -> a clone of func result k,
    # ("const", v) -> python value v.
    plan: list[tuple]
    # Whether the graph returns a single value rather than a tuple/list.
    single: bool
    out_container: type = tuple
    num_results: int = 0
    ops: list[str] = field(default_factory=list)
    # Per func argument: the order of its dimensions in memory when it is
    # not the logical one (a channels-last tensor), else None. The
    # argument is passed as the tensor permuted to that order (contiguous,
    # no copy) and the func transposes it back.
    arg_orders: list = field(default_factory=list)
    # Symbolic shapes: the func's sizes ("s0", ...: its index arguments,
    # after the tensors), each with the index of a placeholder holding it
    # as a SymInt, or None where only tensors' extents give it.
    sizes: list = field(default_factory=list)
    # Inputs the graph updates in place (copy_ into a placeholder): pairs
    # (placeholder index, func result index); the func result carries
    # pb.in_place and the executable writes the input's own buffer.
    updates: list = field(default_factory=list)


def emit_graph(gm: fx.GraphModule, func_name: str = "forward") -> EmittedGraph:
    """Emits the whole graph; raises Unsupported for the first node it
    cannot emit."""
    graph = gm.graph
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    symbols, size_sources = _size_symbols(placeholders)
    b = FunctionBuilder({sym: f"%s{k}" for k, sym in enumerate(symbols)})
    env: dict = {}
    args = []
    orders = []
    for i, p in enumerate(placeholders):
        val = _meta(p)
        if _is_size(val):
            env[p] = to_dim(val)
            continue
        if not p.users:
            continue
        if isinstance(val, torch.Tensor):
            _check_tensor_meta(val, f"input {p.name}")
            if _has_no_elements(val):
                env[p] = _empty_value(val)
                continue
            order = _memory_order(val)
            if order is None:
                v = Value(f"%arg{len(args)}", _shape(val), val.dtype)
                env[p] = v
            else:
                v = Value(f"%arg{len(args)}", tuple(_shape(val)[d] for d in order),
                          val.dtype)
                inverse = [order.index(d) for d in range(len(order))]
                env[p] = b.transpose(v, inverse)
            orders.append(order)
            args.append((i, v))
        else:
            raise Unsupported(f"input {p.name} is a {type(val).__name__}")
    ops = []
    updates = []
    output_node = None
    for node in graph.nodes:
        if node.op == "placeholder":
            continue
        if node.op == "output":
            output_node = node
            break
        if node.op == "get_attr":
            t = _get_attr(gm, node.target)
            if not isinstance(t, torch.Tensor):
                raise Unsupported(f"get_attr {node.target} is not a tensor")
            _check_tensor_meta(t, f"constant {node.target}")
            env[node] = b.constant_tensor(t)
            continue
        if node.op != "call_function":
            raise Unsupported(f"{node.op} node {node.name}")
        if node.target is _COPY_:
            why = _input_update_problem(node)
            if why:
                raise Unsupported(why)
            dst = node.args[0]
            value = b.convert(env[node.args[1]], _meta(dst).dtype)
            updates.append((dst, value))
            env[node] = value
            ops.append(op_name(node))
            continue
        try:
            env[node] = _emit_node(b, node, env)
        except Unsupported as e:
            raise Unsupported(f"{op_name(node)}: {e}") from None
        if node.target is not operator.getitem:
            ops.append(op_name(node))
    assert output_node is not None
    outs = output_node.args[0]
    single = not isinstance(outs, (list, tuple))
    out_list = [outs] if single else list(outs)
    plan = []
    results: list[Value] = []
    seen: dict[str, int] = {}
    updated = {dst for dst, _ in updates}
    arg_names = {v.name for _, v in args}
    ph_index = {p: i for i, p in enumerate(placeholders)}
    for o in out_list:
        if isinstance(o, fx.Node):
            if o.op == "placeholder":
                plan.append(("input", ph_index[o]))
                continue
            v = env[o]
            if not isinstance(v, Value):
                raise Unsupported(f"output {o.name} is not a tensor")
            if _is_empty(v):
                plan.append(("empty", (v.shape, v.dtype)))
                continue
            if v.name in arg_names:
                ph = placeholders[next(i for i, a in args if a.name == v.name)]
                if ph not in updated:
                    # A computation that folded to an input (e.g. a clone):
                    # a fresh copy of that input.
                    plan.append(("clone_input", ph_index[ph]))
                    continue
                # An input that the graph updates: its value before the
                # update, copied by the function (a copy made after the
                # call would hold the update).
                v = b.copy(v)
            if v.name in seen:
                # The same SSA value twice: returned once, and a clone in
                # Python for the second output (distinct tensors, as eager).
                plan.append(("clone", seen[v.name]))
                continue
            seen[v.name] = len(results)
            plan.append(("result", len(results)))
            results.append(v)
        else:
            plan.append(("const", o))
    # Updated inputs: a result each, which the executable writes into the
    # input's buffer (pb.in_place: the input's argument position).
    arg_position = {i: k for k, (i, _) in enumerate(args)}
    in_place = {}
    update_pairs = []
    for dst, value in updates:
        k = arg_position.get(ph_index[dst])
        if k is None or value.name in arg_names or _is_empty(value):
            raise Unsupported(f"the update of input {dst.name} in place is an input")
        if value.name in seen:
            # Also an output of the graph: that result, which is the
            # input's buffer after the call.
            r = seen[value.name]
            if r in in_place:
                raise Unsupported(f"the update of input {dst.name} in place "
                                  "updates another input too")
        else:
            r = seen[value.name] = len(results)
            results.append(value)
        in_place[r] = k
        update_pairs.append((ph_index[dst], r))
    # A graph output that is also an input's update is a copy of it, not
    # the input itself (eager returns a tensor of its own).
    plan = [("clone", e[1]) if e[0] == "result" and e[1] in in_place else e
            for e in plan]
    # Tensors with extents of run-time size say which size argument holds
    # each (pb.dim_args: positions of the index arguments, after the
    # tensors; -1 for static extents).
    position = {sym: len(args) + k for k, sym in enumerate(symbols)}

    def typed(v: Value, what: str, update_of: int | None = None) -> str:
        dims = []
        for d in v.shape:
            if not isinstance(d, SymDim):
                dims.append(-1)
            elif d.expr in position:
                dims.append(position[d.expr])
            else:
                raise Unsupported(f"{what} has the extent {d.expr}, which is "
                                  "no size of the inputs")
        attrs = []
        if any(d != -1 for d in dims):
            attrs.append(f"pb.dim_args = array<i64: {', '.join(map(str, dims))}>")
        if update_of is not None:
            attrs.append(f"pb.in_place = {update_of} : i64")
        return f"{v.type} {{{', '.join(attrs)}}}" if attrs else v.type

    arg_text = ", ".join([f"{v.name}: {typed(v, 'an input')}" for _, v in args] +
                         [f"%s{k}: index" for k in range(len(symbols))])
    res_types = ", ".join(v.type for v in results)
    res_decl = ", ".join(typed(v, "an output", in_place.get(k))
                         for k, v in enumerate(results))
    lines = [f"func.func @{func_name}({arg_text}) -> ({res_decl}) {{"]
    lines += b.prologue
    lines += b.lines
    if results:
        lines.append(f"  return {', '.join(v.name for v in results)} : {res_types}")
    else:
        lines.append("  return")
    lines.append("}")
    return EmittedGraph(text="\n".join(lines) + "\n", arg_indices=[i for i, _ in args],
                        plan=plan, single=single,
                        out_container=type(outs) if not single else tuple,
                        num_results=len(results), ops=ops, arg_orders=orders,
                        sizes=size_sources, updates=update_pairs)


def _size_symbols(placeholders) -> tuple[list, list]:
    """The size symbols of a graph with symbolic shapes, in the order the
    placeholders name them (a SymInt input's, a tensor's extents), and for
    each the index of a placeholder that is that size (None if none is).
    A tensor extent that is an expression of sizes (2 * s0) rather than a
    size has no symbolic form yet."""
    symbols: list = []
    sources: dict = {}
    for i, p in enumerate(placeholders):
        val = _meta(p)
        if _is_size(val):
            d = to_dim(val)
            if isinstance(d, SymDim):
                if not d.expr.is_Symbol:
                    raise Unsupported(f"input {p.name} is the size expression {d.expr}")
                if d.expr not in sources:
                    symbols.append(d.expr)
                    sources[d.expr] = i
            continue
        if isinstance(val, torch.Tensor) and p.users:
            for d in _shape(val):
                if not isinstance(d, SymDim):
                    continue
                if not d.expr.is_Symbol:
                    raise Unsupported(f"input {p.name} has the extent {d.expr}; "
                                      "inputs' extents must be sizes, not expressions")
                if d.expr not in sources:
                    symbols.append(d.expr)
                    sources[d.expr] = None
    return symbols, [(f"s{k}", sources[sym]) for k, sym in enumerate(symbols)]


def _memory_order(val: torch.Tensor) -> list[int] | None:
    """The order of `val`'s dimensions in memory, outermost first, when it
    is dense but not in its logical order (channels-last activations and
    filters); None when it is contiguous, or strided otherwise (such an
    input is copied to a contiguous one when the graph runs)."""
    if val.dim() < 2 or val.is_contiguous():
        return None
    strides = val.stride()
    if not all(isinstance(s, int) for s in strides):
        return None
    order = sorted(range(val.dim()), key=lambda d: (-strides[d], d))
    if order == list(range(val.dim())) or not val.permute(order).is_contiguous():
        return None
    return order
