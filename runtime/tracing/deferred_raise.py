"""An exception the traced code raises after ops that may fail or act: raised when the graph runs.

Python runs a function's statements in order: an out-of-range index read,
an ``rt.print`` or a variable update happens before a ``raise`` that comes
after it.  While tracing, those earlier statements only record ops, so an
exception the Python code raises during the trace (a ``raise`` under a
Python condition, Python numbers divided by zero, a shape error found by an
op's inference) would come first.  When the function's graph so far holds
an op that can raise or has an effect, the trace therefore ends with an op
that raises the same exception when the graph runs, after those ops (each
becomes a control input): Python's first error, and Python's effects before
it.  Otherwise the exception propagates at once, while tracing.

Refusals (``ag.AutoGraphError``) are never deferred: they are about the
program, not its values.  The exception raised at run time is a fresh one
of the same type, arguments and attributes (``errors.rebuilt``) with the
traceback of the trace, so it points at the user's line.
"""

from __future__ import annotations

from autograph.runtime.errors import AutoGraphError, rebuilt
from autograph.runtime.ops import effects
from autograph.runtime.optimizer import hazards
from autograph.runtime.optimizer.graph_util import is_stateful

_NEVER_FAIL = frozenset({"Placeholder", "Const"})


def _fails_or_acts(op) -> bool:
    return op.type not in _NEVER_FAIL and (is_stateful(op) or not hazards.never_raises(op))


def defer(error: BaseException, graph) -> bool:
    """Records in ``graph`` an op raising ``error`` when the graph runs, after every op of ``graph``
    that may raise or act; False (nothing recorded) if ``error`` is a refusal or there is none."""
    if isinstance(error, AutoGraphError) or not isinstance(error, Exception):
        return False
    if not any(_fails_or_acts(op) for op in graph.operations):
        return False
    args, state, traceback = error.args, dict(getattr(error, "__dict__", {})), error.__traceback__

    def raise_when_run():
        raise rebuilt(error, args, state).with_traceback(traceback)

    effects.py_function(raise_when_run, [], None, name=f"raise_{type(error).__name__}")
    after_earlier_failures(graph.operations[-1])
    return True


def after_earlier_failures(raising) -> None:
    """Makes the op ``raising`` (the last of its graph, raising an exception Python raises there)
    run after every earlier op of its graph that may raise or act: their errors and effects come
    first, as in Python, and an op whose value nothing uses any more is still run for its error."""
    earlier = [op for op in raising.graph.operations[:-1] if _fails_or_acts(op)]
    raising.control_inputs += tuple(op for op in earlier if op not in raising.control_inputs)
