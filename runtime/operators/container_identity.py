"""Which list or dict object each name holds after a tensor ``if`` or loop: Python's identities.

A staged statement traces its bodies on copies of the state's lists and
dicts (``statement_state.fresh``, ``pack_state``), and binds the results
afterwards.  Python's objects are what the bodies did with them: a list the
body changed in place (``xs[0] = v``, or left alone) is still the user's
list, which the results are written into, so every other name for it sees
them; a list the body made (``xs = [v, w]``) is a new object, and the
user's old list keeps what it held (``ys = xs`` before still shows it).

``origins(containers(given), out)`` records, after a body, which of the
copies it was given (by identity) each list and dict of its state is now, by
path (the entry's index, then the keys and indices below it).  ``write_back``
binds the results by them.  A tensor ``if`` merges its branches'
(``if_origins``): a name that holds one existing list on one path and
another on the other (``c = a`` or ``c = b``), or that one branch changes in
place and the other replaces, cannot be one object for both paths and is
refused.  A list one branch replaces and the other leaves as it was (or a
loop body replaces, the loop maybe running zero times) becomes a new list,
right on every path but for its identity where Python keeps the old object:
so only when nothing else holds the old one (no other name, global or
caller: ``_refuse_held``), else refused.  A loop's body must keep each
list at its own path or replace it (``loop_origins``): a body that makes
one variable the list of another would need the loop to carry one object
under two names.  Instances of list and dict subclasses are not staged: a
body changing one is refused (``refuse_changed_subclasses``).

Before::

    ys = xs
    if x > 0:          # a tensor
        xs = [x, x]    # a new list on both paths: ys keeps the old one
    else:
        xs = [-x, x]

After (bound by ``write_back``): ``xs`` is a new list holding the ``If``'s
results; ``ys`` and the old list are left alone.
"""

from __future__ import annotations

from autograph.runtime.core import nest
from autograph.runtime.errors import TracingError
from autograph.runtime.operators import aliases
from autograph.runtime.tracing import argument_containers

_CONTAINERS = (list, dict)


def _children(value):
    kind = type(value)
    if kind is dict:
        return list(value.items())
    if kind is list or isinstance(value, tuple):
        return list(enumerate(value))
    return ()


def _containers_at(state):
    """``(path, value)`` for each list and dict of ``state`` (a tuple of entries), below lists,
    tuples and dicts too."""
    found = []
    todo = [((index,), value) for index, value in reversed(list(enumerate(state)))]
    while todo:
        path, value = todo.pop()
        if type(value) in _CONTAINERS:
            found.append((path, value))
        todo.extend((path + (step,), child) for step, child in reversed(_children(value)))
    return found


def containers(given) -> dict:
    """``{id: (path, container, its contents)}`` of the lists and dicts of ``given``, the state a body
    is about to be traced with (taken before it runs: the body may change them, or put others in their
    places); the contents a copy of the containers below, sharing the leaves."""
    at = {}
    for path, value in _containers_at(given):
        if id(value) not in at:
            at[id(value)] = (path, value, nest.copy_containers(value))
    return at


class Watch:
    """A body's state, taken just before it is traced (``Watch(given)``; the first ``live`` entries
    for the containers), to tell after it (``ended``) which list or dict each of its state's is."""

    __slots__ = ("copies", "subclassed")

    def __init__(self, given, live=None):
        self.copies = containers(given if live is None else given[:live])
        self.subclassed = subclass_contents(given)

    def ended(self, state, init, names, where) -> dict:
        """The ``origins`` of ``state``, the body's, once what cannot be bound is refused: a changed
        list or dict subclass, a container changed in place and then dropped while another name holds it."""
        refuse_changed_subclasses(self.subclassed, names, where)
        found = origins(self.copies, state)
        refuse_dropped_changes(self.copies, found, init, names, where)
        return found


def subclass_contents(state) -> list:
    """``(path, container, its items)`` for each instance of a subclass of list or dict in ``state``
    (``OrderedDict``, ``defaultdict``, ``Counter``, a user's): a traced body changes the object itself,
    which the statement cannot stage (``refuse_changed_subclasses``)."""
    found = []
    todo = [((index,), value) for index, value in enumerate(state)]
    while todo:
        path, value = todo.pop()
        kind = type(value)
        if kind is not list and kind is not dict and isinstance(value, (list, dict)):
            if not kind.__module__.startswith("autograph."):  # (autograph's own: JAX's append-only list)
                found.append((path, value, _items(value)))
        elif kind is list or kind is dict or isinstance(value, tuple):
            todo.extend((path + (step,), child) for step, child in _children(value))
    return found


def _items(container) -> list:
    return list(container.items()) if isinstance(container, dict) else list(container)


def refuse_changed_subclasses(found, names, where):
    """A ``TracingError`` (the contents put back first) if a body changed one of ``found``'s
    containers: its change would happen once, while tracing, not on the path Python takes."""
    for path, container, before in found:
        now = _items(container)
        if len(now) == len(before) and all(a is b or type(a) is tuple and type(b) is tuple and len(a) == len(b) and all(
                x is y for x, y in zip(a, b)) for a, b in zip(now, before)):  # (a dict's items: by identity, never ==)
            continue
        container.clear()
        container.update(before) if isinstance(container, dict) else container.extend(before)
        kind = type(container).__name__
        raise TracingError(
            f"the {kind} '{label(names, path)}' changed while {where} was traced; a tensor if or loop stages "
            f"plain lists and dicts only, and a change to a {kind} would happen once, while tracing, not on the "
            f"path Python takes. Use a plain dict or list in the statement (`dict(...)`, `list(...)`), or "
            "change it outside."
        )


def kept_in_place(init) -> dict:
    """The origins of a state no body was traced on: each list and dict the object at its own path."""
    return {path: path for path, _ in _containers_at(init)}


def origins(given, out) -> dict:
    """``{path in out: origin}`` for each list and dict of the state ``out`` a body left: the path
    of the container of ``given`` (``containers`` of the state it was traced with) it is, else the
    object itself (one the body made, or one it took from outside the state: ``c = b``)."""
    found = {}
    for path, value in _containers_at(out):
        entry = given.get(id(value))
        found[path] = entry[0] if entry is not None and entry[1] is value else value
    return found


def _outside(origin, names, path):
    """The name under which the code being traced holds ``origin``, an object a body put in its
    state, if it existed before (``c = b``): then it has an identity Python keeps; else None."""
    if isinstance(origin, tuple):
        return None
    return aliases.held_elsewhere(origin, label(names, path))


def _at_or_none(state, path):
    try:
        return value_at(state, path)
    except (LookupError, TypeError):
        return None


def value_at(state, path):
    value = state[path[0]]
    for step in path[1:]:
        value = value[step]
    return value


def label(names, path) -> str:
    return names[path[0]] + "".join(f"[{step!r}]" for step in path[1:])


def _unchanged(value, original) -> bool:
    """``value`` (a copy of ``original`` a body was given) still holds what ``original`` holds."""
    kind = type(original)
    if kind is list or kind is dict or isinstance(original, tuple):
        if type(value) is not kind or len(value) != len(original):
            return False
        if kind is dict:
            return list(value) == list(original) and all(_unchanged(value[k], original[k]) for k in original)
        return all(_unchanged(v, o) for v, o in zip(value, original))
    return value is original


def if_origins(branches, init, names, where, roles=frozenset()):
    """The origins after a tensor ``if`` from its branches' ``(origins, outputs)`` (the branches that
    ran to their end, true first); refuses a container whose object depends on the path, except
    below the generated code's own variables (``roles``: the return value), which are new then."""
    if len(branches) < 2:
        return dict(branches[0][0]) if branches else {}
    (first, first_out), (second, second_out) = branches
    merged = {}
    for path in [*first, *(p for p in second if p not in first)]:
        if path not in first or path not in second or names[path[0]] in roles:
            merged[path] = None  # below a container only one branch has there, or the return value: new
            continue
        a, b = first[path], second[path]
        if a is b or (isinstance(a, tuple) and a == b):
            merged[path] = a  # one container of the state, or one outside object, on both paths
            continue
        kind = type(value_at(first_out, path)).__name__
        a, b = (_known(origin, names, path) for origin in (a, b))
        if a is not None and b is not None:
            _refuse_two(label(names, path), kind, a, b, names, where)
        if a is not None or b is not None:
            kept, out, branch, other = (a, first_out, "true", "false") if a is not None else (b, second_out, "false", "true")
            _refuse_kept_on_one_path(label(names, path), kind, kept, value_at(out, path), init, names,
                                     f"in the {other} branch of {where}", branch, where)
        merged[path] = None  # a new object holding either path's contents
    return merged


def _known(origin, names, path):
    """``origin`` (of a branch's container) if the object existed before the ``if``: a path of the
    state, or the name that holds an outside object; None for a new one."""
    return origin if isinstance(origin, tuple) else _outside(origin, names, path)


def _refuse_two(what, kind, a, b, names, where):
    first, second = (n if isinstance(n, str) else label(names, n) for n in (a, b))
    raise TracingError(
        f"'{what}' is the {kind} '{first}' in the true branch but the {kind} '{second}' in the false branch "
        f"of {where}; after the if it would be one object or the other depending on the condition, which "
        f"one graph cannot follow. Make a new {kind} in both branches (`{what} = {kind}({first})`), or pick "
        "the values, not the object."
    )


def _refuse_kept_on_one_path(what, kind, kept, value, init, names, rebound, branch, where):
    """A container one branch keeps (``kept``: its path in the state, or the name of an outside
    object) while the other makes a new one: refused unless the kept one is unchanged and nothing
    else holds it (then the new object stands for both)."""
    if isinstance(kept, str):
        raise TracingError(
            f"'{what}' is the {kind} '{kept}' in the {branch} branch of {where} but a new {kind} on the other "
            f"path; Python's '{what}' is that very object on the first path, which one graph cannot follow. "
            f"Make a new {kind} on both paths (`{what} = {kind}({kept})`)."
        )
    if not _unchanged(value, value_at(init, kept)):
        raise TracingError(
            f"'{what}' is changed in place in the {branch} branch of {where} but is a new {kind} on the other "
            f"path; Python's other names for the old {kind} see the change on one path only, which one graph "
            f"cannot follow. Make a new {kind} in both branches, or change it in place in both "
            f"(`{what}[:] = ...`)."
        )
    _refuse_held(value_at(init, kept), label(names, kept), rebound)


def _and_originals(container) -> tuple:
    """``container``, and the user's object behind it when it is an enclosing statement's copy."""
    return (container, *aliases.originals(container))


def _holder(container, what):
    """The name (other than ``what``) under which the code being traced holds ``container`` (or the
    user's object behind it)."""
    for held in _and_originals(container):
        holder = aliases.held_elsewhere(held, what)
        if holder is not None:
            return holder
    return None


def _refuse_held(original, what, rebound):
    """A container that a name keeps on one path and is rebound from on another (a loop that may run
    zero times) becomes a new object on both; only unobservable if nothing else holds the old one:
    else Python's later changes through one name would show through the other on the first path."""
    kind = type(original).__name__
    argument = next((path for path in map(argument_containers.argument_path, _and_originals(original)) if path is not None), None)
    if argument is not None:
        raise TracingError(
            f"'{what}' is rebound to a new {kind} {rebound} but keeps the {kind} argument '{argument}' on "
            f"another path; there Python's '{what}' is still the caller's {kind}, which a change through it "
            f"would change. Rebind '{what}' on every path, e.g. `{what} = {kind}({what})` first."
        )
    holder = _holder(original, what)
    if holder is not None:
        raise TracingError(
            f"'{what}' is rebound to a new {kind} {rebound} but keeps its {kind} on another path, which "
            f"'{holder}' holds too; Python's '{what}' would still be that object on that path, and a change "
            f"through either name would show through the other. Copy it where the other name is made "
            f"(`{holder} = {kind}({what})`), or rebind '{what}' on every path."
        )


def picked(values, merged, where):
    """The value of a tensor conditional expression whose branches gave ``values``: the object
    itself if both gave one list or dict (or only one branch ran to its end); else ``merged`` (the
    ``If``'s, new containers), unless a branch gave a list or dict that existed before, which Python
    would return as is (``a if x > 0 else b``): refused, the object depending on the condition."""
    if values and all(v is values[0] for v in values) and _containers_at((values[0],)):
        return values[0]
    for value in values:
        for _, container in _containers_at((value,)):
            holder = aliases.held_elsewhere(container, "")
            if holder is not None:
                kind = type(container).__name__
                raise TracingError(
                    f"{where} gives the {kind} '{holder}' on one path and another value on the other; "
                    f"Python gives that very {kind} object, which one graph cannot choose by a tensor "
                    f"condition. Pick the values instead (`{kind}({holder})` in both branches makes a new "
                    f"{kind}), or use a tensor if statement that changes the {kind}s in place."
                )
    return merged


def refuse_dead_changes(init, state, live, names, where):
    """A list or dict that a branch changed in place through a name not used after the ``if`` (past
    the first ``live`` entries of the state): the change is dropped with the name, but another name
    holding the object sees it in Python (``ys = xs``, then ``xs += [v]`` in the branch)."""
    for index in range(live, len(init)):
        original = init[index]
        if type(original) in _CONTAINERS and not _unchanged(state[index], original):
            holder = _holder(original, names[index])
            if holder is not None:
                kind = type(original).__name__
                raise TracingError(
                    f"the {kind} '{names[index]}' is changed in place in a branch of {where}, and '{holder}' "
                    f"holds the same {kind}, which Python changes too; a tensor if stages the change only "
                    f"through names used after it. Change it through '{holder}', or use '{names[index]}' "
                    "after the if."
                )


def refuse_dropped_changes(given, found, init, names, where):
    """A list or dict of the state that a body changed in place and then dropped (``l[0] = 2`` then
    ``l = [...]``): Python's old object keeps the change, which another name holding it would show;
    the statement binds only what the body left.  ``given``: ``containers`` of the state the body
    was traced with; ``found``: its ``origins``."""
    kept = {origin for origin in found.values() if isinstance(origin, tuple)}
    for path, copy, before in given.values():
        if path in kept or _unchanged(copy, before):
            continue
        original = value_at(init, path)
        holder = _holder(original, label(names, path))
        if holder is not None:
            kind = type(original).__name__
            raise TracingError(
                f"'{label(names, path)}' is changed in place and then replaced by another {kind} in {where}; "
                f"Python's old {kind}, which '{holder}' holds too, keeps the change, and the statement binds "
                f"only the new one. Change the {kind} through '{holder}', or copy it before the change "
                f"(`{label(names, path)} = {kind}({label(names, path)})`)."
            )


def loop_origins(found, init, names, where, roles=frozenset()):
    """A loop body's origins, each list and dict at its own path or new (always, below ``roles``:
    the generated code's own variables); else a ``TracingError``."""
    result = {}
    for path, origin in found.items():
        if names[path[0]] in roles:
            result[path] = None
            continue
        if not isinstance(origin, tuple):
            outside = _outside(origin, names, path)
            if outside is None:
                result[path] = None  # made by the body
                original = _at_or_none(init, path)
                if type(original) in _CONTAINERS:  # (the loop may run zero times: then it is still this one)
                    _refuse_held(original, label(names, path), f"in the body of {where}")
                continue
            origin = outside
        if origin != path:
            other = origin if isinstance(origin, str) else label(names, origin)
            raise TracingError(
                f"the body of {where} makes '{label(names, path)}' the same object as '{other}'; a tensor "
                "loop carries each of its variables separately, so after an iteration they would be two "
                f"objects, where Python has one. Copy it (`{label(names, path)} = list({other})`) or use "
                "one name."
            )
        result[path] = origin
    return result


def write_back(init, final, found):
    """``final`` bound as Python would: each list and dict whose origin (``found``) is a container
    of ``init`` is that object, made to hold the new contents; the others are new objects."""

    def rebuild(value, path):
        kind = type(value)
        if kind is list:
            items = [rebuild(v, path + (i,)) for i, v in enumerate(value)]
        elif kind is dict:
            items = {k: rebuild(v, path + (k,)) for k, v in value.items()}
        elif isinstance(value, tuple):
            items = [rebuild(v, path + (i,)) for i, v in enumerate(value)]
            return type(value)._make(items) if hasattr(value, "_fields") else tuple(items)
        else:
            return value
        origin = found.get(path)
        target = origin if type(origin) is kind else value_at(init, origin) if origin is not None else None
        if type(target) is not kind:
            return items
        if kind is list:
            target[:] = items
        else:
            target.clear()
            target.update(items)
        return target

    return tuple(entry if entry is before else rebuild(entry, (i,))
                 for i, (before, entry) in enumerate(zip(init, final)))
