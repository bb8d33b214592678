"""Loop tiering: a ``While`` loop interpreted first, compiled once it runs hot.

``run_loop`` is the ``While`` rule's loop (``while_rule``, which this module
adds to the interpreter's rules, ``exec/interpreter.py``: the interpreter
does not import this module, which runs its plans): it
runs ``cond``/``body`` through their plans, and a loop that has run hot
continues in code compiled by the default backend's ``compile_loop``
(numpy: ``backends/numpy/codegen.py``; same results by construction, a
fraction of the per-iteration cost).  Hot means both: at least
``HOT_ITERATIONS`` iterations in this execution, and at least
``HOT_SECONDS`` spent interpreting the loop, over all its executions --
about what compiling it costs, so that a short loop run once (a function's
first call, say) is not compiled for its last few iterations, while a loop
run often, or for long, is compiled after at most about as much time as
compiling takes (the ski-rental bound: never more than twice the best
choice made in hindsight).  A loop compiled once runs compiled from its
first iteration in every later execution.  If that
compilation fails for any reason the loop stays interpreted, after one
``AutoGraphWarning``.  A loop of a loaded graph spends the
run's iteration budget (``LoadOptions.max_iterations``, ``exec/limits.py``),
interpreted and compiled alike: ``ResourceLimitError`` rather than an
iteration past it.
"""

from __future__ import annotations

import functools
import time

from autograph.runtime.core import backend
from autograph.runtime.core.location import warn_at_user
from autograph.runtime.errors import AutoGraphError, AutoGraphWarning

from autograph.runtime.exec import interpreter as executor, limits

HOT_ITERATIONS = 16
HOT_SECONDS = 0.5e-3


def run_loop(cond, body, args, maximum_iterations=None, loop=None) -> list:
    """The ``While`` loop over library graphs ``cond``/``body``; returns the final loop variables.

    ``args`` are the loop variables then the invariant captures.  Once the
    loop is hot (module docstring) it continues in code compiled by
    ``compile_loop`` (if the graphs compile), with the remaining iteration
    budget.  The time spent interpreting is kept on ``body``
    (``_interpreted_seconds``).  A loop of a loaded graph spends its run's
    iteration budget (``exec/limits.py``; ``loop``, the op's name, names it
    in the error).
    """
    n = len(body.outputs)
    loop_vars, invariant = list(args[:n]), list(args[n:])
    cond_run, body_run = executor.plan(cond).run, executor.plan(body).run
    budget = limits.budget(body)  # None: not a loaded graph, or one without a bound
    what = None if budget is None else limits.describe_loop(loop, cond, body)
    count = 0
    interpreted = body.__dict__.get("_interpreted_seconds", 0.0)
    warm = 0 if _compiled_before(cond, body, maximum_iterations is not None) else HOT_ITERATIONS
    start = time.perf_counter()
    stop = None  # when the compiled loop took over
    try:
        while maximum_iterations is None or count < maximum_iterations:
            if count >= warm and stop is None:
                now = time.perf_counter()
                if interpreted + (now - start) >= HOT_SECONDS:
                    stop = now
                    compiled = _compiled_loop(cond, body, maximum_iterations is not None)
                    if compiled is not None:
                        remaining = None if maximum_iterations is None else maximum_iterations - count
                        loop_vars = compiled(loop_vars + invariant, remaining)
                        break
            if not cond_run(loop_vars + invariant)[0]:
                return loop_vars
            if budget is not None:
                budget.spend(what)
            loop_vars = body_run(loop_vars + invariant)
            count += 1
    finally:
        body._interpreted_seconds = interpreted + ((time.perf_counter() if stop is None else stop) - start)
    return loop_vars


def while_rule(builder, op):
    """The interpreter's rule for ``While``: ``run_loop`` over the op's cond/body, resolved by name
    when the step runs (the library's graphs may be replaced)."""

    def run_while(*args, cond, body, library, maximum_iterations=None):
        loop_vars = run_loop(library[cond], library[body], args, maximum_iterations, loop=op.name)
        return loop_vars[0] if len(loop_vars) == 1 else tuple(loop_vars)

    # a loaded graph's While runs inside its run's iteration budget (one of its own if called alone)
    return limits.scoped(functools.partial(run_while, **op.attrs, library=builder.graph.library), op.graph)


executor.add_rule("While", while_rule)


def _loop_key(cond, body, bounded: bool):
    return (id(cond), len(cond.operations), len(body.operations), bounded)


def _compiled_before(cond, body, bounded: bool) -> bool:
    """Has this loop been compiled already (by an earlier execution that ran hot)?  Then it runs
    compiled from its first iteration: the compilation is paid for."""
    found = body.__dict__.get("_compiled_loops", {}).get(bounded)
    return found is not None and found[0] == _loop_key(cond, body, bounded) and found[1] is not None


def _compiled_loop(cond, body, bounded: bool):
    """The default backend's ``compile_loop(cond, body, bounded)``, cached on ``body`` (None if it
    cannot compile: no loop compiler, or an ``AutoGraphError`` such as ``JitUnsupported``)."""
    key = _loop_key(cond, body, bounded)
    cache = body.__dict__.setdefault("_compiled_loops", {})
    found = cache.get(bounded)
    if found is None or found[0] != key:
        compile_loop = backend.get().compile_loop
        try:
            fn = None if compile_loop is None else compile_loop(cond, body, bounded)[0]
        except AutoGraphError:
            fn = None
        except Exception as e:  # noqa: BLE001 - the compiled tier is an optimization: never fatal
            warn_at_user(
                f"autograph could not compile the hot While loop over {cond.name!r}/{body.name!r} "
                f"({type(e).__name__}: {e}); it keeps running in the interpreter. Please report this bug.",
                AutoGraphWarning,
            )
            fn = None
        found = cache[bounded] = (key, fn)
    return found[1]
