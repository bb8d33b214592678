"""What is known of a tensor's value at trace time: constants, static shapes, stacks of those.

``static_value(t)`` is the whole value or None; ``partial_value(t)`` the
known elements of a 1-D int tensor (``[3, None]``), which is how ``Reshape``
and ``Fill`` infer static output shapes.
"""

from __future__ import annotations

import numpy as np

from autograph.runtime.core.tensor import Tensor


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
