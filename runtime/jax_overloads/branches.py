"""``if`` and ``a if c else b`` on a traced condition: ``lax.cond`` over the state.

Each branch starts from a fresh copy of the state (``operators.statement_state.fresh``),
runs, and gives the state's leaves.  The operands of ``lax.cond`` are the
leaves a *plan* makes outputs: the ones whose values differ between the
branches (Python values both branches agree on stay Python; a variable set
to the same Python number on both paths stays that number).  ``lax.cond``
traces the true branch first, so the plan is guessed from it and checked
when the false branch is traced; a wrong guess (say the false branch gives a
float32 where the true one left a Python number) traces both again with the
plan the two branches fixed, which happens at most once per ``if``.
"""

from __future__ import annotations

import jax
import numpy as np
from jax import lax
from jax._src import core as jax_core  # the current trace: JAX has no public API for it

from autograph.runtime.core import nest
from autograph.runtime.core.location import construct_at
from autograph.runtime.errors import TracingError
from autograph.runtime.jax_overloads import carry, errors, outside, values
from autograph.runtime.operators import container_identity, outside_writes, statement_state
from autograph.runtime.tracing.branches import expand_return_placeholder


class _Replan(Exception):
    """The false branch found the guessed plan wrong: trace again with ``plan``."""

    def __init__(self, plan):
        super().__init__("replan")
        self.plan = plan


def _structure_check(labels, a, b, where):
    for label, x, y in zip(labels, a, b):
        if values.kind(x) == values.UNSET or values.kind(y) == values.UNSET:
            continue
        if type(x) is list and type(y) is list and len(x) != len(y):
            raise TracingError(
                f"the list '{label}' has {len(x)} items after the true branch but {len(y)} after the false "
                f"branch of {where}; under JAX a list can grow only in a loop with a static trip count "
                "(stacked into an array). Append on both paths, or select the item with jnp.where."
            )
        diff = nest.mismatch(x, y)
        if diff is not None:
            raise TracingError(
                f"'{label}' has a different structure in the two branches of {where}: {diff} (true branch "
                "vs false branch). Make both branches give it the same structure."
            )


def _leaves(entries):
    """The state entries' leaves, an unset return value expanded like the other path's structure."""
    return [leaf for entry in entries for leaf in nest.flatten(entry)]


def _fix(labels, true_out, false_out, where):
    """From both branches: the entries' structure (an unset return value takes the other path's)
    and the plan, one entry per leaf: its ``values.Aval`` when it is an output of the cond, else None."""
    _structure_check(labels, true_out, false_out, where)
    like = tuple(expand_return_placeholder(b, a) if values.kind(b) == values.UNSET else a
                 for a, b in zip(true_out, false_out))
    plan = []
    for label, structure, a, b in zip(labels, like, true_out, false_out):
        a, b = expand_return_placeholder(a, structure), expand_return_placeholder(b, structure)
        for path, x, y in zip(nest.leaf_paths(structure), nest.flatten(a), nest.flatten(b)):
            plan.append(values.join(label + path, x, y, where))
    return like, plan


def _guess(entries, init):
    """The plan guessed from the first branch traced: every leaf it changed to a number is an output."""
    plan = []
    before = _leaves(init)
    for i, leaf in enumerate(_leaves(entries)):
        same = i < len(before) and before[i] is leaf
        plan.append(values.aval_of(leaf) if values.is_numeric(leaf) and not same else None)
    return plan


def _operands(entries, like, plan):
    expanded = tuple(expand_return_placeholder(e, l) for e, l in zip(entries, like))
    return tuple(values.as_array(v, aval) for v, aval in zip(_leaves(expanded), plan) if aval is not None)


def cond(pred, true_fn, false_fn, labels, where, init=()):
    """``lax.cond`` of two functions returning state entries (one per label); returns the merged entries.

    ``init`` is the state before the branches, to guess which leaves they change.
    """
    traced = {}
    fixed = None  # (structure, plan) both branches fixed in an earlier attempt
    guessed = None

    def branch(fn, name, other_name):
        fn = errors.refusing_raises(fn, where)

        def run():
            nonlocal guessed
            entries = tuple(fn())
            traced[name] = entries
            other = traced.get(other_name)
            if other is not None:
                like, plan = _fix(labels, *((entries, other) if name == "true" else (other, entries)), where)
                if (fixed is not None and plan != fixed[1]) or (guessed is not None and plan != guessed):
                    raise _Replan((like, plan))
            elif fixed is not None:
                like, plan = fixed
            else:
                like, plan = entries, _guess(entries, init)
                guessed = plan
            return _operands(entries, like, plan)

        return run

    for _ in range(3):
        traced.clear()
        guessed = None
        try:
            outputs = lax.cond(pred, branch(true_fn, "true", "false"), branch(false_fn, "false", "true"))
            break
        except _Replan as replan:
            fixed = replan.plan
    else:  # pragma: no cover - a plan both branches fixed is the one they are traced with
        raise TracingError(f"the branches of {where} gave no stable plan; please report it with the source")
    like, plan = _fix(labels, traced["true"], traced["false"], where)
    results = iter(_selected(pred, like, plan, traced, outputs))
    merged = [next(results) if aval is not None else leaf for leaf, aval in zip(_leaves(like), plan)]
    return tuple(nest.pack_as(like, merged))


def _selected(pred, like, plan, traced, outputs):
    """The outputs of a cond whose branches compute nothing (each gives a value from outside or a
    constant: a break flag set, a variable kept) as ``lax.select``s, the program a person writes;
    XLA compiles a select much faster than a conditional.  The cond, unused, is taken out of the
    trace's equations (JAX has no public API for it)."""
    eqns = values.equations()
    if not outputs or not eqns or eqns[-1].primitive.name != "cond":
        return outputs
    cond_eqn = eqns[-1]
    if cond_eqn.effects or any(branch.jaxpr.eqns or branch.effects for branch in cond_eqn.params["branches"]):
        return outputs
    trace = jax_core.trace_ctx.trace
    sides = []
    for name in ("true", "false"):
        expanded = tuple(expand_return_placeholder(e, l) for e, l in zip(traced[name], like))
        side = [_outer(v, aval, trace) for v, aval in zip(_leaves(expanded), plan) if aval is not None]
        if any(v is None for v in side):
            return outputs
        sides.append(side)
    try:
        selected = tuple(lax.select(pred, t, f) for t, f in zip(*sides))
    except TypeError:  # operands lax.select does not take as they are: the cond's
        return outputs
    # unused, and jit would keep it in a loop body (XLA compiles it, then drops it)
    for index in range(len(eqns) - 1, -1, -1):
        if eqns[index] is cond_eqn:
            del eqns[index]
            index_eqn = eqns[index - 1] if index else None  # the predicate as the cond's int32 index
            if (index_eqn is not None and index_eqn.primitive.name == "convert_element_type"
                    and index_eqn.outvars[0] is getattr(cond_eqn.in_tracers[0], "val", None)):
                del eqns[index - 1]
            break
    return selected


def _outer(value, aval, trace):
    """``value`` as an operand in the enclosing trace, or None: a tracer of that trace, or a
    constant as numpy (which JAX inlines); a tracer the branch's trace made cannot leave it."""
    if isinstance(value, jax.core.Tracer):
        return value if getattr(value, "_trace", None) is trace and values.aval_of(value) == aval else None
    if values.kind(value) not in (values.ARRAY, values.NUMBER):
        return None
    return np.asarray(value, aval.dtype)


def if_stmt(cond_value, body, orelse, get_state, set_state, symbol_names, nouts, opts=None):
    """``if`` on a traced value: ``lax.cond``; the first ``nouts`` state variables are its outputs.
    An attribute or item the branches' calls change becomes an output too (``outside.py``)."""
    where = construct_at("the if")
    pred = values.predicate(cond_value, where)
    outside_writes.as_state(
        lambda get, put, names, outs: _if(pred, body, orelse, get, put, names, outs, opts, where),
        get_state, set_state, symbol_names, nouts)


def _if(pred, body, orelse, get_state, set_state, symbol_names, nouts, opts, where):
    init = statement_state.read_state(get_state, where)
    names = statement_state.labels(symbol_names, init, opts)
    labels = names[:nouts]
    carry.refuse_staged(init, labels, f"a traced if ({where})")
    body, orelse = outside.watched((body, orelse), symbol_names, where, traced=True)

    ended = []  # each branch's (origins, outputs): which list or dict each of its state's is

    def branch(fn):
        def run():
            given = statement_state.fresh(init)
            watch = container_identity.Watch(given, nouts)
            set_state(given)
            fn()
            state = statement_state.read_state(get_state, where)
            container_identity.refuse_dead_changes(init, state, nouts, names, where)
            ended.append((watch.ended(state[:nouts], init, names, where), state[:nouts]))
            return state[:nouts]
        return run

    outputs = cond(pred, branch(body), branch(orelse), labels, where, init[:nouts])
    origins = container_identity.if_origins(ended[-2:], init, names, where, statement_state.ROLES)
    set_state(container_identity.write_back(init, outputs + tuple(init[nouts:]), origins))


def if_exp(cond_value, if_true, if_false, expr_repr):
    """``if_true() if cond else if_false()`` on a traced condition: ``lax.cond`` of the two values."""
    where = construct_at(f"the conditional expression `... if {expr_repr} else ...`")
    pred = values.predicate(cond_value, where)
    (value,) = cond(pred, lambda: (if_true(),), lambda: (if_false(),), ["the value"], where)
    return value
