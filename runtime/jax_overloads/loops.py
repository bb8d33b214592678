"""``while`` and ``for`` on traced values: ``lax.while_loop`` and ``lax.scan`` over the state.

* ``while test(): body()`` with a traced test is a ``lax.while_loop`` whose
  carry is the state (``carry.py`` decides which leaves); the lowered
  ``break``/``return`` flags (``opts['extra_test']``) join the test.
* ``for row in x`` over a traced array (and ``enumerate``/``zip`` of arrays)
  has a static trip count: a ``lax.scan`` over the first axis, so
  ``jax.grad`` differentiates through it; a list the body appends to comes
  out stacked (the scan's outputs).  An ``extra_test`` that is traced guards
  each iteration with a ``lax.cond``.
* ``for i in range(n)`` with a traced bound (``range_`` gives a
  ``TracedRange``) has a dynamic trip count: a ``lax.while_loop`` over a
  counter (what ``lax.fori_loop`` does for traced bounds).
"""

from __future__ import annotations

import threading

import jax.numpy as jnp
from jax import lax

from autograph.runtime.core.location import construct_at
from autograph.runtime.errors import TracingError
from autograph.runtime.jax_overloads import branches, carry, errors, logic, outside, values
from autograph.runtime.operators import container_identity, outside_writes, statement_state


class TracedRange:
    """``range(start, stop, step)`` with a traced bound."""

    __slots__ = ("start", "stop", "step")

    def __init__(self, *args):
        start, stop, step = (0, args[0], 1) if len(args) == 1 else (*args, 1)[:3]
        if type(step) is int and step == 0:
            raise ValueError("range() arg 3 must not be zero")
        self.start, self.stop, self.step = start, stop, step

    def more(self, i):
        if type(self.step) is int:
            return i < self.stop if self.step > 0 else i > self.stop
        return jnp.where(self.step > 0, i < self.stop, i > self.stop)


class Scanned:
    """What ``enumerate``/``zip`` of traced arrays iterate: arrays scanned together, and how an item
    is made from their rows (``enumerate`` adds the position)."""

    __slots__ = ("arrays", "counted", "start")

    def __init__(self, arrays, counted=False, start=0):
        self.arrays, self.counted, self.start = tuple(arrays), counted, start


def range_(*args):
    return TracedRange(*args)


def enumerate_(iterable, start=0):
    if values.kind(iterable) != values.ARRAY:
        return enumerate(iterable, start)
    return Scanned([iterable], counted=True, start=start)


def zip_(*iterables):
    if not all(values.kind(v) == values.ARRAY for v in iterables):
        raise TracingError(f"{construct_at('the zip()')} mixes traced arrays with other iterables; "
                           "under JAX zip only arrays (or convert the others with jnp.asarray).")
    return Scanned(iterables)


def _combined(extra_test, test):
    if extra_test is None:
        return test

    def both():
        keep = extra_test()
        if values.kind(keep) != values.ARRAY:
            return test() if keep else False
        return logic.and_(keep, test)

    return both


class _Bodies(threading.local):
    """Per ``_traced`` loop being traced, innermost last: the ``origins`` of its body's last trace."""

    def __init__(self):
        self.stack = []


_BODIES = _Bodies()


def _record_body(watch, state, init, names, where):
    """After a body trace: which list or dict each of the state's is (``container_identity``)."""
    if _BODIES.stack:
        _BODIES.stack[-1][:] = [watch.ended(state, init, names, where)]


def _traced(where, get_state, set_state, symbol_names, opts, bodies, run, can_stage=False):
    """Runs ``run(init, names, plan, get_state, set_state, bodies)`` until the plan holds; binds the
    final state.  ``bodies`` (the loop's functions) run watched for changes outside the state; an
    attribute or item their calls change joins the state, and the loop is traced again (``outside.py``)."""
    def attempt(get, put, names, _):
        init = statement_state.read_state(get, where)
        labels = statement_state.labels(names, init, opts)
        statement_state.refuse_shared(init, labels, where)
        watched = outside.watched(bodies, names, where)
        plan = carry.guess(init, can_stage)
        _BODIES.stack.append([])
        try:
            for _ in range(len(init) * 3 + 3):
                try:
                    final = run(init, labels, plan, get, put, watched)
                    break
                except carry.Replan as replan:
                    plan = replan.plan
            else:  # pragma: no cover - each replan fixes one more leaf
                raise TracingError(f"the body of {where} gave no stable carry; please report it with the source")
        finally:
            found = _BODIES.stack.pop()
        origins = container_identity.loop_origins(found[-1], init, labels, where, statement_state.ROLES) if found \
            else container_identity.kept_in_place(init)
        put(container_identity.write_back(init, final, origins))

    outside_writes.as_state(attempt, get_state, set_state, symbol_names, None)


def while_stmt(test, body, get_state, set_state, symbol_names, opts):
    """``while`` on a traced test: ``lax.while_loop`` (with ``maximum_iterations`` as a counter)."""
    where = construct_at("the while loop")
    opts = opts or {}
    maximum = opts.get("maximum_iterations")

    def run(init, names, plan, get, put, bodies):
        watched_test, watched_body = bodies
        test_ = _combined(opts.get("extra_test"), watched_test)

        def step(_):
            watched_body()
            return ()

        return _while(where, init, names, plan, get, put, lambda _: test_(), step, (), maximum)

    _traced(where, get_state, set_state, symbol_names, opts, (test, body), run)


def _while(where, init, names, plan, get_state, set_state, test, step, lead, maximum):
    start = carry.initial_carry(init, plan)
    plan = carry.settle(plan, start)
    k = len(lead) + (maximum is not None)
    lead = list(lead) + ([jnp.asarray(0, jnp.int32)] if maximum is not None else [])
    test, step = errors.refusing_raises(test, where), errors.refusing_raises(step, where)

    def cond_fun(values_):
        set_state(carry.state_of(init, plan, values_[k:], names, where))
        more = values.predicate(test(values_[:len(lead) - (maximum is not None)]), where)
        return more if maximum is None else jnp.logical_and(more, values_[k - 1] < maximum)

    def body_fun(values_):
        given = carry.state_of(init, plan, values_[k:], names, where)
        watch = container_identity.Watch(given)
        set_state(given)
        new_lead = list(step(values_[:k - (maximum is not None)]))
        state = statement_state.read_state(get_state, where)
        _record_body(watch, state, init, names, where)
        new, _ = carry.body_outputs(init, plan, state, names, where, False)
        return (*new_lead, *([values_[k - 1] + 1] if maximum is not None else []), *new)

    final = lax.while_loop(cond_fun, body_fun, (*lead, *start))
    return carry.final_state(init, plan, final[k:], [None] * sum(p is carry.STAGED for p in plan))


def for_stmt(iter_, extra_test, body, get_state, set_state, symbol_names, opts):
    """``for`` over a traced array, ``enumerate``/``zip`` of arrays (``lax.scan``) or a traced range."""
    where = construct_at("the for loop")
    if isinstance(iter_, TracedRange):
        return _range_loop(where, iter_, extra_test, body, get_state, set_state, symbol_names, opts)
    scanned = iter_ if isinstance(iter_, Scanned) else Scanned([iter_])
    lengths = set()
    for array in scanned.arrays:
        shape = values.aval_of(array).shape
        if not shape:
            raise TracingError(f"{where} iterates over a 0-d array; iterate over an array of at least one axis.")
        lengths.add(shape[0])
    if len(lengths) > 1:
        raise TracingError(f"{where} zips arrays of lengths {sorted(lengths)}; under JAX they must have one length.")
    (length,) = lengths
    _traced(where, get_state, set_state, symbol_names, opts, (extra_test, body),
            lambda init, names, plan, get, put, bodies: _scan(where, init, names, plan, get, put, scanned, length,
                                                              *bodies), can_stage=True)


def _item(scanned, rows, index):
    item = rows[0] if len(rows) == 1 else tuple(rows)
    return (index + scanned.start, item) if scanned.counted else item


def _scan(where, init, names, plan, get_state, set_state, scanned, length, extra_test, body):
    start = carry.initial_carry(init, plan)
    plan = carry.settle(plan, start)
    xs = scanned.arrays + ((jnp.arange(length, dtype=jnp.int32),) if scanned.counted else ())

    def step(values_, rows):
        current = carry.state_of(init, plan, values_, names, where)
        set_state(current)
        index = rows[-1] if scanned.counted else None
        rows = rows[:len(scanned.arrays)]
        keep = True if extra_test is None else extra_test()
        if values.kind(keep) == values.ARRAY:
            _guarded(where, keep, lambda: body(_item(scanned, rows, index)), current, get_state, set_state, names,
                     init)
            state = statement_state.read_state(get_state, where)
        else:
            watch = container_identity.Watch(current)  # (taken before the body: the unguarded iteration's own)
            if keep:
                body(_item(scanned, rows, index))
            state = statement_state.read_state(get_state, where)
            _record_body(watch, state, init, names, where)
        new, appended = carry.body_outputs(init, plan, state, names, where, True)
        return tuple(new), tuple(tuple(items) for items in appended)

    final, ys = lax.scan(step, tuple(start), xs, length=length)
    return carry.final_state(init, plan, final, [_stacked(items) for items in ys])


def _stacked(per_item):
    """The items appended in each iteration, stacked in order: ``(n, ...)`` for one append per iteration."""
    if not per_item:
        return None
    if len(per_item) == 1:
        return per_item[0]
    together = jnp.stack(per_item, axis=1)
    return together.reshape((-1, *together.shape[2:]))


def _guarded(where, keep, run_body, current, get_state, set_state, names, init):
    """One iteration under ``lax.cond(keep, body, nothing)`` (a ``break`` or ``return`` flag is traced)."""
    carry.refuse_staged(current, names, "a break, continue or return decided by a traced value")
    def taken():
        given = statement_state.fresh(current)
        watch = container_identity.Watch(given)
        set_state(given)
        run_body()
        state = statement_state.read_state(get_state, where)
        _record_body(watch, state, init, names, where)
        return state

    def skipped():
        return tuple(current)

    outputs = branches.cond(values.predicate(keep, where), taken, skipped, names, where, current)
    set_state(outputs)


def _range_loop(where, rng, extra_test, body, get_state, set_state, symbol_names, opts):
    """``for i in range(traced)``: a ``lax.while_loop`` over the counter ``i``."""
    start = rng.start if values.kind(rng.start) == values.ARRAY else jnp.asarray(rng.start)

    def run(init, names, plan, get, put, bodies):
        extra_test, body_ = bodies

        def test(lead):
            more = rng.more(lead[0])
            if extra_test is None:
                return more
            keep = extra_test()
            if values.kind(keep) != values.ARRAY:
                return more if keep else jnp.asarray(False)
            return jnp.logical_and(more, values.predicate(keep, where))

        def step(lead):
            body_(lead[0])
            return (lead[0] + rng.step,)

        return _while(where, init, names, plan, get, put, test, step, (start,), (opts or {}).get("maximum_iterations"))

    _traced(where, get_state, set_state, symbol_names, opts, (extra_test, body), run)
