"""Cache keys of ``rt.function`` calls: argument values -> a hashable key + the array leaves.

``Encoder.encode`` walks one argument into a key component, a tuple whose
first item says what it stands for:

* ``("A", dtype, shape)`` -- a numpy array or scalar (a graph input; its
  value is collected as a *leaf*), or a ``TensorSpec`` standing for one;
* ``("P", type, value)`` -- a Python ``bool``/``int``/``float``/``str``/``None``,
  traced as a constant (NaN keyed as ``"nan"`` so that it equals itself);
* ``("T", children)`` / ``("L", children)`` -- a tuple / a list;
* ``("N", type, children)`` -- a namedtuple;
* ``("D", sorted keys, children)`` -- a dict, walked in sorted-key order;
* ``("V", handle)`` -- an ``rt.Variable``, keyed by identity;
* ``("C", object)`` -- a type, dtype, function or enum member.

``key_matches`` tells whether a key fits a more general one (array
dimensions relaxed to ``None``), ``relax_key`` makes that general key for
``reduce_retracing``, ``describe`` spells a key for messages, ``flat_key``
is the cheaper key of the cached-call hot path, and ``rebuild`` /
``rebuild_spec`` put the traced placeholders where the leaves were.
"""

from __future__ import annotations

import enum
import types

import numpy as np

from autograph.runtime.core import dtypes, shapes
from autograph.runtime.errors import TracingError
from autograph.runtime.core.location import user_location_text
from autograph.runtime.ops import variables
from autograph.runtime.core.tensor import Tensor, TensorSpec

_SUPPORTED = frozenset(dtypes.SUPPORTED)
_PY_CONSTANTS = (bool, int, str, type(None))
FAST_SCALARS = frozenset((bool, int, float, str, type(None)))
CONSTANT_OBJECTS = (type, np.dtype, types.FunctionType, types.BuiltinFunctionType, enum.Enum)


class _Identity:
    """A cache-key part for a static callable: equal only to the same objects (``is``).

    It holds them, so an object's id cannot be reused for another while a
    trace keyed by it is cached.
    """

    __slots__ = ("parts", "shown")

    def __init__(self, *parts, shown):
        self.parts = parts
        self.shown = shown

    def __eq__(self, other):
        return type(other) is _Identity and len(other.parts) == len(self.parts) and all(
            a is b for a, b in zip(self.parts, other.parts)
        )

    def __hash__(self):
        return hash(tuple(id(p) for p in self.parts))

    def __repr__(self):
        return repr(self.shown)


class Encoder:
    """Walks argument values into a hashable key, collecting array leaves.

    ``allow_specs``: ``TensorSpec`` leaves stand for arrays of that spec
    (``get_concrete_function``).
    """

    __slots__ = ("owner", "leaves", "allow_specs")

    def __init__(self, owner, allow_specs=False):
        self.owner = owner
        self.leaves = []
        self.allow_specs = allow_specs

    def encode(self, value, path):
        if isinstance(value, (np.ndarray, np.generic)):
            if value.dtype not in _SUPPORTED:
                problem = f"has dtype {value.dtype}, which the runtime does not support"
                raise TypeError(self.owner.bad_arg(path, value, problem))
            self.leaves.append(value)
            return ("A", value.dtype, value.shape)
        kind = type(value)
        if kind in _PY_CONSTANTS:
            return ("P", kind, value)
        if kind is float:
            return ("P", float, "nan" if value != value else value)
        if isinstance(value, tuple):
            children = tuple(self.encode(v, f"{path}[{i}]") for i, v in enumerate(value))
            if hasattr(value, "_fields"):
                return ("N", kind, children)
            return ("T", children)
        if isinstance(value, list):
            return ("L", tuple(self.encode(v, f"{path}[{i}]") for i, v in enumerate(value)))
        if isinstance(value, dict):
            keys = sorted_keys(value)
            return ("D", keys, tuple(self.encode(value[k], f"{path}[{k!r}]") for k in keys))
        if isinstance(value, TensorSpec) and self.allow_specs:
            self.leaves.append(value)
            return ("A", value.dtype, value.shape)
        if isinstance(value, Tensor):
            raise TracingError(
                f"{self.owner.label}: argument {path!r} is the symbolic tensor {value.name} of a finished "
                f"trace (called at {user_location_text()}); symbolic tensors only exist while their "
                "function is traced. Pass numpy values."
            )
        if isinstance(value, variables.Variable):
            return ("V", value.handle)
        if isinstance(value, CONSTANT_OBJECTS):
            return ("C", value)
        if isinstance(value, types.MethodType):  # a new object at every `obj.method`: key its parts
            return ("C", _Identity(value.__func__, value.__self__, shown=value))
        if callable(value):  # functools.partial, objects with __call__: static, keyed by identity
            return ("C", _Identity(value, shown=value))
        if isinstance(value, complex):
            raise TypeError(self.owner.bad_arg(path, value, "is a complex number, which the runtime does not support"))
        raise TypeError(self.owner.bad_arg(path, value, f"is a {kind.__name__}, which cannot be a traced argument"))


def sorted_keys(d):
    try:
        return tuple(sorted(d))
    except TypeError:
        return tuple(sorted(d, key=lambda k: (type(k).__name__, repr(k))))


def describe(key) -> str:
    """A readable form of one key component, for messages."""
    tag = key[0]
    if tag == "A":
        return f"{key[1].name}{shapes.format_shape(key[2])}"
    if tag == "P":
        return f"{key[2]!r} ({key[1].__name__})" if key[2] != "nan" or key[1] is not float else "nan (float)"
    if tag in ("T", "L"):
        inner = ", ".join(describe(k) for k in key[1])
        return f"({inner})" if tag == "T" else f"[{inner}]"
    if tag == "N":
        return key[1].__name__ + "(" + ", ".join(describe(k) for k in key[2]) + ")"
    if tag == "D":
        return "{" + ", ".join(f"{k!r}: {describe(v)}" for k, v in zip(key[1], key[2])) + "}"
    if tag == "V":
        return f"rt.Variable {key[1]}"
    return repr(key[1])


def key_matches(general, key) -> bool:
    """True if every argument keyed ``key`` fits the (maybe relaxed) ``general`` key."""
    if general[0] != key[0]:
        return False
    tag = general[0]
    if tag == "A":
        return general[1] == key[1] and shapes.is_subshape(key[2], general[2])
    if tag in ("T", "L"):
        return len(general[1]) == len(key[1]) and all(map(key_matches, general[1], key[1]))
    if tag in ("N", "D"):
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
    if tag in ("T", "L"):
        if len(a[1]) != len(b[1]):
            return None
        children = tuple(relax_key(x, y) for x, y in zip(a[1], b[1]))
        return None if None in children else (tag, children)
    if tag in ("N", "D"):
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
    elif tag in ("T", "L"):
        for k in key[1]:
            leaf_specs(k, out)
    elif tag in ("N", "D"):
        for k in key[2]:
            leaf_specs(k, out)
    return out


def rebuild(value, make_leaf, path):
    """``value`` with each array/spec leaf replaced by ``make_leaf(path)``."""
    if isinstance(value, (np.ndarray, np.generic, TensorSpec)):
        return make_leaf(path)
    if isinstance(value, tuple):
        items = [rebuild(v, make_leaf, f"{path}_{i}") for i, v in enumerate(value)]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, list):
        return [rebuild(v, make_leaf, f"{path}_{i}") for i, v in enumerate(value)]
    if isinstance(value, dict):
        rebuilt = {}
        for k in sorted_keys(value):  # leaf order is sorted-key order
            rebuilt[k] = rebuild(value[k], make_leaf, f"{path}_{k}")
        return {k: rebuilt[k] for k in value}
    return value


def rebuild_spec(spec, make_leaf, path):
    """The structure of ``spec`` (an input_signature entry) with a placeholder per TensorSpec."""
    if isinstance(spec, TensorSpec):
        return make_leaf(path)
    if isinstance(spec, (list, tuple)):
        return type(spec)(rebuild_spec(s, make_leaf, f"{path}_{i}") for i, s in enumerate(spec))
    rebuilt = {k: rebuild_spec(spec[k], make_leaf, f"{path}_{k}") for k in sorted_keys(spec)}
    return {k: rebuilt[k] for k in spec}
