"""``while_stmt`` and ``for_stmt``: the operators loops lower to, Python paths beside graph paths.

Each operator looks at its condition (or iterable).  A plain Python value
runs a plain Python loop, so converted code behaves exactly like the
original; any other value goes to the handler the overload registry has for
it (``operators/dispatch.py``).  The numpy runtime's ``Tensor`` registers
``staged_while_stmt``/``staged_for_stmt`` here: the condition and body
traced into sub-graphs, one ``While`` op whose loop variables are the state
(``tracing.loops.build_while`` holds the rules).  ``for_stmt``'s staged
iterables are a tensor's rows, ``range`` with a tensor bound, ``rt.range``,
``enumerate``/``zip`` of those (``iterables.is_staged``).  A class with its
own staged loop defines ``__ag_for_stmt__`` (a documented hook, not an
overload: ``rt.data.Dataset``, ``iterables.py``); ``for_stmt`` hands it the
loop while a trace is active, and loops over it in Python otherwise.

The Python paths are kept small: they run once per iteration of converted
code, so they do no allocation and no introspection.  Only while a trace is
active (one ``current_graph()`` check per loop, not per iteration) does a
Python loop count its iterations: past ``set_unroll_warning_threshold``
(100) it warns, once per loop site, that it is unrolling into the graph
(``TracingWarning``).
"""

from __future__ import annotations

from autograph.runtime import ops
from autograph.runtime.core.graph import current_graph
from autograph.runtime.core.location import construct_at, warn_at_user
from autograph.runtime.core.tensor import Tensor
from autograph.runtime.errors import TracingError, TracingWarning
from autograph.runtime.operators import (
    aliases, container_identity, dispatch, iterables, outside_writes, raises, statement_state,
)
from autograph.runtime.operators.if_statements import if_stmt, no_op
from autograph.runtime.operators.iterables import is_tensor
from autograph.runtime.operators.logical import and_
from autograph.runtime.ops import apply
from autograph.runtime.tracing import retrace
from autograph.runtime.tracing.loops import build_while
from autograph.runtime.tracing.values import as_predicate, discard_since, mark

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


# Values that are never staged, whose truth value Python computes directly.
_PLAIN_VALUES = frozenset({int, float, str, list, tuple, dict, set, type(None)})

# Iterables that are never staged: for_stmt skips the lookup for them.
_PLAIN_ITERABLES = frozenset({range, list, tuple, str, dict, set, enumerate, zip})


def while_stmt(test, body, get_state, set_state, symbol_names, opts):
    """Runs ``body()`` while ``test()`` is true.

    ``test()`` is evaluated before each iteration.  If it is a value some
    backend stages (a ``Tensor``) -- from the start, or after some Python
    iterations (say a ``break`` flag set in a tensor ``if``) -- the rest of
    the loop is handed, with the same arguments, to that backend's handler,
    which continues from the current state (and evaluates ``test`` again
    while tracing).  ``opts['extra_test']``, if given, is checked before
    ``test`` (see ``_while_with_extra_test``).
    """
    if opts:
        extra_test = opts.get("extra_test")
        if extra_test is not None:
            return _while_with_extra_test(extra_test, test, body, get_state, set_state, symbol_names, opts)
    graph = current_graph()
    run = body if graph is None else _counting(body)
    probe = None if graph is None else _Probe(graph, test)  # the first test of a staged loop is forgotten
    if probe is not None:
        test = probe
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
        else:
            staged = dispatch.handler_for("while_stmt", cond)
            if staged is not None:
                if probe is None:
                    return staged(test, body, get_state, set_state, symbol_names, opts)
                return _handed(staged, probe, probe.test, body, get_state, set_state, symbol_names, opts)
            if not cond:
                return
            run()
            cond = test()


class _Probe:
    """``test`` marking, before each call while tracing, where the graph stood: the evaluation
    that finds the test staged is not one of the loop's, whose condition evaluates the test again
    (``tracing.values.discard_since``).  (A class: a loop's Python path must stay cheap.)"""

    __slots__ = ("graph", "test", "place")

    def __init__(self, graph, test):
        self.graph, self.test, self.place = graph, test, None

    def __call__(self):
        self.place = mark(self.graph)
        return self.test()


def _while_with_extra_test(extra_test, test, body, get_state, set_state, symbol_names, opts):
    """``while extra_test() and test(): body()`` -- ``extra_test`` carries the lowered
    ``break``/``return`` flags, so ``test`` (the user's own) never runs after a jump.

    The staged loop gets one test, ``and_(extra_test(), test)``, and the
    other options.
    """
    graph = current_graph()
    run = body if graph is None else _counting(body)
    probe = None if graph is None else _Probe(graph, extra_test)  # marks before the flags and the test
    first_test = extra_test if probe is None else probe
    while True:
        keep_going = first_test()
        if keep_going is not True:
            if keep_going is False:
                return
            staged = dispatch.handler_for("while_stmt", keep_going)
            if staged is not None:
                break
            if not keep_going:
                return
        cond = test()
        if cond is True:
            run()
        elif cond is False:
            return
        else:
            staged = dispatch.handler_for("while_stmt", cond)
            if staged is not None:
                break
            if not cond:
                return
            run()

    def combined_test():
        return and_(extra_test(), test)

    rest = {key: value for key, value in opts.items() if key != "extra_test"}
    return _handed(staged, probe, combined_test, body, get_state, set_state, symbol_names, rest)


def _handed(staged, probe, *arguments):
    """The loop handed to its ``while_stmt`` handler; the numpy runtime's own gets the mark of the test
    that found it staged (``staged_while_stmt``), another backend's the arguments ``while_stmt`` has."""
    if probe is not None and staged is staged_while_stmt:
        return staged(*arguments, probe=probe.place)
    return staged(*arguments)


def for_stmt(iter_, extra_test, body, get_state, set_state, symbol_names, opts):
    """Runs ``body(item)`` for each item of ``iter_``, while ``extra_test()`` holds.

    ``extra_test`` (``None`` or a zero-argument closure carrying lowered
    ``break``/``return`` flags) is checked before fetching each item, so an
    iterator shared with the rest of the program is never advanced past the
    item at which the original loop stopped.  A Python iterable whose extra
    test becomes a staged value (a flag set in a tensor ``if``) continues
    unrolled, each remaining iteration guarded by that test (``if_stmt``).
    """
    if type(iter_) not in _PLAIN_ITERABLES:
        own_loop = getattr(type(iter_), "__ag_for_stmt__", None)  # a dataset stages itself (iterables.py)
        if own_loop is not None and current_graph() is not None:
            return own_loop(iter_, extra_test, body, get_state, set_state, symbol_names, opts)
        staged = dispatch.handler_for("for_stmt", iter_)
        if staged is not None:
            return staged(iter_, extra_test, body, get_state, set_state, symbol_names, opts)
    return python_for(iter_, extra_test, body, get_state, set_state, symbol_names, opts)


def python_for(iter_, extra_test, body, get_state, set_state, symbol_names, opts):
    """The Python path of ``for_stmt``: a Python loop (unrolled into the graph while tracing)."""
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
            if dispatch.handler_for("if_stmt", keep_going) is not None:
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
    """The rest of a Python loop once its extra test is staged: ``if keep_going: body(item)``."""
    roles = statement_state.roles(opts)
    for item in iterator:
        if_stmt(keep_going, lambda: body(item), no_op, get_state, set_state, symbol_names, len(symbol_names), roles)
        keep_going = extra_test()


def staged_while_stmt(test, body, get_state, set_state, symbol_names, opts, probe=None):
    """Graph path of ``while``: a ``While`` op whose loop variables are the state.

    ``probe`` marks where the graph stood before ``while_stmt`` evaluated the test
    that found it staged: the ``While``'s condition evaluates the test before the
    first iteration again, so the ops of that evaluation are forgotten -- a test
    with effects (``rt.print``, a variable update) would otherwise have them once
    more than in Python.  A test that rebinds a loop variable (through a function
    it calls, ``nonlocal k``) is refused, as the condition's trace refuses it
    (``_refuse_rebound``).  (A walrus in the test binds nothing: the converter
    computes it before the loop and at the end of the body.)
    """
    if probe is not None:
        rebound = discard_since(probe, dict(zip(symbol_names or (), get_state())))
        if rebound is not None:
            raise _rebound_error(rebound, construct_at("the while loop"))

    def step(lead):
        body()
        return []

    _loop(construct_at("the while loop"), get_state, set_state, symbol_names, opts, [], [], lambda lead: test(), step,
          (test, body))


def staged_for_stmt(iter_, extra_test, body, get_state, set_state, symbol_names, opts):
    """Graph path of ``for``: a ``While`` over a hidden counter that indexes the iterable
    (``iterables.as_sequence``); ``extra_test`` (lowered ``break``/``return`` flags) joins its condition."""
    where = construct_at("the for loop")
    sequence = iterables.as_sequence(iter_, where)
    length = sequence.length()
    counter0 = apply.constant(0, sequence.index_dtype, weak=True)  # an index: a Python int

    def test(lead):
        more = ops.less(lead[0], length)
        if extra_test is None:
            return more
        extra = extra_test()
        if isinstance(extra, Tensor):
            return ops.logical_and(more, as_predicate(extra, where))
        return more if extra else apply.constant(False)

    def step(lead):
        body(sequence.item(lead[0]))
        return [lead[0] + 1]

    _loop(where, get_state, set_state, symbol_names, opts, [counter0], ["<loop counter>"], test, step,
          (body, extra_test))


def _loop(where, get_state, set_state, symbol_names, opts, lead, lead_labels, test, step, bodies):
    """A ``While`` over the state, after the ``lead`` loop values (``for_stmt``'s hidden counter).

    ``test(lead_values)`` gives the condition and ``step(lead_values)`` runs the
    body and gives the next lead values; ``set_state`` has bound the state first.
    Attributes and items that calls in the body change are added to the state (``outside_writes``).
    """
    outside_writes.as_state(
        lambda get, put, names, _: _loop_graph(where, get, put, names, opts, lead, lead_labels, test, step, bodies),
        get_state, set_state, symbol_names, None)


def _loop_graph(where, get_state, set_state, symbol_names, opts, lead, lead_labels, test, step, bodies):
    init = tuple(get_state())
    names = statement_state.labels(symbol_names, init, opts)
    statement_state.refuse_shared(init, names, where)
    outside = outside_writes.Snapshot(symbol_names or (), where)
    opts = opts or {}
    k = len(lead)
    origins = []  # the last traced body's: which list or dict each of the state's is after it

    def trace(init, staged):
        flat, labels = statement_state.flatten_state(init, names, staged)

        def cond_fn(values):
            set_state(statement_state.pack_state(init, values[k:], staged))
            before = tuple(get_state())
            condition = outside.call(outside.locking(test), values[:k])
            outside.check(where, condition=True)
            _refuse_rebound(before, tuple(get_state()), names, where)
            return condition

        def body_fn(values):
            given = statement_state.pack_state(init, values[k:], staged)
            watch = container_identity.Watch(given)
            set_state(given)
            aliases.refuse_unseen(init, names, symbol_names or (), bodies, where)
            new_lead = outside.call(raises.run_body, outside.locking(step), values[:k])
            outside.check(where)
            out = statement_state.read_state(get_state, where)
            flat = statement_state.flatten_like(init, out, names, where, staged)
            found = watch.ended(out, init, names, where)
            origins[:] = [container_identity.loop_origins(found, init, names, where, statement_state.ROLES)]
            return [*new_lead, *flat]

        invariants = statement_state.loop_invariants(opts, flat, labels, where)
        return build_while(cond_fn, body_fn, [*lead, *flat], labels=[*lead_labels, *labels], where=where,
                           invariants=None if invariants is None else [None] * k + invariants,
                           maximum_iterations=opts.get("maximum_iterations"), stage_lists=True)

    with aliases.copies_of_state():
        final, init, staged = retrace.restaging(trace, init)
    statement_state.bind(set_state, init, statement_state.pack_state(init, final[k:], staged), names, where,
                         origins[0] if origins else None)


def _refuse_rebound(before, after, names, where):
    """A loop variable the test rebinds (through a function it calls: ``nonlocal k``) is refused: the
    loop's condition gives only its truth value, so the new value could not reach the body."""
    for name, old, new in zip(names, before, after):
        if new is not old:
            raise _rebound_error(name, where)


def _rebound_error(name, where):
    return TracingError(
        f"the test of {where} assigns '{name}' (through a function it calls), which a tensor loop cannot carry "
        f"from its condition (the condition gives only its truth value). Assign '{name}' in the loop body "
        "instead, or keep the test free of assignments.")


dispatch.register("while_stmt", is_tensor, staged_while_stmt, backend="numpy")
dispatch.register("for_stmt", iterables.is_staged, staged_for_stmt, backend="numpy")
