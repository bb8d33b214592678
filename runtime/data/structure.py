"""Element structures of datasets: nests of ``TensorSpec`` and nests of numpy values.

A dataset's ``element_spec`` is a nest (tuples, lists, dicts, namedtuples,
as in ``core/nest.py``) whose leaves are ``TensorSpec``s.  Inside the
pipeline an element travels as the flat tuple of its leaves' numpy values;
``pack`` rebuilds the nest for the user:

    spec = spec_of((np.zeros(3, "float32"), {"y": np.int64(1)}))
    # (TensorSpec([3], float32), {'y': TensorSpec([], int64)})
    flat(spec)                       -> [TensorSpec([3], float32), TensorSpec([], int64)]
    pack(spec, [a, b])               -> (a, {'y': b})
"""

from __future__ import annotations

import numpy as np

from autograph.runtime.core import nest, shapes
from autograph.runtime.core.tensor import TensorSpec


def spec_of_leaf(value) -> TensorSpec:
    """The spec of one numpy value (or tensor, or spec)."""
    if isinstance(value, TensorSpec):
        return value
    if hasattr(value, "dtype") and hasattr(value, "shape") and not isinstance(value, np.ndarray):
        return TensorSpec(value.shape, value.dtype)  # a symbolic tensor
    array = np.asarray(value)
    return TensorSpec(array.shape, array.dtype)


def spec_of(value):
    """The spec nest of a nest of values."""
    return nest.pack_as(value, [spec_of_leaf(leaf) for leaf in nest.flatten(value)])


def flat(spec) -> list:
    return nest.flatten(spec)


def pack(spec, leaves):
    """The user's view of an element: its nest, 0-d leaves as numpy scalars."""
    values = [leaf[()] if isinstance(leaf, np.ndarray) and leaf.ndim == 0 else leaf for leaf in leaves]
    if len(values) == 1 and not nest.is_nested(spec):
        return values[0]
    return nest.pack_as(spec, values)


def format_spec(spec) -> str:
    """``(float32[None, 3], {'y': int64[]})``: a spec nest, compactly."""
    leaves = [f"{s.dtype.name}{shapes.format_shape(s.shape)}" for s in flat(spec)]
    if not nest.is_nested(spec):
        return leaves[0]
    return str(nest.pack_as(spec, [_Text(text) for text in leaves]))


class _Text(str):
    def __repr__(self):
        return str(self)


def map_specs(fn, spec):
    """``spec`` with each leaf replaced by ``fn(leaf)``."""
    return nest.pack_as(spec, [fn(s) for s in flat(spec)])


def batched(spec, batch_dim):
    return map_specs(lambda s: TensorSpec((batch_dim, *s.shape), s.dtype), spec)


def most_general(a, b):
    """The spec fitting both leaf specs ``a`` and ``b`` (dims that differ become ``None``), or None
    if their dtypes or ranks differ."""
    if a.dtype != b.dtype or len(a.shape) != len(b.shape):
        return None
    return TensorSpec(shapes.relax(a.shape, b.shape), a.dtype)


def compatible(value_spec, spec) -> bool:
    """True if a value of leaf spec ``value_spec`` fits the leaf spec ``spec``."""
    return value_spec.dtype == spec.dtype and shapes.is_subshape(value_spec.shape, spec.shape)
