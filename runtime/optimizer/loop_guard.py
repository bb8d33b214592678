"""Hoisting under the loop's guard: invariant ops that may fail or warn run before a
``While`` only when the loop runs at least once.

Before / after (``%x``, ``%y`` invariant int32, ``Pow`` of integers raises for ``%y < 0``)::

    While(%i0, %s0, %n, %x, %y) body: %p = Pow(%x, %y) ; %t = Add(%s, %p) ; ...
    %go = Less(%i0, %n)                        the condition on the initial values, copied
    %p = If(%go, %x, %y) then: Pow(%x, %y)  else: Const 0
    While(%i0, %s0, %n, %x, %y, %p) body: %t = Add(%s, %p') ; ...

If the loop runs, its first iteration computes what the hoisted ops compute, and
nothing before them could be observed: ``applies`` wants a body without side
effects and a condition that can be evaluated once more without failing, warning or
side effects, and ``licm`` guards an op only if no op staying in the body before it
may fail or warn.  If the loop does not run, the zeros of the other branch are never
read.  So ``for i in range(n): s += x ** y`` with ``n = 0, y = -1`` is 0, as in
Python, with the power hoisted.
"""

from __future__ import annotations

import numpy as np

from autograph.runtime.core import shapes
from autograph.runtime.core.graph import Graph
from autograph.runtime.optimizer import graph_util, hazards, inline


def applies(op, cond, body) -> bool:
    """Whether ops of ``While`` ``op`` may be hoisted under its guard."""
    if graph_util.graph_is_stateful(cond) or graph_util.graph_is_stateful(body) or len(cond.outputs) != 1:
        return False
    limit = op.attrs.get("maximum_iterations")
    if limit is not None and int(limit) <= 0:  # the loop may not run although its condition holds
        return False
    return all(
        inner.type in ("Placeholder", "Const") or (not graph_util.is_functional(inner) and hazards.never_fails(inner))
        for inner in cond.operations
    )


def may_guard(op) -> bool:
    """A stateless op whose outputs have fully known shapes (for the zeros), not calling a
    function other ops call too (moving it re-parents its sub-graphs)."""
    if graph_util.is_stateful(op) or any(graph_util.is_shared(sub) for sub in graph_util.subgraphs(op)):
        return False
    return all(t.shape is not None and shapes.is_fully_defined(t.shape) for t in op.outputs)


def build(rw, op, cond, guarded, results, invariant) -> list:
    """Emits the guard before ``While`` ``op`` in ``rw.graph`` with the ``guarded`` body ops
    moved into its taken branch; returns the ``If`` outputs standing for ``results``.

    ``invariant`` maps a body tensor to the outer tensor it equals (None: a body ``Const``).
    """
    outer = rw.graph
    pred = _condition(rw, cond, op.inputs)
    taken, skipped = Graph("licm_guard", outer=outer), Graph("licm_skip", outer=outer)
    outer.add_function(taken, "licm_guard")
    outer.add_function(skipped, "licm_skip")
    args, captured = [], {}  # outer tensors passed to both branches; id -> capture in ``taken``
    inside = {id(t) for inner in guarded for t in inner.outputs}
    for inner in guarded:
        inputs = []
        for t in inner.inputs:
            if id(t) not in inside and invariant[id(t)] is None:
                const = graph_util.const_op(taken, t.op.attrs["value"], t.weak, location=t.op.location)
                taken.operations.append(const)
                t = const.outputs[0]
            elif id(t) not in inside:
                outer_t = invariant[id(t)]
                if id(outer_t) not in captured:
                    captured[id(outer_t)] = graph_util.add_capture(taken, outer_t)
                    graph_util.add_capture(skipped, outer_t)
                    args.append(outer_t)
                t = captured[id(outer_t)]
            inputs.append(t)
        _reparent(inner, taken, inputs)
    taken.outputs = list(results)
    zeros = [graph_util.const_op(skipped, np.zeros(t.shape, t.dtype), t.weak) for t in results]
    skipped.operations += zeros
    skipped.outputs = [z.outputs[0] for z in zeros]
    attrs = {"then_branch": taken.name, "else_branch": skipped.name}
    guard = graph_util.new_op(outer, "If", [pred, *args], attrs, [(t.dtype, t.shape, t.weak) for t in results],
                              location=op.location, name="licm_guard")
    rw.emit(guard)
    return guard.outputs


def _reparent(op, graph, inputs) -> None:
    """Moves ``op`` to the end of ``graph`` reading ``inputs``; an ``If``'s branches follow it."""
    mapping = {id(old): new for old, new in zip(op.inputs, inputs)}
    op.graph = graph
    op.name = graph.unique_name(graph_util.base_name(op.name))
    op.inputs = inputs
    graph.operations.append(op)
    for sub in graph_util.subgraphs(op):
        sub.outer = graph
        sub.set_captures((mapping.get(id(o), o), i) for o, i in sub.captures)


def _condition(rw, cond, args):
    """Copies ``cond``'s ops (total, no sub-graphs: ``applies``) before the loop, applied to
    the loop's initial values ``args``; returns the copy of its output."""
    local = {id(p): a for p, a in zip(cond.all_inputs, args)}
    inline.copy_in(rw, [inner for inner in cond.operations if inner.type != "Placeholder"], local)
    return local[id(cond.outputs[0])]
