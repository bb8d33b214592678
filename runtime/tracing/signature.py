"""Cache keys of ``rt.function`` calls: argument values -> a hashable key + the array leaves.

``Encoder.encode`` walks one argument into a key component, a tuple whose
first item says what it stands for.  Keys tell apart whatever the traced
Python code could tell apart:

* ``("A", dtype, shape)`` -- a numpy array or scalar (a graph input; its
  value is collected as a *leaf*), or a ``TensorSpec`` standing for one;
* ``("P", type, token)`` -- a Python ``bool``/``int``/``float``/``complex``/
  ``str``/``bytes``/``None``, traced as a constant: the type is part of the
  key (``True``, ``1`` and ``1.0`` are three keys), and a float's token
  tells ``-0.0`` from ``0.0`` and makes every NaN equal itself;
* ``("T"|"L", type, children)`` -- a tuple (namedtuples and subclasses
  keyed by their type) / a list;
* ``("D", (type, keys), children)`` -- a dict, walked in insertion order
  (``for k in d`` sees that order), its keys keyed like constants (tuple
  keys member by member, so ``(1, 2)`` and ``(1.0, 2)`` differ);
* ``("V", dtype, shape, alias)`` -- an ``rt.Variable``: keyed by dtype and
  shape, not identity (one graph serves every variable of that spec);
  ``alias`` is the number of the first argument variable it is, so ``f(v, v)``
  and ``f(v, w)`` are different keys; the variables are collected in order;
* ``("O", type, part)`` -- any other object, static (the trace sees the
  object itself): ``part`` is what ``__autograph_trace_key__()`` returns if
  the type defines it (``TRACE_KEY_METHOD``), else the object itself when
  it defines its own equality and is hashable (a frozenset of constants
  with its members' types: ``frozenset({1}) == frozenset({1.0})``), else
  the object by identity, held weakly (``WeakIdentity``) when it can be.
  An ``np.matrix`` or masked array is refused (``subclass_problem``).

``key_matches`` tells whether a key fits a more general one (array
dimensions relaxed to ``None``), ``relax_key`` makes that general key for
``reduce_retracing``, ``describe`` spells a key for messages, ``flat_key``
is the cheaper key of the cached-call hot path, ``weak_parts`` lists the
weakly held objects of a key, and ``rebuild`` / ``rebuild_spec`` put the
traced placeholders where the leaves were.
"""

from __future__ import annotations

import copy
import math
import types
import weakref

import numpy as np

from autograph.runtime.core import dtypes, nest, shapes
from autograph.runtime.errors import TracingError
from autograph.runtime.core.location import user_location_text
from autograph.runtime.ops import variables
from autograph.runtime.core.tensor import Tensor, TensorSpec

_SUPPORTED = frozenset(dtypes.SUPPORTED)
_PY_CONSTANTS = (bool, int, str, bytes, type(None))
FAST_SCALARS = frozenset((bool, int, float, str, type(None)))
TRACE_KEY_METHOD = "__autograph_trace_key__"
STAND_IN_METHOD = "__autograph_stand_in__"  # what the trace uses in place of such an argument
_CONTAINER_TAGS = ("T", "L", "D")


def float_token(x: float):
    """``x`` as a key part: itself, except ``0.0``/``-0.0``/NaN, spelled so that each equals itself only."""
    if x and x == x:
        return x
    sign = "-" if math.copysign(1.0, x) < 0 else ""
    return sign + ("0.0" if x == x else "nan")


def _constant_part(value):
    """``(type, token)`` of a Python constant; None if ``value`` is not one."""
    kind = type(value)
    if kind in _PY_CONSTANTS:
        return kind, value
    if kind is float:
        return kind, float_token(value)
    if kind is complex:
        return kind, (float_token(value.real), float_token(value.imag))
    return None


def _structural_token(value):
    """A constant, or a tuple/frozenset of them at any depth, as a key part that tells ``1``,
    ``1.0``, ``True`` and ``-0.0`` apart inside it (``(1, 2) == (1.0, 2)`` in Python); None otherwise."""
    constant = _constant_part(value)
    if constant is not None:
        return constant
    kind = type(value)
    if kind is not tuple and kind is not frozenset:
        return None
    items = [_structural_token(v) for v in value]
    if None in items:
        return None
    return kind, (tuple(items) if kind is tuple else frozenset(items))


def _dataclass_token(value):
    """The ``_structural_token`` of each field of a hashable dataclass instance (a frozen config,
    keyed by equality), when each field has one; else None (an unhashable one is keyed by identity)."""
    fields = getattr(type(value), "__dataclass_fields__", None)
    if fields is None or type(value).__hash__ is None:
        return None
    tokens = tuple(_structural_token(getattr(value, name, None)) for name in fields)
    return None if None in tokens else tokens


def subclass_problem(value):
    """Why ``value``, an ndarray of a subclass whose operations differ from an array's
    (``np.matrix``: ``*`` is a matrix product; a masked array skips masked items), cannot be a
    graph input (its operators would leak into the kernels); None if it can."""
    kind = type(value)
    if kind is np.ndarray or not isinstance(value, np.ndarray):
        return None  # (a plain array or a scalar)
    is_masked = dtypes.is_masked_array(value)
    if not (is_masked or isinstance(value, np.matrix)):
        return None
    fix = "x.filled(...)" if is_masked else "np.asarray(x)"
    return (f"is a {kind.__module__}.{kind.__qualname__}, an ndarray subclass whose operations differ from an "
            f"array's, so the graph could compute something else than Python; pass a plain array ({fix})")


def is_immutable_constant(value) -> bool:
    """True for a Python constant or a tuple/frozenset of them: a value that cannot change."""
    return _structural_token(value) is not None


class WeakIdentity:
    """A key part equal only to the same live objects (``is``), holding them weakly.

    A bound method is keyed by its function and instance (a new method
    object is made at every ``obj.method``).  Once an object is gone the
    part equals nothing, so a new object that reuses its ``id`` never finds
    the old trace; ``alive()`` tells the cache to drop it.
    """

    __slots__ = ("refs", "_hash")

    def __init__(self, *objects):
        self.refs = tuple(weakref.ref(o) for o in objects)
        self._hash = hash(tuple(id(o) for o in objects))

    def alive(self) -> bool:
        return all(r() is not None for r in self.refs)

    def __eq__(self, other):
        if type(other) is not WeakIdentity or other._hash != self._hash or len(other.refs) != len(self.refs):
            return False
        return all(a() is not None and a() is b() for a, b in zip(self.refs, other.refs))

    def __hash__(self):
        return self._hash

    def __repr__(self):
        objects = [r() for r in self.refs]
        if len(objects) == 2 and objects[1] is not None:  # a method
            return f"<method {getattr(objects[0], '__qualname__', objects[0])!r} of {type(objects[1]).__name__} object>"
        return repr(objects[0]) if objects[0] is not None else "<object no longer alive>"


def _weakly(*objects):
    try:
        return WeakIdentity(*objects)
    except TypeError:  # not weakly referenceable: held, so its id cannot be reused
        return None


class Encoder:
    """Walks argument values into a hashable key, collecting array leaves and variables.

    ``allow_specs``: ``TensorSpec`` leaves stand for arrays of that spec
    (``get_concrete_function``).  ``variables``: the distinct ``rt.Variable``
    arguments, in order of first appearance.
    """

    __slots__ = ("owner", "leaves", "variables", "allow_specs")

    def __init__(self, owner, allow_specs=False):
        self.owner = owner
        self.leaves = []
        self.variables = []
        self.allow_specs = allow_specs

    def encode(self, value, path):
        if isinstance(value, (np.ndarray, np.generic)):
            problem = subclass_problem(value)
            if problem is None and value.dtype not in _SUPPORTED:
                problem = f"has dtype {value.dtype}, which the runtime does not support"
            if problem is not None:
                raise TypeError(self.owner.bad_arg(path, value, problem))
            self.leaves.append(value)
            return ("A", value.dtype, value.shape)
        constant = _constant_part(value)
        if constant is not None:
            return ("P",) + constant
        kind = type(value)
        if isinstance(value, tuple):
            return ("T", kind, tuple(self.encode(v, f"{path}[{i}]") for i, v in enumerate(value)))
        if isinstance(value, list):
            return ("L", kind, tuple(self.encode(v, f"{path}[{i}]") for i, v in enumerate(value)))
        if isinstance(value, dict):
            keys = tuple(self._dict_key(k, path) for k in value)
            return ("D", (kind, keys), tuple(self.encode(v, f"{path}[{k!r}]") for k, v in value.items()))
        if isinstance(value, TensorSpec):
            if not self.allow_specs:
                problem = "is a TensorSpec, which stands for an array only in get_concrete_function: pass an array"
                raise TypeError(self.owner.bad_arg(path, value, problem))
            self.leaves.append(value)
            return ("A", value.dtype, value.shape)
        if isinstance(value, Tensor):
            raise TracingError(
                f"{self.owner.label}: argument {path!r} is the symbolic tensor {value.name} of a finished "
                f"trace (called at {user_location_text()}); symbolic tensors only exist while their "
                "function is traced. Pass numpy values."
            )
        if isinstance(value, variables.Variable):
            return self._variable(value)
        return ("O", kind, self._object_part(value, kind, path))

    def _variable(self, var):
        for alias, seen in enumerate(self.variables):
            if seen is var:
                break
        else:
            alias = len(self.variables)
            self.variables.append(var)
        return ("V", var.dtype, var.shape, alias)

    def _dict_key(self, key, path):
        constant = _constant_part(key)
        if constant is not None:
            return constant
        token = _structural_token(key)
        if token is not None:  # a tuple key: (1, 2) and (1.0, 2) are the same dict key, not the same trace
            return type(key), key, token
        return type(key), self._object_part(key, type(key), f"a key of {path}")

    def _object_part(self, value, kind, path):
        """How a static object is keyed (see the module docstring)."""
        method = getattr(kind, TRACE_KEY_METHOD, None)
        if method is not None:
            return self._protocol_part(method(value), kind)
        if kind is frozenset:
            token = _structural_token(value)
            if token is not None:  # frozenset({1}) == frozenset({1.0}): keyed by its members' types too
                return value, token
        if isinstance(value, types.MethodType):
            return _weakly(value.__func__, value.__self__) or value
        fields = _dataclass_token(value)
        if fields is not None:  # Cfg(0.0) == Cfg(-0.0): keyed by its fields' types and signs too
            return value, fields
        try:
            hash(value)
        except TypeError:  # unhashable: by identity
            part = _weakly(value)
            if part is None:
                problem = (f"is a {kind.__name__}, which is neither hashable nor weakly referenceable, so a trace "
                           "cannot be keyed by it")
                raise TypeError(self.owner.bad_arg(path, value, problem)) from None
            return part
        except Exception as error:  # noqa: BLE001 - the user's __hash__ failed: name the argument
            raise TypeError(self.owner.bad_arg(
                path, value, f"is a {kind.__name__} whose __hash__ raised {type(error).__name__}: {error}")) from error
        if kind.__eq__ is object.__eq__:  # equal only to itself: by identity, held weakly when it can be
            return _weakly(value) or value
        return value

    def _protocol_part(self, key, kind):
        try:
            hash(key)
        except Exception as error:  # noqa: BLE001 - any failure means the key cannot be a cache key
            raise TypeError(
                f"{kind.__qualname__}.{TRACE_KEY_METHOD}() returned {key!r:.60}, which is not hashable "
                f"({type(error).__name__}: {error}), at {user_location_text()}; return a hashable value "
                "(a tuple of numbers and strings, say) that is equal for objects the traced code treats alike"
            ) from None
        return key


def describe(key) -> str:
    """A readable form of one key component, for messages."""
    tag = key[0]
    if tag == "A":
        return f"{key[1].name}{shapes.format_shape(key[2])}"
    if tag == "P":
        token = key[2]
        shown = token if isinstance(token, str) and key[1] is float else repr(token)
        return f"{shown} ({key[1].__name__})"
    if tag in ("T", "L"):
        inner = ", ".join(describe(k) for k in key[2])
        if tag == "L":
            return f"[{inner}]"
        return f"({inner})" if key[1] is tuple else f"{key[1].__name__}({inner})"
    if tag == "D":
        keys = [k[1] for k in key[1][1]]
        return "{" + ", ".join(f"{k!r}: {describe(v)}" for k, v in zip(keys, key[2])) + "}"
    if tag == "V":
        return f"rt.Variable {key[1].name}{shapes.format_shape(key[2])}"
    return repr(key[2])


def key_matches(general, key) -> bool:
    """True if every argument keyed ``key`` fits the (maybe relaxed) ``general`` key."""
    if general[0] != key[0]:
        return False
    tag = general[0]
    if tag == "A":
        return general[1] == key[1] and shapes.is_subshape(key[2], general[2])
    if tag in _CONTAINER_TAGS:
        return general[1] == key[1] and len(general[2]) == len(key[2]) and all(map(key_matches, general[2], key[2]))
    return general == key


def keys_match(general, key) -> bool:
    """``key_matches`` over whole call keys (one component per parameter)."""
    return len(general) == len(key) and all(map(key_matches, general, key))


def flat_key(args):
    """The hot-path cache key of positional ``args``: dtype and shape of each numpy
    value, type and value of each Python scalar; None if any argument is something else."""
    key = []
    for a in args:
        kind = type(a)
        if kind is np.ndarray or isinstance(a, np.generic):
            key.append(a.dtype)
            key.append(a.shape)
        elif kind is float:
            key.append(kind)
            key.append(a if a and a == a else float_token(a))
        elif kind in FAST_SCALARS:
            key.append(kind)
            key.append(a)
        else:
            return None
    return tuple(key)


def relax_key(a, b):
    """The key covering both ``a`` and ``b`` by relaxing array dimensions; None if none does."""
    if a[0] != b[0]:
        return None
    tag = a[0]
    if tag == "A":
        if a[1] != b[1] or a[2] is None or b[2] is None or len(a[2]) != len(b[2]):
            return None
        return ("A", a[1], shapes.relax(a[2], b[2]))
    if tag in _CONTAINER_TAGS:
        if a[1] != b[1] or len(a[2]) != len(b[2]):
            return None
        children = tuple(relax_key(x, y) for x, y in zip(a[2], b[2]))
        return None if None in children else (tag, a[1], children)
    return a if a == b else None


def leaf_specs(key, out):
    """The (dtype, shape) of every array leaf of ``key``, in leaf order."""
    tag = key[0]
    if tag == "A":
        out.append((key[1], key[2]))
    elif tag in _CONTAINER_TAGS:
        for k in key[2]:
            leaf_specs(k, out)
    return out


def weak_parts(key, out):
    """The ``WeakIdentity`` parts of ``key`` (a component), appended to ``out``."""
    tag = key[0]
    if tag in _CONTAINER_TAGS:
        if tag == "D":
            out.extend(k[-1] for k in key[1][1] if type(k[-1]) is WeakIdentity)
        for k in key[2]:
            weak_parts(k, out)
    elif tag == "O" and type(key[2]) is WeakIdentity:
        out.append(key[2])
    return out


def rebuild(value, make_leaf, path, stand_in=None):
    """``value`` with each array/spec leaf replaced by ``make_leaf(path)``, each
    variable by ``stand_in(variable)`` and each object whose type defines
    ``STAND_IN_METHOD`` by what that returns; containers keep their type."""
    if isinstance(value, (np.ndarray, np.generic, TensorSpec)):
        return make_leaf(path)
    if stand_in is not None and isinstance(value, variables.Variable):
        return stand_in(value)
    if type(value) in FAST_SCALARS:
        return value
    if isinstance(value, tuple):
        items = [rebuild(v, make_leaf, f"{path}_{i}", stand_in) for i, v in enumerate(value)]
        if type(value) is tuple:
            return tuple(items)
        return type(value)(*items) if nest.is_namedtuple(value) else type(value)(items)
    if isinstance(value, list):
        items = [rebuild(v, make_leaf, f"{path}_{i}", stand_in) for i, v in enumerate(value)]
        if type(value) is list:
            return items
        rebuilt = copy.copy(value)  # a list subclass keeps its type and attributes
        rebuilt[:] = items
        return rebuilt
    if isinstance(value, dict):
        rebuilt = copy.copy(value) if type(value) is not dict else {}  # defaultdict keeps its factory
        for k, v in value.items():  # leaf order is insertion order
            rebuilt[k] = rebuild(v, make_leaf, f"{path}_{k}", stand_in)
        return rebuilt
    own_stand_in = getattr(type(value), STAND_IN_METHOD, None)
    if own_stand_in is not None:  # an object the trace must hold weakly (a dataset: runtime/data/argument.py)
        return own_stand_in(value)
    return value


def rebuild_spec(spec, make_leaf, path):
    """The structure of ``spec`` (an input_signature entry) with a placeholder per TensorSpec."""
    if isinstance(spec, TensorSpec):
        return make_leaf(path)
    if isinstance(spec, (list, tuple)):
        items = [rebuild_spec(s, make_leaf, f"{path}_{i}") for i, s in enumerate(spec)]
        return type(spec)(*items) if nest.is_namedtuple(spec) else type(spec)(items)
    return {k: rebuild_spec(s, make_leaf, f"{path}_{k}") for k, s in spec.items()}
