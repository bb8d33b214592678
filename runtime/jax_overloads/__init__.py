"""AutoGraph for JAX: converted code on JAX tracers under ``jax.jit``, ``jax.grad``, ``jax.vmap``.

The operators generated code calls dispatch a value that is not plain
Python through ``operators.dispatch``; this package registers the handlers
of backend ``"jax"`` for JAX tracers:

* ``branches.py`` -- ``if`` and ``a if c else b`` as ``lax.cond`` over the state;
* ``loops.py`` -- ``while`` as ``lax.while_loop``; ``for`` over an array
  (and ``enumerate``/``zip`` of arrays) as ``lax.scan``, over a traced
  ``range`` as a ``lax.while_loop`` over the counter;
* ``carry.py`` -- which state leaves a loop carries, stacked lists;
* ``logic.py`` -- ``and``/``or``/``not``, ``assert``, builtins;
* ``outside.py`` -- how a converted function runs under JAX: changes to
  Python state outside it refused, JAX's errors about a tracer used as a
  Python value (``errors.py``) as errors naming the user's line;
* ``values.py`` -- what a state leaf is to JAX, and the messages refusing
  what ``lax`` cannot merge (the numpy runtime's rules: a variable defined on
  one path only, dtype or shape changes), naming the variable and file:line.

Importing this package does not import JAX.  ``install()`` (called when
``autograph``'s API loads) registers ``probe`` with
``operators.calls.register_trace_probe`` as JAX is imported (or at once if
it is already): an ``ag.convert``-ed function runs its generated code while
JAX traces.  The probe loads the handlers (``load()``) the first time it runs,
so ``jax.jit(ag.convert(f))`` needs nothing from the user.  Until JAX is
imported there is no probe to ask: a call of an ``ag.convert``-ed function
costs what it did without JAX.
"""

from __future__ import annotations

import sys

_state = {"loaded": False, "trace_ctx": None, "eval_trace": None}


def probe() -> bool:
    """True while JAX traces (a ``jax.jit``/``grad``/``vmap`` trace is current)."""
    ctx = _state["trace_ctx"]
    if ctx is None:
        if sys.modules.get("jax") is None:  # not imported (or blocked: sys.modules["jax"] = None)
            return False
        load()
        ctx = _state["trace_ctx"]
    return type(ctx.trace) is not _state["eval_trace"]


def install() -> None:
    """Registers ``probe`` once JAX is imported (idempotent); JAX stays unimported until the user
    imports it.  Until then an ``ag.convert``-ed function asks no probe (``_ImportWatch``)."""
    from autograph.runtime.operators import calls

    if "jax" in sys.modules:
        calls.register_trace_probe(probe)
    elif not any(type(finder) is _ImportWatch for finder in sys.meta_path):
        sys.meta_path.insert(0, _ImportWatch())


class _ImportWatch:
    """An import-system finder that finds nothing: it sees ``import jax`` begin and registers the probe
    (the dispatch of every ``ag.convert``-ed call skips probes while none is registered).  It stays in
    ``sys.meta_path``, inert: the import system is iterating over that list when it asks, and taking
    an entry out would make it skip the next finder."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname == "jax":
            from autograph.runtime.operators import calls

            calls.register_trace_probe(probe)  # (idempotent)
        return None


def _is_traced(value) -> bool:
    from jax.core import Tracer

    return isinstance(value, Tracer)


def _is_jax_array(value) -> bool:
    import jax

    return isinstance(value, jax.Array)


def load() -> None:
    """Imports JAX and registers the handlers (once)."""
    if _state["loaded"]:
        return
    from jax._src import core

    from autograph.runtime.jax_overloads import branches, logic, loops, outside
    from autograph.runtime.operators import calls, dispatch

    def staged(value):
        return _is_traced(value) or isinstance(value, (loops.TracedRange, loops.Scanned))

    handlers = {
        "if_stmt": (_is_traced, branches.if_stmt),
        "if_exp": (_is_traced, branches.if_exp),
        "while_stmt": (_is_traced, loops.while_stmt),
        "for_stmt": (staged, loops.for_stmt),
        "and_": (_is_traced, logic.and_),
        "or_": (_is_traced, logic.or_),
        "not_": (_is_traced, logic.not_),
        "assert_": (_is_traced, logic.assert_),
        "range": (_is_traced, loops.range_),
        "enumerate": (_is_traced, loops.enumerate_),
        "zip": (_is_traced, loops.zip_),
        "len": (_is_traced, logic.len_),
        "print": (_is_traced, logic.print_),
        "abs": (_is_traced, logic.abs_),
        "int": (_is_traced, logic.int_),
        "float": (_is_traced, logic.float_),
        "bool": (_is_traced, logic.bool_),
        "max": (_is_traced, logic.max_),
        "min": (_is_traced, logic.min_),
        "aug_setitem": (_is_jax_array, logic.aug_setitem),
    }
    dispatch.register_all(handlers, backend="jax")
    calls.register_probe_runner(outside.run_converted)
    _state.update(loaded=True, eval_trace=core.EvalTrace, trace_ctx=core.trace_ctx)
    install()
