"""numpy's array interface on ``Tensor``: the methods and attributes whose meaning is unambiguous.

``install()`` -- called once, by ``runtime/__init__.py`` -- puts them on
``Tensor``, each computing what the numpy method computes, with numpy's
result dtypes (``t.sum()`` of int32 is int64, ``t.mean()`` of ints float64)::

    t.sum() .mean() .max() .min() .prod() .any() .all()   (axis=None, keepdims=False; sum/mean/prod: dtype=)
    t.var() .std()   (axis=None, ddof=0, keepdims=False: numpy's value to the bit)
    t.argmax(axis=None) .argmin(axis=None)   t.astype(dtype)   t.reshape(*shape)   t.transpose(*axes)   t.T
    t.ravel() .flatten()   t.squeeze(axis=None)   t.clip(min, max)   t.cumsum(axis=None)   t.round(decimals=0)
    t.dot(u)   (vectors and matrices: ``@``; a scalar: ``*``)
    t.size   t.item()   t.copy()   round(t), round(t, n)   divmod(t, u)

``t.size`` is a Python int when the shape is static, else a weakly typed
scalar (a Python int); ``t.item()`` is the weakly typed number of a
one-element tensor, as Python's ``int``/``float``/``bool`` it stands for;
``t.copy()`` is a new tensor of the same value (an ``Identity`` op);
``t.tolist()`` is an ``ag.TracingError`` saying what to do instead.

A tensor standing for a Python number (weakly typed scalar) or a list
(a staged list) has the methods of that Python type, not numpy's: these
raise Python's ``AttributeError`` on it.
"""

from __future__ import annotations

import numpy as np

from autograph.runtime.core import dtypes, shapes
from autograph.runtime.core.location import user_location_text
from autograph.runtime.core.tensor import Tensor, is_weak
from autograph.runtime.errors import TracingError
from autograph.runtime.ops import array, conversions, math, nn, reduction
from autograph.runtime.ops.basic import cast, identity
from autograph.runtime.ops.list_operators import StagedList

# dtype kind of a weakly typed scalar -> the Python type it stands for
_PYTHON_NAMES = {"b": "bool", "i": "int", "u": "int", "f": "float"}


def _receiver(tensor, name):
    """``tensor``, unless it stands for a Python number or list, which has no numpy method ``name``."""
    owner = "list" if isinstance(tensor, StagedList) else _PYTHON_NAMES.get(tensor.dtype.kind) if tensor.weak and tensor.shape == () else None
    if owner is not None:
        raise AttributeError(f"'{owner}' object has no attribute '{name}' (at {user_location_text()})")
    return tensor


def _refuse_arguments(name, advice, unsupported=(), **arguments):
    """The refusal of numpy's arguments a method of a tensor does not take: those of ``unsupported``
    (names) and each of ``arguments`` given (not None), in that order."""
    given = sorted(unsupported) + [k for k, v in arguments.items() if v is not None]
    if given:
        raise TracingError(f".{name}() of a tensor at {user_location_text()} does not take {', '.join(given)}; "
                           f"{advice}")


def _c_order(name, order, allowed):
    """numpy's ``order`` argument: only the ones that mean C order here (``allowed``)."""
    if order not in allowed:
        raise TracingError(f".{name}(order={order!r}) at {user_location_text()} is not supported; only C order "
                           "is (transpose the tensor first).")


def _reduction(name, fn, with_dtype):
    def method(self, axis=None, dtype=None, out=None, keepdims=False, **unsupported):
        _receiver(self, name)
        _refuse_arguments(name, f"use the result's value, or rt.{fn.__name__}(...).", unsupported, out=out,
                          dtype=None if with_dtype else dtype)
        x = self if dtype is None else cast(self, dtype)
        result = fn(x, axis=_scalar_axis(self, _axis(axis), name, keepdims), keepdims=keepdims)
        return result if dtype is None else cast(result, dtype)  # numpy accumulates in ``dtype``

    method.__name__ = name
    return method


def _axis(axis):
    """numpy's ``axis`` argument of a method: None, an int or a tuple (a list is numpy's TypeError)."""
    if isinstance(axis, list):
        raise TypeError(f"'list' object cannot be interpreted as an integer (axis at {user_location_text()}: "
                        "numpy takes a tuple of axes)")
    return axis


def _scalar_axis(self, axis, name, keepdims=False):
    """``axis`` of a reduction, but None for axis 0 or -1 of a 0-d tensor: it stands for a numpy scalar,
    whose ``.sum(axis=0)`` (``max``, ``min``, ``prod``, ``any``, ``all``, ``argmax``, ``argmin``; not
    ``mean``) reduces nothing where a 0-d array's is an AxisError."""
    if (type(axis) is int and axis in (0, -1) and self.shape == () and not keepdims and name != "mean"
            and not isinstance(self, StagedList)):
        return None
    return axis


def _argmax(self, axis=None):
    return reduction.argmax(_receiver(self, "argmax"), axis=_scalar_axis(self, axis, "argmax"))


def _argmin(self, axis=None):
    return reduction.argmin(_receiver(self, "argmin"), axis=_scalar_axis(self, axis, "argmin"))


def _spread(name, fn):
    """``.var()`` / ``.std()``: numpy's, with ``ddof``."""
    def method(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **unsupported):
        _receiver(self, name)
        _refuse_arguments(name, f"cast the tensor first, or use rt.{fn.__name__}(...).", unsupported, dtype=dtype,
                          out=out)
        return fn(self, axis=_axis(axis), keepdims=keepdims, ddof=ddof)

    method.__name__ = name
    return method


def _flattened(name):
    """``.ravel()`` / ``.flatten()``: the elements in one dimension (a value: copy or view alike)."""
    def method(self, order="C"):
        _receiver(self, name)
        _c_order(name, order, ("C", "A", "K"))
        return array.reshape(self, [-1])

    method.__name__ = name
    return method


def _squeeze(self, axis=None):
    return nn.squeeze(_receiver(self, "squeeze"), axis=axis)


def _clip(self, min=None, max=None, out=None, **unsupported):  # noqa: A002 - numpy's names
    _receiver(self, "clip")
    _refuse_arguments("clip", "it takes min and max only.", unsupported, out=out)
    if min is None and max is None:
        raise ValueError(f"One of max or min must be given (at {user_location_text()})")
    if self.dtype.kind in "iu":  # numpy ignores a Python int bound beyond the dtype's range on its side
        bounds = np.iinfo(self.dtype)
        min = None if type(min) is int and min < bounds.min else min  # noqa: A001
        max = None if type(max) is int and max > bounds.max else max  # noqa: A001
    return nn.clip_by_value(self, min, max)


def _dot(self, other):
    """``a.dot(b)``: ``a @ b`` for vectors and matrices, ``a * b`` when one is a scalar (np.dot makes
    a Python number an array first: ``x.dot(2.0)`` of float32 is float64)."""
    _receiver(self, "dot")
    if is_weak(other):  # a Python number, or a tensor standing for one
        kind = other.dtype.kind if isinstance(other, Tensor) else np.asarray(other).dtype.kind
        other = cast(other, dtypes.LIST_DTYPES[kind])
    ranks = [(None if t.shape is None else len(t.shape)) if isinstance(t, Tensor) else np.ndim(t) for t in (self, other)]
    if 0 in ranks:
        return math.multiply(self, other)
    if None in ranks or max(ranks) > 2:
        raise TracingError(f".dot() of tensors of rank {ranks[0]} and {ranks[1]} at {user_location_text()}: "
                           "only vectors and matrices are supported (np.dot sums over other axes than @); "
                           "use @ or reshape.")
    return math.matmul(self, other)


def _cumsum(self, axis=None, dtype=None, out=None):
    _receiver(self, "cumsum")
    _refuse_arguments("cumsum", "cast the tensor first.", dtype=dtype, out=out)
    return nn.cumsum(array.reshape(self, [-1]) if axis is None else self, axis=0 if axis is None else axis)


def _round_method(self, decimals=0, out=None):
    """``a.round(decimals)``: ``np.round``, the tensor's dtype."""
    _receiver(self, "round")
    _refuse_arguments("round", "use the result.", out=out)
    if isinstance(decimals, Tensor):
        raise TracingError(f".round() at {user_location_text()}: a tensor number of decimals is not supported; "
                           "pass a Python int.")
    return conversions.round_(self, decimals, python=False)


def _astype(self, dtype):
    return cast(_receiver(self, "astype"), dtype)


def _reshape(self, *shape, order="C"):
    _receiver(self, "reshape")
    _c_order("reshape", order, ("C", "A"))
    if len(shape) == 1 and isinstance(shape[0], (tuple, list, Tensor)):
        (shape,) = shape
    return array.reshape(self, list(shape) if isinstance(shape, tuple) else shape)


def _transpose(self, *axes):
    _receiver(self, "transpose")
    if len(axes) == 1 and isinstance(axes[0], (tuple, list)) or axes == (None,):
        (axes,) = axes
    return array.transpose(self, axes if axes else None)


def _size(self):
    _receiver(self, "size")
    if shapes.is_fully_defined(self.shape):
        return int(np.prod(self.shape, dtype=np.int64))
    return cast(array.size(self, out_type="int64"), dtypes.int64, weak=True)


def _item(self, *args):
    _receiver(self, "item")
    if args:
        raise TracingError(f".item() with arguments at {user_location_text()} is not supported; index the tensor.")
    if shapes.is_fully_defined(self.shape) and int(np.prod(self.shape)) != 1:
        raise ValueError(f"can only convert an array of size 1 to a Python scalar (at {user_location_text()})")
    value = array.reshape(self, [])
    if dtypes.is_integer(self.dtype):
        return conversions.python_int(value, f".item() at {user_location_text()}")
    return cast(value, dtypes.bool_ if self.dtype.kind == "b" else dtypes.float64, weak=True)


def _copy(self, order="K"):
    """A new tensor of the same value: another name for the copy is no alias (``refuse_store_alias``)."""
    if isinstance(self, StagedList):  # list.copy(): a new list of the same items
        return StagedList.mark(identity(self), self.label, self.numbers)
    return identity(_receiver(self, "copy"))


def _tolist(self):
    _receiver(self, "tolist")
    raise TracingError(
        f".tolist() of the symbolic tensor {self.name} at {user_location_text()}: a Python list needs the "
        "values, which exist only when the graph runs. Index the tensor, loop over it in converted code, or "
        "return it and call .tolist() on the result."
    )


def _round(self, ndigits=None):
    """``round(t)``: Python's int of a scalar (halves to even, inf/nan raise when the graph runs);
    ``round(t, n)``: ``np.round``, the tensor's dtype (Python's own rounding for a Python number)."""
    where = f"round() at {user_location_text()}"
    if isinstance(ndigits, Tensor):
        raise TracingError(f"{where}: a tensor number of digits is not supported; pass a Python int.")
    if self.shape != () and not isinstance(self, StagedList):
        raise TypeError(f"{where}: type numpy.ndarray doesn't define __round__ method; use rt.round_(x, decimals)")
    if isinstance(self, StagedList):
        raise TypeError(f"{where}: type list doesn't define __round__ method")
    if self.dtype == np.bool_ and not self.weak:  # (a Python bool rounds as the int it is)
        raise TypeError(f"{where}: type numpy.bool doesn't define __round__ method")
    if ndigits is None:
        return conversions.python_int(self if dtypes.is_integer(self.dtype) else math.rint(self), where)
    return conversions.round_(self, ndigits, python=self.weak)


def _divmod(self, other):
    return self // other, self % other


def _rdivmod(self, other):
    return other // self, other % self


_METHODS = {
    **{name: _reduction(name, fn, name in ("sum", "mean", "prod")) for name, fn in (
        ("sum", reduction.reduce_sum), ("mean", reduction.reduce_mean), ("max", reduction.reduce_max),
        ("min", reduction.reduce_min), ("prod", reduction.reduce_prod), ("any", reduction.reduce_any),
        ("all", reduction.reduce_all))},
    "argmax": _argmax, "argmin": _argmin, "var": _spread("var", nn.reduce_variance),
    "std": _spread("std", nn.reduce_std), "ravel": _flattened("ravel"), "flatten": _flattened("flatten"),
    "squeeze": _squeeze, "clip": _clip, "dot": _dot, "cumsum": _cumsum, "round": _round_method,
    "astype": _astype, "reshape": _reshape, "transpose": _transpose, "item": _item,
    "copy": _copy, "tolist": _tolist, "__round__": _round, "__divmod__": _divmod, "__rdivmod__": _rdivmod,
}
_PROPERTIES = {"T": lambda self: _transpose(self), "size": _size}


def install() -> None:
    """Puts numpy's methods and attributes above on ``Tensor`` (idempotent)."""
    for name, method in _METHODS.items():
        setattr(Tensor, name, method)
    for name, getter in _PROPERTIES.items():
        setattr(Tensor, name, property(getter))
