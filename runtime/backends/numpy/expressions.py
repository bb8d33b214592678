"""Which ops the code generator writes as Python operators, and which of those inline.

``template(op, ruled)`` is the operator an op is written with (from the one
table of spellings, ``runtime/core/spellings.py``: ``Add`` -> ``{0} + {1}``);
``inlinable(graph, needed, ruled)`` picks the scalar operator results used
once, which ``codegen.py`` writes as an expression at their use instead of
a variable, nested at most ``MAX_INLINE_DEPTH`` deep (an error in one is
reported naming the op that uses it, so ops whose errors have a type of their
own, ``Pow``'s ``ValueError``, are not inlined).
"""

from __future__ import annotations

from autograph.runtime.core import spellings
from autograph.runtime.exec import interpreter

# Operators written inline nest at most this deep (Python's parser refuses ~200
# nested parentheses); a longer chain continues from a temporary variable.
MAX_INLINE_DEPTH = 24


def template(op, ruled) -> str | None:
    """The Python operator template ``op`` is written with (``"{0} + {1}"``), or None
    (``ruled``: the op types the code generator writes by rules of its own)."""
    if op.type in ruled:
        return None
    spelling = spellings.BY_OP_TYPE.get(op.type)
    if spelling is None or (spelling.kinds and not all(t.dtype.kind in spelling.kinds for t in op.inputs)):
        return None
    return spelling.template


def _scalar_operator(op, ruled) -> bool:
    return (
        template(op, ruled) is not None and len(op.outputs) == 1 and op.outputs[0].shape == ()
        and all([t.shape == () for t in op.inputs])
    )


def _inlines(op, ruled) -> bool:
    """A scalar operator whose errors are reported as any op's (``Pow``'s are the user's
    ``ValueError``, ``interpreter.USER_ERRORS``: written on a line of its own, it is
    reported as the interpreter reports it)."""
    return _scalar_operator(op, ruled) and op.type not in interpreter.USER_ERRORS


def inlinable(graph, needed, ruled) -> set[int]:
    """ids of scalar operator results that are used once, by another scalar operator, as an
    ``If`` predicate or as an output of ``graph``: written as an expression at that use
    (``if var0 % const == const_1:``) instead of a variable, which in a scalar loop saves
    a quarter of the time per iteration.  (An error in an inlined operator is reported
    naming the op that uses it: scalars rarely fail.)"""
    uses: dict[int, list] = {}
    for op in graph.operations:
        if id(op) in needed:
            for index, t in enumerate(op.inputs):
                uses.setdefault(id(t), []).append((op, index))
    for t in graph.outputs:
        uses.setdefault(id(t), []).append((None, 0))
    found = set()
    nesting: dict[int, int] = {}  # id of an inlined tensor -> depth of its expression
    for op in graph.operations:
        if id(op) not in needed or not _inlines(op, ruled):
            continue
        users = uses.get(id(op.outputs[0]), [])
        if len(users) != 1:
            continue
        user, index = users[0]
        if user is None or (user.type == "If" and index == 0) or _scalar_operator(user, ruled):
            level = 1 + max([nesting.get(id(t), 0) for t in op.inputs], default=0)
            if level <= MAX_INLINE_DEPTH:
                found.add(id(op.outputs[0]))
                nesting[id(op.outputs[0])] = level
    return found
