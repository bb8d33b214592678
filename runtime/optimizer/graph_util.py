"""Graph facts and copies the optimizer passes share.

* ``subgraphs(op)``: the library functions an op calls, found through its
  definition's ``function_attrs`` (``If``: ``then_branch``/``else_branch``;
  ``While``: ``cond``/``body``), the one fact every pass consults;
  ``is_functional(op)``: whether it calls any.
* ``is_stateful(op)``: an op with side effects -- registered stateful, pinned
  by control edges, or a functional op whose sub-graphs hold such an op.
  ``If``/``While`` with stateless bodies are stateless (TensorFlow's
  ``StatelessIf``): passes may fold, prune or hoist them.
* ``clone(graph)``: a deep copy with its own function library in which every
  sub-graph is referenced by exactly one op and ``outer`` pointers follow the
  op that calls the sub-graph.  Passes mutate the copy in place, so
  ``optimize`` never changes the graph it was given.
* ``graphs_postorder(root)``: the root and every reachable sub-graph, inner
  graphs first (a pass on a graph then only touches already-processed
  children).
"""

from __future__ import annotations

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
    names = _function_attrs(op.type)
    if not names:
        return []
    library, attrs = op.graph.library, op.attrs
    return [library[attrs[a]] for a in names]


def is_functional(op) -> bool:
    """True for ops that call library functions (``If``, ``While``)."""
    return bool(_function_attrs(op.type))


def graph_is_stateful(graph) -> bool:
    """True if ``graph`` or a graph it calls holds a stateful op."""
    if graph.last_stateful is not None:
        return True
    return any(is_stateful(op) for op in graph.operations)


def is_stateful(op) -> bool:
    """True if ``op`` has side effects and must run, in order, exactly as traced."""
    definition = opdef.REGISTRY.get(op.type)
    if definition is not None and definition.stateful:
        return True
    if op.control_inputs or op is op.graph.last_stateful:
        return True
    if is_functional(op):
        return any(graph_is_stateful(g) for g in subgraphs(op))
    return False


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
        used.update(id(t) for t in op.inputs)
        for sub in subgraphs(op):
            used.update(id(o) for o, _ in sub.captures)
    return used


def remove_placeholder(graph, placeholder) -> None:
    """Removes input or capture ``placeholder`` from ``graph``'s signature and ops."""
    graph.inputs = [t for t in graph.inputs if t is not placeholder]
    graph.captures = [(o, i) for o, i in graph.captures if i is not placeholder]
    graph._capture_map = {id(o): i for o, i in graph.captures}
    graph.operations = [op for op in graph.operations if op is not placeholder.op]


def graphs_postorder(root) -> list[Graph]:
    """``root`` and all sub-graphs it reaches, each graph after the ones it calls."""
    order: list[Graph] = []

    def visit(g):
        for op in g.operations:
            if _function_attrs(op.type):
                for sub in subgraphs(op):
                    visit(sub)
        order.append(g)

    visit(root)
    return order


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
    """A deep copy of ``graph`` with a fresh library, one sub-graph per reference."""
    root = Graph(graph.name)
    _copy_into(graph, root, {})
    return root


def _copy_into(src, dst, outer_tmap) -> None:
    """Copies ``src`` into the empty graph ``dst``; ``outer_tmap`` maps the
    enclosing graph's tensor ids to their copies (for ``captures``)."""
    tmap: dict[int, Tensor] = {}
    ops: dict[int, Operation] = {}
    copies = dst.operations
    for op in src.operations:
        copy = Operation(
            dst, op.name, op.type, [tmap[id(t)] for t in op.inputs], op.attrs,
            [ops[id(c)] for c in op.control_inputs] if op.control_inputs else (), op.location,
        )
        outputs = copy.outputs = [Tensor(copy, t.value_index, t.dtype, t.shape, t.weak) for t in op.outputs]
        for old, new in zip(op.outputs, outputs):
            tmap[id(old)] = new
        ops[id(op)] = copy
        copies.append(copy)
        for attr in _function_attrs(op.type):
            sub = src.library[op.attrs[attr]]
            sub_copy = Graph(sub.name, outer=dst)  # ``outer`` follows the calling op
            _copy_into(sub, sub_copy, tmap)
            copy.attrs[attr] = dst.add_function(sub_copy, sub.name)
    dst.inputs = [tmap[id(t)] for t in src.inputs]
    dst.outputs = [tmap.get(id(t), t) if isinstance(t, Tensor) else t for t in src.outputs]
    dst.captures = [(outer_tmap.get(id(o), o), tmap[id(i)]) for o, i in src.captures]
    dst.last_stateful = ops.get(id(src.last_stateful)) if src.last_stateful is not None else None
    dst._name_counts = dict(src._name_counts)  # the same op names: the same counters
    dst._capture_map = {id(o): i for o, i in dst.captures}
    for key, value in vars(src).items():
        if not key.startswith("_") and key not in _GRAPH_FIELDS:
            setattr(dst, key, value)


_GRAPH_FIELDS = frozenset(
    {"name", "outer", "operations", "inputs", "outputs", "captures", "library", "last_stateful"}
)
