"""Symbolic tensors a trace leaves in the user's objects: written back as values at every call.

A tensor loop or branch that updates ``obj.total`` (or ``self.items``,
``cache['n']``) binds the ``While``/``If`` result, a symbolic tensor, to
it; so does any ``obj.x = tensor`` while tracing.  Left there, the object
would hold a ``<Tensor while:3>`` after the call (and a later trace would
compute with a tensor of a dead graph).  ``write_back_escapes`` looks, at
the end of a trace, in what the traced function can reach from outside --
its instance and other non-data arguments, its closure and the globals its
code names, and their attributes and items a few levels down -- for
tensors, and:

* a tensor of the traced graph becomes an input of one stateful ``PyFunc``
  at the end of the graph, which writes its value (a numpy value; a staged
  list as a Python list of its elements; a tuple holding tensors rebuilt)
  back where the tensor was, at every call;
* a tensor of another graph (a loop or branch body, left there by a call
  made while that body was traced) cannot be computed by this graph: a
  ``TracingError`` naming the attribute and where the tensor was made.
"""

from __future__ import annotations

import dis
import types

import numpy as np

from autograph.runtime.core import nest
from autograph.runtime.core.per_code import per_code
from autograph.runtime.core.tensor import Tensor
from autograph.runtime.core.undefined import is_undefined
from autograph.runtime.core.user_code import is_user_namespace, namespace_attributes
from autograph.runtime.errors import TracingError
from autograph.runtime.ops import effects
from autograph.runtime.ops.list_operators import StagedList
from autograph.runtime.tracing import locked_arrays

_DEPTH = 3  # attribute / item levels searched below a root (``self.stats['sum']``)
_WIDTH = 256  # containers larger than this are not searched
_BUDGET = 5000  # objects searched in all, at most (a bound on the cost of each trace)
_OPAQUE = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
           types.CodeType, np.ndarray, np.generic, str, bytes, int, float, complex, bool, type(None))


def write_back_escapes(graph, python_function, arguments, label, before) -> tuple:
    """Emits the write-back ``PyFunc`` for the tensors of ``graph`` left in objects reachable from
    ``python_function`` and the non-data ``arguments``; refuses tensors of other graphs.  Returns
    the guards of the places written back that the trace may have read, by what they held
    ``before`` it (``values_before``): ``(path, owner, key, value)``."""
    places = _places(python_function, arguments, _holds_tensors)
    if not places:
        return ()
    tensors = []
    for path, _, _, value in places:
        for tensor in _tensors_in(value):
            if tensor.op.graph is not graph:
                raise TracingError(
                    f"after tracing {label}, '{path}' holds the symbolic tensor {tensor.name} (created at "
                    f"{tensor.op.location or '<unknown>'}) of {_graph_role(tensor.op.graph)}: something run "
                    "while that body was traced (a called function or method, a nonlocal update) stored it "
                    "there, outside the loop's or branch's state, so no call could give it a value. Assign "
                    f"'{path}' in the body of the loop or branch itself, or return the value from the call."
                )
            tensors.append(tensor)
    targets = [(owner, key, value) for _, owner, key, value in places]

    def write(*values):
        values = iter(values)
        for owner, key, value in targets:
            _write(owner, key, _rebuilt(value, values))

    with graph.as_default():
        effects.py_function(write, tensors, None, name="write_back_to_python_objects")
    guards = []
    for path, owner, key, _ in places:
        if before.owners.get(id(owner)) is not owner:
            continue  # not searched before (an object the trace made)
        value = before.value(owner, key)
        if isinstance(value, _NUMBERS) or _read_by(python_function, key, path):
            guards.append((path, owner, key, value))  # (a place only written keeps one trace)
    return tuple(guards)


def _read_by(python_function, key, path) -> bool:
    """Whether the traced function's code may read the place (``o.hist is None``, ``hasattr(o,
    'cache')``, ``nonlocal c; c += 1``): its name is loaded there (an attribute, a variable, a
    string constant), the function's own code and the code nested in it."""
    code = getattr(_unwrapped(python_function), "__code__", None)
    if code is None:
        return True
    name = key.name if type(key) is _Attribute else path if type(key) is _Cell else key
    return type(name) is not str or name in loaded_names(code)


_LOADS = frozenset({"LOAD_ATTR", "LOAD_METHOD", "LOAD_DEREF", "LOAD_CLASSDEREF", "LOAD_GLOBAL", "LOAD_NAME",
                    "LOAD_CONST"})


@per_code
def loaded_names(code) -> frozenset:
    """The names ``code`` and the code nested in it load (attributes, variables) and its string
    constants (``getattr(o, 'x')``, ``d['k']``)."""
    names, todo = set(), [code]
    while todo:
        for instruction in dis.get_instructions(todo.pop()):
            if instruction.opname in _LOADS:
                value = instruction.argval
                if type(value) is str:
                    names.add(value)
                elif type(value) is types.CodeType:
                    todo.append(value)
    return frozenset(names)


def restore(places, before) -> None:
    """Puts back, at each of ``places`` (``(path, owner, key, value)``), the value it held before the
    trace (``values_before``), or removes what the trace created there."""
    for _, owner, key, _ in places:
        value = before.value(owner, key)
        try:
            if value is _MISSING:
                delattr(owner, key.name) if type(key) is _Attribute else owner.pop(key, None)
            else:
                _write(owner, key, value)
        except (AttributeError, TypeError, LookupError):
            pass


def restore_after_refusal(python_function, arguments, before) -> None:
    """After a trace refused (an ``ag.TracingError``: the call did not run, in Python's terms), the
    places holding its tensors put back as they were (``restore``).  (After a Python error raised
    while tracing, Python made the changes before it: the tensors stay, and the next call, finding
    them, refuses loudly rather than start from values Python would not have.)"""
    restore(_places(python_function, arguments, _leaks), before)
    for owner, contents in before.contents.values():
        values = owner.values() if type(owner) is dict else owner
        if any(isinstance(v, Tensor) for v in values):  # a list or dict the trace grew in place
            owner.clear()
            owner.update(contents) if type(owner) is dict else owner.extend(contents)


# -- guards: a place the graph writes back, read as a constant by the trace ---------------------
#
# ``obj.total = obj.total + x`` (or ``obj.calls += 1`` in a tensor loop): the trace reads
# ``obj.total`` as the constant it was, and the graph writes its new value back at every call.  The
# next call would start again from the constant: the concrete function is valid only while each
# such place still holds the value it had when traced (else the function is traced again).

_MISSING = object()  # a place that did not exist before the trace (an attribute it created)


class Before:
    """What the objects the traced function reaches from outside (as ``write_back_escapes`` searches
    them) held before a trace (``values_before``): ``places``, ``_place(owner, key) -> value``;
    ``owners``, ``id -> owner`` of each object searched (a place missing there was created by the
    trace); ``contents``, ``id -> (list or dict, a copy of its items)``, to put back after a refusal;
    ``arrays``, ``(path, numpy array)`` of the writeable arrays, which the trace must not change
    (``locked_arrays``)."""

    __slots__ = ("places", "owners", "contents", "arrays")

    def __init__(self, places):
        self.places = {_place(owner, key): value for _, owner, key, value in places}
        self.arrays = locked_arrays.arrays_in((path, value) for path, _, _, value in places)
        self.owners, self.contents = {}, {}
        for _, owner, _, value in places:
            self.owners[id(owner)] = owner
            for held in (owner, value):
                if type(held) is list or type(held) is dict:
                    self.contents.setdefault(id(held), (held, held.copy()))

    def value(self, owner, key):
        """What ``owner`` held at ``key`` (``_MISSING``: nothing)."""
        return self.places.get(_place(owner, key), _MISSING)


def values_before(python_function, arguments) -> Before:
    """What the objects the traced function reaches from outside hold, before a trace (``Before``)."""
    return Before(_places(python_function, arguments, lambda child: True, deep=True))


def _place(owner, key):
    kind = type(key)
    return id(owner), ("attr", key.name) if kind is _Attribute else ("cell",) if kind is _Cell else ("item", key)


def stale_guard(guards):
    """The path of the first guarded place that no longer holds its traced value, or None."""
    for path, owner, key, value in guards:
        try:
            kind = type(key)
            now = getattr(owner, key.name) if kind is _Attribute else owner.cell_contents if kind is _Cell else owner[key]
        except (AttributeError, LookupError, ValueError):
            now = _MISSING
        if not _same(now, value):
            return path
    return None


_NUMBERS = (int, float, complex, np.generic, np.ndarray)


def _same(now, value) -> bool:
    """The value a guard saw (numbers and arrays by value, anything else by identity: a list the
    graph wrote back is a new list)."""
    if now is value:
        return True
    if type(now) is not type(value) or not isinstance(value, _NUMBERS):
        return False
    if isinstance(value, (np.ndarray, np.generic)):
        return now.dtype == value.dtype and np.shape(now) == np.shape(value) and bool(np.array_equal(now, value))
    return bool(now == value)


def _write(owner, key, value) -> None:
    if type(key) is _Attribute:
        setattr(owner, key.name, value)
    elif type(key) is _Cell:
        owner.cell_contents = value
    else:
        owner[key] = value


def _tensors_in(value) -> list:
    """The tensors of a tensor or a tuple of them (nested in tuples and lists)."""
    if isinstance(value, Tensor):
        return [value]
    return [t for item in value if isinstance(item, (Tensor, tuple, list)) for t in _tensors_in(item)]


def _rebuilt(value, arrays):
    """``value`` with each tensor replaced by the next of ``arrays`` (a staged list by a list of its
    elements, a 0-d array by a numpy scalar; a weakly typed tensor, standing for Python numbers, by
    them: ``o.n = o.n + 1`` from an int leaves an int, as Python does)."""
    if isinstance(value, Tensor):
        array = next(arrays)
        if isinstance(value, StagedList):
            return array.tolist() if value.weak else list(array)
        if value.weak and array.ndim == 0:
            return array.item()
        return array[()] if array.ndim == 0 else array
    if isinstance(value, (tuple, list)):
        items = [_rebuilt(v, arrays) if isinstance(v, (Tensor, tuple, list)) else v for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    return value


class _Attribute:
    """An attribute name as a place's key (items are keyed by the item's key itself)."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name


class _Cell:
    """The key of a closure cell's contents (its owner is the cell): a ``nonlocal`` variable."""

    __slots__ = ()


_CELL = _Cell()


def _graph_role(graph) -> str:
    return f"the sub-graph {graph.name} (the body of a tensor loop or branch)" if graph.outer is not None else (
        f"the graph {graph.name}, traced before")


def _roots(python_function, arguments):
    """``(name, object, owner, key)`` of what the traced function reaches from outside: its instance,
    the objects among its arguments (in their lists, tuples and dicts too), its closure's variables
    (owner: the cell) and the globals its code names (owner: the module's dict)."""
    roots = []
    if isinstance(python_function, types.MethodType):
        roots.append(("self", python_function.__self__, None, None))
    function = _unwrapped(python_function)
    for name, value in arguments:
        _argument_objects(value, name, _DEPTH, roots)
    code = getattr(function, "__code__", None)
    if code is None:
        return roots
    for name, cell in zip(code.co_freevars, function.__closure__ or ()):
        try:
            roots.append((name, cell.cell_contents, cell, _CELL))
        except ValueError:  # not bound yet
            continue
    module = function.__globals__
    roots.extend((name, value, module, name) for name, value in globals_named(code, module))
    return roots


def _unwrapped(python_function):
    """The Python function whose code runs: a method's, below its decorators' ``__wrapped__``."""
    function = getattr(python_function, "__func__", python_function)
    while hasattr(function, "__wrapped__"):
        function = function.__wrapped__
    return function


def _argument_objects(value, path, depth, roots):
    """Appends the objects of an argument (``objs[0]`` of a list argument): its data (arrays,
    numbers, the lists, tuples and dicts holding them) is the graph's input, its objects are the
    caller's."""
    if isinstance(value, (list, tuple, dict)):
        if depth > 0 and len(value) <= _WIDTH:
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, item in items:
                _argument_objects(item, f"{path}[{key!r}]", depth - 1, roots)
    elif not isinstance(value, Tensor) and not isinstance(value, _OPAQUE):
        roots.append((path, value, None, None))


def globals_named(code, module) -> list:
    """``(name, value)`` of the globals of ``module`` that ``code`` (and the code nested in it)
    names, and those that the Python functions among them name in turn (a helper's global log)."""
    found, seen = [], set()
    for name in names_used(code):
        if name in module and name not in seen:
            seen.add(name)
            value = module[name]
            found.append((name, value))
            if type(value) is types.FunctionType and value.__globals__ is module:
                for inner in names_used(value.__code__):
                    if inner in module and inner not in seen:
                        seen.add(inner)
                        found.append((inner, module[inner]))
    return found


@per_code
def names_used(code) -> tuple:
    """The names ``code`` and the code nested in it load (globals and attributes), sorted."""
    names = set(code.co_names)
    todo = [code]
    while todo:  # (nested code is walked here, not through the cache: a trace meets it once)
        for const in todo.pop().co_consts:
            if type(const) is types.CodeType:
                names.update(const.co_names)
                todo.append(const)
    return tuple(sorted(names))


def _places(python_function, arguments, wanted, deep=False) -> list:
    """``(path, owner, key, value)`` of each value ``wanted`` says yes to, held (``_DEPTH`` levels
    down) by what the traced function reaches from outside (``_roots``); ``deep``: below those too."""
    places, seen = [], set()
    for name, root, owner, key in _roots(python_function, arguments):
        if owner is not None and wanted(root):
            places.append((name, owner, key, root))
            if not deep:
                continue
        _collect(root, name, _DEPTH, wanted, places, seen, deep)
    return places


def _leaks(value) -> bool:
    """A tensor, or a tuple, list or dict holding one (the statement state's copy a trace bound)."""
    if type(value) is list or type(value) is dict:
        return any(isinstance(v, Tensor) for v in (value.values() if type(value) is dict else value))
    return _holds_tensors(value)


def _holds_tensors(value) -> bool:
    return isinstance(value, Tensor) or (type(value) is tuple or nest.is_namedtuple(value)) and bool(_tensors_in(value))


def _collect(value, path, depth, wanted, places, seen, deep=False):
    """Appends ``(path, owner, key, child)`` for each child ``wanted`` says yes to below ``value``
    (a class, function or module of the user's: its own attributes, ``Counter.count``); ``deep``:
    below those too."""
    if is_user_namespace(value):
        depth = 0
    elif isinstance(value, _OPAQUE) or isinstance(value, Tensor) or is_undefined(value):
        return
    elif type(value).__module__.startswith("autograph."):
        return  # autograph's own (an ag.function the code calls: its traces hold their graphs' tensors)
    if id(value) in seen:
        return
    if len(seen) >= _BUDGET:
        return
    seen.add(id(value))
    for step, key, child in _children(value):
        found = wanted(child)
        if found:
            places.append((path + step, value, key, child))
        if depth > 0 and (deep or not found):
            _collect(child, path + step, depth - 1, wanted, places, seen, deep)


def _children(value):
    """``(path step, key, child)`` of a list's or dict's items or an object's attributes."""
    kind = type(value)
    if kind is list:
        return [(f"[{i}]", i, v) for i, v in enumerate(value)] if len(value) <= _WIDTH else ()
    if kind is dict:
        return [(f"[{k!r}]", k, v) for k, v in value.items()] if len(value) <= _WIDTH else ()
    if isinstance(value, tuple):
        return ()  # immutable: its holder's place is written (a new tuple)
    if isinstance(value, (type, types.FunctionType, types.ModuleType)):
        attributes = namespace_attributes(value)
        return [(f".{name}", _Attribute(name), v) for name, v in attributes.items()] if len(attributes) <= _WIDTH else ()
    try:
        attributes = object.__getattribute__(value, "__dict__")
    except AttributeError:
        attributes = {}
    if type(attributes) is not dict or len(attributes) > _WIDTH:
        return ()
    return [(f".{name}", _Attribute(name), v) for name, v in {**attributes, **_slot_values(value)}.items()]


def _slot_values(value) -> dict:
    """The ``__slots__`` attributes set on ``value`` (an object without a ``__dict__`` keeps its
    state there)."""
    found = {}
    for klass in type(value).__mro__[:-1]:
        slots = klass.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            if name not in ("__dict__", "__weakref__") and name not in found:
                try:
                    found[name] = object.__getattribute__(value, name)
                except AttributeError:  # not set
                    continue
    return found
