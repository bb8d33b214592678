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

A ``try`` whose body records, while tracing, an op that may fail only when
the graph runs (``x[i]`` with a tensor ``i``: an ``IndexError`` then) cannot
catch that failure: the graph runs after the ``try`` ran its handlers, once,
while tracing.  When a handler would catch a kind of error such an op may
raise (``core/opdef.py``: ``RUN_TIME_ERRORS``), the trace is a
``TracingError`` naming the ``try``, the op and its line (``python_try``).

A ``with`` block is the same kind of region, its context manager the
handler (``python_with``): what a manager may suppress is known for
``contextlib.suppress`` (its types), for managers known to suppress
nothing (``nullcontext``, ``np.errstate``, files, locks, a class declaring
``__autograph_suppresses__ = ()``), and is anything for the others.  An
exception that leaves the tracing of a tensor branch or loop body inside it
and that the manager suppresses is a ``TracingError``: Python suppresses it
on the inputs that take that path, the trace for every input.
"""

from __future__ import annotations

import contextlib
import io
import sys
import threading
import warnings

import numpy as np

from autograph.runtime.core import opdef
from autograph.runtime.core.graph import current_graph
from autograph.runtime.core.location import construct_at, source_at, user_location
from autograph.runtime.core.tensor import Tensor
from autograph.runtime.core.undefined import UndefinedReturnValue
from autograph.runtime.errors import AutoGraphError, ExecutionError, TracingError, rebuilt
from autograph.runtime.ops import effects
from autograph.runtime.tracing import deferred_raise

_NO_CAUSE = object()
_ESCAPED = "__autograph_escaped_tracing__"  # on an exception that left a staged region
_staging = threading.local()


class DeadBranch(BaseException):
    """Internal: the branch being traced reached a staged ``raise``; it gives no values."""


def _tries() -> list:
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
        _staging.outer_tries = len(_tries())

    def __exit__(self, kind, error, tb):
        try:
            if error is not None and _stages(error):
                raise DeadBranch() from None  # staged: raised when the graph runs this branch
        finally:
            _staging.graph, _staging.outer_tries = self.previous
        if error is not None and not isinstance(error, DeadBranch):
            setattr(error, _ESCAPED, True)
        return False


def _stages(error) -> bool:
    """Stages ``error``, an exception Python raised while the branch was traced (``d['b']``,
    ``1 // 0``, an index out of a static shape), as the branch's raise, if Python would raise it only
    on this path: not autograph's refusal, not one a ``try`` around the branch catches (its handler
    refuses it, ``caught``), not one whose message formats a tensor."""
    if not isinstance(error, Exception) or isinstance(error, (RecursionError, MemoryError)) or _is_refusal(error):
        return False
    if getattr(error, _ESCAPED, False) or any(_catches(t, error) for t in _tries()[:_staging.outer_tries]):
        return False
    if any(isinstance(a, str) and "<Tensor " in a for a in error.args):
        return False
    _stage(error, error.__cause__ if error.__suppress_context__ else _NO_CAUSE)
    return True


class python_try:
    """Around the body of a ``try`` of converted code whose handlers catch ``types()`` (a tuple of
    exception types; ``None``: everything).

    While tracing, the ops the body of a ``try`` records run when the graph runs, outside the
    ``try``: its handlers run only while tracing.  When the body exits, an op it recorded (in the
    graph, or in the bodies of a tensor ``if`` or loop it traced) that may raise at run time an
    exception the handlers would catch (``opdef.run_time_errors``) is a ``TracingError``: Python
    catches it, the graph would not."""

    __slots__ = ("entry", "graph", "start", "where")

    def __init__(self, types, statement="try"):
        self.entry = (types, statement)

    def __enter__(self):
        _tries().append(self.entry)
        graph = self.graph = current_graph()
        if graph is not None:
            self.start = len(graph.operations)
            self.where = user_location()

    def __exit__(self, kind, error, tb):
        _tries().pop()
        if self.graph is not None and not isinstance(error, AutoGraphError):  # tracing; not a refusal already
            self.check()
        return False

    def check(self):
        """The refusal of an op the body recorded that may raise, when the graph runs, what the
        handlers would catch."""
        found = _caught_when_run(self.entry, self.graph.operations[self.start:], self.graph.library)
        if found is not None:
            refusal = TracingError(_run_time_message(self.entry[1], self.where, *found))
            setattr(refusal, _ESCAPED, True)  # a handler's ``caught()`` passes it on
            raise refusal from None


class python_with(python_try):
    """``with ag__.python_with(cm) as v:``: the ``with`` statement's protocol on ``cm``, its
    context manager, and a ``python_try`` around the body catching what ``cm`` may suppress
    (``suppressed_by``).  An exception raised while tracing a tensor branch or loop body inside
    (``branch``) that ``cm`` suppresses is a ``TracingError``; autograph's own refusals are never
    suppressed."""

    __slots__ = ("manager", "exit")

    def __init__(self, manager):
        self.manager = manager

    def __enter__(self):
        manager = self.manager
        kind = type(manager)
        enter = getattr(kind, "__enter__", None)
        if enter is None:
            raise TypeError(f"'{kind.__name__}' object does not support the context manager protocol")
        self.exit = getattr(kind, "__exit__", None)
        if self.exit is None:
            raise TypeError(f"'{kind.__name__}' object does not support the context manager protocol "
                            "(missed __exit__ method)")
        value = enter(manager)
        types = suppressed_by(manager)
        self.entry = (None if types is None else lambda: types), "with"
        _tries().append(self.entry)
        self.graph = current_graph() if types else None  # None: not tracing, or nothing known to check
        if self.graph is not None:
            self.start = len(self.graph.operations)
            self.where = user_location()
        return value

    def __exit__(self, kind, error, tb):
        _tries().pop()
        suppressed = self.exit(self.manager, kind, error, tb)
        if isinstance(error, DeadBranch) or (_is_refusal(error) and current_graph() is not None):
            return False  # the end of a traced branch, or autograph's refusal: never the manager's
        if suppressed and getattr(error, _ESCAPED, False):
            refusal = TracingError(
                f"{construct_at('the `with` statement')} suppresses {type(error).__name__}({_text(error)}) "
                "raised while tracing a tensor if or loop inside it: its context manager would suppress it "
                "once, while tracing, for every input, not when the graph runs. Move the with block inside "
                "the branch or loop body, or test the condition before it."
            )
            setattr(refusal, _ESCAPED, True)
            raise refusal from None
        if self.graph is not None:
            self.check()
        return suppressed


def _never_suppressing() -> tuple:
    types = [contextlib.nullcontext, contextlib.redirect_stdout, contextlib.redirect_stderr, contextlib.closing,
             warnings.catch_warnings, np.errstate, io.IOBase, type(threading.Lock()), type(threading.RLock()),
             threading.Condition, threading.Semaphore]
    return tuple(t for t in types if isinstance(t, type))


_NEVER_SUPPRESSING = _never_suppressing()


def suppressed_by(manager):
    """The exception types the context manager ``manager`` may suppress: ``contextlib.suppress``'s,
    ``()`` for a manager known to suppress nothing (its class may say so: ``__autograph_suppresses__
    = ()``); ``None`` when unknown (its ``__exit__`` may suppress anything)."""
    declared = getattr(type(manager), "__autograph_suppresses__", None)
    if declared is not None:
        return tuple(declared)
    if isinstance(manager, contextlib.suppress):
        types = getattr(manager, "_exceptions", None)
        return None if types is None else tuple(types)
    if isinstance(manager, _NEVER_SUPPRESSING):
        return ()
    return None


def _is_refusal(error) -> bool:
    """``error`` is autograph refusing the code (a ``TracingError``, ...), not an error Python raises too
    (an ``ExecutionError`` of an op run on values)."""
    return isinstance(error, AutoGraphError) and not isinstance(error, ExecutionError)


def _caught_when_run(entry, operations, library):
    """``(op, kind)``: the first of ``operations`` (or of the sub-graphs they call) that may raise,
    when the graph runs, an exception of ``kind`` that ``entry``'s handlers catch; else None."""
    types = entry[0]
    if types is not None:
        try:
            types = types()
        except Exception:  # a handler type Python could not evaluate either: it catches nothing
            return None
        types = tuple(t for t in _flat(types) if isinstance(t, type) and issubclass(t, BaseException))
        if not types:
            return None
    todo = list(reversed(operations))
    seen = set()
    while todo:
        op = todo.pop()
        for name in opdef.function_attr_names(op.type):
            body = library.get(op.attrs.get(name)) if isinstance(op.attrs.get(name), str) else None
            if body is not None and id(body) not in seen:
                seen.add(id(body))
                todo.extend(reversed(body.operations))
        for error_kind in opdef.run_time_errors(op):
            if types is None or _handles(types, error_kind):
                return op, error_kind
    return None


def _flat(types):
    """The classes of a handler's type expression (``except (A, (B, C))``)."""
    if isinstance(types, tuple):
        for t in types:
            yield from _flat(t)
    else:
        yield types


def _handles(types, error_kind) -> bool:
    """A handler of ``types`` catches an exception of ``error_kind`` (``Exception``: of any kind)."""
    for t in types:
        if issubclass(error_kind, t) or (error_kind is Exception and issubclass(t, Exception)):
            return True
    return False


# What to check instead of catching, by the kind of the op's error.
_INSTEAD = {
    IndexError: "compare the index with the length before indexing (`if 0 <= i < len(x):`, or "
                "`i < rt.shape(x)[0]`)",
    ZeroDivisionError: "test the divisor before dividing (`if d != 0:`)",
    AssertionError: "test the condition with an `if` instead of asserting it",
    OverflowError: "test that the value is in range before converting it",
    ValueError: "test the values (and shapes) the op needs before computing it, with an `if`",
    Exception: "catch the exception inside the function rt.py_function runs, and return a value that "
               "says it failed",
}


# The region a run-time failure escapes, by statement: (what catches, where it runs, what Python does).
_REGIONS = {
    "try": ("has a handler that catches", "the try, whose handlers run", "catches"),
    "with": ("has a context manager that suppresses", "the with block, whose context manager runs",
             "suppresses"),
}


def _run_time_message(statement, where, op, error_kind) -> str:
    location = op.location or "<unknown>"
    text = source_at(op.location)
    source = f" (`{text}`)" if text else ""
    what = "an exception" if error_kind is Exception else error_kind.__name__
    instead = next((advice for kind, advice in _INSTEAD.items() if issubclass(error_kind, kind)),
                   "test the condition explicitly with an `if`")
    catches, region, python = _REGIONS[statement]
    return (
        f"the `{statement}` statement at {where or '<unknown>'} {catches} {what}, which the "
        f"{op.type} op at {location}{source} inside it may raise only when the graph runs, for its "
        f"values then: the graph runs outside {region} only while tracing, so the graph "
        f"would raise where Python {python}. Check the condition explicitly instead of relying on the "
        f"exception: {instead}."
    )


def caught():
    """The first statement of a handler of converted code: an exception that left the tracing of a
    tensor branch or loop body would be caught only while tracing, never when the graph runs."""
    error = sys.exc_info()[1]
    if error is None:
        return
    if _is_refusal(error) and (getattr(error, _ESCAPED, False) or current_graph() is not None):
        raise error  # autograph's own refusal while tracing: not the user's to catch (Python raises nothing)
    if not getattr(error, _ESCAPED, False):
        return
    where = construct_at("the `except` clause")
    refusal = TracingError(
        f"{where} catches {type(error).__name__}({_text(error)}) raised while tracing a tensor if or loop "
        "inside its try: it would be caught once, while tracing, for every input, not when the graph "
        "runs. Move the try/except inside the branch or loop body, or test the condition before the try."
    )
    setattr(refusal, _ESCAPED, True)
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


def _text(error) -> str:
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
    tries, outer = _tries(), _staging.outer_tries
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
