"""``raise_``: a ``raise`` statement under control flow, staged when a tensor ``if`` decides it.

``raise E`` (``raise E from C``) nested in an ``if``/``while``/``for`` of
converted code becomes ``raise ag__.raise_(E)`` (``raise ag__.raise_(E, C)``).
Outside the branches of a tensor ``if`` it returns the exception (with its
cause set), which the user's line raises, as Python does.  While a
branch of a tensor ``if`` is traced (``branch()``), it instead records an op
that raises the same exception when the graph runs that branch (only then),
and stops tracing the branch (``DeadBranch``): the branch gives no values
(its outputs are those of the other branch), so the code after the raise is
never traced, as it never runs.  The body of a tensor loop is a staging
region too (``run_body``): a raise it reaches on its Python path makes every
iteration raise when one runs (none may).

The exception's arguments and attributes may be tensors: a fresh exception
is made when the graph runs, holding their values (``ValueError("negative:",
n)``, ``self.code = code``), without calling its ``__init__`` again.  A message that
formatted a tensor while tracing (``f"{n}"`` gives ``<Tensor n:0 ...>``)
is a ``TracingError``: pass the tensor as an argument instead.  A staged
raise is a ``py_function`` op: the graph runs it, but a graph def saved from
it cannot be loaded again.

The ``try`` and ``with`` statements around traced code are
``handlers.py``'s; this module keeps the record of the handlers running
(``running_handlers``), which a staged raise consults.  An exception Python raises
while a branch is traced (a missing key, an index past a static length) is
staged the same way (``branch`` exiting with it), unless a handler around
the branch would catch it.
"""

from __future__ import annotations

import sys
import threading

import numpy as np

from autograph.runtime.core.graph import current_graph
from autograph.runtime.core.location import construct_at
from autograph.runtime.core.tensor import Tensor
from autograph.runtime.core.undefined import UndefinedReturnValue
from autograph.runtime.errors import AutoGraphError, ExecutionError, TracingError, rebuilt
from autograph.runtime.ops import effects
from autograph.runtime.tracing import deferred_raise

_NO_CAUSE = object()
ESCAPED = "__autograph_escaped_tracing__"  # on an exception that left a staged region
_staging = threading.local()


class DeadBranch(BaseException):
    """Internal: the branch being traced reached a staged ``raise``; it gives no values."""


def running_handlers() -> list:
    """The ``try`` bodies of converted code running now, innermost last: their handlers' types."""
    tries = getattr(_staging, "tries", None)
    if tries is None:
        tries = _staging.tries = []
    return tries


class branch:
    """``with branch():`` while tracing one branch of a tensor ``if``: ``raise_`` stages instead of
    raising.  An exception leaving it is marked: a handler of converted code outside refuses it
    (``caught``).  (A class, not a generator: entered for every traced branch.)"""

    __slots__ = ("previous",)

    def __enter__(self):
        self.previous = getattr(_staging, "graph", None), getattr(_staging, "outer_tries", 0)
        _staging.graph = current_graph()  # the branch's graph
        _staging.outer_tries = len(running_handlers())

    def __exit__(self, kind, error, tb):
        try:
            if error is not None and _stages(error):
                raise DeadBranch() from None  # staged: raised when the graph runs this branch
        finally:
            _staging.graph, _staging.outer_tries = self.previous
        if error is not None and not isinstance(error, DeadBranch):
            setattr(error, ESCAPED, True)
        return False


def _stages(error) -> bool:
    """Stages ``error``, an exception Python raised while the branch was traced (``d['b']``,
    ``1 // 0``, an index out of a static shape), as the branch's raise, if Python would raise it only
    on this path: not autograph's refusal, not one a ``try`` around the branch catches (its handler
    refuses it, ``caught``), not one whose message formats a tensor."""
    if not isinstance(error, Exception) or isinstance(error, (RecursionError, MemoryError)) or is_refusal(error):
        return False
    if getattr(error, ESCAPED, False) or any(_catches(t, error) for t in running_handlers()[:_staging.outer_tries]):
        return False
    if any(isinstance(a, str) and "<Tensor " in a for a in error.args):
        return False
    _stage(error, error.__cause__ if error.__suppress_context__ else _NO_CAUSE)
    return True


def is_refusal(error) -> bool:
    """``error`` is autograph refusing the code (a ``TracingError``, ...), not an error Python raises too
    (an ``ExecutionError`` of an op run on values)."""
    return isinstance(error, AutoGraphError) and not isinstance(error, ExecutionError)


def caught():
    """The first statement of a handler of converted code: an exception that left the tracing of a
    tensor branch or loop body would be caught only while tracing, never when the graph runs."""
    error = sys.exc_info()[1]
    if error is None:
        return
    if is_refusal(error) and (getattr(error, ESCAPED, False) or current_graph() is not None):
        raise error  # autograph's own refusal while tracing: not the user's to catch (Python raises nothing)
    if not getattr(error, ESCAPED, False):
        return
    where = construct_at("the `except` clause")
    refusal = TracingError(
        f"{where} catches {type(error).__name__}({short_text(error)}) raised while tracing a tensor if or loop "
        "inside its try: it would be caught once, while tracing, for every input, not when the graph "
        "runs. Move the try/except inside the branch or loop body, or test the condition before the try."
    )
    setattr(refusal, ESCAPED, True)
    raise refusal from None


def _catches(entry, exc) -> bool:
    types = entry[0]
    if types is None:
        return True
    try:
        return isinstance(exc, types())
    except Exception:  # a handler type we cannot evaluate now: assume it catches
        return True


# How a staged raise's refusal names the statement around the tensor condition.
_ENCLOSING = {
    "try": "a try whose handler catches it: a raise staged in the graph cannot reach a handler, which runs "
           "only while tracing. Move the try/except inside the tensor if or loop, or test the condition "
           "before the try.",
    "with": "a with block, whose context manager may suppress it only while tracing, not when the graph "
            "runs. Move the with inside the tensor if or loop, or the raise out of the with block.",
}


def short_text(error) -> str:
    text = str(error)
    return repr(text[:80] + "...") if len(text) > 80 else repr(text)


def run_body(step, lead):
    """``step(lead)``: one traced tensor loop body, a staging region too.  A raise its Python path
    reaches makes every iteration raise when the graph runs one; the body then ends there, its
    next values those so far (never used: the iteration raised)."""
    try:
        with branch():
            return step(lead)
    except DeadBranch:
        return lead


def in_branch() -> bool:
    """True if the graph being built is a tensor ``if``'s branch or a tensor loop's body itself --
    not a graph inside one (whose staged raise would not end it), nor another function's trace."""
    graph = getattr(_staging, "graph", None)
    return graph is not None and graph is current_graph()


def no_values(count):
    """The outputs of a dead branch: unset values, which take the other branch's (as zeros)."""
    return (UndefinedReturnValue(),) * count


def both_branches_raise(values):
    """Both branches of a tensor ``if`` raise: the enclosing branch is dead too; elsewhere (the
    function's graph, a loop body) the ``If`` raises whenever the graph reaches it, and the code
    after it, which then never runs, is traced on ``values`` (the state before the ``if``)."""
    if in_branch():
        raise DeadBranch()
    return values


def raise_(exc, cause=_NO_CAUSE):
    """The exception that ``raise exc`` (``raise exc from cause``) raises: generated code raises
    what this returns.  Inside a traced branch of a tensor ``if`` it is staged instead, and this
    ends the branch (``DeadBranch``)."""
    if isinstance(exc, type) and issubclass(exc, BaseException):
        exc = exc()
    if not isinstance(exc, BaseException):
        return exc  # the raise statement gives Python's TypeError
    if cause is not _NO_CAUSE:
        if isinstance(cause, type) and issubclass(cause, BaseException):
            cause = cause()
        if cause is not None and not isinstance(cause, BaseException):
            raise TypeError("exception causes must derive from BaseException")
        exc.__cause__, exc.__suppress_context__ = cause, True
    if not in_branch():
        return exc
    tries, outer = running_handlers(), _staging.outer_tries
    if any(_catches(t, exc) for t in tries[outer:]):
        return exc  # a handler traced with the branch catches it, as Python does
    catching = [t for t in tries[:outer] if _catches(t, exc)]
    if catching:
        raise TracingError(
            f"{construct_at(f'the `raise {type(exc).__name__}(...)`')} is under a tensor condition inside "
            + _ENCLOSING[catching[-1][1]]
        )
    _stage(exc, cause)
    raise DeadBranch()


def _stage(exc, cause):
    where = construct_at(f"the `raise {type(exc).__name__}(...)`")
    args = exc.args
    formatted = [a for a in args if isinstance(a, str) and "<Tensor " in a]
    if formatted:
        raise TracingError(
            f"the message of {where} formats a symbolic tensor while tracing ({formatted[0]!r}), which shows "
            "no value. Pass the tensor itself as an argument of the exception, e.g. "
            "ValueError('n must be >= 0, got', n), or keep it in an attribute if the exception's own "
            "__init__ formats it: its value is filled in when the graph runs."
        )
    state = dict(getattr(exc, "__dict__", {}))
    tensors = [v for v in [*args, *state.values()] if isinstance(v, Tensor)]

    def raise_when_run(*values):
        error = _rebuilt(exc, args, state, dict(zip(map(id, tensors), values)))
        if cause is not _NO_CAUSE:
            error.__cause__, error.__suppress_context__ = cause, True
        raise error

    raise_when_run.__autograph_raises__ = (type(exc),)  # what the op raises (core/opdef.py: PyFunc)
    effects.py_function(raise_when_run, tensors, None, name=f"raise_{type(exc).__name__}")
    deferred_raise.after_earlier_failures(current_graph().operations[-1])


def _rebuilt(exc, args, state, values):
    """A fresh exception like ``exc`` (a new traceback and notes at every run), its tensor arguments
    and attributes replaced by their ``values`` (by id).  Its ``__init__`` is not called again: it
    ran while tracing, and its arguments need not be ``exc.args`` (``MyError(code, msg=...)``)."""
    def value(v):
        return as_held(values[id(v)]) if isinstance(v, Tensor) else v

    return rebuilt(exc, [value(a) for a in args], {k: value(v) for k, v in state.items()})


def as_held(value):
    """A value of the graph as Python code would hold it (a 0-d array as a numpy scalar)."""
    return value[()] if isinstance(value, np.ndarray) and value.ndim == 0 else value
