"""``try`` and ``with`` statements of converted code around traced code: what their handlers catch.

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
on the inputs that take that path, the trace for every input.  Both record
their handlers in ``raises.running_handlers`` while their body runs, which a staged
raise consults.
"""

from __future__ import annotations

import contextlib
import io
import threading
import warnings

import numpy as np

from autograph.runtime.core import opdef
from autograph.runtime.core.graph import current_graph
from autograph.runtime.core.location import construct_at, source_at, user_location
from autograph.runtime.errors import AutoGraphError, TracingError
from autograph.runtime.operators.raises import ESCAPED, DeadBranch, is_refusal, running_handlers, short_text


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
        running_handlers().append(self.entry)
        graph = self.graph = current_graph()
        if graph is not None:
            self.start = len(graph.operations)
            self.where = user_location()

    def __exit__(self, kind, error, tb):
        running_handlers().pop()
        if self.graph is not None and not isinstance(error, AutoGraphError):  # tracing; not a refusal already
            self.check()
        return False

    def check(self):
        """The refusal of an op the body recorded that may raise, when the graph runs, what the
        handlers would catch."""
        found = _caught_when_run(self.entry, self.graph.operations[self.start:], self.graph.library)
        if found is not None:
            refusal = TracingError(_run_time_message(self.entry[1], self.where, *found))
            setattr(refusal, ESCAPED, True)  # a handler's ``caught()`` passes it on
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
        running_handlers().append(self.entry)
        self.graph = current_graph() if types else None  # None: not tracing, or nothing known to check
        if self.graph is not None:
            self.start = len(self.graph.operations)
            self.where = user_location()
        return value

    def __exit__(self, kind, error, tb):
        running_handlers().pop()
        suppressed = self.exit(self.manager, kind, error, tb)
        if isinstance(error, DeadBranch) or (is_refusal(error) and current_graph() is not None):
            return False  # the end of a traced branch, or autograph's refusal: never the manager's
        if suppressed and getattr(error, ESCAPED, False):
            refusal = TracingError(
                f"{construct_at('the `with` statement')} suppresses {type(error).__name__}({short_text(error)}) "
                "raised while tracing a tensor if or loop inside it: its context manager would suppress it "
                "once, while tracing, for every input, not when the graph runs. Move the with block inside "
                "the branch or loop body, or test the condition before it."
            )
            setattr(refusal, ESCAPED, True)
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
