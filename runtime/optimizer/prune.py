"""Pruning: removes operations whose results nothing uses.

Before / after (``%y`` is the only output)::

    %a = Exp(%x) ; %b = Sin(%x) ; %y = Neg(%a)
    %a = Exp(%x) ;                %y = Neg(%a)

An op is live if the graph returns one of its outputs, if it is stateful
(``rt.print``, variable updates, random draws, ``If``/``While`` with such
ops inside), if a live op uses one of its outputs or waits for it through a
control input, or if a sub-graph called by a live op captures one of its
outputs.  Placeholders are the graph's signature and always stay.  Walking
backwards from those roots marks everything else dead.

``ROOTS`` is the rule table: op type -> predicate saying the op is live on
its own (default: stateful or a placeholder).  ``ARGUMENTS`` is a second
table, by functional op type, that drops the arguments an op passes to its
sub-graphs when no sub-graph reads them (an ``If`` input neither branch
uses; a loop-invariant ``While`` capture that neither ``cond`` nor ``body``
uses), so the values computing them can be pruned too.
"""

from __future__ import annotations

from autograph.runtime.optimizer import graph_util


def _default_root(op) -> bool:
    return graph_util.is_stateful(op)


ROOTS = {"Placeholder": lambda op: True}


def _unused_arguments(op, first: int, shift: int, graphs) -> bool:
    """Drops ``op.inputs[i]`` (``i >= first``) when placeholder ``i - shift`` of every
    graph of ``graphs`` is unused."""
    used = [graph_util.used_tensors(g) for g in graphs]
    changed = False
    for i in reversed(range(first, len(op.inputs))):
        placeholders = [g.all_inputs[i - shift] for g in graphs]
        if any(id(p) in u for p, u in zip(placeholders, used)):
            continue
        del op.inputs[i]
        for g, p in zip(graphs, placeholders):
            graph_util.remove_placeholder(g, p)
        changed = True
    return changed


def _if_arguments(op) -> bool:
    branches = graph_util.subgraphs(op)
    if any(len(b.all_inputs) != len(op.inputs) - 1 or graph_util.is_shared(b) for b in branches):
        return False  # (a shared function's other callers still pass every argument)
    return _unused_arguments(op, 1, 1, branches)


def _while_arguments(op) -> bool:
    """Only captures (after the loop variables) can go: loop variables are outputs too."""
    cond, body = graph_util.subgraphs(op)
    nvars = len(body.outputs)
    if len(cond.all_inputs) != len(op.inputs) or len(body.all_inputs) != len(op.inputs):
        return False
    if graph_util.is_shared(cond) or graph_util.is_shared(body):
        return False
    if len(cond.inputs) != nvars or len(body.inputs) != nvars:
        return False
    return _unused_arguments(op, nvars, 0, [cond, body])


ARGUMENTS = {"If": _if_arguments, "While": _while_arguments}


DEAD_OPS = "dead ops"
"""What ``run`` returns (a true value) when it only dropped dead ops, no sub-graph argument."""


def run(graph):
    """Drops dead ops of ``graph`` and unused sub-graph arguments; true if it changed
    (``DEAD_OPS`` if it only dropped ops)."""
    changed = False
    for op in graph.operations:
        rule = ARGUMENTS.get(op.type)
        if rule is not None:
            changed |= rule(op)
    if changed:
        _prune_ops(graph)
        return True
    return DEAD_OPS if _prune_ops(graph) else False


def _prune_ops(graph) -> bool:
    live: set[int] = set()
    stack = [t.op for t in graph.outputs if hasattr(t, "op")]
    stack += [op for op in graph.operations if ROOTS.get(op.type, _default_root)(op)]
    while stack:
        op = stack.pop()
        if id(op) in live:
            continue
        live.add(id(op))
        stack.extend([t.op for t in op.inputs])
        stack.extend(op.control_inputs)
        for sub in graph_util.subgraphs(op):
            stack.extend([o.op for o, _ in sub.captures])
    kept = [op for op in graph.operations if id(op) in live]
    if len(kept) == len(graph.operations):
        return False
    graph.operations = kept
    return True
