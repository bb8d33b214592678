"""The dtype of a loop variable that starts as a Python number and stays one (NEP 50 for loops).

``settle`` states the rule; ``watching`` collects its evidence while the
condition and body are traced (the dtypes ops give the variable's
placeholders when they combine them with strongly typed operands), and
``guess`` applies the rule to the condition alone, so that most counters
are traced in their final dtype from the body's first trace.  Both answer
True when a dtype changed (``tracing/retrace.py``: trace again).
"""

from __future__ import annotations


import numpy as np

from autograph.runtime.core import dtypes
from autograph.runtime.ops import common

__all__ = ["watching", "settle", "guess"]


class watching:
    """``with watching(slots, values):`` records, while tracing, into each unsettled weak slot's
    ``evidence`` the dtypes that ops combining its placeholder with strongly typed operands give it
    (``common.promote``).  (A class, not a generator: entered for every loop trace.)"""

    __slots__ = ("watched",)

    def __init__(self, slots, values):
        self.watched = [(s, v) for s, v in zip(slots, values) if s.unsettled]

    def __enter__(self):
        for s, v in self.watched:
            common.watch_promotions(v, s.evidence)

    def __exit__(self, *exc_info):
        for _, v in self.watched:
            common.unwatch_promotions(v)
        return False


def settle(slots, traced) -> bool:
    """Gives each weakly typed loop variable the dtype the loop gives it; True if one changed.

    The rule (NEP 50, applied to loop variables) for a variable that starts
    as a Python number and stays one (``steps = 0; ... steps += 1``): it
    takes, among the dtypes of its own kind (integer, floating),

    1. the dtype of the strongly typed tensors it is combined with (or cast
       to) in the condition or the body, if that is one dtype (``i = 0;
       while i < n`` with an int32 ``n``: int32);
    2. else, if it is combined with none, the dtype of the strongly typed
       tensors the loop condition computes with, if that is one dtype (a
       counter in ``while n > 1`` or ``for _ in range(n)`` with an int32
       ``n``: int32), whatever else the body does;
    3. else numpy's default for its Python type (int64, float64).

    A dtype that cannot hold the variable's initial Python int is never
    taken: ``k = 2**62; for _ in range(n): k += 1`` with an int32 ``n`` counts
    in int64, as Python counts past int32 (``common.int_fits``).

    A dtype whose arithmetic wraps where a Python int's does not (bool,
    unsigned, 8/16-bit: ``dtypes.wraps``) is never taken from a comparison
    (rules 1 and 2): Python compares its int exactly and keeps it an int,
    so ``s = 0; while s < n: s += 100`` with an int8 ``n`` counts past 127.

    The evidence is what the ops recorded (``watching``), not the graph's
    casts, so it is the same whatever dtype the variable was traced with:
    ``guess`` may trace the body with the dtype the condition alone gives,
    and a guess the rule confirms needs no other trace.  ``traced`` is
    ``[(cond graph, its loop placeholders), (body graph, ...)]``.
    """
    changed = False
    loop_vars = [s for s in slots if s.is_loop_var]
    cond_graph = traced[0][0]
    for index, s in enumerate(loop_vars):
        if not s.unsettled:
            continue
        s.settled = True
        target = _target(s, [(graph, inputs[index]) for graph, inputs in traced], cond_graph)
        if target != s.dtype:
            s.dtype = target
            changed = True
    return changed


def guess(slots, cond_graph) -> bool:
    """Gives each unsettled weak loop variable the dtype ``settle``'s rule gives it from the
    condition alone, to trace the body with; True if one changed (trace the condition again)."""
    changed = False
    loop_vars = [s for s in slots if s.is_loop_var]
    for index, s in enumerate(loop_vars):
        if not s.unsettled:
            continue
        target = _target(s, [(cond_graph, cond_graph.inputs[index])], cond_graph)
        if target != s.dtype:
            s.dtype = target
            changed = True
    return changed


def _target(s, traced, cond_graph):
    """The dtype the rule of ``settle`` gives slot ``s`` from its evidence and the
    ``(graph, placeholder)`` pairs it was traced as."""
    if s.unsettled_dtype is None:
        s.unsettled_dtype = s.dtype
    kind = np.dtype(s.unsettled_dtype).kind
    targets = set(s.evidence)
    targets.update(
        op.attrs["dtype"] for graph, placeholder in traced for op in graph.operations
        if op.type == "Cast" and op.inputs[0] is placeholder
    )
    targets = {t for t in targets if np.dtype(t).kind == kind}
    if not targets:
        targets = {
            t.dtype for op in cond_graph.operations for t in (*op.inputs, *op.outputs)
            if not t.weak and np.dtype(t.dtype).kind == kind and not dtypes.wraps(t.dtype)
        }
    if len(targets) == 1 and common.int_fits(s.init, np.dtype(next(iter(targets)))):
        return np.dtype(next(iter(targets)))
    return s.unsettled_dtype
