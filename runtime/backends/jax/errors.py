"""``Unlowerable``: a graph (or one op of it) that the JAX backend cannot compile.

A kernel or rule raises ``unlowerable(reason)``; the lowering (``lowering.py``)
names the op, its type and the user's ``file:line`` that created it.  The
function then runs on the numpy backend, after one ``AutoGraphWarning``
carrying that message (``tracing/concrete.py``, ``compiler.py``).
"""

from __future__ import annotations

from autograph.runtime.errors import AutoGraphError


class Unlowerable(AutoGraphError):
    """The JAX backend cannot lower an op of the graph; ``op`` is it (None until named)."""

    def __init__(self, reason: str, op=None):
        self.reason = reason
        self.op = op
        super().__init__(describe(op, reason) if op is not None else reason)


def describe(op, reason: str) -> str:
    return (f"{op.type} op '{op.name}' created at {op.location or '<unknown location>'} cannot be lowered "
            f"to JAX: {reason}")


def unlowerable(reason: str) -> Unlowerable:
    return Unlowerable(reason)


def at_op(error: Unlowerable, op) -> Unlowerable:
    """``error`` naming ``op`` (the innermost op it came from, if it names one already)."""
    if error.op is not None:
        return error
    return Unlowerable(error.reason, op)
