"""Recursion that a tensor condition cannot end: a ``TracingError`` naming the function.

A recursive function whose base case is decided by a tensor (``if n <= 0:
return 0`` with a tensor ``n``) never stops while tracing: both branches of
the tensor ``if`` are traced, so the recursive call is traced again at every
level, until Python's recursion limit.  ``if_stmt``'s graph path turns that
``RecursionError`` into ``refusal(...)``, and every enclosing tensor ``if``
raises it again (``again``), so the traceback the user sees starts at the
outermost one instead of a thousand frames deep (``guard``).
"""

from __future__ import annotations

from autograph.runtime.errors import TracingError

_MARK = "__autograph_recursion__"


def _function_name(branch) -> str:
    qualname = getattr(branch, "__qualname__", "") or ""
    return qualname.rsplit(".<locals>.", 1)[0] if ".<locals>." in qualname else qualname or "<function>"


def refusal(branch, where) -> TracingError:
    """The error for Python's recursion limit reached while tracing a branch of ``where``."""
    name = _function_name(branch)
    error = TracingError(
        f"the function '{name}' recursed until Python's recursion limit while tracing {where}: a "
        f"recursion whose base case depends on a tensor never ends while tracing (both branches of a "
        f"tensor if are traced, so the recursive call is traced again at every level). Write '{name}' "
        "as a loop (while/for over tensors), or make the recursion depth a Python value."
    )
    setattr(error, _MARK, True)
    return error


def is_refusal(error) -> bool:
    return getattr(error, _MARK, False)


def again(error) -> TracingError:
    """The same refusal, raised afresh (its traceback starts at the enclosing statement)."""
    fresh = TracingError(str(error))
    setattr(fresh, _MARK, True)
    return fresh


class guard:
    """``with guard(branch, where):`` around the tracing of a tensor ``if`` whose true branch is
    ``branch``: see the docstring.  (A class, not a generator: entered for every traced ``if``.)"""

    __slots__ = ("branch", "where")

    def __init__(self, branch, where):
        self.branch, self.where = branch, where

    def __enter__(self):
        return self

    def __exit__(self, kind, error, tb):
        if kind is not None and issubclass(kind, RecursionError):
            raise refusal(self.branch, self.where) from None
        if isinstance(error, TracingError) and is_refusal(error):
            raise again(error) from None
        return False
