"""Python paths of the statement operators: ``if_stmt``, ``while_stmt``, ``for_stmt``.

Each operator looks at its condition (or iterable) once.  A plain Python
value runs plain Python control flow, so converted code behaves exactly like
the original; a symbolic ``Tensor`` hands the call, unchanged, to the graph
path in ``autograph.runtime.operators.graph_paths``.

Kept deliberately small: these run once per statement (``if``) or once per
iteration (loops) of converted code, so the Python path does no allocation
and no introspection.  Only while a trace is active (one ``current_graph()``
check per loop, not per iteration) does a Python loop count its iterations:
past ``set_unroll_warning_threshold`` (100) it warns, once per loop site, that
it is unrolling into the graph (``TracingWarning``).
"""

from __future__ import annotations

from autograph.runtime.core.graph import current_graph
from autograph.runtime.core.location import warn_at_user
from autograph.runtime.errors import TracingWarning
from autograph.runtime.operators.logical import and_
from autograph.runtime.core.tensor import Tensor

_unroll_warning_threshold: int | None = 100


def set_unroll_warning_threshold(n: int | None) -> int | None:
    """Warn when a Python loop unrolls more than ``n`` iterations while tracing (``None``: never).

    Returns the previous threshold (100 by default).  Exposed as
    ``ag.set_unroll_warning_threshold``.
    """
    global _unroll_warning_threshold
    if n is not None and (not isinstance(n, int) or isinstance(n, bool) or n < 0):
        raise ValueError(f"the unroll warning threshold must be a non-negative int or None, got {n!r}")
    previous, _unroll_warning_threshold = _unroll_warning_threshold, n
    return previous


def _counting(body):
    """``body`` counting its calls (the iterations of a Python loop unrolling into a trace): the
    first call past the threshold warns once, at the loop's line in the user's code."""
    threshold = _unroll_warning_threshold
    if threshold is None:
        return body
    count = 0

    def counted(*item):
        nonlocal count
        count += 1
        if count == threshold + 1:
            warn_at_user(
                f"a Python loop unrolled more than {threshold} iterations while tracing: every iteration "
                "adds its operations to the graph again. If the bound is a Python value (a Python int "
                "argument, a len() or shape), make it a tensor (pass np.int32(n), or loop over "
                "rt.range(n)) to get one While op; raise or disable this warning with "
                "ag.set_unroll_warning_threshold(n or None).",
                TracingWarning,
            )
        return body(*item)

    return counted


def no_op():
    """The ``orelse`` of an ``if`` that has no ``else`` branch."""


def no_state(vars_=None):
    """``get_state`` and ``set_state`` of a statement that has no state."""
    return ()


def if_stmt(cond, body, orelse, get_state, set_state, symbol_names, nouts, opts=None):
    """Runs ``body()`` if ``cond`` is true, else ``orelse()`` (``opts``: the state's roles)."""
    if cond is True:
        body()
    elif cond is False:
        if orelse is not no_op:
            orelse()
    elif isinstance(cond, Tensor):
        from autograph.runtime.operators import graph_paths
        return graph_paths.if_stmt(cond, body, orelse, get_state, set_state, symbol_names, nouts, opts)
    elif cond:
        body()
    else:
        orelse()


def while_stmt(test, body, get_state, set_state, symbol_names, opts):
    """Runs ``body()`` while ``test()`` is true.

    ``test()`` is evaluated before each iteration.  If it is a ``Tensor`` --
    from the start, or after some Python iterations (say a ``break`` flag
    set in a tensor ``if``) -- the rest of the loop is handed, with the same
    arguments, to the graph path, which continues from the current state
    (and evaluates ``test`` again while tracing).  ``opts['extra_test']``,
    if given, is checked before ``test`` (see ``_while_with_extra_test``).
    """
    if opts:
        extra_test = opts.get("extra_test")
        if extra_test is not None:
            return _while_with_extra_test(extra_test, test, body, get_state, set_state, symbol_names, opts)
    run = body if current_graph() is None else _counting(body)
    cond = test()
    while True:
        if cond is True:
            run()
            cond = test()
        elif cond is False:
            return
        elif type(cond) in _PLAIN_VALUES:
            # A Python truth value other than a bool: loop natively while it stays plain.
            while cond:
                run()
                cond = test()
                if type(cond) not in _PLAIN_VALUES:
                    break
            else:
                return
        elif isinstance(cond, Tensor):
            from autograph.runtime.operators import graph_paths
            return graph_paths.while_stmt(test, body, get_state, set_state, symbol_names, opts)
        elif cond:
            run()
            cond = test()
        else:
            return


def _while_with_extra_test(extra_test, test, body, get_state, set_state, symbol_names, opts):
    """``while extra_test() and test(): body()`` -- ``extra_test`` carries the lowered
    ``break``/``return`` flags, so ``test`` (the user's own) never runs after a jump.

    The graph path gets one test, ``and_(extra_test(), test)``, and the
    other options.
    """
    run = body if current_graph() is None else _counting(body)
    while True:
        keep_going = extra_test()
        if keep_going is not True:
            if keep_going is False:
                return
            if isinstance(keep_going, Tensor):
                break
            if not keep_going:
                return
        cond = test()
        if cond is True:
            run()
        elif cond is False:
            return
        elif isinstance(cond, Tensor):
            break
        elif cond:
            run()
        else:
            return

    def combined_test():
        return and_(extra_test(), test)

    from autograph.runtime.operators import graph_paths
    rest = {key: value for key, value in opts.items() if key != "extra_test"}
    return graph_paths.while_stmt(combined_test, body, get_state, set_state, symbol_names, rest)


# Values that are never tensors, whose truth value Python computes directly.
_PLAIN_VALUES = frozenset({int, float, str, list, tuple, dict, set, type(None)})

# Iterables that are never staged: for_stmt skips the checks for them.
_PLAIN_ITERABLES = frozenset({range, list, tuple, str, dict, set, enumerate, zip})


def is_staged_iterable(iter_) -> bool:
    """True for a symbolic tensor, or a staged object the graph path loops over."""
    return isinstance(iter_, Tensor) or getattr(type(iter_), "__ag_staged_iterable__", False)


def for_stmt(iter_, extra_test, body, get_state, set_state, symbol_names, opts):
    """Runs ``body(item)`` for each item of ``iter_``, while ``extra_test()`` holds.

    ``extra_test`` (``None`` or a zero-argument closure carrying lowered
    ``break``/``return`` flags) is checked before fetching each item, so an
    iterator shared with the rest of the program is never advanced past the
    item at which the original loop stopped.  A Python iterable whose extra
    test becomes a ``Tensor`` (a flag set in a tensor ``if``) continues
    unrolled, each remaining iteration guarded by that test (``if_stmt``).
    """
    own_loop = getattr(type(iter_), "__ag_for_stmt__", None)  # a dataset stages itself (iterables.py)
    if own_loop is not None and current_graph() is not None:
        return own_loop(iter_, extra_test, body, get_state, set_state, symbol_names, opts)
    if type(iter_) not in _PLAIN_ITERABLES and is_staged_iterable(iter_):
        from autograph.runtime.operators import graph_paths
        return graph_paths.for_stmt(iter_, extra_test, body, get_state, set_state, symbol_names, opts)
    if current_graph() is not None:
        body = _counting(body)  # the Python path unrolls into the trace: count its iterations
    if extra_test is None:
        for item in iter_:
            body(item)
        return
    keep_going = extra_test()
    iterator = iter(iter_)
    while True:
        if keep_going is not True:
            if keep_going is False:
                return
            if isinstance(keep_going, Tensor):
                return _guarded_iterations(
                    iterator, keep_going, extra_test, body, get_state, set_state, symbol_names, opts
                )
            if not keep_going:
                return
        for item in iterator:
            body(item)
            keep_going = extra_test()
            if keep_going is not True:
                break
        else:
            return


def _guarded_iterations(iterator, keep_going, extra_test, body, get_state, set_state, symbol_names, opts):
    """The rest of a Python loop once its extra test is a tensor: ``if keep_going: body(item)``."""
    for item in iterator:
        if_stmt(keep_going, lambda: body(item), no_op, get_state, set_state, symbol_names, len(symbol_names), opts)
        keep_going = extra_test()
