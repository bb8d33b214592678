"""Moving a sub-graph's operations into the graph that calls it.

Used when an ``If`` has a constant predicate: the taken branch replaces the
``If``.  The branch's placeholders (declared inputs, then captures) stand for
the arguments the ``If`` passed; its other operations move into the calling
graph under fresh names, in order; functional ops among them keep their own
sub-graphs, which now hang off the calling graph.  Stateful operations of the
branch join the caller's chain where the ``If`` was; an op that waited for
the ``If`` (a raise Python makes after it) waits for those and for each of
the branch's ops that may raise.

``copy_in`` copies operations instead (their sub-graph stays as it is, for
its other callers); ``substitute(graph, mapping)`` replaces uses of tensors
in one graph (op inputs, outputs, the captures of the sub-graphs it calls).
"""

from __future__ import annotations

from autograph.runtime.optimizer import graph_util, hazards


def _chain(graph) -> list:
    """The stateful chain of ``graph``, first op first (via control inputs)."""
    chain = []
    op = graph.last_stateful
    members = {id(o) for o in graph.operations}
    while op is not None and id(op) in members:
        chain.append(op)
        op = op.control_inputs[0] if op.control_inputs else None
    chain.reverse()
    return chain


def inline(rw, call_op, sub, args) -> list:
    """Moves ``sub``'s ops before ``call_op`` in ``rw.graph``; returns ``sub``'s outputs
    expressed in the caller, ``args`` standing for ``sub.all_inputs``."""
    outer = rw.graph
    local = {id(p): a for p, a in zip(sub.all_inputs, args)}
    chain = _chain(sub)
    if chain:
        first = chain[0]
        first.control_inputs = call_op.control_inputs + tuple(
            c for c in first.control_inputs if all(c is not o for o in call_op.control_inputs)
        )
    for op in sub.operations:
        if op.type == "Placeholder":
            continue
        op.graph = outer
        op.name = outer.unique_name(graph_util.base_name(op.name))
        op.inputs = [local.get(id(t), t) for t in op.inputs]
        rw.emit(op)
        for inner in graph_util.subgraphs(op):
            inner.outer = outer
            inner.set_captures((local.get(id(o), o), i) for o, i in inner.captures)
    # what waited for the If (a raise after it, staged by deferred_raise) waits for the branch's
    # effects and for each of its ops that may raise, whose error would come first
    fallible = [op for op in sub.operations if op.type != "Placeholder" and not hazards.never_raises(op)
                and all(op is not c for c in chain)]
    end = chain[-1] if chain else call_op.control_inputs[-1] if call_op.control_inputs else None
    rw.replace_control(call_op, ([chain[-1]] if chain else list(call_op.control_inputs)) + fallible, chain_end=end)
    return [local.get(id(t), t) for t in sub.outputs]


def copy_in(rw, ops, local: dict) -> None:
    """Emits a copy of each of ``ops`` (stateless, without sub-graphs) into ``rw.graph``, in order;
    ``local`` maps the id of each tensor they read to the caller's tensor, and gains their outputs."""
    for inner in ops:
        copy = graph_util.new_op(
            rw.graph, inner.type, [local[id(t)] for t in inner.inputs], inner.attrs,
            [(t.dtype, t.shape, t.weak) for t in inner.outputs], location=inner.location,
            name=graph_util.base_name(inner.name),
        )
        rw.emit(copy)
        local.update((id(old), new) for old, new in zip(inner.outputs, copy.outputs))


def substitute(graph, mapping: dict) -> None:
    """Replaces every use of tensor ``id -> tensor`` in ``mapping`` within ``graph``."""
    for op in graph.operations:
        op.inputs = [mapping.get(id(t), t) for t in op.inputs]
        for inner in graph_util.subgraphs(op):
            inner.set_captures((mapping.get(id(o), o), i) for o, i in inner.captures)
    graph.outputs = [mapping.get(id(t), t) for t in graph.outputs]
