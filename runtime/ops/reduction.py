"""Reductions (``Sum``, ``Mean``, ``Max``, ``Min``, ``Prod``, ``Any``, ``All``) and ``ArgMax``/``ArgMin``.

Attributes: ``axis`` (None for all axes, an int, or a tuple of ints) and
``keepdims``.  Result dtypes follow numpy (``reduce_sum`` of int32 gives
int64 as ``np.sum`` does, ``reduce_mean`` of ints gives float64), by the
rules in ``_RESULT_DTYPES``, which run no kernel; the numpy backend's
kernel is the numpy function itself.  ``argmax`` follows ``np.argmax``:
``axis=None`` looks at the flattened tensor; the result is int64.
"""

from __future__ import annotations

import numpy as np

from autograph.runtime.core import opdef

from autograph.runtime.ops import apply
from autograph.runtime.ops.common import check_int_attr, normalize_axis

# op type -> the numpy reduction it means (called as fn(x, axis=..., keepdims=...))
REDUCTIONS = {
    "Sum": np.sum,
    "Mean": np.mean,
    "Max": np.max,
    "Min": np.min,
    "Prod": np.prod,
    "Any": np.any,
    "All": np.all,
}




def _accumulated(dtype):
    """``np.sum``/``np.prod``: bools and integers narrower than the platform's accumulate in it."""
    if dtype.kind in "bi":
        return np.result_type(dtype, np.int_)
    if dtype.kind == "u":
        return np.result_type(dtype, np.uint)
    return dtype


def _mean(dtype):
    """``np.mean``: bools and integers give float64, floats keep their dtype."""
    return np.dtype(np.float64) if dtype.kind in "biu" else dtype


# op type -> rule(input dtype) -> result dtype, as numpy's reductions give it
_RESULT_DTYPES = {
    "Sum": _accumulated,
    "Prod": _accumulated,
    "Mean": _mean,
    "Max": lambda dtype: dtype,
    "Min": lambda dtype: dtype,
    "Any": lambda dtype: np.dtype(np.bool_),
    "All": lambda dtype: np.dtype(np.bool_),
}


def reduced_shape(shape, axis, keepdims: bool):
    """Static shape after reducing ``axis`` (None, int or tuple) of ``shape``."""
    if shape is None:
        return None if axis is not None or keepdims else ()
    rank = len(shape)
    if axis is None:
        axes = set(range(rank))
    else:
        listed = axis if isinstance(axis, tuple) else (axis,)
        axes = [normalize_axis(a, rank) for a in listed]
        if len(set(axes)) != len(axes):
            raise ValueError(f"axis {axis!r} repeats an axis")
        axes = set(axes)
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _reduction_infer(result_dtype):
    def infer(inputs, attrs):
        (x,) = inputs
        return [(result_dtype(x.dtype), reduced_shape(x.shape, attrs["axis"], attrs["keepdims"]))]

    return infer


for _type in REDUCTIONS:
    opdef.register(_type, infer=_reduction_infer(_RESULT_DTYPES[_type]), inputs=1,
                   attrs={"axis": "axis", "keepdims": "bool"})


def _axis_attr(axis):
    if axis is None:
        return None
    if isinstance(axis, (list, tuple)):
        return tuple(check_int_attr(a, "axis") for a in axis)
    return check_int_attr(axis, "axis")


def reduce(op_type: str, x, axis=None, keepdims=False, name=None):
    """Applies reduction ``op_type`` (a key of ``REDUCTIONS``) over ``axis`` of ``x``."""
    attrs = {"axis": _axis_attr(axis), "keepdims": bool(keepdims)}
    return apply.apply_op(op_type, [x], attrs, name=name)


def reduce_sum(x, axis=None, keepdims=False, name=None):
    return reduce("Sum", x, axis, keepdims, name)


def reduce_mean(x, axis=None, keepdims=False, name=None):
    return reduce("Mean", x, axis, keepdims, name)


def reduce_max(x, axis=None, keepdims=False, name=None):
    return reduce("Max", x, axis, keepdims, name)


def reduce_min(x, axis=None, keepdims=False, name=None):
    return reduce("Min", x, axis, keepdims, name)


def reduce_prod(x, axis=None, keepdims=False, name=None):
    return reduce("Prod", x, axis, keepdims, name)


def reduce_any(x, axis=None, keepdims=False, name=None):
    return reduce("Any", x, axis, keepdims, name)


def reduce_all(x, axis=None, keepdims=False, name=None):
    return reduce("All", x, axis, keepdims, name)


def _index_infer(what):
    """``ArgMax``/``ArgMin``: an index (``intp``) per reduced position; no result over nothing."""
    def infer(inputs, attrs):
        (x,) = inputs
        axis = attrs["axis"]
        if x.shape is not None and axis is not None and len(x.shape) == 0:
            raise ValueError(f"{what} over axis {axis} of the scalar {x.name}: a scalar has no axes")
        if x.shape is not None and 0 in (x.shape if axis is None else (x.shape[normalize_axis(axis, len(x.shape))],)):
            raise ValueError(f"{what} of an empty dimension of {x.name} (shape {x.shape}) has no result")
        return [(np.dtype(np.intp), reduced_shape(x.shape, axis, False))]

    return infer


opdef.register("ArgMax", infer=_index_infer("argmax"), inputs=1, attrs={"axis": "axis"})
opdef.register("ArgMin", infer=_index_infer("argmin"), inputs=1, attrs={"axis": "axis"})


def argmax(x, axis=None, name=None):
    """Index of the largest element (``np.argmax``: ``axis=None`` means the flattened tensor)."""
    return apply.apply_op("ArgMax", [x], {"axis": check_int_attr(axis, "axis")}, name=name)


def argmin(x, axis=None, name=None):
    """Index of the smallest element (``np.argmin``: ``axis=None`` means the flattened tensor)."""
    return apply.apply_op("ArgMin", [x], {"axis": check_int_attr(axis, "axis")}, name=name)
