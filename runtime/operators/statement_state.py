"""The state of a statement while it is traced: flattened to loop values, copied, written back.

The state model itself (what is state, and what cannot be represented) is
stated once, in ``autograph.runtime.operators``' docstring; these are its
mechanics for the graph paths of ``if_stmt``, ``while_stmt`` and
``for_stmt``.

Retracing is not decided here: ``tracing/retrace.py`` owns it (the rounds
of a loop body's traces, and ``restaging``, the loop over the state's
structure).  This module only asks for it: ``flatten_like`` raises
``Restage`` when a body changed what the flattening of an entry must be (a
top-level list that grows is staged whole; an unset return value became
nested).  Tracing owns it because ``data/staged_loop.py`` needs the same
rounds, and the data layer should not depend on the operators' internals.
"""

from __future__ import annotations

from autograph.runtime.core import nest
from autograph.runtime.core.undefined import UndefinedReturnValue
from autograph.runtime.errors import TracingError
from autograph.runtime.operators import aliases, container_identity
from autograph.runtime.ops.list_operators import StagedList
from autograph.runtime.tracing import staged_list
from autograph.runtime.tracing.branches import expand_return_placeholder
from autograph.runtime.tracing.retrace import Restage, StageFirst
from autograph.runtime.tracing.values import is_return_placeholder, is_undefined


# The roles an operator call's ``opts`` may give state variables (``{'return_value': 'retval_'}``,
# from the converter) -> the label that stands for the variable (never an identifier, so never a
# user's variable).
_ROLE_LABELS = {"return_value": "the return value", "return_flag": "the return flag"}
RETURN_VALUE = _ROLE_LABELS["return_value"]
ROLES = frozenset(_ROLE_LABELS.values())  # variables of the generated code: no user name holds their objects
_FALLS_OFF = "the return value (None on a path that ends without a return)"


def roles(opts):
    """The ``(role, name)`` pairs of ``opts`` (a loop's options) that ``if_stmt`` takes."""
    return tuple((role, opts[role]) for role in _ROLE_LABELS if opts and role in opts)


def labels(symbol_names, state, opts=None):
    """The state's labels for messages: its symbols as written, those with a role described (a
    return value still None: the value of the paths that end without a return)."""
    described = {opts[role]: label for role, label in _ROLE_LABELS.items() if opts and role in opts}
    names = [described.get(n, n) for n in symbol_names or ()]
    names = [_FALLS_OFF if n == RETURN_VALUE and state[i] is None else n for i, n in enumerate(names[:len(state)])]
    names += [f"<state {i}>" for i in range(len(names), len(state))]
    return names


def after_return(outputs, names):
    """A branch's ``outputs`` where it certainly returned (its return flag is the Python ``True``):
    the variables it leaves unbound (``y`` after ``if x > 1: return ...``) are never read on that
    path (what follows a return is guarded by the flag), so they take the other branch's value
    (zeros of it) rather than being refused as defined in one branch only."""
    if _ROLE_LABELS["return_flag"] not in names[:len(outputs)]:
        return outputs
    if outputs[names.index(_ROLE_LABELS["return_flag"])] is not True:
        return outputs
    return tuple(UndefinedReturnValue() if is_undefined(v) else v for v in outputs)


def read_state(get_state, where):
    """``get_state()``, with a variable the traced code deleted (``del x``) as a ``TracingError``."""
    try:
        return tuple(get_state())
    except NameError as e:
        raise TracingError(
            f"a variable of {where} has no value after tracing it ({e}): a tensor if or loop cannot "
            "delete (del) a variable on some paths. Assign it a value instead of deleting it."
        ) from None


def is_state_leaf(value, staged: bool) -> bool:
    """Top-level state entries that are one loop value: a staged list, or a non-container."""
    return (staged and type(value) is list) or is_undefined(value) or not nest.is_nested(value)


def flatten_state(state, names, staged):
    flat, labels = [], []
    for index, (name, entry) in enumerate(zip(names, state)):
        if is_state_leaf(entry, index in staged):
            flat.append(entry)
            labels.append(name)
        else:
            flat.extend(nest.flatten(entry))
            labels.extend(name + path for path in nest.leaf_paths(entry))
    return flat, labels


def flatten_like(init, new, names, where, staged):
    """Flattens the state ``new`` a body produced, checking it against ``init``'s structure.

    A top-level list whose length the body changes (or that an inner tensor
    ``if`` staged) raises ``Restage``: the loop is traced again with that
    list staged (one tensor of its elements).
    """
    new = tuple(new)
    if len(new) != len(init):
        raise TracingError(f"get_state() of {where} returned {len(new)} values, expected {len(init)}")
    flat = []
    for index, (name, before, after) in enumerate(zip(names, init, new)):
        if is_return_placeholder(before) and type(after) is list:
            # A list returned from inside the loop: unset, it is an empty list, which the loop can
            # stage like any list it grows (the unset value is never returned).
            raise Restage(index, [])
        if is_return_placeholder(before) and nest.is_nested(after):
            raise Restage(index, expand_return_placeholder(before, after))
        if is_state_leaf(before, index in staged):
            flat.append(after)
            continue
        if name == RETURN_VALUE and type(before) is not list:
            # The return value holds a list the loop grows (``return len(out), out`` in the body):
            # that list is one leaf, a staged list (unset, or empty: zeros of no rows).  (A list
            # returned by itself is staged as any top-level list is, below.)
            leafed = _lists_as_leaves(before, after, name, where)
            if leafed is not None:
                raise Restage(index, leafed)
            after = _staged_unset_lists(before, after, name, where)
        if type(before) is list and (type(after) is not list or len(before) != len(after)):
            if not name.isidentifier() and name != RETURN_VALUE:
                # Only a local list is staged: converted code rebinds it at every append
                # (l = ag__.list_append(l, x)); an attribute's list keeps its own methods.
                # (The return value is a local of the generated code, only ever assigned.)
                refuse_held_list(name, where)
            raise Restage(index)  # grown or shrunk (maybe staged by a tensor if inside the body)
        _refuse_structure_change(name, before, after, where)
        flat.extend(nest.flatten(after))
    return flat


def _refuse_structure_change(name, before, after, where):
    """A loop variable whose structure (dict keys, their order, lengths, kinds) an iteration changes."""
    diff = nest.mismatch(before, after)
    missing = nest.missing_key(before, after) if diff is not None else None
    if missing is not None:
        path, existed = missing
        change = "deletes" if existed else "creates"
        raise TracingError(
            f"the body of {where} {change} '{name}{path}'; a tensor loop must keep a dict's keys. Set "
            f"{name}{path} before the loop (with the dtype the loop gives it)."
        )
    grown = nest.grown_list(before, after) if diff is not None else None
    if grown is not None:
        path, held = grown
        refuse_held_list(f"{name}{path}", where, aliases.held_elsewhere(held, f"{name}{path}"))
    if diff is not None:
        raise TracingError(
            f"'{name}' changes structure in {where}: {diff} (before vs after an iteration). A loop "
            "variable must keep its structure; build it with its final structure before the loop."
        )
    order = nest.key_order_mismatch(before, after)
    if order is not None:
        path, keys_before, keys_after = order
        raise TracingError(
            f"the body of {where} reorders the keys of the dict '{name}{path}' ({keys_before} before an "
            f"iteration, {keys_after} after it); Python iterates a dict in insertion order, so after the "
            "loop the order would depend on whether it ran. Keep the keys in place: assign d[k] = v "
            "instead of deleting and inserting k."
        )


def refuse_held_list(label, where, alias=None):
    """A list held in an attribute, a dict or another list (``label``; also held as ``alias``) that a
    loop grows (a numpy or JAX tensor loop: only a local list is staged)."""
    also = f" (the same list as '{alias}')" if alias is not None else ""
    raise TracingError(
        f"the list '{label}'{also} changes length in the body of {where}; a tensor loop can stage (grow) "
        f"only a list held in a local variable. Build it in a local, e.g. `items = []` before "
        f"the loop, `items.append(...)` in it, and `{label} = items` after it."
    )


def _lists_as_leaves(before, after, label, where):
    """``before`` (the return value before the body) with each list that ``after`` holds as a
    staged list, or as a list of another length, made one leaf: an unset one if it is empty or
    unset (an empty staged list), else its items to stage (``StageFirst``); None if there is none."""
    if type(before) is list:
        grown = isinstance(after, StagedList) or (type(after) is list and len(after) != len(before))
        if not grown:
            return None
        if all(is_return_placeholder(v) for v in before):
            return UndefinedReturnValue()
        return StageFirst(before, label, where)
    if type(before) is tuple and type(after) is tuple and len(before) == len(after) and not nest.is_namedtuple(before):
        parts = [_lists_as_leaves(b, a, f"{label}[{i}]", where) for i, (b, a) in enumerate(zip(before, after))]
        if all(p is None for p in parts):
            return None
        return tuple(b if p is None else p for b, p in zip(before, parts))
    if type(before) is dict and type(after) is dict and before.keys() == after.keys():
        parts = {k: _lists_as_leaves(before[k], after[k], f"{label}[{k!r}]", where) for k in before}
        if all(p is None for p in parts.values()):
            return None
        return {k: before[k] if parts[k] is None else parts[k] for k in before}
    return None


def _staged_unset_lists(before, after, label, where):
    """``after`` with each Python list that sits where ``before`` has one leaf (unset, or a staged
    list) staged (stacked)."""
    if isinstance(before, StagedList) and type(after) is list:
        return staged_list.stack(after, like=before, label=label, where=where)
    if is_return_placeholder(before) and type(after) is list:
        # An empty list is still unknown (the loop traces a list it grows as a Python list first):
        # the leaf stays unset in this trace.
        return staged_list.stack(after, label=label, where=where) if after else before
    if type(before) is tuple and type(after) is tuple and len(before) == len(after) and not nest.is_namedtuple(before):
        return tuple(_staged_unset_lists(b, a, label, where) for b, a in zip(before, after))
    if type(before) is dict and type(after) is dict and before.keys() == after.keys():
        return {k: _staged_unset_lists(before[k], after[k], label, where) for k in before}
    return after


def pack_state(init, flat, staged):
    flat = list(flat)
    out, index = [], 0
    for position, entry in enumerate(init):
        if is_state_leaf(entry, position in staged):
            out.append(flat[index])
            index += 1
        else:
            count = len(nest.flatten(entry))
            packed = nest.pack_as(entry, flat[index:index + count])
            aliases.record_copies(entry, packed)
            out.append(packed)
            index += count
    return tuple(out)


def fresh(state):
    """The state with its lists and dicts copied: tracing a body never mutates the user's containers.

    A container reached twice (``ys = xs``, ``box = {'r': xs}``) is copied once, so the traced
    body sees the aliasing Python would."""
    memo = {}

    def copy(value):
        kind = type(value)
        if kind is not list and kind is not dict and kind is not tuple:
            return value
        if id(value) in memo:
            return memo[id(value)]
        if kind is list:
            memo[id(value)] = result = []
            result.extend(copy(v) for v in value)
        elif kind is dict:
            memo[id(value)] = result = {}
            result.update((k, copy(v)) for k, v in value.items())
        else:
            return tuple(copy(v) for v in value)
        aliases.record_copy(result, value)
        return result

    return tuple(copy(v) for v in state)


def shared_container(state, names):
    """``(path, other path, kind)`` of the first list or dict the state reaches at two paths
    (``ys`` and ``xs`` after ``ys = xs``), else None."""
    seen = {}
    for name, value in zip(names, state):
        found = []
        _lists_in(value, name, found, dicts=True)
        for path, container in found:
            first = seen.setdefault(id(container), path)
            if first != path:
                return first, path, type(container).__name__
    return None


def refuse_shared(state, names, where):
    """A tensor loop carries each state variable separately: a list or dict reached at two of its
    paths would come out as two objects.  Refused, naming both paths."""
    shared = shared_container(state, names)
    if shared is not None:
        first, other, kind = shared
        raise TracingError(
            f"'{first}' and '{other}' are the same {kind} before {where}, which changes it; a tensor loop "
            f"carries each of its variables separately, so after it they would be two {kind}s, where "
            f"Python has one. Use one name for the {kind} in and after the loop."
        )


def bind(set_state, init, final, names, where, origins=None):
    """Binds ``final`` as the state, each list and dict the object Python would have there
    (``container_identity.write_back`` by the bodies' ``origins``; without them, as no body was
    traced, ``init``'s containers at the same paths), then refuses aliases left stale: a Python
    list of ``init`` that the statement staged (a tensor now stands for it) but that another name
    or path still holds (``ys = xs``, ``out = {'r': xs}``, ``self.items``) would not see the
    appends there, as it does in Python."""
    lists = []
    for name, before in zip(names, init):
        _lists_in(before, name, lists)
    if origins is None:
        origins = container_identity.kept_in_place(init)
    bound = container_identity.write_back(init, final, origins)
    set_state(bound)
    if lists:
        kept = []
        for name, value in zip(names, bound):
            _lists_in(value, name, kept)
        still_lists = {label for label, _ in kept}  # (a list replaced by a new list was not staged)
        kept = {id(value) for _, value in kept}
        replaced = [(label, value) for label, value in lists if id(value) not in kept and label not in still_lists]
        first = {}
        for label, value in replaced:
            other = first.setdefault(id(value), label)
            if other != label:
                raise TracingError(aliases.stale_message(other, label, where))
        if replaced:
            # Inside the body of an enclosing tensor statement these are its copies of its state: the
            # user's names hold the lists they copy.
            replaced += [(label, held) for label, value in replaced for held in aliases.originals(value)]
            aliases.refuse_stale(replaced, where)
    return bound


def _lists_in(value, label, into, dicts=False):
    """Appends ``(label, list)`` for each list in ``value`` (inside tuples, dicts and lists), and
    with ``dicts`` each dict too."""
    kind = type(value)
    if kind is list or (dicts and kind is dict):
        into.append((label, value))
    if kind is list or kind is tuple:
        for i, item in enumerate(value):
            _lists_in(item, f"{label}[{i}]", into, dicts)
    elif kind is dict:
        for key, item in value.items():
            _lists_in(item, f"{label}[{key!r}]", into, dicts)


def loop_invariants(opts, flat, labels, where):
    """``opts['shape_invariants']`` (pairs ``(value, shape)`` or a dict ``{name: shape}``) per flat value."""
    spec = (opts or {}).get("shape_invariants")
    if not spec:
        return None
    result = [None] * len(flat)
    pairs = spec.items() if isinstance(spec, dict) else spec
    for key, shape in pairs:
        if isinstance(key, str):
            matches = [i for i, label in enumerate(labels) if label == key]
        else:
            matches = [i for i, value in enumerate(flat) if value is key]
        if not matches:
            raise TracingError(
                f"a shape invariant of {where} is given for {key!r}, which is not a variable the loop "
                f"changes (those are {', '.join(labels) or 'none'}). Give invariants only for loop variables."
            )
        for i in matches:
            result[i] = shape
    return result
