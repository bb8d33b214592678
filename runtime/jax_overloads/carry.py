"""The carry of a traced loop: which state leaves ``lax.while_loop``/``lax.scan`` carry, and how.

A *plan* has one entry per state entry: ``STAGED`` for a list the body
appends to (``lax.scan`` stacks the appended items into an array), or a list
with one entry per leaf, the leaf's carried ``values.Aval`` or ``None`` for a
Python value the loop leaves alone.  It is guessed from the state before the
loop (numbers and arrays are carried, an empty list is staged) and checked
against what each traced body gives; a wrong guess (a Python ``0`` that the
body makes a float32, a return value first set inside the loop, a list
grown that was not empty) raises ``Replan`` and the loop is traced again.
"""

from __future__ import annotations

import numpy as np

from autograph.runtime.core import nest
from autograph.runtime.errors import TracingError
from autograph.runtime.jax_overloads import values
from autograph.runtime.operators import statement_state
from autograph.runtime.tracing.values import same_python

STAGED = "staged"


class Replan(Exception):
    """A traced body refuted the plan: trace the loop again with ``plan``."""

    def __init__(self, plan):
        super().__init__("replan")
        self.plan = plan


class AppendOnly(list):
    """What a staged list is inside the body: it can be appended to, not read (its items are
    stacked only after the loop)."""

    __slots__ = ("label", "where")

    def _refuse(self, *args, **kwargs):
        raise TracingError(
            f"the list '{self.label}' is appended to in the body of {self.where}, so under JAX it is stacked "
            "into an array after the loop, and cannot be read inside it. Carry what the body needs in a "
            "variable of its own."
        )

    __len__ = __getitem__ = __iter__ = __contains__ = __bool__ = __setitem__ = __delitem__ = _refuse
    pop = insert = remove = index = count = sort = reverse = extend = _refuse


def refuse_staged(entries, names, construct):
    """A list appended to in a scanned body cannot grow under a ``lax.cond``: refused, naming it."""
    for name, entry in zip(names, entries):
        if isinstance(entry, AppendOnly):
            raise TracingError(
                f"the list '{name}' is appended to under {construct} in the body of {entry.where}; under JAX "
                "the items of a scanned loop are stacked, one per iteration, and none may be appended inside a "
                "traced if, even on every path. Compute the item in the if and append it once, after it "
                f"(`item = ... if c else ...`, then `{name}.append(item)`), or preallocate an array."
            )


def guess(init, can_stage):
    """The plan before the body is traced (``can_stage``: the loop has a static trip count)."""
    plan = []
    for entry in init:
        if can_stage and type(entry) is list and not entry:
            plan.append(STAGED)
        else:
            plan.append([values.aval_of(v) if values.is_numeric(v) else None for v in nest.flatten(entry)])
    return plan


def initial_carry(init, plan):
    """The arrays the loop starts from (an unset return value carried as zeros)."""
    carry = []
    for entry, entry_plan in zip(init, plan):
        if entry_plan is STAGED:
            continue
        carry += [values.as_array(v, aval) for v, aval in zip(_flat(entry, entry_plan), entry_plan) if aval]
    return carry


def settle(plan, carry):
    """The plan with each carried aval replaced by the initial carry's own (a cast may have
    made a weak value strong)."""
    avals = iter(values.aval_of(c) for c in carry)
    return [p if p is STAGED else [next(avals) if a is not None else None for a in p] for p in plan]


def _flat(entry, entry_plan):
    return [entry] if values.kind(entry) == values.UNSET else nest.flatten(entry)


def state_of(init, plan, carry, names, where):
    """The state entries the body starts from: carried leaves from ``carry``, staged lists empty."""
    leaves = iter(carry)
    entries = []
    for entry, entry_plan, name in zip(init, plan, names):
        if entry_plan is STAGED:
            staged = AppendOnly()
            staged.label, staged.where = name, where
            entries.append(staged)
            continue
        flat = [next(leaves) if aval is not None else v for v, aval in zip(_flat(entry, entry_plan), entry_plan)]
        entries.append(nest.pack_as(entry, flat) if values.kind(entry) != values.UNSET else flat[0])
    return tuple(entries)


def body_outputs(init, plan, new, names, where, can_stage):
    """``(carry, appended)`` the body gives: the carried leaves (checked against the plan) and, per
    staged list, the items appended.  Raises ``Replan`` when the body refutes the plan."""
    carry, appended, fixed = [], [], []
    for entry, entry_plan, after, name in zip(init, plan, new, names):
        if entry_plan is STAGED:
            items = list(list.__iter__(after)) if isinstance(after, AppendOnly) else None
            if items is None:
                raise TracingError(f"the list '{name}' is rebound in the body of {where}; under JAX a list "
                                   "a loop appends to can only be appended to (it is stacked after the loop).")
            appended.append(items)
            fixed.append(STAGED)
            continue
        if type(entry) is list and (type(after) is not list or len(after) != len(entry)):
            if not can_stage:
                raise TracingError(
                    f"the list '{name}' changes length in the body of {where}, whose trip count JAX does not "
                    "know; only a loop over an array or a static range stacks what it appends. Preallocate "
                    "an array and set its items (x = x.at[i].set(v)) instead.")
            raise Replan(_with_staged(plan, len(fixed)))
        fixed.append(_entry_outputs(name, entry, entry_plan, after, where, carry))
    if fixed != plan:
        raise Replan(fixed)
    return carry, appended


def _with_staged(plan, index):
    return [STAGED if i == index else p for i, p in enumerate(plan)]


def _entry_outputs(name, entry, entry_plan, after, where, carry):
    unset = values.kind(entry) == values.UNSET
    if unset and nest.is_nested(after):
        raise TracingError(f"{name} is a {type(after).__name__} returned from inside {where}; under JAX a "
                           "loop can return only a single array or number. Return the items one by one, or "
                           "assign them to variables and return after the loop.")
    if not unset:
        diff = nest.mismatch(entry, after)
        grown = nest.grown_list(entry, after) if diff is not None else None
        if grown is not None:
            statement_state.refuse_held_list(f"{name}{grown[0]}", where)
        if diff is not None:
            raise TracingError(f"'{name}' changes structure in the body of {where}: {diff} (before vs after "
                               "an iteration). Give it the same structure in every iteration.")
    paths = nest.leaf_paths(after if unset else entry)
    fixed = []
    for path, before, aval, value in zip(paths, _flat(entry, entry_plan), entry_plan, nest.flatten(after)):
        fixed.append(_leaf_output(name + path, before, aval, value, where, carry))
    return fixed


def _leaf_output(label, before, aval, value, where, carry):
    """The carried aval of one leaf after an iteration (appending the value to ``carry``)."""
    k = values.kind(value)
    if aval is None:
        if value is before or (values.kind(before) != values.UNSET and same_python(before, value)):
            return None
        if values.kind(before) == values.UNSET and values.is_numeric(value):
            carry.append(value)
            return values.aval_of(value)
        if values.kind(before) == values.UNDEFINED:
            raise TracingError(f"'{label}' is not defined before {where}, which JAX traces as one loop; "
                               f"assign {label} before the loop.")
        if values.is_numeric(before) or values.is_numeric(value):
            carry.append(value)
            return values.join(label, before, value, where, ("state before the loop", "loop body")) or None
        raise TracingError(f"'{label}' is {values.describe(before)} before {where} but {values.describe(value)} "
                           "after an iteration; JAX carries only arrays and numbers through a loop. Keep it "
                           "the same, or make it an array.")
    if k == values.UNDEFINED:
        raise TracingError(f"'{label}' becomes undefined in the body of {where}; assign it on every path.")
    if k not in (values.ARRAY, values.NUMBER):
        raise TracingError(f"'{label}' is an array before {where} but {values.describe(value)} after an "
                           "iteration; JAX carries one type through a loop.")
    new = values.aval_of(value)
    if new.shape != aval.shape:
        raise TracingError(f"'{label}' changes shape from {aval.shape} to {new.shape} in the body of {where}; "
                           "JAX loops keep shapes fixed. Pad it to one shape, or compute it outside the loop.")
    if new.dtype != aval.dtype or (aval.weak and not new.weak):
        if aval.weak:  # a Python number before the loop: it takes the dtype the body gives it
            carry.append(value)
            return values.Aval(aval.shape, values.join(label, _zero(aval), value, where).dtype, new.weak)
        # a weakly typed value takes the carry's dtype, unless that changes it (an int32 + 0.5)
        if not new.weak or np.result_type(aval.dtype, _zero(new)) != aval.dtype:
            raise TracingError(f"'{label}' changes dtype from {aval.dtype.name} to {new.dtype.name} in the body "
                               f"of {where}; a loop variable keeps its dtype. Cast it, or start it with that dtype.")
    carry.append(values.as_array(value, aval))
    return aval


def _zero(aval):
    """A weakly typed value of ``aval``'s dtype: a Python number (numpy: nothing is traced)."""
    return np.zeros((), aval.dtype).item()


def final_state(init, plan, carry, stacked):
    """The state entries after the loop: carried leaves from ``carry``, staged lists as arrays."""
    import jax.numpy as jnp

    leaves, lists = iter(carry), iter(stacked)
    entries = []
    for entry, entry_plan in zip(init, plan):
        if entry_plan is STAGED:
            items = next(lists)
            if items is None:
                entries.append(list(entry))
                continue
            entries.append(jnp.concatenate([jnp.stack(entry), items]) if entry else items)
            continue
        flat = [next(leaves) if aval is not None else v for v, aval in zip(_flat(entry, entry_plan), entry_plan)]
        entries.append(nest.pack_as(entry, flat) if values.kind(entry) != values.UNSET else flat[0])
    return tuple(entries)
