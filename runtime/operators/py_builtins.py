"""Python paths of the builtins converted code reaches through ``ag__``.

``range(n)`` in a converted function becomes ``ag__.range(n)`` (when the
name is not shadowed): with Python arguments it is the builtin itself; with
a ``Tensor`` argument it goes to ``graph_paths.range_`` (and ``len_``,
``print_``, ...), the graph path.  ``len``, ``enumerate`` and ``zip`` also
send staged iterables there (objects whose class sets
``__ag_staged_iterable__``, e.g. ``range(n)`` with a tensor ``n``).
``max``/``min``/``int``/``float``/``bool``/``reversed``/``isinstance``/``type``
with a tensor go to ``tensor_builtins``, which gives Python's answer for the
values the tensors stand for (or Python's error when the graph runs).
"""

from __future__ import annotations

import builtins

from autograph.runtime.core.graph import current_graph
from autograph.runtime.core.location import warn_at_user
from autograph.runtime.core.tensor import Tensor
from autograph.runtime.errors import TracingWarning


# Python containers, checked first: they are what converted code mostly sees.
_PLAIN = frozenset({list, tuple, str, dict, set, range, bytes})


def _staged(value) -> bool:
    """A ``Tensor``, or a staged iterable (``range`` with a tensor bound, ...): the graph path."""
    kind = type(value)
    if kind in _PLAIN:
        return False
    return isinstance(value, Tensor) or getattr(kind, "__ag_staged_iterable__", False)


def _any_staged(args) -> bool:
    for arg in args:
        if _staged(arg):
            return True
    return False


def _any_tensor(args) -> bool:
    for arg in args:
        if isinstance(arg, Tensor):
            return True
    return False


def range_(*args):
    if _any_tensor(args):
        from autograph.runtime.operators import tensor_builtins
        return tensor_builtins.range_(*args)
    return builtins.range(*args)


def len_(obj):
    if _staged(obj):
        from autograph.runtime.operators import graph_paths
        return graph_paths.len_(obj)
    return builtins.len(obj)


def print_(*args, **kwargs):
    if _any_tensor(args):
        from autograph.runtime.operators import graph_paths
        return graph_paths.print_(*args, **kwargs)
    if current_graph() is not None:
        warn_at_user(
            "print() with no tensor arguments runs once, while tracing, and never when the graph runs; "
            "use rt.print(...) to print at every call.",
            TracingWarning,
        )
    return builtins.print(*args, **kwargs)


def int_(*args, **kwargs):
    if args and isinstance(args[0], Tensor):
        from autograph.runtime.operators import tensor_builtins
        return tensor_builtins.int_(*args, **kwargs)
    return builtins.int(*args, **kwargs)


def float_(*args):
    if args and isinstance(args[0], Tensor):
        from autograph.runtime.operators import tensor_builtins
        return tensor_builtins.float_(*args)
    return builtins.float(*args)


def bool_(*args):
    if args and isinstance(args[0], Tensor):
        from autograph.runtime.operators import tensor_builtins
        return tensor_builtins.bool_(*args)
    return builtins.bool(*args)


def abs_(x):
    if isinstance(x, Tensor):
        from autograph.runtime.operators import graph_paths
        return graph_paths.abs_(x)
    return builtins.abs(x)


def max_(*args, **kwargs):
    if not kwargs and _any_tensor(args):
        from autograph.runtime.operators import tensor_builtins
        return tensor_builtins.extremum(args, "max")
    return builtins.max(*args, **kwargs)


def min_(*args, **kwargs):
    if not kwargs and _any_tensor(args):
        from autograph.runtime.operators import tensor_builtins
        return tensor_builtins.extremum(args, "min")
    return builtins.min(*args, **kwargs)


def reversed_(sequence):
    if _staged(sequence):
        from autograph.runtime.operators import tensor_builtins
        return tensor_builtins.reversed_(sequence)
    return builtins.reversed(sequence)


def isinstance_(value, classinfo):
    if isinstance(value, Tensor):
        from autograph.runtime.operators import tensor_builtins
        return tensor_builtins.isinstance_(value, classinfo)
    return builtins.isinstance(value, classinfo)


def type_(*args):
    if len(args) == 1 and isinstance(args[0], Tensor):
        from autograph.runtime.operators import tensor_builtins
        return tensor_builtins.type_(*args)
    return builtins.type(*args)


def enumerate_(iterable, start=0):
    if _staged(iterable):
        from autograph.runtime.operators import graph_paths
        return graph_paths.enumerate_(iterable, start)
    return builtins.enumerate(iterable, start)


def zip_(*iterables, **kwargs):
    if _any_staged(iterables):
        from autograph.runtime.operators import graph_paths
        return graph_paths.zip_(*iterables, **kwargs)
    return builtins.zip(*iterables, **kwargs)


def sum_(iterable, /, start=0):
    if _staged(iterable):
        from autograph.runtime.operators import comprehensions
        return comprehensions.sum_(iterable, start)
    return builtins.sum(iterable, start)


def any_(iterable, /):
    if _staged(iterable):
        from autograph.runtime.operators import comprehensions
        return comprehensions.truth(iterable, "any")
    return builtins.any(iterable)


def all_(iterable, /):
    if _staged(iterable):
        from autograph.runtime.operators import comprehensions
        return comprehensions.truth(iterable, "all")
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
