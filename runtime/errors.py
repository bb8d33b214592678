"""The error hierarchy of autograph.

It lives in the runtime, the lowest layer that raises these errors; the
public package re-exports every name here (`ag.AutoGraphError`, ...).

Every message names the construct, the user's variable where there is one,
the user's ``file:line``, and says how to fix the problem.  Use
``at(filename, lineno)`` to spell the location the same way everywhere.
"""

from __future__ import annotations

import types


class AutoGraphError(Exception):
    """Base class of every error autograph raises on purpose."""


class ConversionError(AutoGraphError):
    """The source of a function cannot be converted.

    Raised at conversion time for syntax autograph does not support in
    converted code (``yield``, ``async def``, ``global`` rebinding, ...).
    The message names the construct and the original ``file:line``.
    """


class TracingError(AutoGraphError):
    """Misuse found while tracing a function into a graph.

    For example: a variable defined in only one branch of a tensor ``if``
    and used after it, a variable undefined before a tensor loop, a loop
    variable whose dtype changes across iterations, or a symbolic tensor
    used as a Python ``bool`` in code that autograph did not convert.
    """


class ExecutionError(AutoGraphError):
    """An operation failed while a graph was running.

    The message names the op, its printed form and the user's ``file:line``
    that created it; for a failure inside an ``If``/``While`` body it also
    lists the enclosing functional ops.  The original exception is
    ``original`` (and ``__cause__``), and the error is an instance of its
    type too (``except ValueError`` catches numpy's ``ValueError``).
    """

    def __init__(self, message: str, original: BaseException | None = None):
        super().__init__(message)
        self.original = original

    @classmethod
    def of(cls, message: str, original: BaseException) -> "ExecutionError":
        """An ``ExecutionError`` that is also of ``original``'s kind when numpy raised it about values
        (``ExecutionValueError`` for a ``ValueError``...), so the caller's ``except ValueError``
        catches it as it would in Python."""
        for kind in type(original).__mro__:
            found = _OF_KIND.get(kind)
            if found is not None:
                return found(message, original)
        return cls(message, original)


# One subclass per kind of error a kernel raises about its values, as numpy does in Python (not
# StopIteration, OSError, ...: those change how an error travels, and are never a kernel's answer).
class ExecutionValueError(ExecutionError, ValueError):
    """An ``ExecutionError`` from a ``ValueError`` (a zero slice step, the max of nothing)."""


class ExecutionIndexError(ExecutionError, IndexError):
    """An ``ExecutionError`` from an ``IndexError``."""


class ExecutionKeyError(ExecutionError, KeyError):
    """An ``ExecutionError`` from a ``KeyError``."""

    __str__ = Exception.__str__  # the message, not KeyError's repr of it


class ExecutionTypeError(ExecutionError, TypeError):
    """An ``ExecutionError`` from a ``TypeError``."""


class ExecutionZeroDivisionError(ExecutionError, ZeroDivisionError):
    """An ``ExecutionError`` from a ``ZeroDivisionError``."""


class ExecutionOverflowError(ExecutionError, OverflowError):
    """An ``ExecutionError`` from an ``OverflowError``."""


class ExecutionFloatingPointError(ExecutionError, FloatingPointError):
    """An ``ExecutionError`` from a ``FloatingPointError`` (numpy's ``errstate(all="raise")``)."""


class ExecutionArithmeticError(ExecutionError, ArithmeticError):
    """An ``ExecutionError`` from another ``ArithmeticError``."""


_OF_KIND = {
    ValueError: ExecutionValueError, IndexError: ExecutionIndexError, KeyError: ExecutionKeyError,
    TypeError: ExecutionTypeError, ZeroDivisionError: ExecutionZeroDivisionError,
    OverflowError: ExecutionOverflowError, FloatingPointError: ExecutionFloatingPointError,
    ArithmeticError: ExecutionArithmeticError,
}


class VerificationError(AutoGraphError):
    """``graph.verify()`` found a broken invariant of the graph IR.

    The message names the op and what is wrong, followed by a window of the
    graph's text around that op.  It means a bug in whatever built or
    rewrote the graph (an optimizer pass, a hand-edited graph def).
    """


class GraphDefError(AutoGraphError, ValueError):
    """A graph def (``Graph.from_graph_def``) that cannot be loaded.

    Raised for anything wrong with the document -- a missing or mistyped
    field, an unknown op type or attribute, a dangling tensor reference, a
    recorded dtype or shape that shape inference contradicts, a cycle of
    sub-graphs, a tensor larger than the loader's limits.  The message
    names the graph, the node and the field, and says how to fix it.  It is
    also a ``ValueError``: the file is bad input.
    """


class ResourceLimitError(AutoGraphError):
    """A loaded graph went past a limit given to ``Graph.from_graph_def``.

    For example a ``While`` that ran more iterations than
    ``LoadOptions.max_iterations``.  Raise the limit if the graph is
    trusted, or do not run it.
    """


class AutoGraphWarning(UserWarning):
    """Something autograph could not do, that it worked around.

    For example: the source of a function is unavailable, so the function
    runs unconverted.
    """


class TracingWarning(AutoGraphWarning):
    """Python code that ran once, while tracing, where the graph likely wanted it at every call.

    Warned once per site, at the user's ``file:line``: a Python loop that
    unrolled more than ``ag.set_unroll_warning_threshold`` iterations into
    the graph (make its bound a tensor, or loop over ``rt.range``), a plain
    ``print`` with no tensor arguments (use ``rt.print``).  Silence one kind
    with ``warnings.filterwarnings("ignore", category=ag.TracingWarning,
    message="a Python loop unrolled")``.
    """


USER_ERROR_ATTR = "__autograph_user_error__"


def mark_user_error(error: BaseException) -> bool:
    """Marks ``error`` as raised by the user's own code run inside a graph (a
    ``py_function``'s function): the executor then lets it through with its own
    type, adding notes, instead of wrapping it in ``ExecutionError``.  False if
    the exception takes no attributes."""
    try:
        setattr(error, USER_ERROR_ATTR, True)
    except AttributeError:
        return False
    return True


def rebuilt(error: BaseException, args, state: dict) -> BaseException:
    """A fresh exception of ``error``'s type holding ``args`` and the attributes ``state`` (a new
    traceback and notes each time it is raised), made without calling its ``__init__`` again: that
    ran when ``error`` was made, and its parameters need not be ``args`` (``MyError(code, msg=...)``)."""
    cls = type(error)
    fresh = cls.__new__(cls, *args)
    fresh.args = tuple(args)
    fresh.__dict__.update(state)
    if "__notes__" in state:
        fresh.__notes__ = list(state["__notes__"])
    for name in _builtin_fields(cls):  # what the builtin __init__ set (SystemExit.code, OSError.filename)
        try:
            value = getattr(error, name)
        except AttributeError:  # not set (OSError.characters_written)
            continue
        value = next((new for old, new in zip(error.args, args) if value is old), value)  # an argument's new value
        try:
            setattr(fresh, name, value)
        except (AttributeError, TypeError):
            pass
    return fresh


_FIELDS: dict = {}  # exception class -> the fields its builtin classes declare


def _builtin_fields(cls) -> tuple:
    """The fields that ``cls``'s builtin exception classes (below ``BaseException``) declare: set by
    their ``__init__`` from its arguments, not kept in the instance dict."""
    found = _FIELDS.get(cls)
    if found is None:
        found = _FIELDS[cls] = tuple(
            name for klass in cls.__mro__
            if klass.__module__ == "builtins" and issubclass(klass, BaseException) and klass is not BaseException
            for name, attr in vars(klass).items()
            if isinstance(attr, (types.MemberDescriptorType, types.GetSetDescriptorType)) and not name.startswith("__")
        )
    return found


def at(filename: str | None, lineno: int | None) -> str:
    """Formats a source location as ``file:line`` (``<unknown>`` if absent)."""
    if not filename:
        return "<unknown>"
    if lineno is None:
        return filename
    return f"{filename}:{lineno}"
