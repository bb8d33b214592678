"""Graph facts and copies the optimizer passes share.

* ``subgraphs(op)``: the library functions an op calls, found through its
  definition's ``function_attrs`` (``If``: ``then_branch``/``else_branch``;
  ``While``: ``cond``/``body``), the one fact every pass consults;
  ``is_functional(op)``: whether it calls any.
* ``is_stateful(op)``: an op with side effects -- registered stateful, pinned
  by control edges, or a functional op whose sub-graphs hold such an op.
  ``If``/``While`` with stateless bodies are stateless (TensorFlow's
  ``StatelessIf``): passes may fold, prune or hoist them.
* ``clone(graph)``: a deep copy with its own function library; ``outer``
  pointers follow the op that calls the sub-graph.  Passes mutate the copy
  in place, so ``optimize`` never changes the graph it was given.  A library
  function that several ops call (a graph file may name one function in both
  branches of an ``If``, a dozen levels down) is copied once and stays
  shared, so a copy is as large as the graph, never as the number of paths
  through it; ``is_shared(g)`` says so, and passes leave alone what would
  change such a function for one of its callers (inlining it, pushing
  constants into it, hoisting out of it, dropping its arguments).
* ``graphs_postorder(root)``: the root and every reachable sub-graph, once
  each, inner graphs first (a pass on a graph then only touches
  already-processed children).
* ``stateful_cache()``: while ``optimize`` runs, a graph's statefulness is
  computed once (it cannot change: no pass moves a stateful op into a graph
  that had none), so asking it of every op costs the size of the graph.
"""

from __future__ import annotations

import contextlib
import contextvars

from autograph.runtime.core import opdef
from autograph.runtime.core.graph import Graph, Operation, base_name  # noqa: F401 - base_name: for the passes
from autograph.runtime.core.tensor import Tensor

# op type -> its definition's ``function_attrs`` (every pass asks for every op: looked up once)
_FUNCTION_ATTRS: dict[str, tuple[str, ...]] = {}


def _function_attrs(op_type) -> tuple[str, ...]:
    names = _FUNCTION_ATTRS.get(op_type)
    if names is None:
        names = _FUNCTION_ATTRS[op_type] = opdef.function_attr_names(op_type)
    return names


def subgraphs(op) -> list[Graph]:
    """The library graphs ``op`` calls, in the order of its definition's ``function_attrs``."""
    names = _FUNCTION_ATTRS.get(op.type)  # (inlined: every pass asks it of every op)
    if names is None:
        names = _function_attrs(op.type)
    if not names:
        return []
    library, attrs = op.graph.library, op.attrs
    return [library[attrs[a]] for a in names]


def is_functional(op) -> bool:
    """True for ops that call library functions (``If``, ``While``)."""
    names = _FUNCTION_ATTRS.get(op.type)
    return bool(names if names is not None else _function_attrs(op.type))


# id(graph) -> (graph, stateful?) while ``stateful_cache`` is active (None: not cached)
_STATEFUL = contextvars.ContextVar("autograph_optimizer_stateful", default=None)


@contextlib.contextmanager
def stateful_cache():
    """Within it, ``graph_is_stateful`` computes each graph's answer once (``optimize``)."""
    token = _STATEFUL.set({})
    try:
        yield
    finally:
        _STATEFUL.reset(token)


def graph_is_stateful(graph) -> bool:
    """True if ``graph`` or a graph it calls holds a stateful op."""
    if graph.last_stateful is not None:
        return True
    cache = _STATEFUL.get()
    if cache is None:
        return _holds_stateful(graph, set())
    found = cache.get(id(graph))
    if found is None:
        found = cache[id(graph)] = (graph, _holds_stateful(graph, set()))  # (keeps the id alive)
    return found[1]


def _holds_stateful(graph, seen) -> bool:
    """Whether an op of ``graph`` or of a graph it calls is stateful; each graph visited once."""
    seen.add(id(graph))
    for op in graph.operations:
        if _stateful_here(op):
            return True
        for sub in subgraphs(op):
            if id(sub) not in seen and (sub.last_stateful is not None or _holds_stateful(sub, seen)):
                return True
    return False


def _stateful_here(op) -> bool:
    stateful = _STATEFUL_TYPES.get(op.type)
    if stateful is None:
        definition = opdef.REGISTRY.get(op.type)
        stateful = _STATEFUL_TYPES[op.type] = definition is not None and definition.stateful
    return bool(stateful or op.control_inputs or op is op.graph.last_stateful)


_STATEFUL_TYPES: dict[str, bool] = {}  # op type -> its definition's ``stateful`` (looked up once)


def is_stateful(op) -> bool:
    """True if ``op`` has side effects and must run, in order, exactly as traced."""
    if _stateful_here(op):
        return True
    for g in subgraphs(op):  # (none unless functional)
        if graph_is_stateful(g):
            return True
    return False


def is_shared(graph) -> bool:
    """True if several ops call ``graph`` (only a ``clone`` of a graph that shares a function)."""
    return graph.__dict__.get("_optimizer_shared", False)


def const_op(graph, value, weak=False, *, location=None):
    """A new (unplaced) ``Const`` op holding numpy ``value``; ``weak`` as a Python number's."""
    attrs = {"value": value, "dtype": value.dtype}
    if weak:
        attrs["weak"] = True
    return new_op(graph, "Const", [], attrs, [(value.dtype, tuple(value.shape), weak)], location=location, name="const")


def const_value(tensor):
    """The numpy value of ``tensor`` if a ``Const`` op produces it, else None."""
    op = tensor.op
    if op.type != "Const":
        return None
    return op.attrs["value"]


def new_op(graph, type, inputs, attrs, output_specs, *, location=None, name=None, control_inputs=()):
    """A new Operation of ``graph`` that is NOT appended (the caller places it).

    ``output_specs``: ``(dtype, shape)`` or ``(dtype, shape, weak)`` per output.
    """
    op = Operation(graph, graph.unique_name(name or type), type, inputs, attrs, control_inputs, location)
    op.outputs = [Tensor(op, i, *spec) for i, spec in enumerate(output_specs)]
    return op


def used_tensors(graph) -> set[int]:
    """ids of the tensors ``graph`` reads: op inputs, outputs, and nested captures."""
    used = {id(t) for t in graph.outputs}
    for op in graph.operations:
        used.update(map(id, op.inputs))
        for sub in subgraphs(op):
            used.update([id(o) for o, _ in sub.captures])
    return used


def remove_placeholder(graph, placeholder) -> None:
    """Removes input or capture ``placeholder`` from ``graph``'s signature and ops."""
    graph.inputs = [t for t in graph.inputs if t is not placeholder]
    graph.set_captures((o, i) for o, i in graph.captures if i is not placeholder)
    graph.operations = [op for op in graph.operations if op is not placeholder.op]


def add_capture(graph, outer_tensor):
    """A new capture placeholder of ``graph`` standing for ``outer_tensor``."""
    placeholder = new_op(
        graph, "Placeholder", [], {"dtype": outer_tensor.dtype, "shape": outer_tensor.shape},
        [(outer_tensor.dtype, outer_tensor.shape, outer_tensor.weak)], name="capture",
    )
    graph.operations.insert(0, placeholder)
    inner = placeholder.outputs[0]
    graph.add_capture(outer_tensor, inner)
    return inner


def graphs_postorder(root) -> list[Graph]:
    """``root`` and all sub-graphs it reaches, once each, each graph after the ones it calls
    (iterative: a file may nest sub-graphs deeper than Python recursion goes)."""
    order: list[Graph] = []
    seen = {id(root)}
    stack = [(root, _callees(root))]
    while stack:
        graph, callees = stack[-1]
        for sub in callees:
            if id(sub) not in seen:
                seen.add(id(sub))
                stack.append((sub, _callees(sub)))
                break
        else:
            order.append(graph)
            stack.pop()
    return order


def _callees(graph):
    return [sub for op in graph.operations for sub in subgraphs(op)]


def count_ops(root) -> int:
    """Operations of ``root`` and all reachable sub-graphs, placeholders excluded."""
    return sum(
        1 for g in graphs_postorder(root) for op in g.operations if op.type != "Placeholder"
    )


def collect_library(root, order=None) -> None:
    """Drops library entries that no op of ``root`` (transitively) calls any more.

    ``order``: ``graphs_postorder(root)`` if the caller has it.
    """
    live = {g.name for g in (graphs_postorder(root) if order is None else order) if g is not root}
    for name in [n for n in root.library if n not in live]:
        del root.library[name]


# -- cloning --------------------------------------------------------------


def clone(graph) -> Graph:
    """A deep copy of ``graph`` with a fresh library; a function several ops call is copied
    once, stays shared and is marked so (``is_shared``)."""
    root = Graph(graph.name)
    _copy_into(graph, root, {}, {})
    return root


def _copy_into(src, dst, outer_tmap, copied) -> None:
    """Copies ``src`` into the empty graph ``dst``; ``outer_tmap`` maps the
    enclosing graph's tensor ids to their copies (for ``captures``); ``copied``
    maps the ids of the library graphs copied so far to their copies."""
    tmap: dict[int, Tensor] = {}
    ops: dict[int, Operation] = {}
    copies = dst.operations
    make_op, make_tensor = Operation.__new__, Tensor.__new__  # the fields set below: every one of each
    for op in src.operations:
        copy = make_op(Operation)
        copy.graph, copy.name, copy.type, copy.location = dst, op.name, op.type, op.location
        copy.inputs = [tmap[id(t)] for t in op.inputs]
        copy.attrs = dict(op.attrs)
        copy.control_inputs = tuple(ops[id(c)] for c in op.control_inputs) if op.control_inputs else ()
        outputs = copy.outputs = []
        for old in op.outputs:
            new = make_tensor(Tensor)
            new.op, new.value_index, new.dtype, new.shape, new.weak = copy, old.value_index, old.dtype, old.shape, old.weak
            outputs.append(new)
            tmap[id(old)] = new
        ops[id(op)] = copy
        copies.append(copy)
        names = _FUNCTION_ATTRS.get(op.type)
        if names is None:
            names = _function_attrs(op.type)
        for attr in names:
            sub = src.library[op.attrs[attr]]
            sub_copy = copied.get(id(sub))
            if sub_copy is not None:  # called from another place too: shared, as in ``src``
                sub_copy._optimizer_shared = True
            else:
                sub_copy = copied[id(sub)] = Graph(sub.name, outer=dst)  # ``outer`` follows the first caller
                _copy_into(sub, sub_copy, tmap, copied)
                dst.add_function(sub_copy, sub.name)
            copy.attrs[attr] = sub_copy.name
    dst.inputs = [tmap[id(t)] for t in src.inputs]
    dst.outputs = [tmap.get(id(t), t) if isinstance(t, Tensor) else t for t in src.outputs]
    dst.set_captures([(outer_tmap.get(id(o), o), tmap[id(i)]) for o, i in src.captures])
    dst.last_stateful = ops.get(id(src.last_stateful)) if src.last_stateful is not None else None
    dst._name_counts = dict(src._name_counts)  # the same op names: the same counters
    for key, value in vars(src).items():
        if not key.startswith("_") and key not in _GRAPH_FIELDS:
            setattr(dst, key, value)


_GRAPH_FIELDS = frozenset(
    {"name", "outer", "operations", "inputs", "outputs", "captures", "library", "last_stateful"}
)
