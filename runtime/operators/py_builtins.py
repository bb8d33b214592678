"""Python paths of the builtins converted code reaches through ``ag__``.

``range(n)`` in a converted function becomes ``ag__.range(n)`` (when the
name is not shadowed): with Python arguments it is the builtin itself; with
an argument some backend stages it is that backend's handler from the
overload registry (``operators/dispatch.py``, the operator named as the
builtin: ``"range"``, ``"len"``, ...), called with the same arguments.  The
numpy runtime registers, for a ``Tensor``, the graph paths of
``tensor_builtins`` (Python's answer for the values the tensors stand for,
or Python's error when the graph runs), and for ``sum``/``any``/``all`` of a
staged iterable the tensor loops of ``comprehensions``.  ``len``,
``enumerate``, ``zip``, ``reversed``, ``sum``, ``any`` and ``all`` also
stage iterables that are not tensors (``iterables.is_staged``: ``range(n)``
with a tensor ``n``, ...); the others decide on tensors only.
"""

from __future__ import annotations

import builtins

from autograph.runtime.core import nest
from autograph.runtime.core.graph import current_graph
from autograph.runtime.core.location import warn_at_user
from autograph.runtime.errors import TracingWarning
from autograph.runtime.operators import comprehensions, dispatch, tensor_builtins
from autograph.runtime.operators.calls import tracing
from autograph.runtime.operators.iterables import is_staged, is_tensor
from autograph.runtime.ops import effects

# Python values, checked first: they are what converted code mostly sees, and never staged.
_PLAIN = frozenset({int, float, bool, str, list, tuple, dict, set, range, bytes, type(None)})


def _staged(name, value):
    """The handler of builtin ``name`` for ``value``, or None (Python's builtin)."""
    if type(value) in _PLAIN:
        return None
    return dispatch.handler_for(name, value)


def _staged_any(name, args):
    """The handler of builtin ``name`` for the first of ``args`` a backend stages, or None."""
    for arg in args:
        if type(arg) not in _PLAIN:
            handler = dispatch.handler_for(name, arg)
            if handler is not None:
                return handler
    return None


def range_(*args):
    staged = _staged_any("range", args)
    if staged is not None:
        return staged(*args)
    return builtins.range(*args)


def len_(obj):
    staged = _staged("len", obj)
    if staged is not None:
        return staged(obj)
    return builtins.len(obj)


def print_(*args, **kwargs):
    staged = _staged_any("print", args)
    if staged is None and tracing():  # a tensor held in a list, tuple or dict argument
        staged = _staged_any("print", nest.flatten(args))
    if staged is not None:
        return staged(*args, **kwargs)
    if current_graph() is not None:
        args = [effects.text_of(a) for a in args]  # an object showing a symbolic tensor: refused
        warn_at_user(
            "print() with no tensor arguments runs once, while tracing, and never when the graph runs; "
            "use rt.print(...) to print at every call.",
            TracingWarning,
        )
    return builtins.print(*args, **kwargs)


def int_(*args, **kwargs):
    staged = _staged("int", args[0]) if args else None
    if staged is not None:
        return staged(*args, **kwargs)
    return builtins.int(*args, **kwargs)


def float_(*args):
    staged = _staged("float", args[0]) if args else None
    if staged is not None:
        return staged(*args)
    return builtins.float(*args)


def bool_(*args):
    staged = _staged("bool", args[0]) if args else None
    if staged is not None:
        return staged(*args)
    return builtins.bool(*args)


def abs_(x):
    staged = _staged("abs", x)
    if staged is not None:
        return staged(x)
    return builtins.abs(x)


def _operands(args, kwargs):
    """``max([a, b])`` (a Python list or tuple of values) compares its items as ``max(a, b)`` does."""
    if not kwargs and len(args) == 1 and type(args[0]) in (list, tuple) and len(args[0]) > 1:
        return tuple(args[0])
    return args


def max_(*args, **kwargs):
    operands = _operands(args, kwargs)
    staged = None if kwargs else _staged_any("max", operands)
    if staged is not None:
        return staged(*operands)
    return builtins.max(*args, **kwargs)


def min_(*args, **kwargs):
    operands = _operands(args, kwargs)
    staged = None if kwargs else _staged_any("min", operands)
    if staged is not None:
        return staged(*operands)
    return builtins.min(*args, **kwargs)


def reversed_(sequence):
    staged = _staged("reversed", sequence)
    if staged is not None:
        return staged(sequence)
    return builtins.reversed(sequence)


def isinstance_(value, classinfo):
    staged = _staged("isinstance", value)
    if staged is not None:
        return staged(value, classinfo)
    return builtins.isinstance(value, classinfo)


def type_(*args):
    staged = _staged("type", args[0]) if len(args) == 1 else None
    if staged is not None:
        return staged(*args)
    return builtins.type(*args)


def enumerate_(iterable, start=0):
    staged = _staged("enumerate", iterable)
    if staged is not None:
        return staged(iterable, start)
    return builtins.enumerate(iterable, start)


def zip_(*iterables, **kwargs):
    staged = _staged_any("zip", iterables)
    if staged is not None:
        return staged(*iterables, **kwargs)
    return builtins.zip(*iterables, **kwargs)


def sum_(iterable, /, start=0):
    staged = _staged("sum", iterable)
    if staged is not None:
        return staged(iterable, start)
    return builtins.sum(iterable, start)


def any_(iterable, /):
    staged = _staged("any", iterable)
    if staged is not None:
        return staged(iterable)
    return builtins.any(iterable)


def all_(iterable, /):
    staged = _staged("all", iterable)
    if staged is not None:
        return staged(iterable)
    return builtins.all(iterable)


# the converters spell ``x[a:b] = v`` as ``aug_setitem(x, ag__.slice(a, b, None), ...)``
slice_ = builtins.slice


# The names generated code uses (``ag__.range``, ...) -> the functions above.
BUILTINS = {
    "range": range_,
    "len": len_,
    "print": print_,
    "int": int_,
    "float": float_,
    "abs": abs_,
    "max": max_,
    "min": min_,
    "enumerate": enumerate_,
    "zip": zip_,
    "bool": bool_,
    "reversed": reversed_,
    "isinstance": isinstance_,
    "type": type_,
    "slice": slice_,
    "sum": sum_,
    "any": any_,
    "all": all_,
}


def _max(*args):
    return tensor_builtins.extremum(args, "max")


def _min(*args):
    return tensor_builtins.extremum(args, "min")


# The numpy backend's overloads: builtin -> (detect, handler).
_NUMPY_OVERLOADS = {
    "range": (is_tensor, tensor_builtins.range_),
    "len": (is_staged, tensor_builtins.len_),
    "print": (is_tensor, tensor_builtins.print_),
    "int": (is_tensor, tensor_builtins.int_),
    "float": (is_tensor, tensor_builtins.float_),
    "bool": (is_tensor, tensor_builtins.bool_),
    "abs": (is_tensor, tensor_builtins.abs_),
    "max": (is_tensor, _max),
    "min": (is_tensor, _min),
    "reversed": (is_staged, tensor_builtins.reversed_),
    "isinstance": (is_tensor, tensor_builtins.isinstance_),
    "type": (is_tensor, tensor_builtins.type_),
    "enumerate": (is_staged, tensor_builtins.enumerate_),
    "zip": (is_staged, tensor_builtins.zip_),
    "sum": (is_staged, comprehensions.sum_),
    "any": (is_staged, comprehensions.any_),
    "all": (is_staged, comprehensions.all_),
}
dispatch.register_all(_NUMPY_OVERLOADS, backend="numpy")
