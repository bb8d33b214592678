"""Aliases of a staged list: the other names and paths that still hold the Python list.

A tensor loop or branch that grows a list (``ys.append(i)``) stages it: the
state variable is rebound to one tensor of the list's elements, and the
Python list object itself cannot hold that tensor.  Another name for the
same object (``ys = xs``, ``out = {'r': xs}``, ``items = self.items``) would
then keep the list as it was before the statement, where Python shows the
appends: a silent wrong value.  ``refuse_stale`` looks for such names, by
identity, in the frames of the code being traced (locals and cells with two
levels of attributes and items below them, module globals with one) and
refuses with a ``TracingError`` naming both.

Inside the body of an enclosing tensor statement, the state a nested
statement stages is the enclosing statement's copy (``fresh``,
``pack_state``), which no user name holds: ``copies_of_state`` records,
while a statement traces its bodies, which copy is of which container, and
both checks look for ``originals`` too (``box = {'r': acc}``, an ``if`` in
an ``if`` grows ``box['r']``: the user's ``acc`` holds the original).
"""

from __future__ import annotations

import sys
import threading
import types

import numpy as np

from autograph.runtime.core.undefined import is_undefined
from autograph.runtime.errors import TracingError
from autograph.runtime.core.tensor import Tensor
from autograph.runtime.ops.list_operators import StagedList
from autograph.runtime.operators.calls import converted_codes, is_skipped_module
from autograph.runtime.tracing import argument_containers, loops

_DEPTH = 2  # levels of attributes / items searched below a variable (``self.state['r']``)
_WIDTH = 256  # containers longer than this are not searched (their items are rarely a list's alias)
_OPAQUE = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType, types.MethodType)


def refuse_stale(replaced, where):
    """Raises a ``TracingError`` if a list of ``replaced`` (``(state label, list)`` pairs, lists a
    statement staged) is still held under another name or path by the code being traced."""
    targets = {id(value): label for label, value in replaced}
    for label, value in replaced:
        argument = argument_containers.argument_path(value)
        if argument is not None:  # the trace's copy of a list argument: the caller holds the list
            raise TracingError(
                f"the list '{label}' changes length in {where}, which stages it, but it is the list argument "
                f"'{argument}' of the traced function: the graph gets a copy of a list argument, so the "
                "caller's list would not see the change, where Python's does. Return the list and assign it "
                "where you call the function (or build a new list in the function: `xs = list(xs)`)."
            )
    found = _held(targets)
    if found is not None:
        label, alias = found
        raise TracingError(stale_message(label, alias, where))


def held_elsewhere(value, label, converted_only=False):
    """The name or path (``'b'``, ``'self.items'``) under which the code being traced holds
    ``value``, other than ``label``; else None.  ``converted_only``: in the frames of converted code
    (the code whose names the graph binds; a harness calling the operators holds its own) and the
    innermost frame of the user's, which makes the store (code autograph could not convert)."""
    found = _held({id(value): label}, converted_only)
    return None if found is None else found[1]


def array_alias(array):
    """Another name that would see a store into the numpy array ``array`` of the code being traced:
    a second name holding it, a view of it, or (it being a view) the array it views; else None."""
    if array.base is not None:
        return "the array it is a view of"
    _, second = _two_holders(array)
    if second is not None:
        return second
    for frame in _user_frames():
        for name, value in frame.f_locals.items():
            if isinstance(value, np.ndarray) and value.base is array:
                return name
    return None


# op types whose result numpy makes a view of their first input (a basic slice, a reshape, a transpose)
_VIEWS = frozenset({"StridedSlice", "Reshape", "Transpose"})


def tensor_alias(tensor):
    """How another name would see, in Python, a store into the array ``tensor`` stands for (an item
    assignment, an in-place operator): ``"'a' and 'b' hold the same array"`` for two names holding it,
    ``"'a' holds the array it is, or is a view of"`` for a numpy view (a slice, reshape, transpose or
    row of another tensor, also through the captures of a body) of one a name holds, or a loop variable
    whose initial array a name holds (``out = buf`` before ``buf += x`` in the loop); else None.  A staged
    list is a Python list: only a second name for it counts (a slice of a list is a new list)."""
    what = "list" if isinstance(tensor, StagedList) else "array"
    first, second = _two_holders(tensor, converted_only=True)
    if second is not None:
        return f"'{first}' and '{second}' hold the same {what}"
    if isinstance(tensor, StagedList):
        return None
    base = _viewed(tensor)
    while base is not None:
        holder = held_elsewhere(base, "\0", True)
        if holder is not None:
            return f"'{holder}' holds the array it is, or is a view of (a slice, reshape, transpose or row)"
        base = _viewed(base)
    return None


def is_view_of(tensor, array) -> bool:
    """True if ``tensor`` is ``array`` or a numpy view of it (through slices, reshapes, transposes,
    rows and captures)."""
    while tensor is not None:
        if tensor is array:
            return True
        tensor = _viewed(tensor)
    return False


def _viewed(tensor):
    """The tensor that ``tensor`` is a numpy view of (for a capture's placeholder: the captured
    tensor itself), else None.  A scalar (an element) is a copy."""
    if not isinstance(tensor, Tensor):
        return None  # (a numpy array a loop started from)
    op = tensor.op
    if op.type == "Placeholder":  # a capture's tensor, or the initial value of a loop variable
        captured = next((outer for outer, inner in op.graph.captures if inner is tensor), None)
        return captured if captured is not None else loops.initial_value(tensor)
    if tensor.shape == ():
        return None
    if op.type in _VIEWS or op.type == "GatherV2" and op.inputs[1].shape == ():  # x[i]: a row
        return op.inputs[0]
    return None


def _two_holders(value, converted_only=False):
    """The first two names or paths under which the code being traced holds ``value`` (None where
    there are fewer)."""
    first = held_elsewhere(value, "\0", converted_only)
    return first, held_elsewhere(value, first, converted_only) if first is not None else None


def _user_frames():
    """The frames running now that are the user's code (converted or not), innermost first."""
    frame = sys._getframe(1)
    while frame is not None:
        if not is_skipped_module(frame.f_globals.get("__name__")):
            yield frame
        frame = frame.f_back


def _held(targets, converted_only=False):
    """``(state label, path)`` of the first of ``targets`` (ids -> labels) that the frames of the
    code being traced hold under another name: locals and cells with two levels of attributes and
    items below them, module globals with one."""
    seen_globals = set()
    for depth, frame in enumerate(_user_frames()):
        if converted_only and depth and id(frame.f_code) not in converted_codes:
            continue
        found = _search(frame.f_locals.items(), targets, _DEPTH)
        if found is None and id(frame.f_globals) not in seen_globals:
            seen_globals.add(id(frame.f_globals))
            found = _search(frame.f_globals.items(), targets, 1)
        if found is not None:
            return found
    return None


def refuse_unseen(state, names, symbols, bodies, where):
    """Raises a ``TracingError`` if a body of ``where`` can read a list or dict of the state
    ``state`` (the values before the statement) through a variable that still holds it after
    ``set_state`` bound the copies the body is traced with (``box = {'r': acc}`` is state, the
    body reads ``acc``): that variable would not show the body's changes.  (A state variable,
    ``symbols``, holds a copy.)"""
    targets = {}
    for name, value in zip(names, state):
        _containers(value, name, targets)
    if not targets:
        return
    todo, seen = list(bodies), {id(body) for body in bodies}
    while todo:  # the bodies, and the closures of the converted code they reach (a loop body's own)
        body = todo.pop()
        code, cells = getattr(body, "__code__", None), getattr(body, "__closure__", None) or ()
        if code is None:
            continue
        for name, cell in zip(code.co_freevars, cells):
            if name in symbols:
                continue
            try:
                value = cell.cell_contents
            except ValueError:  # not bound yet
                continue
            if type(value) is types.FunctionType and id(value.__code__) in converted_codes and id(value) not in seen:
                seen.add(id(value))
                todo.append(value)
                continue
            found = _search([(name, value)], targets, 1)
            if found is not None:
                label, alias = found
                raise TracingError(
                    f"'{alias}' is the same {type(value).__name__ if alias == name else 'object'} as "
                    f"'{label}', which {where} changes, and its body reads '{alias}'; each traced body "
                    f"works on a copy of '{label}', which '{alias}' would not show. Use one name for it "
                    f"in {where.split(' at ')[0]}."
                )


def _containers(value, path, into):
    kind = type(value)
    if kind is list or kind is dict:
        for held in (value, *originals(value)):  # (the user's object, if an enclosing statement copied it)
            into.setdefault(id(held), path)
    if kind is list or kind is tuple:
        for i, item in enumerate(value):
            _containers(item, f"{path}[{i}]", into)
    elif kind is dict:
        for key, item in value.items():
            _containers(item, f"{path}[{key!r}]", into)


def stale_message(label, alias, where):
    """The refusal of a list ``label`` that ``where`` staged while ``alias`` also holds it."""
    return (
        f"the list '{label}' changes length in {where}, which stages it (one tensor of its elements, bound "
        f"to '{label}'), but the same list is also reached as '{alias}', which would not see the change as "
        f"it does in Python. Use one name for the list: append and pop through the name it is read by, and "
        f"assign other names or attributes from it afterwards (the name '{alias}' holds it already before "
        f"{where}: identity cannot tell whether that name is read again)."
    )


def _search(items, targets, depth, prefix=""):
    """``(state label, path)`` of the first value below ``items`` (name/value pairs) that is one of
    ``targets`` (ids), searching ``depth`` levels of attributes and items below them; else None."""
    for name, value in items:
        path = str(name) if not prefix else f"{prefix}{name}" if name.startswith("[") else f"{prefix}.{name}"
        label = targets.get(id(value))
        if label is not None:
            if label != path:
                return label, path
            continue
        if depth > 0:
            children = _children(value)
            if children is not None:
                found = _search(children, targets, depth - 1, path)
                if found is not None:
                    return found
    return None


def _children(value):
    """``(step, child)`` pairs of a container or a plain object (``'[0]'``/``"['k']"`` for items, an
    attribute name for attributes); None for values not searched."""
    kind = type(value)
    if kind is list or kind is tuple:
        return [(f"[{i}]", v) for i, v in enumerate(value)] if len(value) <= _WIDTH else None
    if kind is dict:
        return [(f"[{k!r}]", v) for k, v in value.items()] if len(value) <= _WIDTH else None
    if isinstance(value, _OPAQUE) or is_undefined(value):
        return None
    try:
        attributes = object.__getattribute__(value, "__dict__")
    except AttributeError:
        return None
    if type(attributes) is dict and len(attributes) <= _WIDTH:
        return list(attributes.items())
    return None


# The copies of the state's lists and dicts that the statements being traced gave their bodies
# (``fresh``, ``pack_state``), one dict per statement, innermost last: id(copy) -> (copy, original).
_COPIES = threading.local()


class copies_of_state:
    """``with copies_of_state():`` while a statement traces its bodies: remembers which of the
    containers they work on are copies of which (``originals``), so that a statement nested in them
    still finds the names holding the user's list (``acc`` after ``box = {'r': acc}``: the enclosing
    statement copied ``box``).  (A class, not a generator: entered for every traced statement.)"""

    __slots__ = ("stack",)

    def __enter__(self):
        self.stack = _COPIES.__dict__.setdefault("stack", [])
        self.stack.append({})

    def __exit__(self, *exc_info):
        self.stack.pop()
        return False


def record_copy(copy, original):
    """Records the list or dict ``copy`` as a copy of ``original`` (for the statement being traced)."""
    stack = getattr(_COPIES, "stack", None)
    if stack:
        stack[-1][id(copy)] = (copy, original)


def record_copies(original, copy):
    """Records each list and dict of ``copy`` (built like ``original``) as a copy of ``original``'s."""
    kind = type(original)
    if type(copy) is not kind or copy is original:
        return
    if kind is list or kind is dict:
        record_copy(copy, original)
    if kind is dict:
        if copy.keys() == original.keys():
            for key in original:
                record_copies(original[key], copy[key])
    elif (kind is list or kind is tuple) and len(copy) == len(original):
        for before, after in zip(original, copy):
            record_copies(before, after)


def originals(value):
    """The containers ``value`` is a copy of, through the statements being traced (the enclosing
    statement's copy first, the user's object last); empty for a container no statement copied."""
    stack = getattr(_COPIES, "stack", None) or ()
    found = []
    while True:
        for scope in reversed(stack):
            entry = scope.get(id(value))
            if entry is not None and entry[0] is value:
                value = entry[1]
                found.append(value)
                break
        else:
            return found
