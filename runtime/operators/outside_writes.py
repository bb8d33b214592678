"""Changes a traced body makes outside its state: found by comparison, undone, refused.

While a tensor ``if`` or loop traces its bodies, Python code in them runs
once (per traced branch, per body trace), whatever the values.  The state
mechanics make the statement's *state* (the variables, attributes and
items the converter saw it change) right on every path; a change made by
something the converter cannot see -- a method ``c.bump()`` doing
``self.n += 1``, a helper doing ``d[k] = v`` or ``nonlocal c; c += 1``,
``setattr(o, 'n', ...)``, ``s.add(1)`` on a set, ``deque.append`` -- would
happen once while tracing (or on a branch that is not taken): a silent
wrong value.

``Snapshot`` records, before a statement is traced, what its code reaches
from outside: the enclosing function's local variables (those that are
not the statement's state), the globals its code names, and the attributes
and items of the objects, dicts, lists, sets and deques below them (two
levels).  After each traced body, ``check`` compares: a change to anything
that is not the statement's state is undone and refused with a
``TracingError`` naming it and the statement.  A body whose trace raises is
undone too (``Snapshot.call``): the loop tracer may throw that round away
and trace again, which must not find the first round's tensors in user
objects.
"""

from __future__ import annotations

import ast
import collections
import sys
import threading
import types

import numpy as np

from autograph.runtime.core.graph import current_graph
from autograph.runtime.core.tensor import Tensor
from autograph.runtime.core.undefined import is_undefined
from autograph.runtime.core.user_code import is_user_namespace
from autograph.runtime.errors import TracingError
from autograph.runtime.operators import recorded_values
from autograph.runtime.operators.calls import converted_codes, is_skipped_module, skipped_modules
from autograph.runtime.tracing import escapes, locked_arrays, trace

_DEPTH = 2  # levels of attributes / items recorded below a variable
_BUDGET = 2000  # objects recorded per statement, at most
_OPAQUE = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
           types.CodeType, Tensor, np.ndarray, np.generic, str, bytes, int, float, complex, bool, type(None),
           tuple, frozenset, range)
_OPAQUE_TYPES: dict = {}  # type -> whether its values are opaque (or Undefined), as found


def add_opaque_types(kinds) -> None:
    """Adds ``kinds`` to the values a snapshot does not look into: another backend's immutable
    arrays and tracers (JAX's), whose attributes are that backend's machinery, not user state."""
    global _OPAQUE
    _OPAQUE = _OPAQUE + tuple(k for k in kinds if k not in _OPAQUE)
    _OPAQUE_TYPES.clear()


class Snapshot:
    """What the code around a tensor statement reaches from outside, as it was before tracing it."""

    def __init__(self, symbols, where="the statement"):
        frames = _converted_frames()
        self.where = where
        self.entries = []  # (path, kind, holder, copy, covered keys): kind 'attr', 'item', 'seq' or 'set'
        # (frame, ((name, value), ...)): the variables of the converted code around it that are not its state
        # (all of them, not only closure cells: a call may write a frame's variables through the frame; one
        # that a function the bodies define changes through its closure is found by the check, and made state)
        self.locals = []
        self.arrays = []  # (path, numpy array): read-only while a body is traced (locked_arrays)
        self.frames = frames
        if not frames:
            return  # a graph path called by hand (rt.while_loop, tests): its state is what it says
        state = set(symbols)
        covered = _covered(symbols, frames)
        seen = set()
        opaque = _OPAQUE_TYPES
        for frame in frames:  # the statement's function, then the converted functions it is nested in
            variables = frame.f_locals
            watched = tuple([(n, v) for n, v in variables.items() if n not in state])
            if watched:
                self.locals.append((frame, watched))
            for name, value in variables.items():
                if isinstance(value, type):  # a class (a local function is mostly the converted code's own closure)
                    self._record(value, name, _DEPTH, covered, seen, namespaces=True)
                elif not opaque.get(type(value)):
                    self._record(value, name, _DEPTH, covered, seen)
            for name, value in escapes.globals_named(frame.f_code, frame.f_globals):
                if name not in variables and (not opaque.get(type(value)) or is_user_namespace(value)):
                    self._record(value, name, 1, covered, seen, namespaces=True)

    def _record(self, value, path, depth, covered, seen, namespaces=False):
        if type(value) is np.ndarray:
            self.arrays.append((path, value))
            return
        opaque = _OPAQUE_TYPES.get(type(value))
        if opaque is None:
            opaque = _OPAQUE_TYPES[type(value)] = isinstance(value, _OPAQUE) or is_undefined(value)
        if opaque and namespaces and is_user_namespace(value):
            opaque, depth = False, 0  # a class or function of the user's module: its own attributes only
        if opaque or id(value) in seen or len(seen) >= _BUDGET:
            return
        if type(value).__module__.startswith("autograph.") or id(value) in _library_state():
            # autograph's own (a trace counter the user's module imported; an ag.function, which sets up
            # its trace on its first call): not the user's state
            return
        seen.add(id(value))
        kind, items = recorded_values.contents(value)
        if kind is None:
            return
        skip = covered.get(id(value), ())
        if kind in ("attr", "item"):
            for key in skip:  # the statement's state there: assigned by it, never changed in place
                if type(items.get(key)) is np.ndarray:
                    self.arrays.append((_step(path, kind, key), items[key]))
            items = {k: v for k, v in items.items() if k not in skip}
            self.entries.append((path, kind, value, items, skip))
            if depth > 0:
                for key, child in items.items():
                    self._record(child, _step(path, kind, key), depth - 1, covered, seen)
        elif not skip:
            self.entries.append((path, kind, value, items, skip))

    def check(self, where, condition=False):
        """Undoes and refuses (``TracingError``) a change made since the snapshot outside the state.
        A change that a body's would make state (``NewState``) is refused when the ``condition`` of a
        loop makes it: the condition gives its truth value only, so nothing it changes can be carried."""
        if not self.entries and not self.locals:
            return
        changed = self._changed()
        if changed is None:
            return
        path, kind, place = changed
        self.restore()
        if place is not None:
            if condition:
                raise TracingError(
                    f"'{path}' changed while the condition of {where} was traced: something the test calls "
                    "changed it, which a tensor loop cannot carry from its condition (the condition gives only "
                    f"its truth value). Change '{path}' in the loop body instead, or keep the test free of changes.")
            raise NewState(place, path)
        construct = where.split(" at ")[0].split()[-1]
        if kind == "iter":
            raise TracingError(
                f"the iterator '{path}' advanced while the body of {where} was traced (next(), a for loop over it, "
                f"a generator's send): that runs once, while tracing, not at every iteration or only on the path "
                f"taken. Make its values a list or a tensor and index it (xs[i]), or advance it outside the "
                f"tensor {construct}."
            )
        if kind in (set, collections.deque):
            raise TracingError(
                f"the {kind.__name__} '{path}' changed while the body of {where} was traced: a tensor {construct} "
                f"cannot carry a {kind.__name__} (only lists grown with append are staged), and the change would "
                "happen once, while tracing, not at every iteration or only on the path taken. Use a list "
                f"(append to it) or a tensor instead, or change '{path}' outside the {construct}."
            )
        raise TracingError(
            f"'{path}' changed while the body of {where} was traced, but it is not a variable of that "
            f"{construct}: something the body calls changed it (a method or helper setting an attribute or "
            "item, setattr, a nonlocal update, a list method), which would happen once, while tracing, not "
            f"at every iteration or only on the path taken. Change '{path}' in the body itself (an "
            "assignment there makes it state), or return the new value from the call and assign it there."
        )

    def _changed(self):
        """``(path, container type or None, place or None)`` of the first change, or None; the place
        ``(holder, 'attr' or 'item', key)`` when an existing attribute or item got another value."""
        for frame, watched in self.locals:
            now = frame.f_locals  # (each read copies the frame's variables: once per frame and check)
            for name, value in watched:
                if now.get(name, value) is not value:
                    views = {id(frame): now}  # id(frame) -> frame.f_locals, for the cell's search
                    cell = _cell_of(name, now[name], self._outward(frame), views)
                    return name, None, None if cell is None else (cell, "cell", name)
        for path, kind, holder, before, skip in self.entries:
            _, after = recorded_values.contents(holder)
            if kind in ("attr", "item"):
                after = {k: v for k, v in after.items() if k not in skip}
                created_or_deleted = next((k for k in after.keys() ^ before.keys()), None)
                if created_or_deleted is not None:
                    return _step(path, kind, created_or_deleted), None, None
                key = next((k for k, v in before.items() if after[k] is not v), None)
                if key is not None:
                    return _step(path, kind, key), None, (holder, kind, key)
            elif kind == "iter":
                if after != before:
                    return path, "iter", None
            elif len(after) != len(before) or any(a is not b for a, b in zip(after, before)):
                return path, type(holder), None
        return None

    def _outward(self, frame) -> list:
        """``frame`` and the converted frames around it."""
        return self.frames[next(i for i, f in enumerate(self.frames) if f is frame):]

    def call(self, fn, *args, undo=True):
        """``fn(*args)`` (a traced body or condition), with what it changed outside undone if it raises
        (when ``undo``): a round of tracing that a ``Restage`` or a retry throws away must not leave its
        tensors in user objects for the next round to read (they belong to a discarded graph).  While
        it runs, a statement traced in ``fn`` takes this snapshot's frames as the frames around its
        own (``_converted_frames``)."""
        active = _ACTIVE.snapshots
        active.append(self)
        try:
            return fn(*args)
        except BaseException:
            if undo:
                self.restore()
            raise
        finally:
            active.pop()

    def locking(self, fn):
        """``fn`` (a body or condition being traced, not run as Python) with the numpy arrays the code
        reaches read-only while it runs (``locked_arrays``)."""
        def locked(*args):
            with locked_arrays.locked(self.arrays, locked_arrays.in_body(self.where)):
                return fn(*args)

        return locked

    def restore(self):
        """Puts back what the snapshot recorded (attributes, items, contents, and the variables of the
        enclosing function that a function defined there changed through its closure)."""
        views = {}
        for frame, watched in self.locals:
            now = _locals(frame, views)
            for name, value in watched:
                if now.get(name, value) is not value:
                    cell = _cell_of(name, now[name], self._outward(frame), views)
                    if cell is not None:
                        cell.cell_contents = value
        for _, kind, holder, before, skip in self.entries:
            recorded_values.restore(kind, holder, before, skip)


class NewState(BaseException):
    """Internal: a traced body changed ``place`` (``(holder, 'attr' or 'item', key)``, what messages
    call ``label``) outside its statement's state; ``as_state`` makes it state and traces again.
    (A BaseException: the loop tracer's retries on ``Exception`` must not catch it.)"""

    def __init__(self, place, label):
        super().__init__(label)
        self.place, self.label = place, label


_MAX_PLACES = 16  # attributes and items a statement's calls may add to its state


def as_state(run, get_state, set_state, symbol_names, nouts):
    """``run(get_state, set_state, symbol_names, nouts)`` -- the graph path of one statement --
    with each attribute or item its bodies' calls change (``c.bump()`` setting ``c.n``) added to
    its state, tracing it again, as often as ``NewState`` says.  ``nouts`` is an ``if``'s number of
    outputs (the added places are outputs too), None for a loop (all of its state is carried)."""
    places, labels = [], []
    library = getattr(current_graph(), "library", {})  # another backend's trace (JAX's) has no graph
    for _ in range(_MAX_PLACES + 1):
        before = set(library)
        accessors = _with_places(get_state, set_state, symbol_names, nouts, places, labels)
        init = tuple(accessors[0]())
        try:
            return run(*accessors)
        except NewState as new:
            for name in [n for n in library if n not in before]:
                del library[name]
            accessors[1](init)  # the statement's state (with the places added so far), as it was
            if any(h is new.place[0] and k == new.place[2] for h, _, k in places):
                raise TracingError(
                    f"'{new.label}' is changed by a call in a tensor if or loop, and cannot be made its state "
                    "(its path is not one autograph can name); assign it in the body itself."
                ) from None
            places.append(new.place)
            labels.append(new.label)
    raise TracingError(
        f"calls in a tensor if or loop changed more than {_MAX_PLACES} attributes or items outside its state "
        f"({', '.join(labels)}); assign them in the body itself, or return the new values from the calls."
    )


def _with_places(get_state, set_state, symbol_names, nouts, places, labels):
    """The state accessors and names with ``places`` inserted after the first ``nouts`` entries."""
    if not places:
        return get_state, set_state, symbol_names, nouts
    cut = None if nouts is None else nouts
    names = tuple(symbol_names or ())

    def get():
        values = tuple(get_state())
        split = len(values) if cut is None else cut
        return values[:split] + tuple(_read(p) for p in places) + values[split:]

    def put(values):
        values = tuple(values)
        split = len(values) - len(places) if cut is None else cut
        set_state(values[:split] + values[split + len(places):])
        for place, value in zip(places, values[split:split + len(places)]):
            _write(place, value)

    split = len(names) if cut is None else cut
    names = names[:split] + tuple(labels) + names[split:]
    return get, put, names, None if nouts is None else nouts + len(places)


def _read(place):
    holder, kind, key = place
    if kind == "cell":
        return holder.cell_contents
    return getattr(holder, key) if kind == "attr" else holder[key]


def _write(place, value):
    holder, kind, key = place
    if kind == "cell":
        holder.cell_contents = value
    elif kind == "attr":
        setattr(holder, key, value)
    else:
        holder[key] = value


def _locals(frame, views) -> dict:
    found = views.get(id(frame))
    if found is None:
        found = views[id(frame)] = frame.f_locals
    return found


def _cell_of(name, current, frames, views):
    """The cell of the variable ``name`` that holds ``current`` in ``frames[0]`` (a ``nonlocal`` of
    a function defined where the variable is, which a body calls), found through the closure of a
    function in that frame or, while the variable is a free variable there, in the frames around it
    (the loop body reading ``k`` need not hold ``inc``, which the function defining ``k`` does);
    None if there is none."""
    for frame in frames:
        for value in _locals(frame, views).values():
            if type(value) is types.FunctionType and name in value.__code__.co_freevars:
                cell = value.__closure__[value.__code__.co_freevars.index(name)]
                try:
                    if cell.cell_contents is current:
                        return cell
                except ValueError:  # empty
                    continue
        if name not in frame.f_code.co_freevars:
            break  # defined here (a cell variable) or a plain local: no frame further out has it
    return None


def _step(path, kind, key):
    return f"{path}.{key}" if kind == "attr" else f"{path}[{key!r}]"


_LIBRARY_STATE = [-1, frozenset()]  # (len(sys.modules) when computed, ids of autograph's module-level values)


def _library_state() -> frozenset:
    """Ids of the values bound at the top level of autograph's own modules (recomputed when a
    module has been imported since): tracing changes some of them (``active_traces``)."""
    if len(sys.modules) != _LIBRARY_STATE[0]:
        modules = [m for name, m in list(sys.modules.items()) if name.startswith("autograph.") and m is not None]
        ids = {id(v) for m in modules for v in list(vars(m).values()) if not isinstance(v, _OPAQUE)}
        _LIBRARY_STATE[:] = [len(sys.modules), frozenset(ids)]
    return _LIBRARY_STATE[1]


def _converted_frames():
    """The frames of the converted code running the statement, innermost first: its function (or
    body), and the converted functions and bodies it runs in (autograph's frames between them
    skipped), up to the first frame of other code; empty when the statement's caller is not
    converted code.  The walk stops at the innermost running ``Snapshot.call`` (the body of an
    enclosing tensor statement): the frames from there out are that snapshot's, and reading them
    again would make a frame object of each frame of the tracer in between."""
    frames = []
    frame = sys._getframe(2)
    known = skipped_modules
    while frame is not None:
        code = frame.f_code
        if id(code) in converted_codes:
            frames.append(frame)
        elif code is _CALL_CODE and _ACTIVE.snapshots:
            return frames + _ACTIVE.snapshots[-1].frames
        elif code is _TRACE_CODE:
            break  # where the trace began: the code calling the traced function is not being traced
        else:
            name = frame.f_globals.get("__name__")
            if not (known.get(name) or (name not in known and is_skipped_module(name))):  # (inlined: hot)
                break
        frame = frame.f_back
    return frames


class _Active(threading.local):
    def __init__(self):
        self.snapshots = []  # those whose ``call`` is running, innermost last


_ACTIVE = _Active()
_CALL_CODE = Snapshot.call.__code__
_TRACE_CODE = trace.trace_graph_code()


_MISSING = object()


def _variable(name, frames):
    """The value of ``name`` seen from the statement: in the innermost converted frame that holds it
    (a body function need not hold a variable only the code around it uses), else a global."""
    for frame in frames:
        value = frame.f_locals.get(name, _MISSING)
        if value is not _MISSING:
            return value
    return frames[0].f_globals.get(name, _MISSING)


def _covered(symbols, frames) -> dict:
    """id(holder) -> the keys the statement's state covers (``self.n``: ``self``'s ``'n'``)."""
    covered = {}
    if all(map(str.isidentifier, symbols)):  # (variables only, as most statements have)
        return covered
    for symbol in symbols:
        if symbol.isidentifier():
            continue
        try:
            node = ast.parse(symbol, mode="eval").body
        except SyntaxError:
            continue
        steps = []
        while isinstance(node, (ast.Attribute, ast.Subscript)):
            if isinstance(node, ast.Attribute):
                steps.append(node.attr)
            elif isinstance(node.slice, ast.Constant):
                steps.append(node.slice.value)
            else:
                break
            node = node.value
        if not isinstance(node, ast.Name) or not steps:
            continue
        holder = _variable(node.id, frames)
        if holder is _MISSING:
            continue
        try:
            for key in reversed(steps[1:]):
                holder = holder[key] if type(holder) in (dict, list) else getattr(holder, key)
        except (AttributeError, KeyError, IndexError, TypeError):
            continue
        covered.setdefault(id(holder), set()).add(steps[0])
    return covered
