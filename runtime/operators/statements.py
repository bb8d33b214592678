"""Python paths of the statement operators: ``if_stmt``, ``while_stmt``, ``for_stmt``.

Each operator looks at its condition (or iterable) once.  A plain Python
value runs plain Python control flow, so converted code behaves exactly like
the original; a symbolic ``Tensor`` hands the call, unchanged, to the graph
path in ``autograph.runtime.control_flow``.

Kept deliberately small: these run once per statement (``if``) or once per
iteration (loops) of converted code, so the Python path does no allocation
and no introspection.
"""

from __future__ import annotations

from autograph.runtime.tensor import Tensor


def no_op():
    """The ``orelse`` of an ``if`` that has no ``else`` branch."""


def no_state(vars_=None):
    """``get_state`` and ``set_state`` of a statement that has no state."""
    return ()


def if_stmt(cond, body, orelse, get_state, set_state, symbol_names, nouts):
    """Runs ``body()`` if ``cond`` is true, else ``orelse()``."""
    if cond is True:
        body()
    elif cond is False:
        if orelse is not no_op:
            orelse()
    elif isinstance(cond, Tensor):
        from autograph.runtime import control_flow
        return control_flow.if_stmt(cond, body, orelse, get_state, set_state, symbol_names, nouts)
    elif cond:
        body()
    else:
        orelse()


def while_stmt(test, body, get_state, set_state, symbol_names, opts):
    """Runs ``body()`` while ``test()`` is true.

    ``test()`` is evaluated once here: if its first value is a ``Tensor`` the
    whole loop is handed to the graph path (which evaluates ``test`` again
    while tracing).
    """
    cond = test()
    if cond is not True and cond is not False and isinstance(cond, Tensor):
        from autograph.runtime import control_flow
        return control_flow.while_stmt(test, body, get_state, set_state, symbol_names, opts)
    while cond:
        body()
        cond = test()


def _is_staged_iterable(iter_) -> bool:
    """True for a symbolic tensor, or a staged object the graph path loops over."""
    return isinstance(iter_, Tensor) or getattr(type(iter_), "__ag_staged_iterable__", False)


def for_stmt(iter_, extra_test, body, get_state, set_state, symbol_names, opts):
    """Runs ``body(item)`` for each item of ``iter_``, while ``extra_test()`` holds.

    ``extra_test`` (``None`` or a zero-argument closure carrying lowered
    ``break``/``return`` flags) is checked before fetching each item, so an
    iterator shared with the rest of the program is never advanced past the
    item at which the original loop stopped.
    """
    if _is_staged_iterable(iter_):
        from autograph.runtime import control_flow
        return control_flow.for_stmt(iter_, extra_test, body, get_state, set_state, symbol_names, opts)
    if extra_test is None:
        for item in iter_:
            body(item)
        return
    if not extra_test():
        return
    for item in iter_:
        body(item)
        if not extra_test():
            return
