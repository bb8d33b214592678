"""Common-subexpression elimination: one op per distinct computation.

Before / after::

    %a = Mul(%x, %y) ; %b = Mul(%x, %y) ; %s = Add(%a, %b)
    %a = Mul(%x, %y) ;                    %s = Add(%a, %a)

Two stateless ops are the same computation when they have the same type,
the same (already deduplicated) inputs and equal attributes; equal
constants merge too.  The key of an op comes from ``KEYS`` by op type, the
default key being (type, input identities, frozen attributes).  Stateful
ops are never merged: each ``rt.print`` or random draw must happen.
Functional ops are keyed by their sub-graph names, so two ``If`` merge only
when they call the same functions (which ``optimize`` never shares).
"""

from __future__ import annotations

import numpy as np

from autograph.runtime.optimizer import graph_util
from autograph.runtime.optimizer.rewrite import rewrite


class _Unhashable(Exception):
    pass


def freeze(value):
    """A hashable, equality-preserving stand-in for an attribute value."""
    if isinstance(value, np.ndarray):
        return ("ndarray", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, np.generic):
        return ("scalar", value.dtype.str, value.tobytes())
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple([freeze(v) for v in value]))
    if isinstance(value, dict):
        return ("dict", tuple(sorted((k, freeze(v)) for k, v in value.items())))
    if isinstance(value, float):
        return ("float", value.hex())  # -0.0 is not 0.0 (nor any NaN another value)
    if isinstance(value, (str, int, float, bool, type(None), np.dtype)):
        return (type(value).__name__, value)
    raise _Unhashable


def _default_key(op):
    attrs = tuple(sorted([(k, freeze(v)) for k, v in op.attrs.items()]))
    return (op.type, tuple([(id(t.op), t.value_index) for t in op.inputs]), attrs)


KEYS = {"Placeholder": None}


def run(graph) -> bool:
    """Merges duplicate computations in ``graph``; True if it changed."""
    seen: dict = {}

    def rule(rw, op):
        key_fn = KEYS.get(op.type, _default_key)
        if key_fn is None or graph_util.is_stateful(op):
            return None
        try:
            key = key_fn(op)
        except _Unhashable:
            return None
        first = seen.get(key)
        if first is None:
            seen[key] = op
            return None
        return list(first.outputs)

    return rewrite(graph, {}, rule)
