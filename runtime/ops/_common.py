"""Helpers shared by the op families: weak scalars, dtype probes, static values.

* ``promote(values)`` gives Python scalars (weakly typed, NEP 50) the dtype
  numpy would give them next to the other operands, so ``t + 1`` keeps an
  int32 ``t`` int32 both eagerly and in a graph.
* ``probe_dtype(fn, dtypes)`` computes an op's result dtype by calling its
  numpy kernel on tiny arrays: eager and graph results agree by construction.
* ``static_value(t)`` / ``partial_value(t)`` read what is known of a tensor's
  value at trace time (constants, static shapes, stacks of those), which is
  how ``Reshape`` and ``Fill`` infer static output shapes.
"""

from __future__ import annotations

import warnings

import numpy as np

from autograph.runtime import dtypes
from autograph.runtime.tensor import Tensor

_WEAK_TYPES = (bool, int, float)


def is_weak(value) -> bool:
    """True for Python scalars (not numpy scalars): they take their partner's dtype."""
    return type(value) in _WEAK_TYPES


def dtype_of(value) -> np.dtype:
    """The dtype of a tensor, numpy value or (strongly converted) Python value."""
    if isinstance(value, (Tensor, np.ndarray, np.generic)):
        return value.dtype
    return np.asarray(value).dtype


def promote(values) -> list:
    """``values`` with every Python scalar converted to its promoted numpy dtype.

    Scalars are converted only when some operand is not a Python scalar;
    ``promote([t_int32, 1, 2.5])`` gives the scalars the dtype
    ``np.result_type(int32, 1, 2.5)`` (float64).
    """
    weak = [v for v in values if is_weak(v)]
    if not weak or len(weak) == len(values):
        return list(values)
    strong = [dtype_of(v) for v in values if not is_weak(v)]
    target = dtypes.result_type(*strong, *weak)
    return [_weak_as(v, target) if is_weak(v) else v for v in values]


def _weak_as(value, dtype):
    try:
        return np.asarray(value, dtype=dtype)
    except OverflowError:
        raise TypeError(
            f"the Python number {value!r} does not fit in {dtype.name}, the dtype of the tensor it is "
            f"combined with; cast the tensor to a wider dtype first (rt.cast)"
        ) from None


_PROBES: dict = {}  # (fn, input dtypes) -> result dtype or the TypeError numpy raised


def probe_dtype(fn, in_dtypes) -> np.dtype:
    """The dtype ``fn`` returns on one-element arrays of ``in_dtypes`` (must be supported); memoized."""
    key = (fn, *in_dtypes)
    found = _PROBES.get(key)
    if found is None:
        args = [np.ones((1,), d) for d in in_dtypes]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                found = dtypes.as_dtype(np.asarray(fn(*args)).dtype)
        except TypeError as e:
            found = e
        _PROBES[key] = found
    if isinstance(found, TypeError):
        raise TypeError(str(found))
    return found


def normalize_axis(axis: int, rank: int, what: str = "axis") -> int:
    """``axis`` in ``[0, rank)``; ValueError naming it when out of range."""
    if isinstance(axis, Tensor):
        raise TypeError(f"{what} must be a Python int, not the tensor {axis.name}")
    axis = int(axis)
    if not -rank <= axis < rank:
        raise ValueError(f"{what} {axis} is out of range for a tensor of rank {rank}")
    return axis + rank if axis < 0 else axis


def check_int_attr(value, what: str):
    """``value`` as a Python int (or None); TypeError for tensors and other objects."""
    if value is None:
        return None
    if isinstance(value, Tensor):
        raise TypeError(f"{what} must be a Python int, not the tensor {value.name}; dynamic {what} is not supported")
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{what} must be a Python int, got {value!r}")
    return int(value)


def static_value(tensor):
    """The value of ``tensor`` if it is known at trace time, else None."""
    if not isinstance(tensor, Tensor):
        return np.asarray(tensor)
    op = tensor.op
    if op.type == "Const":
        return op.attrs["value"]
    if op.type == "Shape":
        shape = op.inputs[0].shape
        if shape is not None and all(d is not None for d in shape):
            return np.array(shape, dtype=op.attrs["out_type"])
    if op.type == "Size":
        shape = op.inputs[0].shape
        if shape is not None and all(d is not None for d in shape):
            return np.asarray(int(np.prod(shape, dtype=np.int64)), dtype=op.attrs["out_type"])
    if op.type == "Identity":
        return static_value(op.inputs[0])
    if op.type == "Pack":
        parts = [static_value(t) for t in op.inputs]
        if all(p is not None for p in parts):
            return np.stack(parts, axis=op.attrs["axis"]).astype(tensor.dtype)
    return None


def partial_value(tensor) -> list | None:
    """What is known of a 1-D int tensor's elements: ``[3, None]``; None if not even its length."""
    value = static_value(tensor)
    if value is not None:
        return [int(v) for v in np.asarray(value).reshape(-1)]
    op = tensor.op
    if op.type == "Shape" and op.inputs[0].shape is not None:
        return list(op.inputs[0].shape)
    if op.type == "Pack" and op.attrs.get("axis", 0) == 0 and all(t.shape == () for t in op.inputs):
        parts = [static_value(t) for t in op.inputs]
        return [None if p is None else int(p) for p in parts]
    if op.type == "ConcatV2":
        pieces = [partial_value(t) for t in op.inputs]
        if all(p is not None for p in pieces):
            return [d for p in pieces for d in p]
    if tensor.shape is not None and len(tensor.shape) == 1 and tensor.shape[0] is not None:
        return [None] * tensor.shape[0]
    return None
